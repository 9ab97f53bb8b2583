// xdev's counter-driven stream work on CUDA: one block each, so the counter is read once and
// advanced after every thread finished with it.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "xdev.h"

namespace xdev {
namespace {

__global__ void stamp_kernel(uint8_t *dst, size_t bytes, uint64_t *counter, uint64_t key) {
  const uint64_t gen = *counter + 1;
  for (size_t i = threadIdx.x; i < bytes; i += blockDim.x) dst[i] = stamp_byte(key, gen, i);
  __syncthreads();
  if (threadIdx.x == 0) *counter = gen;
}

__global__ void append_kernel(uint8_t *dst, const uint8_t *src, size_t bytes, uint64_t *counter) {
  uint8_t *at = dst + *counter * bytes;
  for (size_t i = threadIdx.x; i < bytes; i += blockDim.x) at[i] = src[i];
  __syncthreads();
  if (threadIdx.x == 0) *counter += 1;
}

void check_launch(const char *what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "xdev: %s: %s\n", what, cudaGetErrorString(e));
  std::abort();
}

}  // namespace

void stamp(void *stream, void *dst, size_t bytes, uint64_t *counter, uint64_t key) {
  stamp_kernel<<<1, 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<uint8_t *>(dst), bytes, counter, key);
  check_launch("stamp kernel");
}

void append(void *stream, void *dst, const void *src, size_t bytes, uint64_t *counter) {
  append_kernel<<<1, 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<uint8_t *>(dst),
                                                                   static_cast<const uint8_t *>(src), bytes, counter);
  check_launch("append kernel");
}

}  // namespace xdev
