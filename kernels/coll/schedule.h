// The schedules of the node-local collectives (args.h), written once over an executor so the
// host backend and the device kernel run the same steps:
//   x.ok()                    false once a wait timed out: the rest of the call is skipped
//   x.cursor()                rounds this communicator ran before this call
//   x.wait(flag, v, peer)     until *flag >= v (acquire, system scope)
//   x.wait_all(first, peers, v)  until first[q] >= v for every bit q of `peers`, the waits
//                             overlapping where the executor can
//   x.copy(dst, src, bytes)   shared by the threads that run the channel (a device block)
//   x.reduce(dsts, nd, srcs, ns, n)  dsts[k][i] = op over srcs[0..ns)[i], in that order, for i < n
//                             (dsts and srcs indexable, as the per-piece arguments below)
//   x.barrier()               the channel's copies and reductions before it are done and visible
//                             at system scope
//   x.signal(flag, v)         *flag = v (release, system scope), stored once
//   x.signal_each(peers, v, address_of)  *address_of(q) = v for every bit q of `peers`, stored
//                             once each, the stores overlapping where the executor can; for
//                             stores that announce reads done (freed), which need no release
//   x.load(word)              a flag word of this rank, as every thread sees it
//   x.set(word, v)            *word = v, stored once, even after a timeout
//   x.finish(cursor)          once per executor (each block): once every channel of the call is
//                             done, the communicator's cursor becomes `cursor`
//   x.table()                 the PeerTable (a.table, or a copy the executor keeps nearer)
// and for the kLL protocol (lines.h), each over units of 8 payload bytes:
//   x.put_lines(lines, src, bytes, r)      src's bytes as lines tagged for round r
// Per-piece arguments (lines, srcs, dsts, peers, outs) are anything indexable: arrays, or
// Indexed functions of the piece (below), which the kLL paths pass so that no array of peer
// addresses is built in a thread's local memory (see run_lines_call).
//   x.put_lines_each(lines, srcs, k, bytes, r)  the same for pieces j < k (srcs[j] to lines[j]),
//                             the pieces' stores overlapping where the executor can; a unit of
//                             a source may be read by any thread (settle before overwriting it)
//   x.get_lines(dsts, lines, peers, k, bytes, r)  for pieces j < k: waits for each line of round r
//                             from peers[j] at lines[j], stores its payload at dsts[j]
//   x.reduce_lines(dst, outs, no, srcs, ns, own, n, r)  dst[i] (dst may be null) and lines of
//                             round r at outs[0..no) = op over sources in order: srcs[own] is
//                             memory, srcs[s] (s != own) lines of round r from rank s
//   x.settle()                the channel's steps before it are done (no fence)
// Sources are reduced in rank order on every rank, so every rank computes bit-identical results.
#pragma once
#include <cstdint>

#include "args.h"
#include "geometry.h"
#include "paths.h"

namespace mpix::coll {

// Piece k's value as at(k), indexable like an array without being one.
template <class F>
struct Indexed {
  F at;
  MPIX_HOST_DEVICE auto operator[](int k) const { return at(k); }
};
template <class F>
MPIX_HOST_DEVICE Indexed<F> indexed(F f) {
  return Indexed<F>{f};
}
// The same value for every piece.
template <class T>
MPIX_HOST_DEVICE auto same(T v) {
  return indexed([v](int) { return v; });
}
// Two pieces: first, then second.
template <class T>
MPIX_HOST_DEVICE auto pair_of(T first, T second) {
  return indexed([first, second](int k) { return k == 0 ? first : second; });
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
  // Channel `channel` of the call: its rounds follow the channel's own count.
  MPIX_HOST_DEVICE Schedule(X &x, const Args &a, uint32_t channel)
      : x_(x), a_(a), t_(x.table()), n_(a.size), me_(a.rank),
        esize_(elem_size(a.dtype)), channel_(channel),
        base_(x.load(flags(a.rank) + FlagLayout::channel_cursor(a.size))) {}

  // The channel's rounds of a kSimple call of path P, then its count advanced (after the last
  // round's barrier: every thread read the old count long before).
  template <Path P>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void run() {
    run_rounds<P>();
    advance();
  }
  // Every kLL call (one-shot and two-shot allreduce and reduce, direct bcast, allgather and
  // alltoall; Path::kLines and kTwoShotLines). Like run(), every step inlined, so that on a device
  // the schedule, its executor and the call's arguments stay in registers. A schedule object that
  // an outlined step receives lives in a thread's local memory, and so does every array of peer
  // addresses a step builds: on 4 H100s a chain of replayed one-shot reduces took 1.25 us a call
  // with neither and 2.2-6.3 us with one to eight such arrays read on the way
  // (bench/probes/call_chain_cuda.cu).
  template <bool TwoShot>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_lines_call() {
    if (TwoShot) run_two_shot_lines();
    else run_lines();
    advance();
  }

 private:
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void advance() {
    x_.set(flags(me_) + FlagLayout::channel_cursor(n_), base_ + a_.rounds);
  }
  template <Path P>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_rounds() {
    if constexpr (P == Path::kMoves)
      if ((a_.kind == kAllgather && a_.algo != kRing) || a_.kind == kAlltoall) return gather_pipelined(a_.kind == kAlltoall);
    for (uint64_t i = 0; i < a_.rounds && x_.ok(); ++i) {
      const Round rd = round(i);
      step<P>(rd);
      // A direct bcast's root read no scratch since its round's barrier: its freed signals need
      // no second one.
      if (a_.kind == kBcast && a_.algo != kChain && a_.algo != kBinomial && me_ == a_.root) signal_freed(rd.r);
      else end_round(rd.r);
    }
  }
  // Round rd's steps on path P (path_of chose P by the call's kind and algorithm).
  template <Path P>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void step(const Round &rd) {
    const bool all = a_.kind == kAllreduce;
    if constexpr (P == Path::kTwoShot) {
      two_shot(rd, all);
    } else if constexpr (P == Path::kRing) {
      allreduce_ring(rd);
    } else if constexpr (P == Path::kChainReduce) {
      reduce_chain(rd);
    } else if constexpr (P == Path::kOneShot) {
      reduce_one_shot(rd, all);
    } else if constexpr (P == Path::kReduce) {
      if (a_.kind == kLocalReduce) local_reduce(rd);
      else if (a_.algo == kGsb) allreduce_gsb(rd);
      else allreduce_btb(rd);
    } else if (a_.kind == kBcast) {
      if (a_.algo == kChain) bcast_chain(rd);
      else if (a_.algo == kBinomial) bcast_binomial(rd);
      else bcast(rd);
    } else if (a_.kind == kAllgather) {
      allgather_ring(rd);
    } else {
      local_copy(rd);
    }
  }

  // This channel's slice of round i (0-based): a round moves up to channels x round_elems
  // elements, each channel its share of them in channel order (set_geometry).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE Round round(uint64_t i) const {
    const uint64_t full = channel_count(a_) * a_.round_elems, start = i * full;
    const uint64_t total = a_.count - start < full ? a_.count - start : full;
    const uint64_t share = i + 1 == a_.rounds ? a_.last_share : a_.round_elems;
    const uint64_t skip = channel_ * share < total ? channel_ * share : total;
    return Round{base_ + i + 1, start + skip, total - skip < share ? total - skip : share};
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE char *scratch(int rank, uint64_t r) const {
    return reinterpret_cast<char *>(t_[rank].scratch) + (r & 1) * a_.half_bytes + channel_ * a_.channel_half;
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE uint64_t *flags(int rank) const {
    return reinterpret_cast<uint64_t *>(t_[rank].flags) + channel_ * FlagLayout::words(n_);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE uint64_t slot_bytes() const { return a_.slot; }
  // kLL: this channel's line area in `rank`'s scratch for round r, after both halves.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE char *lines(int rank, uint64_t r) const {
    return reinterpret_cast<char *>(t_[rank].scratch) + 2 * a_.half_bytes + (2 * channel_ + (r & 1)) * a_.line_region_bytes;
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE const char *send() const { return reinterpret_cast<const char *>(a_.sendbuf); }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE char *recv() const { return reinterpret_cast<char *>(a_.recvbuf); }

  MPIX_HOST_DEVICE MPIX_FORCEINLINE int mod(int v) const { return ((v % n_) + n_) % n_; }
  // The k-th peer (k = 1 .. n - 1) a rank pushes to when it pushes to all: me + k. Every rank
  // starting at rank 0 made each step an incast (n - 1 writers into one GPU while the others'
  // links idled); rotated, each step is a permutation, one writer per receiver.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE int push_peer(int k) const { return mod(me_ + k); }
  // Rank of virtual rank v in a tree or chain rooted at the root.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE int real(int v) const { return mod(v + a_.root); }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE int virt() const { return mod(me_ - a_.root); }
  // Binomial tree over virtual ranks: v's parent is v less its lowest set bit; its children are
  // v + m for the powers of two m below that bit (below n for the root).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE static int lowest_bit(int v) { return v & -v; }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE int tree_parent() const { return real(virt() - lowest_bit(virt())); }
  // Calls fn(child rank) for v's children, nearest first.
  template <class F>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void tree_children(F &&fn) const {
    const int v = virt(), limit = v ? lowest_bit(v) : n_;
    for (int m = 1; m < limit && v + m < n_; m <<= 1) fn(real(v + m));
  }
  // The j-th child tree_children names (j = 0: the nearest).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE int tree_child(int j) const { return real(virt() + (1 << j)); }

  // May this rank write round r into `peer`'s scratch?
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void wait_freed(int peer, uint64_t r) { x_.wait(flags(me_) + FlagLayout::freed(peer, n_), r, peer); }
  // The same for every peer in the mask at once (bit q: rank q); a push then never waits mid-way.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void wait_freed_all(uint64_t peers, uint64_t r) {
    x_.wait_all(flags(me_) + FlagLayout::freed(0, n_), peers, r);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE uint64_t all_peers() const {
    return (n_ >= 64 ? ~uint64_t(0) : (uint64_t(1) << n_) - 1) & ~(uint64_t(1) << me_);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void wait_arrived(int step, int peer, uint64_t r) {
    x_.wait(flags(me_) + FlagLayout::arrive(step, peer, n_), r, peer);
  }
  // The same for every peer in the mask at once (arrive flags of one step are consecutive by source).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void wait_arrived_all(int step, uint64_t peers, uint64_t r) {
    x_.wait_all(flags(me_) + FlagLayout::arrive(step, 0, n_), peers, r);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void tell_arrived(int step, int peer, uint64_t r) {
    x_.signal(flags(peer) + FlagLayout::arrive(step, me_, n_), r);
  }
  // After its last read of its own scratch half: every peer may write round r + 2 into it. Every
  // store of the round into a peer's scratch was fenced before the arrival that announced it, and
  // every read of this rank's scratch was used (its value stored or reduced) before the block
  // barrier, so, as in the kLL rounds, the freed signals need no fence (a system fence here cost
  // every call of the `simple` protocol one on its last round's path). Local steps keep the fence:
  // what reads their results next is not a peer waiting on a flag.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void end_round(uint64_t r) {
    if (a_.kind == kLocalReduce || a_.kind == kLocalCopy) x_.barrier();
    else x_.settle();
    signal_freed(r);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void signal_freed(uint64_t r) {
    x_.signal_each(all_peers(), r + 2, [&](int q) { return flags(q) + FlagLayout::freed(me_, n_); });
  }

  // The steps of each collective, each defined in the header of its collective (run_schedule.h
  // includes them all).
  // allreduce.h (reduce shares the one-shot, two-shot and kLL steps: `all` false, the root receives)
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void reduce_one_shot(const Round &rd, bool all);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void two_shot(const Round &rd, bool all);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_two_shot_lines();
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void two_shot_lines(const Round &rd, bool all);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void allreduce_ring(const Round &rd);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void allreduce_gsb(const Round &rd);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void allreduce_btb(const Round &rd);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void reduce_lines(const Round &rd, bool all);
  // reduce.h
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void reduce_chain(const Round &rd);
  // bcast.h
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void bcast_chain(const Round &rd);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void bcast_binomial(const Round &rd);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void bcast(const Round &rd);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void bcast_lines(const Round &rd);
  // allgather.h (alltoall too: `personal`, peer q gets block q)
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void gather_pipelined(bool personal);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void allgather_ring(const Round &rd);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE const char *src_block(int q, bool personal, uint64_t off) const;
  template <class Push>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void for_each_block(const Round &rd, bool personal, Push &&push);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void push_blocks(const Round &rd, bool personal);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void copy_out_blocks(const Round &rd);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void gather_lines(const Round &rd, bool personal);
  // local_steps.h
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void local_reduce(const Round &rd);
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void local_copy(const Round &rd);

  // Sources of a reduction in rank order: slot q of my scratch for each peer q, `own` for me.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE auto slots_and_own(uint64_t r, const char *own) const {
    const char *slots = scratch(me_, r);
    const uint64_t slot = slot_bytes();
    return indexed([this, slots, slot, own](int q) {
      return static_cast<const void *>(q == me_ ? own : slots + q * slot);
    });
  }

  // Two-shot's cut of a round: part j (of `part` elements, the last ones fewer or none) is
  // reduced by rank j.
  struct Parts {
    uint64_t part, elems;
    MPIX_HOST_DEVICE MPIX_FORCEINLINE uint64_t first(int j) const { return j * part < elems ? j * part : elems; }
    MPIX_HOST_DEVICE MPIX_FORCEINLINE uint64_t count(int j) const { return first(j + 1) - first(j); }
  };
  MPIX_HOST_DEVICE MPIX_FORCEINLINE Parts parts(const Round &rd) const { return Parts{(rd.elems + n_ - 1) / n_, rd.elems}; }

  // kLL (one-shot allreduce and reduce, direct bcast, allgather and alltoall): every pusher stores
  // its round as lines into slot `me` of the receiver's line area, and the receiver reads (or
  // reduces) each line as it lands. A round ends with a block barrier and the freed signals: no
  // fence, because every line read was used (its tag checked) before the barrier. Pieces go to
  // the executor as Indexed functions of the piece, never as arrays (run_lines_call says why).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_lines() {
    for (uint64_t i = 0; i < a_.rounds && x_.ok(); ++i) {
      const Round rd = round(i);
      if (a_.kind == kAllreduce || a_.kind == kReduce) reduce_lines(rd, a_.kind == kAllreduce);
      else if (a_.kind == kBcast) bcast_lines(rd);
      else gather_lines(rd, a_.kind == kAlltoall);
      x_.settle();
      signal_freed(rd.r);
    }
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE char *line_slot(int rank, uint64_t r, int src) const { return lines(rank, r) + src * a_.line_slot; }
  // Every rank but me, in rank order: the j-th (j < n - 1), and all of them as pieces.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE int other(int j) const { return j < me_ ? j : j + 1; }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE auto others() const { return indexed([this](int j) { return other(j); }); }
  // srcs[j]'s `bytes` as lines into slot `me` of rank peers[j], j < count.
  template <class Peers, class Srcs>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void put_lines_to(int count, const Peers &peers, const Srcs &srcs, uint64_t r,
                                                      uint64_t bytes) {
    if (count)
      x_.put_lines_each(indexed([this, &peers, r](int j) { return line_slot(peers[j], r, me_); }), srcs, count, bytes, r);
  }

  X &x_;
  const Args &a_;
  const PeerTable *t_;
  int n_, me_;
  uint32_t esize_;
  uint32_t channel_;
  uint64_t base_;          // rounds the channel ran before this call
};

}  // namespace detail
}  // namespace mpix::coll
