// The merged epoch kernel: one launch runs a whole item list (DESIGN.md §3).
//   1. every block waits for the list's flags (so no grid-wide barrier is needed before copying),
//   2. all blocks share the copies and accumulates,
//   3. data is fenced at system scope, the last block to finish stores the signals (release).
// The same source builds as CUDA (nvcc) and HIP (hipcc -x hip).
#include <cstdio>

#include "work_items.h"
#include "device_atomics.h"
#include "epoch_launch.h"

namespace {
using mpix::work::Item;
using mpix::work::LaunchParams;

// Returns false when the watchdog fired.
__device__ bool wait_flags(const LaunchParams &p) {
  __shared__ int timed_out;
  if (threadIdx.x == 0) timed_out = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < p.h.nwait; i += blockDim.x) {
    const Item &it = p.items[i];
    const uint64_t *flag = reinterpret_cast<const uint64_t *>(it.a);
    uint64_t start = p.h.watchdog_ns ? mpix_clock_ns() : 0;
    uint64_t seen;
    while ((seen = mpix_load_acquire_sys(flag)) < it.b) {
      if (timed_out) break;
      if (p.h.watchdog_ns && mpix_clock_ns() - start > p.h.watchdog_ns) {
        auto *box = reinterpret_cast<mpix::work::WatchdogMailbox *>(p.h.mailbox_addr);
        if (atomicCAS(&box->fired, 0u, 1u) == 0u) {
          box->window_id = p.h.window_id;
          box->peer = it.peer;
          box->reason = it.dtype;
          box->expected = it.b;
          box->observed = seen;
          mpix_fence_sys();
          printf("mpix-st watchdog: window %u waited %llu ms for %s #%llu from rank %d (flag at %llu)\n",
                 p.h.window_id, (unsigned long long)(p.h.watchdog_ns / 1000000ull),
                 it.dtype == mpix::work::kWaitPost ? "post" : "complete", (unsigned long long)it.b,
                 it.peer, (unsigned long long)seen);
        }
        timed_out = 1;
        break;
      }
    }
  }
  __syncthreads();
  return !timed_out;
}

__device__ void copy_bytes(char *dst, const char *src, uint64_t n, uint64_t tid, uint64_t nthreads) {
  // 16-byte vectors when both ends are aligned alike, bytes for the rest.
  uint64_t head = 0;
  if (((reinterpret_cast<uintptr_t>(dst) ^ reinterpret_cast<uintptr_t>(src)) & 15) == 0) {
    head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15;
    if (head > n) head = n;
    uint64_t nvec = (n - head) / 16;
    const uint4 *s4 = reinterpret_cast<const uint4 *>(src + head);
    uint4 *d4 = reinterpret_cast<uint4 *>(dst + head);
    for (uint64_t i = tid; i < nvec; i += nthreads) d4[i] = s4[i];
    for (uint64_t i = tid; i < head; i += nthreads) dst[i] = src[i];
    for (uint64_t i = head + nvec * 16 + tid; i < n; i += nthreads) dst[i] = src[i];
    return;
  }
  for (uint64_t i = tid; i < n; i += nthreads) dst[i] = src[i];
}

template <typename T, typename Bits>
__device__ void accumulate(const Item &it, uint64_t tid, uint64_t nthreads) {
  T *dst = reinterpret_cast<T *>(it.a);
  const T *src = reinterpret_cast<const T *>(it.b);
  uint64_t n = it.bytes / sizeof(T);
  for (uint64_t i = tid; i < n; i += nthreads) {
    if (it.op == mpix::work::kReplace) {
      atomicExch_system(reinterpret_cast<Bits *>(dst + i), *reinterpret_cast<const Bits *>(src + i));
    } else {
      mpix_atomic_apply<T, Bits>(dst + i, src[i], it.op);
    }
  }
}

__global__ void epoch_kernel(const LaunchParams p) {
  if (!wait_flags(p)) return;  // watchdog fired: skip data and signals, the host reports it

  const uint64_t tid = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t nthreads = uint64_t(gridDim.x) * blockDim.x;
  const int first = p.h.nwait, end_ops = p.h.nwait + p.h.ncopy;
  for (int i = first; i < end_ops; ++i) {
    const Item &it = p.items[i];
    if (it.kind == mpix::work::kCopy) {
      copy_bytes(reinterpret_cast<char *>(it.a), reinterpret_cast<const char *>(it.b), it.bytes, tid, nthreads);
    } else {
      switch (it.dtype) {
        case mpix::work::kInt32: accumulate<int32_t, unsigned int>(it, tid, nthreads); break;
        case mpix::work::kInt64: accumulate<long long, unsigned long long>(it, tid, nthreads); break;
        case mpix::work::kFloat: accumulate<float, unsigned int>(it, tid, nthreads); break;
        default: accumulate<double, unsigned long long>(it, tid, nthreads); break;
      }
    }
  }
  if (p.h.nsignal == 0) return;

  mpix_fence_sys();  // this thread's data stores before any signal
  __syncthreads();
  if (gridDim.x > 1) {
    __shared__ int last;
    if (threadIdx.x == 0) {
      unsigned int ticket = atomicAdd(reinterpret_cast<unsigned int *>(p.h.ticket_addr), 1u);
      last = (ticket + 1 == p.h.ticket_expect);
    }
    __syncthreads();
    if (!last) return;
    mpix_fence_sys();
  }
  for (int i = end_ops + threadIdx.x; i < end_ops + p.h.nsignal; i += blockDim.x) {
    const Item &it = p.items[i];
    if (it.flags & mpix::work::kSignalAdd)
      atomicAdd_system(reinterpret_cast<unsigned long long *>(it.a), static_cast<unsigned long long>(it.b));
    else
      mpix_store_release_sys(reinterpret_cast<uint64_t *>(it.a), it.b);
  }
}
}  // namespace

int mpix_launch_epoch_kernel(const mpix::work::LaunchParams &params, int blocks, int threads, void *stream) {
  epoch_kernel<<<blocks, threads, 0, static_cast<mpix_gpu_stream_t>(stream)>>>(params);
  return static_cast<int>(mpix_gpu_get_last_error());
}
