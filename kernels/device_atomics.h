// System-scope acquire/release primitives and a nanosecond clock, for CUDA and HIP device code.
// Flags are written by other GPUs and processes, so every flag access is at system scope.
#pragma once
#include <cstdint>

#include "kernels/coll/lines.h"

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>

__device__ inline uint64_t mpix_load_acquire_sys(const uint64_t *p) {
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
}
__device__ inline void mpix_store_release_sys(uint64_t *p, uint64_t v) {
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
}
// A signal that orders nothing before it (a list without data): no fence.
__device__ inline void mpix_store_relaxed_sys(uint64_t *p, uint64_t v) {
  __hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
__device__ inline void mpix_fence_sys() { __threadfence_system(); }
__device__ inline void mpix_fence_gpu() { __threadfence(); }
// The count that tells a grid's last block that the others are done (see the CUDA version). At
// system scope here: each block's release then covers its stores to peers' memory by itself, as
// the AMD path has never run, and whether an agent-scope release carries stores over XGMI to
// another agent's acquire through a third thread has not been checked on that hardware.
__device__ inline uint32_t mpix_ticket_add(uint32_t *p, uint32_t v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_SYSTEM);
}
// A line of the collectives' kLL protocol (coll/lines.h): two words, each one 64-bit access.
__device__ inline void mpix_store_line(uint64_t *p, uint64_t w0, uint64_t w1) {
  __hip_atomic_store(p, w0, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  __hip_atomic_store(p + 1, w1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
__device__ inline void mpix_load_line(const uint64_t *p, uint64_t *w0, uint64_t *w1) {
  *w0 = __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  *w1 = __hip_atomic_load(p + 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
__device__ inline uint64_t mpix_clock_ns() {
#if defined(__HIP_DEVICE_COMPILE__)
  return __builtin_amdgcn_s_memrealtime() * 10ull;  // 100 MHz constant clock on gfx90a/gfx942
#else
  return 0;
#endif
}

#else  // CUDA
#include <cuda_runtime.h>

__device__ inline uint64_t mpix_load_acquire_sys(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ inline void mpix_store_release_sys(uint64_t *p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
// A signal that orders nothing before it (a list without data): no fence. On H100 the fence in
// st.release.sys costs about 2 us even with no store outstanding (measured in the epoch kernel).
__device__ inline void mpix_store_relaxed_sys(uint64_t *p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
// Every use is a release or acquire pattern (a fence, then a flag store or the count that tells
// the last block; or a flag load, then the fence), which fence.acq_rel orders; none needs the
// sequential consistency of fence.sc (__threadfence_system). MPIX_ST_FENCE_SC builds the old one,
// for comparison.
__device__ inline void mpix_fence_sys() {
#ifdef MPIX_ST_FENCE_SC
  __threadfence_system();
#else
  asm volatile("fence.acq_rel.sys;" ::: "memory");
#endif
}
// Orders a block's accesses before and after it for the device's other blocks only.
__device__ inline void mpix_fence_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
// The count that tells a grid's last block that the others are done: a release at gpu scope
// (each block's stores, ordered before it by the block's barrier) and an acquire (the last block
// sees every block's stores before its own later ones). A system-scope release by the last block
// is then cumulative over all of them, so the blocks need no system fence of their own.
__device__ inline uint32_t mpix_ticket_add(uint32_t *p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
// A line of the collectives' kLL protocol (coll/lines.h): one 16-byte access of two 64-bit words,
// each single-copy atomic; volatile is relaxed at system scope.
__device__ inline void mpix_store_line(uint64_t *p, uint64_t w0, uint64_t w1) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(w0), "l"(w1) : "memory");
}
__device__ inline void mpix_load_line(const uint64_t *p, uint64_t *w0, uint64_t *w1) {
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(*w0), "=l"(*w1) : "l"(p) : "memory");
}
__device__ inline uint64_t mpix_clock_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#endif

// A line's payload tagged for its round (coll/lines.h): the two words mpix_store_line stores.
__device__ inline void mpix_store_tagged_line(uint64_t *p, uint64_t payload, uint32_t tag) {
  mpix_store_line(p, mpix::coll::line_word(payload, tag), mpix::coll::line_word(payload >> 32, tag));
}

// Element-wise atomic read-modify-write through a compare-and-swap loop on the element's bits.
template <typename T, typename Bits>
__device__ inline void mpix_atomic_apply(T *addr, T value, uint8_t op) {
  static_assert(sizeof(T) == sizeof(Bits));
  Bits *word = reinterpret_cast<Bits *>(addr);
  Bits old = *reinterpret_cast<volatile Bits *>(word), assumed;
  do {
    assumed = old;
    T cur;
    __builtin_memcpy(&cur, &assumed, sizeof(T));
    T next = mpix::work::apply_op<T>(op, cur, value);
    Bits next_bits;
    __builtin_memcpy(&next_bits, &next, sizeof(T));
    old = atomicCAS_system(word, assumed, next_bits);
  } while (old != assumed);
}
