// The schedules of the node-local collectives (coll_args.h), written once over an executor so the
// host backend and the device kernel run the same steps:
//   x.ok()                    false once a wait timed out: the rest of the call is skipped
//   x.cursor()                rounds this communicator ran before this call
//   x.wait(flag, v, peer)     until *flag >= v (acquire, system scope)
//   x.copy(dst, src, bytes)   shared by all the executor's threads
//   x.reduce(dsts, nd, srcs, ns, n)  dsts[k][i] = op over srcs[0..ns)[i], in that order, for i < n
//   x.barrier()               every copy and reduce before it is done and visible at system scope
//   x.signal(flag, v)         *flag = v (release, system scope), stored once
//   x.finish(cursor)          the cursor becomes `cursor` after everything else
// Sources are reduced in rank order on every rank, so every rank computes bit-identical results.
#pragma once
#include <cstdint>
#include <type_traits>

#include "coll_args.h"

namespace mpix::coll {

// Node-local communicators the schedules handle (pointer arrays live on the executor's stack).
constexpr int kMaxRanks = 64;

// Scratch slots are whole multiples of this, so vector copies stay aligned.
constexpr uint64_t kSlotAlign = 64;

// Bytes of one source's slot in a scratch half.
MPIX_HOST_DEVICE inline uint64_t slot_bytes(uint8_t kind, uint8_t algo, int n, uint64_t half_bytes) {
  if (kind == kBcast) return half_bytes;
  const uint64_t slots = kind == kAllreduce && algo == kTwoShot ? 2 * static_cast<uint64_t>(n) : n;
  return half_bytes / slots / kSlotAlign * kSlotAlign;
}

// Elements one round moves (of the vector, or of each rank's block); 0: the scratch is too small.
MPIX_HOST_DEVICE inline uint64_t round_capacity(uint8_t kind, uint8_t algo, int n, uint64_t half_bytes, uint32_t elem) {
  const uint64_t per_slot = slot_bytes(kind, algo, n, half_bytes) / elem;
  return kind == kAllreduce && algo == kTwoShot ? per_slot * n : per_slot;
}

// Element-wise operators of the reductions, shared by host and device code.
template <typename T>
MPIX_HOST_DEVICE inline T reduce_op(uint8_t op, T a, T b) {
  switch (op) {
    case kSum: return a + b;
    case kProd: return a * b;
    case kMax: return a > b ? a : b;
    case kMin: return a < b ? a : b;
    default: break;
  }
  if constexpr (std::is_integral<T>::value) {
    switch (op) {
      case kBand: return a & b;
      case kBor: return a | b;
      default: return a ^ b;
    }
  }
  return b;  // bitwise operators on floating point are refused before enqueue
}

namespace detail {

struct Round {
  uint64_t r;       // the round's number (1-based, communicator-wide)
  uint64_t first;   // first element of the round
  uint64_t elems;   // elements of the round
};

template <class X>
class Schedule {
 public:
  MPIX_HOST_DEVICE Schedule(X &x, const Args &a)
      : x_(x), a_(a), t_(reinterpret_cast<const PeerTable *>(a.table)), n_(a.size), me_(a.rank),
        esize_(elem_size(a.dtype)) {}

  MPIX_HOST_DEVICE void run() {
    const uint64_t base = x_.cursor();
    const uint64_t cap = a_.round_elems;
    for (uint64_t i = 0; i < a_.rounds && x_.ok(); ++i) {
      Round rd{base + i + 1, i * cap, a_.count - i * cap < cap ? a_.count - i * cap : cap};
      switch (a_.kind) {
        case kAllreduce:
          if (a_.algo == kTwoShot) allreduce_two_shot(rd);
          else reduce_one_shot(rd, true);
          break;
        case kReduce: reduce_one_shot(rd, false); break;
        case kBcast: bcast(rd); break;
        case kAllgather: gather_blocks(rd, false); break;
        default: gather_blocks(rd, true); break;
      }
      end_round(rd.r);
    }
    x_.finish(base + a_.rounds);
  }

 private:
  MPIX_HOST_DEVICE char *scratch(int rank, uint64_t r) const {
    return reinterpret_cast<char *>(t_[rank].scratch) + (r & 1) * a_.half_bytes;
  }
  MPIX_HOST_DEVICE uint64_t *flags(int rank) const { return reinterpret_cast<uint64_t *>(t_[rank].flags); }
  MPIX_HOST_DEVICE uint64_t slot_bytes() const { return coll::slot_bytes(a_.kind, a_.algo, n_, a_.half_bytes); }
  MPIX_HOST_DEVICE const char *send() const { return reinterpret_cast<const char *>(a_.sendbuf); }
  MPIX_HOST_DEVICE char *recv() const { return reinterpret_cast<char *>(a_.recvbuf); }

  // May this rank write round r into `peer`'s scratch?
  MPIX_HOST_DEVICE void wait_freed(int peer, uint64_t r) { x_.wait(flags(me_) + FlagLayout::freed(peer, n_), r, peer); }
  MPIX_HOST_DEVICE void wait_arrived(int step, int peer, uint64_t r) {
    x_.wait(flags(me_) + FlagLayout::arrive(step, peer, n_), r, peer);
  }
  MPIX_HOST_DEVICE void tell_arrived(int step, int peer, uint64_t r) {
    x_.signal(flags(peer) + FlagLayout::arrive(step, me_, n_), r);
  }
  // After its last read of its own scratch half: every peer may write round r + 2 into it.
  MPIX_HOST_DEVICE void end_round(uint64_t r) {
    x_.barrier();
    for (int q = 0; q < n_; ++q)
      if (q != me_) x_.signal(flags(q) + FlagLayout::freed(me_, n_), r + 2);
  }

  // Allreduce (every rank receives) or reduce (the root does): each pusher stores its round into
  // the receiver's slot `me`, the receiver reduces all slots with its own input in rank order.
  MPIX_HOST_DEVICE void reduce_one_shot(const Round &rd, bool all) {
    const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_, slot = slot_bytes();
    for (int q = 0; q < n_; ++q) {
      if (q == me_ || (!all && q != a_.root)) continue;
      wait_freed(q, rd.r);
      x_.copy(scratch(q, rd.r) + me_ * slot, send() + off, bytes);
    }
    x_.barrier();
    for (int q = 0; q < n_; ++q)
      if (q != me_ && (all || q == a_.root)) tell_arrived(0, q, rd.r);
    if (!all && me_ != a_.root) return;
    const void *srcs[kMaxRanks];
    for (int q = 0; q < n_; ++q) {
      if (q != me_) wait_arrived(0, q, rd.r);
      srcs[q] = q == me_ ? static_cast<const void *>(send() + off) : scratch(me_, rd.r) + q * slot;
    }
    void *dst = recv() + off;
    x_.reduce(&dst, 1, srcs, n_, rd.elems);
  }

  // Allreduce in two pushes: part j of the round goes to rank j (reduce-scatter into scratch half
  // A), rank j reduces it and pushes the result into every rank's half B slot j (allgather), and
  // every rank copies the parts out.
  MPIX_HOST_DEVICE void allreduce_two_shot(const Round &rd) {
    const uint64_t slot = slot_bytes();
    const uint64_t part = (rd.elems + n_ - 1) / n_;
    auto part_first = [&](int j) { return j * part < rd.elems ? j * part : rd.elems; };
    auto part_elems = [&](int j) { return part_first(j + 1) - part_first(j); };
    const uint64_t off = rd.first * esize_;
    for (int q = 0; q < n_; ++q) {
      if (q == me_) continue;
      wait_freed(q, rd.r);
      x_.copy(scratch(q, rd.r) + me_ * slot, send() + off + part_first(q) * esize_, part_elems(q) * esize_);
    }
    x_.barrier();
    for (int q = 0; q < n_; ++q)
      if (q != me_) tell_arrived(0, q, rd.r);
    const void *srcs[kMaxRanks];
    void *dsts[kMaxRanks];
    const uint64_t mine = off + part_first(me_) * esize_;
    for (int q = 0; q < n_; ++q) {
      if (q != me_) wait_arrived(0, q, rd.r);
      srcs[q] = q == me_ ? static_cast<const void *>(send() + mine) : scratch(me_, rd.r) + q * slot;
      // Half B of every peer's scratch (after the n slots of half A), slot me; and my own result.
      dsts[q] = q == me_ ? static_cast<void *>(recv() + mine) : scratch(q, rd.r) + (n_ + me_) * slot;
    }
    x_.reduce(dsts, n_, srcs, n_, part_elems(me_));
    x_.barrier();
    for (int q = 0; q < n_; ++q)
      if (q != me_) tell_arrived(1, q, rd.r);
    for (int q = 0; q < n_; ++q) {
      if (q == me_) continue;
      wait_arrived(1, q, rd.r);
      x_.copy(recv() + off + part_first(q) * esize_, scratch(me_, rd.r) + (n_ + q) * slot, part_elems(q) * esize_);
    }
  }

  // The root pushes the round into every peer's scratch; each peer copies it out.
  MPIX_HOST_DEVICE void bcast(const Round &rd) {
    const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_;
    if (me_ == a_.root) {
      for (int q = 0; q < n_; ++q) {
        if (q == me_) continue;
        wait_freed(q, rd.r);
        x_.copy(scratch(q, rd.r), send() + off, bytes);
      }
      x_.barrier();
      for (int q = 0; q < n_; ++q)
        if (q != me_) tell_arrived(0, q, rd.r);
      return;
    }
    wait_arrived(0, a_.root, rd.r);
    x_.copy(recv() + off, scratch(me_, rd.r), bytes);
  }

  // Allgather (every peer gets my block) or alltoall (peer q gets my block q): pushed into slot
  // `me` of each peer's scratch, then every rank copies its slots out into its receive blocks.
  MPIX_HOST_DEVICE void gather_blocks(const Round &rd, bool personal) {
    const uint64_t block = a_.count * esize_, off = rd.first * esize_, bytes = rd.elems * esize_;
    const uint64_t slot = slot_bytes();
    for (int q = 0; q < n_; ++q) {
      const char *src = send() + (personal ? q * block : 0) + off;
      if (q == me_) {
        if (src != recv() + me_ * block + off) x_.copy(recv() + me_ * block + off, src, bytes);
        continue;
      }
      wait_freed(q, rd.r);
      x_.copy(scratch(q, rd.r) + me_ * slot, src, bytes);
    }
    x_.barrier();
    for (int q = 0; q < n_; ++q)
      if (q != me_) tell_arrived(0, q, rd.r);
    for (int q = 0; q < n_; ++q) {
      if (q == me_) continue;
      wait_arrived(0, q, rd.r);
      x_.copy(recv() + q * block + off, scratch(me_, rd.r) + q * slot, bytes);
    }
  }

  X &x_;
  const Args &a_;
  const PeerTable *t_;
  int n_, me_;
  uint32_t esize_;
};

}  // namespace detail

template <class X>
MPIX_HOST_DEVICE void run_schedule(X &x, const Args &a) {
  detail::Schedule<X>(x, a).run();
}


}  // namespace mpix::coll
