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

// 16-byte words when blocks and stride allow it, one warp per block of the source.
__global__ void gather_kernel(char *dst, const char *src, size_t block, size_t stride, size_t count) {
  const size_t warp = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  const size_t warps = size_t(gridDim.x) * blockDim.x / 32;
  const bool vec = (block % 16 == 0) && (stride % 16 == 0) && (reinterpret_cast<uintptr_t>(dst) % 16 == 0) &&
                   (reinterpret_cast<uintptr_t>(src) % 16 == 0);
  for (size_t b = warp; b < count; b += warps) {
    const char *s = src + b * stride;
    char *d = dst + b * block;
    if (vec) {
      for (size_t i = lane; i < block / 16; i += 32) reinterpret_cast<uint4 *>(d)[i] = reinterpret_cast<const uint4 *>(s)[i];
    } else {
      for (size_t i = lane; i < block; i += 32) d[i] = s[i];
    }
  }
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

void gather_blocks(void *stream, void *dst, const void *src, size_t block, size_t stride, size_t count) {
  if (count == 0) return;
  const size_t warps = count < 65536 ? count : 65536;
  const unsigned blocks = static_cast<unsigned>((warps * 32 + 511) / 512);
  gather_kernel<<<blocks, 512, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<char *>(dst),
                                                                        static_cast<const char *>(src), block, stride,
                                                                        count);
  check_launch("gather kernel");
}

}  // namespace xdev
