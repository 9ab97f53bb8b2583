// Epoch calls merged under capture (backend/list_merge.h): a captured list joins the kernel node of
// the list captured before it on the same stream, where nothing was captured in between and one
// launch runs both; and whether a stream is capturing.
#include <mutex>
#include <utility>

#include "backend/list_merge.h"
#include "device_backend.h"

namespace mpix::gpu {

int DeviceBackend::capture_status(void *stream, bool *capturing) {
  gpuStreamCaptureStatus status = gpuStreamCaptureStatusNone;
  *capturing = false;
  if (int st = check(MPIX_GPU(StreamIsCapturing)(static_cast<gpuStream_t>(stream), &status), "stream capture query"))
    return st;
  *capturing = status != gpuStreamCaptureStatusNone;
  return kOk;
}

// The node `stream`'s capture would make the next node depend on, if it is exactly one; null
// where it is not, or the stream is not capturing.
gpuGraphNode_t DeviceBackend::capture_sole_dependency(void *stream, unsigned long long *capture) {
  gpuGraphNode_t node = nullptr;
  if (gpu_capture_sole_dependency(static_cast<gpuStream_t>(stream), capture, &node) != gpuSuccess) {
    (void)MPIX_GPU(GetLastError)();
    return nullptr;
  }
  return node;
}

// Gives `list` to the node of the previous captured list on `stream` where nothing was captured
// on the stream since and one launch runs both: true if it did (the list is enqueued).
bool DeviceBackend::merge_into_tail(void *stream, const WorkList &list) {
  std::lock_guard<std::mutex> lock(tails_mu_);
  auto it = tails_.find(stream);
  if (it == tails_.end()) return false;
  CaptureTail &tail = it->second;
  unsigned long long capture = 0;
  const gpuGraphNode_t only = capture_sole_dependency(stream, &capture);
  if (!only || capture != tail.capture || only != tail.node || !gpu_node_has_no_dependents(only)) {
    tails_.erase(it);
    return false;
  }
  WorkList merged = tail.list;
  if (!merge_captured(merged, list)) return false;
  work::LaunchParams params;
  int blocks = 0;
  // (Neither list has a copy-engine copy: enqueue sent those apart.)
  if (!one_launch(merged, &params, &blocks)) return false;
  if (mpix_set_epoch_kernel_node(only, params, blocks, kThreadsPerBlock) != 0) {
    (void)MPIX_GPU(GetLastError)();
    return false;
  }
  tail.list = std::move(merged);
  return true;
}

// After a captured list went out as one kernel launch: its node is the stream's tail.
void DeviceBackend::remember_tail(void *stream, const WorkList &list) {
  std::lock_guard<std::mutex> lock(tails_mu_);
  CaptureTail tail;
  tail.node = capture_sole_dependency(stream, &tail.capture);
  if (!tail.node) {
    tails_.erase(stream);
    return;
  }
  tail.list = list;
  tails_[stream] = std::move(tail);
}

}  // namespace mpix::gpu
