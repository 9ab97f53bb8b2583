// A thin map of the few GPU runtime calls the device backend uses, to CUDA or to HIP.
// (ROCm 5.x's HIP-on-NVIDIA headers do not build against CUDA 13, so the project keeps its own.)
#pragma once

#if defined(MPIX_GPU_HIP)
#include <hip/hip_runtime.h>
#define MPIX_GPU(name) hip##name
#define MPIX_GPU_BACKEND_NAME "hip"
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuIpcMemHandle_t = hipIpcMemHandle_t;
using gpuPointerAttributes = hipPointerAttribute_t;
constexpr auto gpuSuccess = hipSuccess;
constexpr auto gpuMemoryTypeDevice = hipMemoryTypeDevice;
constexpr auto gpuIpcMemLazyEnablePeerAccess = hipIpcMemLazyEnablePeerAccess;
constexpr auto gpuHostAllocMapped = hipHostMallocMapped;
constexpr auto gpuHostAllocPortable = hipHostMallocPortable;
constexpr auto gpuStreamNonBlocking = hipStreamNonBlocking;
constexpr auto gpuDevAttrMultiProcessorCount = hipDeviceAttributeMultiprocessorCount;
constexpr auto gpuHostRegisterIoMemory = hipHostRegisterIoMemory;
constexpr auto gpuHostRegisterMapped = hipHostRegisterMapped;
constexpr auto gpuErrorNotSupported = hipErrorNotSupported;
using gpuStreamCaptureStatus = hipStreamCaptureStatus;
constexpr auto gpuStreamCaptureStatusNone = hipStreamCaptureStatusNone;
using gpuStreamCaptureMode = hipStreamCaptureMode;
constexpr auto gpuStreamCaptureModeRelaxed = hipStreamCaptureModeRelaxed;
using gpuGraphNode_t = hipGraphNode_t;
// The one node a capturing stream's next node would depend on (null if not exactly one).
inline gpuError_t gpu_capture_sole_dependency(gpuStream_t s, unsigned long long *capture, gpuGraphNode_t *node) {
  hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
  const hipGraphNode_t *deps = nullptr;
  size_t n = 0;
  *node = nullptr;
  const hipError_t e = hipStreamGetCaptureInfo_v2(s, &status, capture, nullptr, &deps, &n);
  if (e == hipSuccess && status == hipStreamCaptureStatusActive && n == 1) *node = deps[0];
  return e;
}
inline bool gpu_node_has_no_dependents(gpuGraphNode_t node) {
  size_t n = 1;
  return hipGraphNodeGetDependentNodes(node, nullptr, &n) == hipSuccess && n == 0;
}
#define gpuHostAlloc hipHostMalloc
#define gpuFreeHost hipHostFree
#if HIP_VERSION_MAJOR >= 6
inline bool gpu_is_device_memory(const gpuPointerAttributes &a) { return a.type == hipMemoryTypeDevice; }
#else
inline bool gpu_is_device_memory(const gpuPointerAttributes &a) { return a.memoryType == hipMemoryTypeDevice; }
#endif
inline gpuError_t gpu_allocation_range(void *ptr, void **base, size_t *size) {
  return hipMemGetAddressRange(reinterpret_cast<hipDeviceptr_t *>(base), size, reinterpret_cast<hipDeviceptr_t>(ptr));
}
constexpr auto gpuErrorAlreadyMapped = hipErrorAlreadyMapped;
// Flags polled across devices must bypass caches on AMD: fine-grained device memory.
inline gpuError_t gpu_malloc_flags(void **ptr, size_t bytes) {
  return hipExtMallocWithFlags(ptr, bytes, hipDeviceMallocFinegrained);
}

// A stream wait the command processor executes (no kernel, no compute unit held) until *flag >= value.
inline gpuError_t gpu_stream_wait_geq(gpuStream_t s, const uint64_t *flag, uint64_t value) {
  return hipStreamWaitValue64(s, const_cast<uint64_t *>(flag), value, hipStreamWaitValueGte);
}
// AMD runs several processes' queues at once: no time slice to give away.
inline bool gpu_device_time_sliced(int) { return false; }

#else  // CUDA
#include <cuda.h>
#include <cuda_runtime.h>
#define MPIX_GPU(name) cuda##name
#define MPIX_GPU_BACKEND_NAME "cuda"
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuIpcMemHandle_t = cudaIpcMemHandle_t;
using gpuPointerAttributes = cudaPointerAttributes;
constexpr auto gpuSuccess = cudaSuccess;
constexpr auto gpuMemoryTypeDevice = cudaMemoryTypeDevice;
constexpr auto gpuIpcMemLazyEnablePeerAccess = cudaIpcMemLazyEnablePeerAccess;
constexpr auto gpuHostAllocMapped = cudaHostAllocMapped;
constexpr auto gpuHostAllocPortable = cudaHostAllocPortable;
constexpr auto gpuStreamNonBlocking = cudaStreamNonBlocking;
constexpr auto gpuDevAttrMultiProcessorCount = cudaDevAttrMultiProcessorCount;
constexpr auto gpuHostRegisterIoMemory = cudaHostRegisterIoMemory;
constexpr auto gpuHostRegisterMapped = cudaHostRegisterMapped;
constexpr auto gpuErrorNotSupported = cudaErrorNotSupported;
using gpuStreamCaptureStatus = cudaStreamCaptureStatus;
constexpr auto gpuStreamCaptureStatusNone = cudaStreamCaptureStatusNone;
using gpuStreamCaptureMode = cudaStreamCaptureMode;
constexpr auto gpuStreamCaptureModeRelaxed = cudaStreamCaptureModeRelaxed;
using gpuGraphNode_t = cudaGraphNode_t;
// The one node a capturing stream's next node would depend on (null if not exactly one).
inline gpuError_t gpu_capture_sole_dependency(gpuStream_t s, unsigned long long *capture, gpuGraphNode_t *node) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t *deps = nullptr;
  size_t n = 0;
  *node = nullptr;
#if CUDART_VERSION >= 13000
  // The edges' data too: without it the query fails once an edge is programmatic (launch overlap).
  const cudaGraphEdgeData *edges = nullptr;
  const cudaError_t e = cudaStreamGetCaptureInfo(s, &status, capture, nullptr, &deps, &edges, &n);
#else
  const cudaError_t e = cudaStreamGetCaptureInfo_v2(s, &status, capture, nullptr, &deps, &n);
#endif
  if (e == cudaSuccess && status == cudaStreamCaptureStatusActive && n == 1) *node = deps[0];
  return e;
}
inline bool gpu_node_has_no_dependents(gpuGraphNode_t node) {
  size_t n = 1;
#if CUDART_VERSION >= 13000
  return cudaGraphNodeGetDependentNodes(node, nullptr, nullptr, &n) == cudaSuccess && n == 0;
#else
  return cudaGraphNodeGetDependentNodes(node, nullptr, &n) == cudaSuccess && n == 0;
#endif
}
#define gpuHostAlloc cudaHostAlloc
#define gpuFreeHost cudaFreeHost
inline bool gpu_is_device_memory(const gpuPointerAttributes &a) { return a.type == cudaMemoryTypeDevice; }
// A driver function, through the runtime's entry-point lookup, so the plugin needs no link
// dependency on libcuda; null where the driver lacks it.
template <class Fn>
inline Fn gpu_driver_function(const char *symbol, unsigned version = 12000) {
  void *f = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(symbol, &f, version, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<Fn>(f);
}
// The runtime has no address-range query; the driver's does it.
inline gpuError_t gpu_allocation_range(void *ptr, void **base, size_t *size) {
  using Fn = CUresult (*)(CUdeviceptr *, size_t *, CUdeviceptr);
  static const Fn fn = gpu_driver_function<Fn>("cuMemGetAddressRange");
  if (!fn) return cudaErrorNotSupported;
  CUdeviceptr b = 0;
  if (fn(&b, size, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) return cudaErrorInvalidValue;
  *base = reinterpret_cast<void *>(b);
  return cudaSuccess;
}
constexpr auto gpuErrorAlreadyMapped = cudaErrorAlreadyMapped;
inline gpuError_t gpu_malloc_flags(void **ptr, size_t bytes) { return cudaMalloc(ptr, bytes); }
// A stream wait the front end executes (no kernel, no SM held) until *flag >= value: the driver's
// memory operation.
inline gpuError_t gpu_stream_wait_geq(gpuStream_t s, const uint64_t *flag, uint64_t value) {
  using Fn = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
  static const Fn fn = gpu_driver_function<Fn>("cuStreamWaitValue64");
  if (!fn) return cudaErrorNotSupported;
  return fn(s, reinterpret_cast<CUdeviceptr>(flag), value, CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS
             ? cudaSuccess
             : cudaErrorNotSupported;
}
// Whether processes sharing the device take turns on it (time slices) instead of running side by
// side under MPS.
inline bool gpu_device_time_sliced(int device) {
  int mps = 0;
  if (cudaDeviceGetAttribute(&mps, cudaDevAttrMpsEnabled, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;
  }
  return mps == 0;
}
#endif
