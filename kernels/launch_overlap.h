// Launch overlap: a collective or epoch kernel may be scheduled while the kernel before it on the
// stream is still running, and waits on the device for that kernel's completion instead of the
// stream's launch queue doing so (CUDA's programmatic dependent launch, sm_90 and later).
//
// Why: in a replayed graph of back-to-back calls the gap between one kernel's end and the next
// one's first instruction was about 2 us on 4 H100s (MPIX_ST_TRACE, coll_bench --graph), where
// NCCL's whole replayed 8-byte reduce takes 5 us. With overlap the next grid's blocks are already
// resident, its parameters loaded and its communicator-constant state read when the dependency
// wait returns.
//
// Rules the kernels keep (kernels/coll/device.h, kernels/epoch_kernel.cu):
//  - Before mpix_grid_dependency_wait(): only reads of memory no earlier stream work writes (the
//    peer table, fixed when the communicator's context was made; the live-window table, which only the
//    host writes, synchronising before its call returns). Nothing is stored, no flag,
//    cursor or user buffer is read.
//  - mpix_grid_launch_dependents() only after that wait: at most two grids of the stream are then
//    resident at once (the running one and the next, waiting), never a chain of waiting grids.
// The wait returns once the previous grid has completed and its memory operations are visible,
// as a kernel boundary does; launched without the attribute (or on HIP, or before sm_90) it
// returns at once, because the stream already ordered the launch.
#pragma once

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
__device__ inline void mpix_grid_dependency_wait() {}
__device__ inline void mpix_grid_launch_dependents() {}
#else
#include <cuda_runtime.h>
__device__ inline void mpix_grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ inline void mpix_grid_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
#endif

// Launches kernel<<<blocks, threads, 0, stream>>>(args...), allowing the overlap above where
// `overlap` is set and the runtime has it. Returns the runtime's error code (0 on success).
template <typename... Params, typename... Args>
int mpix_launch_kernel(void (*kernel)(Params...), int blocks, int threads, void *stream, bool overlap,
                       Args &&...args) {
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
  (void)overlap;
  kernel<<<blocks, threads, 0, static_cast<hipStream_t>(stream)>>>(args...);
  return static_cast<int>(hipGetLastError());
#else
  if (!overlap) {
    kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(args...);
    return static_cast<int>(cudaGetLastError());
  }
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.stream = static_cast<cudaStream_t>(stream);
  config.attrs = attr;
  config.numAttrs = 1;
  return static_cast<int>(cudaLaunchKernelEx(&config, kernel, args...));
#endif
}
