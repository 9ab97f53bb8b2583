// The device side of the collective kernel: one launch runs a whole collective call
// (kernels/coll/run_schedule.h). Each block runs channels blockIdx.x, blockIdx.x + gridDim.x, ... of
// the call: its threads walk the channel's schedule and share its copies and reductions, its first
// thread polls the flags a step waits for, and a block barrier with a system-scope fence orders the
// data before the signals that announce it (kSimple). Under kLL every thread polls the lines of its
// own units and no fence is needed (lines.h). Blocks never wait for each other; they never
// outnumber what the device runs at once (the backend sizes the grid), so a channel a peer waits
// on is always running. The same source builds as CUDA (nvcc) and HIP (hipcc -x hip).
//
// Each path's translation unit (kernel_<path>.cu) instantiates its own kernel from here, so the
// kernels compile in parallel; kernel.cu picks the path of a call.
#pragma once
#include <cstdio>

#include "kernels/device_atomics.h"
#include "kernels/device_copy.h"
#include "kernels/epoch_launch.h"
#include "kernels/launch_overlap.h"
#include "kernels/launch_trace.h"
#include "kernels/watchdog_report.h"
#include "paths.h"
#include "reduce_ops.h"
#include "run_schedule.h"

namespace {
using mpix::coll::Args;

// Words of a launch's barrier slot: blocks finished, abandoned (a wait timed out: every spin
// ends). The last block to finish resets them for the next launch (or replay) that uses the slot.
enum BarrierWord { kFinished = 1, kAbandoned = 2 };

// Vectors v, v + stride, ..., v + (U - 1) * stride of 16 bytes each: every source's U loads are
// issued before any is combined, so a thread keeps U loads in flight instead of one. Elements are
// combined as ReduceIn<T>::Acc (float for the half types) and stored once.
template <typename T, int U, class Dsts, class Srcs>
__device__ MPIX_FORCEINLINE void reduce_vectors(const Dsts &dsts, int ndst, const Srcs &srcs, int nsrc, uint64_t v,
                                                uint64_t stride, uint8_t op) {
  using In = mpix::coll::ReduceIn<T>;
  using Acc = typename In::Acc;
  constexpr int kLanes = 16 / sizeof(T);
  union Vec {
    uint4 raw;
    T lane[kLanes];
  };
  Vec in[U];
  Acc acc[U][kLanes];
#pragma unroll
  for (int u = 0; u < U; ++u) in[u].raw = reinterpret_cast<const uint4 *>(srcs[0])[v + u * stride];
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int l = 0; l < kLanes; ++l) acc[u][l] = In::load(in[u].lane[l]);
  for (int s = 1; s < nsrc; ++s) {
#pragma unroll
    for (int u = 0; u < U; ++u) in[u].raw = reinterpret_cast<const uint4 *>(srcs[s])[v + u * stride];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int l = 0; l < kLanes; ++l) acc[u][l] = mpix::coll::reduce_op<Acc>(op, acc[u][l], In::load(in[u].lane[l]));
  }
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int l = 0; l < kLanes; ++l) in[u].lane[l] = In::store(acc[u][l]);
  for (int d = 0; d < ndst; ++d)
#pragma unroll
    for (int u = 0; u < U; ++u) reinterpret_cast<uint4 *>(dsts[d])[v + u * stride] = in[u].raw;
}

// dsts and srcs are indexable (schedule.h): Indexed functions of the piece, so that no array
// of addresses lies in a thread's local memory.
template <typename T, class Dsts, class Srcs>
__device__ MPIX_FORCEINLINE void reduce_elements(const Dsts &dsts, int ndst, const Srcs &srcs, int nsrc, uint64_t n,
                                                 uint8_t op, uint64_t tid, uint64_t nthreads) {
  using In = mpix::coll::ReduceIn<T>;
  using Acc = typename In::Acc;
  // 16-byte vectors when every pointer allows it. Loads in flight per thread: 4 vectors for types
  // of 4 or more bytes, fewer where a vector holds more lanes (registers: the kernel's bound is 128).
  constexpr int kLanes = 16 / sizeof(T);
  constexpr int kUnroll = kLanes <= 4 ? 4 : kLanes <= 8 ? 2 : 1;
  uintptr_t bits = 0;
  for (int s = 0; s < nsrc; ++s) bits |= reinterpret_cast<uintptr_t>(srcs[s]);
  for (int d = 0; d < ndst; ++d) bits |= reinterpret_cast<uintptr_t>(dsts[d]);
  uint64_t done = 0;
  if ((bits & 15) == 0) {
    const uint64_t nvec = n / kLanes;
    uint64_t v = tid;
    for (; v + (kUnroll - 1) * nthreads < nvec; v += kUnroll * nthreads)
      reduce_vectors<T, kUnroll>(dsts, ndst, srcs, nsrc, v, nthreads, op);
    for (; v < nvec; v += nthreads) reduce_vectors<T, 1>(dsts, ndst, srcs, nsrc, v, nthreads, op);
    done = nvec * kLanes;
  }
  for (uint64_t i = done + tid; i < n; i += nthreads) {
    Acc acc = In::load(static_cast<const T *>(srcs[0])[i]);
    for (int s = 1; s < nsrc; ++s)
      acc = mpix::coll::reduce_op<Acc>(op, acc, In::load(static_cast<const T *>(srcs[s])[i]));
    const T out = In::store(acc);
    for (int d = 0; d < ndst; ++d) static_cast<T *>(dsts[d])[i] = out;
  }
}

// MPIX_ST_TRACE (launch_trace.h): block 0's clock reads of enter, waited, ops_done and exit, in
// shared memory rather than registers the schedules need; the kernel writes them at its end. Enter
// is taken once the previous kernel on the stream is done (launch_overlap.h): the time a launch
// holds, and the gap before it, mean the same with and without overlap. Waited is when the last
// of block 0's waits on a peer (a flag, a line) ended, whichever thread waited: so the trace
// tells time spent waiting for peers from the block's own work.
__shared__ uint64_t coll_stamps[4];
__device__ inline bool coll_tracer(const Args &a) { return a.trace && blockIdx.x == 0 && mpix_trace_thread(); }

__device__ inline void note_coll_waited(const Args &a) {
  if (a.trace && blockIdx.x == 0)
    atomicMax(reinterpret_cast<unsigned long long *>(&coll_stamps[1]), static_cast<unsigned long long>(mpix_clock_ns()));
}

// Out of line, so the kernel keeps no registers for it; arguments by value, so the call's Args
// never needs an address.
__device__ __noinline__ void write_coll_trace(uint64_t trace, uint32_t comm_id, uint8_t kind) {
  coll_stamps[3] = mpix_clock_ns();
  const uint16_t events[4] = {mpix::work::kTraceEnter, mpix::work::kTraceWaited, mpix::work::kTraceOpsDone,
                              mpix::work::kTraceExit};
  mpix_trace_write(trace, comm_id, coll_stamps, events, 4, mpix::work::trace_collective_parts(kind));
}

// A wait's watchdog fired, or (`after_fault`) the wait ended at once behind an earlier timeout of
// the communicator (work::fault_skips): its fault word and the mailbox (watchdog_report.h), and a
// message for the process's first report. Out of line and by value, as write_coll_trace.
__device__ __noinline__ void report_coll_timeout(uint64_t mailbox, uint32_t comm_id, int rank, uint64_t watchdog_ns,
                                                 int peer, uint64_t want, uint64_t seen, uint64_t fault_addr,
                                                 bool after_fault) {
  if (!mpix_report_timeout(mailbox, fault_addr, after_fault, comm_id, peer, mpix::work::kWaitCollective, want, seen))
    return;
  if (after_fault)
    printf("mpix-st watchdog: collective on communicator %u (rank %d): a wait for round %llu from rank %d ended at "
           "once behind an earlier timeout of the communicator (flag at %llu)\n",
           comm_id, rank, (unsigned long long)want, peer, (unsigned long long)seen);
  else
    printf("mpix-st watchdog: collective on communicator %u (rank %d) waited %llu ms for round %llu from rank %d "
           "(flag at %llu)\n",
           comm_id, rank, (unsigned long long)(watchdog_ns / 1000000ull), (unsigned long long)want, peer,
           (unsigned long long)seen);
}

class DeviceCollExecutor {
 public:
  __device__ DeviceCollExecutor(const Args &a, int *failed, const mpix::coll::PeerTable *table)
      : a_(a), failed_(failed), table_(table), words_(reinterpret_cast<unsigned int *>(a.barrier)),
        tid_(threadIdx.x), nthreads_(blockDim.x) {}

  // The block's copy in shared memory: the addresses of peers' scratch and flags without a
  // dependent global load each.
  __device__ const mpix::coll::PeerTable *table() const { return table_; }

  // Uniform within a block where the schedules read it (after a block barrier): flag waits set
  // *failed_ before their barrier, kLL line waits mid-step, and every thread sees it by the next.
  __device__ bool ok() const { return !*failed_; }

  __device__ uint64_t load(const uint64_t *word) const { return *reinterpret_cast<const volatile uint64_t *>(word); }
  __device__ uint64_t cursor() const { return load(cursor_word()); }

  // Only later launches on this rank read the word: the kernel boundary orders it, no fence needed.
  __device__ void set(uint64_t *word, uint64_t value) {
    if (threadIdx.x == 0) *reinterpret_cast<volatile uint64_t *>(word) = value;
  }

  __device__ MPIX_FORCEINLINE void wait(const uint64_t *flag, uint64_t want, int peer) {
    if (threadIdx.x == 0 && !*failed_) poll(flag, want, peer);
    __syncthreads();
  }
  // Thread q polls peer q's flag: the loads' round trips overlap instead of following one another
  // (one thread waiting for each peer in turn paid a round trip per peer on every call).
  __device__ MPIX_FORCEINLINE void wait_all(const uint64_t *first, uint64_t peers, uint64_t want) {
    for (int q = threadIdx.x; q < mpix::coll::kMaxRanks; q += blockDim.x)
      if (((peers >> q) & 1) && !failed()) poll(first + q, want, q);
    __syncthreads();
  }

  __device__ void copy(void *dst, const void *src, uint64_t bytes) {
    if (!*failed_) copy_bytes(static_cast<char *>(dst), static_cast<const char *>(src), bytes, tid_, nthreads_);
  }

  template <class Dsts, class Srcs>
  __device__ MPIX_FORCEINLINE void reduce(const Dsts &dsts, int ndst, const Srcs &srcs, int nsrc, uint64_t n) {
    if (*failed_) return;
    mpix::coll::with_reduce_type(a_.dtype, [&](auto t) {
      reduce_elements<typename decltype(t)::type>(dsts, ndst, srcs, nsrc, n, a_.op, tid_, nthreads_);
    });
  }

  // The block's stores, fenced at system scope by one thread after the block barrier (fences are
  // cumulative); that thread signals afterwards.
  __device__ void barrier() {
    __syncthreads();
    if (threadIdx.x == 0) mpix_fence_sys();
    __syncthreads();
  }

  // Every signal follows a barrier(), whose system-scope fence by this same thread makes the
  // relaxed store a release of everything the block did before it (PTX's fence-then-store pattern).
  __device__ void signal(uint64_t *flag, uint64_t value) {
    if (threadIdx.x == 0 && !*failed_) *reinterpret_cast<volatile uint64_t *>(flag) = value;
  }

  // Freed signals (and other stores that announce reads done, not data): one thread per peer, so
  // the stores to different GPUs leave together instead of one thread's in turn.
  template <class AddressOf>
  __device__ MPIX_FORCEINLINE void signal_each(uint64_t peers, uint64_t value, AddressOf &&address_of) {
    if (*failed_) return;
    for (int q = threadIdx.x; q < mpix::coll::kMaxRanks; q += blockDim.x)
      if ((peers >> q) & 1) *reinterpret_cast<volatile uint64_t *>(address_of(q)) = value;
  }

  __device__ void settle() { __syncthreads(); }

  // Lines (lines.h): thread t handles units t, t + nthreads, ... in every step, so an input
  // unit read for a push is the result unit the same thread stores later (in place).
  __device__ void put_lines(char *lines, const char *src, uint64_t bytes, uint64_t round) {
    if (*failed_) return;
    const uint32_t tag = mpix::coll::line_tag(round);
    for (uint64_t u = tid_; u < mpix::coll::unit_count(bytes); u += nthreads_) {
      const uint64_t v = mpix::coll::load_unit(src + u * mpix::coll::kLinePayload, mpix::coll::unit_bytes(bytes, u));
      mpix_store_tagged_line(line(lines, u), v, tag);
    }
  }
  // Pieces k < pieces: srcs[k]'s `bytes` as lines at lines[k]. The threads share the pieces' units
  // as one run (piece after piece), so a call of a few units stores to every peer from different
  // threads at once, and a large one keeps each warp's stores contiguous within a piece.
  template <class Lines, class Srcs>
  __device__ MPIX_FORCEINLINE void put_lines_each(const Lines &lines, const Srcs &srcs, int pieces, uint64_t bytes,
                                                  uint64_t round) {
    if (*failed_) return;
    const uint32_t tag = mpix::coll::line_tag(round);
    const uint64_t units = mpix::coll::unit_count(bytes);
    for (uint64_t i = tid_; i < units * pieces; i += nthreads_) {
      // 32 bits: a kLL call's lines fit them (its line areas are a few MiB), and a 64-bit
      // division is a chain of about a hundred dependent instructions.
      const uint64_t k = static_cast<uint32_t>(i) / static_cast<uint32_t>(units), u = i - k * units;
      const uint64_t v = mpix::coll::load_unit(srcs[k] + u * mpix::coll::kLinePayload, mpix::coll::unit_bytes(bytes, u));
      mpix_store_tagged_line(line(lines[k], u), v, tag);
    }
  }
  // Pieces k < pieces of `bytes`, from peers[k]'s lines at lines[k] into dsts[k]. A thread looks
  // at its unit of every piece before it waits for any, so the loads' round trips overlap.
  template <class Dsts, class Lines, class Peers>
  __device__ MPIX_FORCEINLINE void get_lines(const Dsts &dsts, const Lines &lines, const Peers &peers, int pieces,
                                             uint64_t bytes, uint64_t round) {
    for (uint64_t u = tid_; u < mpix::coll::unit_count(bytes); u += nthreads_) {
      auto line_of = [&](int k) { return line(lines[k], u); };
      Looks looks;
      looks.take(0, pieces, line_of);
      for (int k = 0; k < pieces; ++k) {
        if (!looks.holds(k)) looks.take(k, pieces, line_of);
        uint64_t v;
        if (!await_line(lines[k], u, round, peers[k], looks, k, &v)) return;
        mpix::coll::store_unit(dsts[k] + u * mpix::coll::kLinePayload, v, mpix::coll::unit_bytes(bytes, u));
      }
    }
  }
  template <class Outs, class Srcs>
  __device__ MPIX_FORCEINLINE void reduce_lines(char *dst, const Outs &outs, int nout, const Srcs &srcs, int nsrc,
                                                int own, uint64_t n, uint64_t round) {
    mpix::coll::with_reduce_type(a_.dtype, [&](auto t) {
      reduce_lines_typed<typename decltype(t)::type>(dst, outs, nout, srcs, nsrc, own, n, round);
    });
  }

  // The last block to finish advances the cursor and resets the barrier slot. The count says only
  // that every block got here: what the blocks did reaches this rank's later launches through the
  // kernel boundary, and the host's drain check needs the count alone (every read of this rank's
  // scratch has been used by then; stores into peers' scratch are what the peers wait for), so no
  // fence precedes or follows it, as none follows the one-block store. A system-scope fence here
  // cost about a microsecond per call, two gpu-scope fences 0.5-0.6 us per call of two or more
  // blocks (2 H200s, coll_bench --graph, one job).
  __device__ MPIX_FORCEINLINE void finish(uint64_t value) {
    __syncthreads();
    if (coll_tracer(a_)) coll_stamps[2] = mpix_clock_ns();
    if (threadIdx.x != 0) return;
    auto *cursor = const_cast<volatile uint64_t *>(cursor_word());
    // One finisher per call, and a communicator's calls run in stream order: a plain increment.
    auto *eager = cursor + (mpix::coll::FlagLayout::eager_calls(a_.size) - mpix::coll::FlagLayout::cursor(a_.size));
    if (gridDim.x == 1) {
      *cursor = value;
      if (a_.counted) *eager = *eager + 1;
      return;
    }
    if (atomicAdd(words_ + kFinished, 1u) + 1 != gridDim.x) return;
    *cursor = value;
    if (a_.counted) *eager = *eager + 1;
    atomicExch(words_ + kAbandoned, 0u);
    atomicExch(words_ + kFinished, 0u);
  }

 private:
  // One thread's wait for *flag >= want; a timeout or an abandoned launch fails the call.
  __device__ MPIX_FORCEINLINE void poll(const uint64_t *flag, uint64_t want, int peer) {
    const uint64_t start = a_.watchdog_ns ? mpix_clock_ns() : 0;
    uint64_t seen;
    for (uint32_t polls = 0; (seen = mpix_load_acquire_sys(flag)) < want; ++polls) {
      if (failed()) break;  // another thread's wait (wait_all) timed out
      if (abandoned()) {
        *failed_ = 1;
        break;
      }
      const bool own = a_.watchdog_ns && timed_out(start);
      if (own || (a_.watchdog_ns && (polls & 63) == 0 && behind_fault())) {
        report(peer, want, seen, !own);
        *failed_ = 1;
        break;
      }
    }
    note_coll_waited(a_);
  }
  __device__ bool timed_out(uint64_t start) const { return mpix_clock_ns() - start > a_.watchdog_ns; }
  // Whether an earlier call of the communicator timed out (work::fault_skips): read by waits that
  // have not passed, where a watchdog is set (faults come from its timeouts), at their first poll
  // that found nothing and every 64th (kLL line waits, every thread of the block: every 1024th).
  __device__ bool behind_fault() const {
    return a_.fault && mpix::work::fault_skips(*reinterpret_cast<const volatile uint64_t *>(a_.fault), a_.taken,
                                               !a_.counted);
  }
  __device__ const uint64_t *cursor_word() const {
    return reinterpret_cast<const uint64_t *>(table_[a_.rank].flags) + mpix::coll::FlagLayout::cursor(a_.size);
  }
  __device__ static uint64_t *line(const char *lines, uint64_t u) {
    return reinterpret_cast<uint64_t *>(const_cast<char *>(lines) + u * mpix::coll::kLineBytes);
  }
  __device__ bool failed() const { return *reinterpret_cast<const volatile int *>(failed_); }
  // First looks at one unit's lines from sources first .. first + kAhead - 1, loaded together: a
  // thread then pays one load round trip for them all, not one per source (the loads are
  // volatile, so only their order of issue can overlap them). Four keep the kernel free of
  // spills (eight spilled 420 bytes); callers take the next four when they reach them.
  struct Looks {
    static constexpr int kAhead = 4;
    int first;
    uint64_t w0[kAhead], w1[kAhead];
    template <class LineOf>
    __device__ MPIX_FORCEINLINE void take(int from, int count, LineOf &&line_of) {
      first = from;
#pragma unroll
      for (int j = 0; j < kAhead; ++j) {
        w0[j] = w1[j] = 0;  // tag 0: never a round's, so an unlooked source is polled
        const uint64_t *p = from + j < count ? line_of(from + j) : nullptr;
        if (p) mpix_load_line(p, &w0[j], &w1[j]);
      }
    }
    __device__ bool holds(int k) const { return k >= first && k < first + kAhead; }
    // Look k, selected without a dynamic index so the looks stay in registers.
    __device__ void get(int k, uint64_t *a, uint64_t *b) const {
      *a = *b = 0;
#pragma unroll
      for (int j = 0; j < kAhead; ++j)
        if (first + j == k) *a = w0[j], *b = w1[j];
    }
  };
  // Line u of round `round` from `peer`, starting from look k: its payload, or false once this
  // call failed (a wait of any thread of the block, or of another block, timed out).
  __device__ MPIX_FORCEINLINE bool await_line(const char *lines, uint64_t u, uint64_t round, int peer,
                                              const Looks &looks, int k, uint64_t *payload) {
    const uint32_t tag = mpix::coll::line_tag(round);
    const uint64_t *p = line(lines, u);
    uint64_t w0, w1;
    looks.get(k, &w0, &w1);
    if (!mpix::coll::line_has(w0, w1, tag)) {
      const uint64_t start = a_.watchdog_ns ? mpix_clock_ns() : 0;
      mpix_load_line(p, &w0, &w1);
      for (unsigned spin = 1; !mpix::coll::line_has(w0, w1, tag); ++spin) {
        if ((spin & 127) == 0) {
          if (failed()) return false;
          const bool own = a_.watchdog_ns && timed_out(start);
          if (abandoned() || own || (a_.watchdog_ns && (spin & 1023) == 0 && behind_fault())) {
            if (!abandoned()) report(peer, round, mpix::coll::line_round_seen(w0), !own);
            *reinterpret_cast<volatile int *>(failed_) = 1;
            return false;
          }
        }
        mpix_load_line(p, &w0, &w1);
      }
    }
    note_coll_waited(a_);
    *payload = mpix::coll::line_payload(w0, w1);
    return true;
  }
  template <typename T, class Outs, class Srcs>
  __device__ MPIX_FORCEINLINE void reduce_lines_typed(char *dst, const Outs &outs, int nout, const Srcs &srcs,
                                                      int nsrc, int own, uint64_t n, uint64_t round) {
    const uint64_t bytes = n * sizeof(T);
    const uint32_t tag = mpix::coll::line_tag(round);
    for (uint64_t u = tid_; u < mpix::coll::unit_count(bytes); u += nthreads_) {
      const uint64_t k = mpix::coll::unit_bytes(bytes, u);
      // The own unit's load and a first look at every line are issued before any is used.
      const uint64_t mine = mpix::coll::load_unit(static_cast<const char *>(srcs[own]) + u * mpix::coll::kLinePayload, k);
      auto line_of = [&](int s) { return s == own ? nullptr : line(static_cast<const char *>(srcs[s]), u); };
      Looks looks;
      looks.take(0, nsrc, line_of);
      auto fetch = [&](int s, uint64_t *v) {
        if (s == own) {
          *v = mine;
          return true;
        }
        if (!looks.holds(s)) looks.take(s, nsrc, line_of);
        return await_line(static_cast<const char *>(srcs[s]), u, round, s, looks, s, v);
      };
      uint64_t out;
      if (!mpix::coll::reduce_unit<T>(a_.op, nsrc, fetch, &out)) return;
      if (dst) mpix::coll::store_unit(dst + u * mpix::coll::kLinePayload, out, k);
      for (int d = 0; d < nout; ++d)
        mpix_store_tagged_line(line(outs[d], u), out, tag);
    }
  }
  __device__ bool abandoned() const {
    return gridDim.x > 1 && *reinterpret_cast<volatile unsigned int *>(words_ + kAbandoned);
  }
  __device__ MPIX_FORCEINLINE void report(int peer, uint64_t want, uint64_t seen, bool after_fault = false) {
    if (gridDim.x > 1) atomicExch(words_ + kAbandoned, 1u);
    report_coll_timeout(a_.mailbox, a_.comm_id, a_.rank, a_.watchdog_ns, peer, want, seen, a_.fault, after_fault);
  }

  const Args &a_;
  int *failed_;
  const mpix::coll::PeerTable *table_;
  unsigned int *words_;
  uint64_t tid_, nthreads_;
};

// A kernel per path, so that each gets its registers to itself (with two-shot's path inlined
// beside the others, ptxas spilled 132 bytes where it had spilled 16). Every path runs inlined
// whole, reading its arguments from the kernel parameter (Schedule::run_lines_call says why).
using mpix::coll::Path;

template <Path P>
__global__ void MPIX_RESIDENT_BOUNDS(kLaunchThreads, kCollBlocksPerSm) coll_kernel(const Args a) {
  __shared__ int failed;
  __shared__ mpix::coll::PeerTable table[mpix::coll::kMaxRanks];
  if (threadIdx.x == 0) failed = 0;
  // The peer table is fixed with the communicator's context: read before the previous kernel on
  // the stream has finished (launch_overlap.h); cursors, flags and buffers only after.
  const auto *global_table = reinterpret_cast<const mpix::coll::PeerTable *>(a.table);
  for (int q = threadIdx.x; q < a.size; q += blockDim.x) table[q] = global_table[q];
  mpix_grid_dependency_wait();
  mpix_grid_launch_dependents();
  if (coll_tracer(a)) coll_stamps[0] = coll_stamps[1] = mpix_clock_ns();
  __syncthreads();
  DeviceCollExecutor x(a, &failed, table);
  mpix::coll::run_path_schedule<P>(x, a, blockIdx.x, gridDim.x);
  if (coll_tracer(a)) write_coll_trace(a.trace, a.comm_id, a.kind);
}

}  // namespace

// paths.h: each kernel_<path>.cu instantiates these for its path alone.
template <mpix::coll::Path P>
int mpix_launch_coll_path(const mpix::coll::Args &args, int blocks, int threads, void *stream, bool overlap) {
  return mpix_launch_kernel(coll_kernel<P>, blocks, threads, stream, overlap, args);
}
template <mpix::coll::Path P>
bool mpix_coll_path_supports_overlap() {
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
  return false;
#else
  cudaFuncAttributes f{};
  if (cudaFuncGetAttributes(&f, reinterpret_cast<const void *>(coll_kernel<P>)) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return f.ptxVersion >= 90 && f.binaryVersion >= 90;
#endif
}
