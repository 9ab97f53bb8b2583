// Device copy loop shared by the merged epoch kernel and the collective kernel.
#pragma once
#include <cstdint>

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif

// Thread `tid` of `nthreads` copies its share of n bytes.
__device__ inline void copy_bytes(char *dst, const char *src, uint64_t n, uint64_t tid, uint64_t nthreads) {
  // 16-byte vectors when both ends are aligned alike, four loads in flight per thread; bytes for
  // the unaligned head and the tail.
  if (((reinterpret_cast<uintptr_t>(dst) ^ reinterpret_cast<uintptr_t>(src)) & 15) == 0) {
    uint64_t head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15;
    if (head > n) head = n;
    const uint64_t nvec = (n - head) / 16;
    const uint4 *s4 = reinterpret_cast<const uint4 *>(src + head);
    uint4 *d4 = reinterpret_cast<uint4 *>(dst + head);
    constexpr int kUnroll = 4;
    uint64_t i = tid;
    for (; i + (kUnroll - 1) * nthreads < nvec; i += kUnroll * nthreads) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = s4[i + u * nthreads];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) d4[i + u * nthreads] = v[u];
    }
    for (; i < nvec; i += nthreads) d4[i] = s4[i];
    for (uint64_t j = tid; j < head; j += nthreads) dst[j] = src[j];
    for (uint64_t j = head + nvec * 16 + tid; j < n; j += nthreads) dst[j] = src[j];
    return;
  }
  for (uint64_t i = tid; i < n; i += nthreads) dst[i] = src[i];
}

