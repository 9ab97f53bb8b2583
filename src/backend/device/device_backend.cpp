// The GPU backend plugin's start-up, device facts and errors, and its entry point (the class and
// its other parts: device_backend.h). Window memory is device memory shared through runtime IPC
// handles; flags are device memory the local stream polls and peers store to; one work list
// becomes one merged-kernel launch.
#include "device_backend.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "backend/launch_trace_file.h"
#include "settings/settings.h"
#if !defined(MPIX_GPU_HIP)
#include "multicast_cuda.h"
#endif

namespace mpix::gpu {

using settings::Id;

bool DeviceBackend::init(std::string *why) {
  int count = 0;
  if (MPIX_GPU(GetDeviceCount)(&count) != gpuSuccess || count == 0) {
    *why = std::string(MPIX_GPU_BACKEND_NAME) + ": no device visible";
    return false;
  }
  int sms = 0;
  if (MPIX_GPU(GetDevice)(&device_) != gpuSuccess ||
      MPIX_GPU(DeviceGetAttribute)(&sms, gpuDevAttrMultiProcessorCount, device_) != gpuSuccess)
    sms = 0;
  // Copy grid: one block per MPIX_ST_COPY_BLOCK_KIB of data, at most MPIX_ST_COPY_BLOCKS_PER_SM per SM.
  // More than the kernel was built to keep resident could leave waiting blocks without an SM.
  static_assert(settings::entry(Id::MPIX_ST_COPY_BLOCKS_PER_SM).max == kEpochBlocksPerSm);
  const int per_sm = static_cast<int>(settings::number(Id::MPIX_ST_COPY_BLOCKS_PER_SM));
  device_max_blocks_ = (sms > 0 ? sms : 32) * per_sm;
  // Collective blocks wait for peers' blocks of their channel: all of them must run at once.
  device_coll_blocks_ = (sms > 0 ? sms : 16) * kCollBlocksPerSm;
  set_device_sharers(1);
  char bus[32] = {};
  if (MPIX_GPU(DeviceGetPCIBusId)(bus, sizeof bus - 1, device_) == gpuSuccess) device_id_ = bus;
  // 16 KiB: Faces' exchanges and a captured 256 KiB epoch ran 5-9% faster than with 64 on 2 H100s,
  // puts of 4-64 MiB within 2% (README, "One system fence per list of several blocks").
  // (The table's ranges: at least 1, and the products stay far inside 64 bits.)
  bytes_per_block_ = settings::number(Id::MPIX_ST_COPY_BLOCK_KIB) * 1024;
  pairs_per_block_ = settings::number(Id::MPIX_ST_PAIRS_PER_BLOCK);
  // A list of a few hundred KiB is bound by its blocks' memory round trips, not by bandwidth:
  // it spreads over up to this many blocks of at least 4 KiB. On 2 H200s a 210 KiB Faces
  // exchange took 0.54 us less (13 to 52 blocks); 4 KiB blocks for every list instead made
  // the periodic case, whose lists are larger, 8 us slower (README, "Launch trace").
  spread_blocks_ = settings::number(Id::MPIX_ST_COPY_SPREAD_BLOCKS);
  copy_engine_bytes_ = settings::number(Id::MPIX_ST_COPY_ENGINE_MIB) << 20;  // 0: never
  const std::string &waits = settings::word(Id::MPIX_ST_STREAM_WAITS);
  wait_mode_ = waits == "auto" ? WaitMode::automatic : waits == "memop" ? WaitMode::memop : WaitMode::kernel;
  time_sliced_ = gpu_device_time_sliced(device_);
  choose_waits();
  // MPIX_ST_LAUNCH_OVERLAP=0 turns it off (kernels/launch_overlap.h); devices without it ignore it.
  overlap_capable_ = settings::flag(Id::MPIX_ST_LAUNCH_OVERLAP) && mpix_kernels_support_overlap();
  if (gpuHostAlloc(reinterpret_cast<void **>(&area_), sizeof *area_, gpuHostAllocMapped) != gpuSuccess ||
      MPIX_GPU(Malloc)(reinterpret_cast<void **>(&tickets_), kTicketSlots * sizeof(uint32_t)) != gpuSuccess ||
      MPIX_GPU(Memset)(tickets_, 0, kTicketSlots * sizeof(uint32_t)) != gpuSuccess ||
      MPIX_GPU(Malloc)(reinterpret_cast<void **>(&barriers_), kBarrierSlots * 4 * sizeof(uint32_t)) != gpuSuccess ||
      MPIX_GPU(Memset)(barriers_, 0, kBarrierSlots * 4 * sizeof(uint32_t)) != gpuSuccess ||
      MPIX_GPU(Malloc)(reinterpret_cast<void **>(&keys_), work::kWindowSlots * sizeof(uint64_t)) != gpuSuccess ||
      MPIX_GPU(Memset)(keys_, 0, work::kWindowSlots * sizeof(uint64_t)) != gpuSuccess ||
      !allocate_launch_trace() ||
      // Those memsets ran on the legacy stream, which the users' non-blocking streams do not wait for.
      MPIX_GPU(DeviceSynchronize)() != gpuSuccess ||
      MPIX_GPU(StreamCreateWithFlags)(&internal_, gpuStreamNonBlocking) != gpuSuccess) {
    *why = std::string(MPIX_GPU_BACKEND_NAME) + ": start-up allocations failed";
    return false;
  }
  std::memset(area_, 0, sizeof *area_);
  mailbox_ = &area_->mailbox;
  return true;
}

// MPIX_ST_TRACE: the launch trace's log in device memory (kernels/launch_trace.h); null when off.
bool DeviceBackend::allocate_launch_trace() {
  if (!launch_trace_prefix()) return true;
  const uint64_t capacity = launch_trace_capacity();
  const work::TraceLog header{0, capacity};
  return MPIX_GPU(Malloc)(reinterpret_cast<void **>(&trace_), work::trace_log_bytes(capacity)) == gpuSuccess &&
         MPIX_GPU(Memset)(trace_, 0, work::trace_log_bytes(capacity)) == gpuSuccess &&
         MPIX_GPU(Memcpy)(trace_, &header, sizeof header, MPIX_GPU(MemcpyHostToDevice)) == gpuSuccess;
}

bool DeviceBackend::read_launch_trace(work::TraceLog *header, std::vector<work::TraceRecord> *records,
                                      const char **clock) {
#if defined(MPIX_GPU_HIP)
  *clock = "s_memrealtime";
#else
  *clock = "globaltimer";
#endif
  if (!trace_) {
    fail(kErrRuntime, "no trace log (MPIX_ST_TRACE was set after start-up)");
    return false;
  }
  if (check(MPIX_GPU(DeviceSynchronize)(), "synchronising for the launch trace") != kOk ||
      check(MPIX_GPU(Memcpy)(header, trace_, sizeof *header, MPIX_GPU(MemcpyDeviceToHost)), "reading the trace header") != kOk)
    return false;
  records->resize(std::min<uint64_t>(header->claimed, header->capacity));
  return check(MPIX_GPU(Memcpy)(records->data(), trace_->records(), records->size() * sizeof(work::TraceRecord),
                                MPIX_GPU(MemcpyDeviceToHost)),
               "reading the trace records") == kOk;
}

std::string DeviceBackend::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

// One mailbox per process holds the first timeout (until taken); it does not know the stream.
// Taking a window's report clears the pending mark of its fault word, leaving the count of reports
// taken: its lists enqueued before still end their waits at once, those enqueued after wait as
// usual (work::fault_skips).
bool DeviceBackend::take_watchdog_report(WatchdogReport *out, uint32_t window_id, const void *) {
  volatile work::WatchdogMailbox *box = mailbox_;
  if (!box->fired) return false;
  std::atomic_thread_fence(std::memory_order_acquire);
  if (window_id && box->window_id != window_id) return false;
  *out = WatchdogReport{box->window_id, box->peer, box->reason, box->expected, box->observed};
  box->fired = 0;
  if (out->reason == work::kWaitCollective) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = comm_faults_.find(out->window_id); it != comm_faults_.end())
      reinterpret_cast<volatile uint64_t *>(area_->comm_fault)[it->second] = ++comm_reports_taken_[it->second];
  } else if (out->reason == work::kWaitPost || out->reason == work::kWaitComplete)
    if (const uint64_t key = table_.key_of(out->window_id))
      if (const uint32_t taken = table_.take_report(key))
        reinterpret_cast<volatile uint64_t *>(area_->fault)[work::window_slot(key)] = taken;
  return true;
}

void DeviceBackend::peek_watchdog_reports(std::vector<WatchdogReport> *out) {
  out->clear();
  volatile work::WatchdogMailbox *box = mailbox_;
  if (!box->fired) return;
  std::atomic_thread_fence(std::memory_order_acquire);
  out->push_back(WatchdogReport{box->window_id, box->peer, box->reason, box->expected, box->observed});
}

// Host memory the kernels read: a plain store (a kernel that marks it too stores the same bit).
void DeviceBackend::mark_fault(uint32_t window_id) {
  if (const uint64_t key = table_.key_of(window_id)) {
    volatile uint64_t *fault = &reinterpret_cast<volatile uint64_t *>(area_->fault)[work::window_slot(key)];
    *fault = *fault | work::kFaultPending;
  }
}

// Given at a communicator's first collective and kept: a few words per communicator, as its flags.
DeviceBackend::CommFault DeviceBackend::comm_fault(uint32_t comm_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = comm_faults_.find(comm_id);
  if (it == comm_faults_.end()) {
    if (comm_faults_.size() >= work::kCommFaultWords) return {};
    const uint32_t index = static_cast<uint32_t>(comm_faults_.size());
    it = comm_faults_.emplace(comm_id, index).first;
    comm_reports_taken_.push_back(0);
  }
  return {&area_->comm_fault[it->second], comm_reports_taken_[it->second]};
}

// Every block of an epoch or collective kernel may spin on another process's flags: with n
// processes on the device, a grid larger than 1/n of it can hold every SM while the kernel it
// waits for cannot start (measured: two ranks on one H100, a 64 MiB put's 264 blocks waited
// forever for the other rank's one-block post).
void DeviceBackend::set_device_sharers(int n) {
  if (n <= sharers_) return;
  sharers_ = n;
  max_blocks_ = std::max(1, device_max_blocks_ / n);
  coll_max_blocks_ = std::max(1, device_coll_blocks_ / n);
  choose_waits();
}

// Asked only with MPIX_ST_MULTICAST=1 (src/coll/multicast_choice.h).
const MulticastDriver *DeviceBackend::multicast_driver(std::string *why_not) {
#if defined(MPIX_GPU_HIP)
  // The HIP fallback: HIP has no multicast objects, so bcast keeps the IPC 'direct' algorithm
  // (the root stores into every peer's mapped scratch).
  *why_not = "HIP fallback: HIP has no multicast objects; bcast uses the IPC 'direct' algorithm";
  return nullptr;
#else
  return cuda_multicast_driver(device_, why_not);  // compiled only, never run
#endif
}

int DeviceBackend::check(gpuError_t e, const char *what, int status) {
  if (e == gpuSuccess) return kOk;
  (void)MPIX_GPU(GetLastError)();
  return fail(status, std::string(what) + ": " + MPIX_GPU(GetErrorString)(e));
}

int DeviceBackend::fail(int status, std::string why) {
  std::lock_guard<std::mutex> lock(mu_);
  last_error_ = std::move(why);
  return status;
}

}  // namespace mpix::gpu

extern "C" __attribute__((visibility("default"))) mpix::gpu::Backend *mpixst_backend_create(std::string *why_not) {
  auto *b = new mpix::gpu::DeviceBackend();
  if (!b->init(why_not)) {
    delete b;
    return nullptr;
  }
  return b;
}
