// Device copy loop shared by the merged epoch kernel and the collective kernel.
#pragma once
#include <cstdint>

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif

// Thread `tid` of `nthreads` copies its share of n bytes in words of W (dst, src and n multiples of it).
template <typename W>
__device__ inline void copy_words(char *dst, const char *src, uint64_t n, uint64_t tid, uint64_t nthreads) {
  W *d = reinterpret_cast<W *>(dst);
  const W *s = reinterpret_cast<const W *>(src);
  for (uint64_t i = tid; i < n / sizeof(W); i += nthreads) d[i] = s[i];
}

// Pieces shorter than a vector, and ends around vectors: the widest word that dst, src and n are all
// multiples of. A datatype's 8-byte elements move as one load and one store each, not eight of each.
__device__ inline void copy_short(char *dst, const char *src, uint64_t n, uint64_t tid, uint64_t nthreads) {
  const uint64_t m = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) | n;
  if ((m & 7) == 0) copy_words<uint64_t>(dst, src, n, tid, nthreads);
  else if ((m & 3) == 0) copy_words<uint32_t>(dst, src, n, tid, nthreads);
  else if ((m & 1) == 0) copy_words<uint16_t>(dst, src, n, tid, nthreads);
  else copy_words<uint8_t>(dst, src, n, tid, nthreads);
}

// Thread `tid` of `nthreads` copies its share of n bytes.
__device__ inline void copy_bytes(char *dst, const char *src, uint64_t n, uint64_t tid, uint64_t nthreads) {
  // 16-byte vectors when both ends are aligned alike, four loads in flight per thread; the
  // unaligned head and the tail in the widest words they allow.
  if (((reinterpret_cast<uintptr_t>(dst) ^ reinterpret_cast<uintptr_t>(src)) & 15) != 0 || n < 16) {
    copy_short(dst, src, n, tid, nthreads);
    return;
  }
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
  // The head and the tail are short: the last threads take them, away from the vectors' first.
  const uint64_t tail = head + nvec * 16;
  if (head) copy_short(dst, src, head, nthreads - 1 - tid, nthreads);
  if (tail < n) copy_short(dst + tail, src + tail, n - tail, nthreads - 1 - tid, nthreads);
}
