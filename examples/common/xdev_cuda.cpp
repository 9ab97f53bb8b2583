#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "xdev.h"

namespace xdev {
namespace {
void check(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "xdev: %s: %s\n", what, cudaGetErrorString(e));
  std::abort();
}
}  // namespace

const char *kind() { return "cuda"; }
const char *stream_info_type() { return "cudaStream_t"; }

void init(int local_rank) {
  int n = 0;
  check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  check(cudaSetDevice(local_rank % n), "cudaSetDevice");
}

void *stream_create() {
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  return s;
}
void stream_sync(void *stream) { check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize"); }
void stream_destroy(void *stream) { cudaStreamDestroy(static_cast<cudaStream_t>(stream)); }

void *alloc(size_t bytes) {
  void *p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
  return p;
}
void free(void *ptr) { cudaFree(ptr); }
void copy_to_device(void *dst, const void *src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  // From pageable memory cudaMemcpy may return once the data is staged, before its DMA lands,
  // and kernels on non-blocking streams do not wait for it (a 1 MiB bcast check on 4 H100s once
  // read the fill value in its last element after the call, in one run of two).
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}
void copy_to_host(void *dst, const void *src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}
void fill(void *dst, int byte, size_t bytes) {
  check(cudaMemset(dst, byte, bytes), "cudaMemset");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

void *alloc_pinned(size_t bytes) {
  void *p = nullptr;
  check(cudaMallocHost(&p, bytes ? bytes : 1), "cudaMallocHost");
  return p;
}
void free_pinned(void *ptr) { cudaFreeHost(ptr); }

int device_count() {
  int n = 0;
  check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  return n;
}

const char *device_name() {
  static char name[256] = "";
  int dev = 0;
  cudaDeviceProp prop{};
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  std::snprintf(name, sizeof name, "%s", prop.name);
  return name;
}

}  // namespace xdev

namespace xdev {

void stream_begin_capture(void *stream) {
  // Global (the strictest mode) unless XDEV_CAPTURE_MODE says thread_local or relaxed.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  if (const char *m = std::getenv("XDEV_CAPTURE_MODE")) {
    if (std::string(m) == "thread_local") mode = cudaStreamCaptureModeThreadLocal;
    if (std::string(m) == "relaxed") mode = cudaStreamCaptureModeRelaxed;
  }
  check(cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), mode), "cudaStreamBeginCapture");
}

void *stream_end_capture(void *stream) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  check(cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph), "cudaStreamEndCapture");
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  cudaGraphDestroy(graph);
  return exec;
}

void graph_launch(void *graph, void *stream) {
  check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), static_cast<cudaStream_t>(stream)), "cudaGraphLaunch");
}

void graph_destroy(void *graph) { check(cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph)), "cudaGraphExecDestroy"); }

}  // namespace xdev
