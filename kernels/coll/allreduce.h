// The steps of allreduce, which reduce shares where only the root receives: one-shot and two-shot,
// in both protocols, and allreduce's own ring, GSB and BTB (schedule.h: Schedule).
#pragma once
#include <cstdint>

#include "schedule.h"

namespace mpix::coll::detail {

// Allreduce (every rank receives) or reduce (the root does): each pusher stores its round into
// the receiver's slot `me`, the receiver reduces all slots with its own input in rank order.
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::reduce_one_shot(const Round &rd, bool all) {
  const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_, slot = slot_bytes();
  for (int k = 1; k < n_; ++k) {
    const int q = push_peer(k);
    if (!all && q != a_.root) continue;
    wait_freed(q, rd.r);
    x_.copy(scratch(q, rd.r) + me_ * slot, send() + off, bytes);
  }
  x_.barrier();
  for (int q = 0; q < n_; ++q)
    if (q != me_ && (all || q == a_.root)) tell_arrived(0, q, rd.r);
  if (!all && me_ != a_.root) return;
  wait_arrived_all(0, all_peers(), rd.r);
  x_.reduce(same(static_cast<void *>(recv() + off)), 1, slots_and_own(rd.r, send() + off), n_, rd.elems);
}

// Allreduce (or reduce) in two pushes: part j of the round goes to rank j (reduce-scatter into
// scratch half A), rank j reduces it and pushes the result into half B slot j of every rank
// (allgather), or of the root only (gather), and those ranks copy the parts out. A reduce's root
// takes in (n - 1)/n of the vector twice instead of n - 1 whole vectors.
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::two_shot(const Round &rd, bool all) {
  const uint64_t slot = slot_bytes();
  const Parts p = parts(rd);
  auto gets_result = [&](int q) { return all || q == a_.root; };
  const uint64_t off = rd.first * esize_;
  for (int k = 1; k < n_; ++k) {
    const int q = push_peer(k);
    wait_freed(q, rd.r);
    x_.copy(scratch(q, rd.r) + me_ * slot, send() + off + p.first(q) * esize_, p.count(q) * esize_);
  }
  x_.barrier();
  for (int q = 0; q < n_; ++q)
    if (q != me_) tell_arrived(0, q, rd.r);
  const uint64_t mine = off + p.first(me_) * esize_;
  wait_arrived_all(0, all_peers(), rd.r);
  // Half B of each receiving peer's scratch (after the n slots of half A), slot me; and my own
  // result where I receive: every rank in rank order (all), or the root alone.
  const int root = a_.root;
  const uint64_t r = rd.r;
  const auto dsts = indexed([this, all, root, mine, slot, r](int j) {
    const int q = all ? j : root;
    return static_cast<void *>(q == me_ ? recv() + mine : scratch(q, r) + (n_ + me_) * slot);
  });
  x_.reduce(dsts, all ? n_ : 1, slots_and_own(r, send() + mine), n_, p.count(me_));
  x_.barrier();
  for (int q = 0; q < n_; ++q)
    if (q != me_ && gets_result(q)) tell_arrived(1, q, rd.r);
  if (!gets_result(me_)) return;
  for (int q = 0; q < n_; ++q) {
    if (q == me_) continue;
    wait_arrived(1, q, rd.r);
    x_.copy(recv() + off + p.first(q) * esize_, scratch(me_, rd.r) + (n_ + q) * slot, p.count(q) * esize_);
  }
}

// Two-shot in lines (kLL): part q of the round goes as lines into slot `me` of rank q's line
// area; each rank reduces its part as the lines land and sends every result unit on as lines
// into slot n + me of each rank that receives (all, or the root), which store them as they land.
// Two line hops, no fence and no flag, where kSimple takes two fenced flag round trips. In
// place, the thread of a unit reads it for the push before it stores that unit's result.
// Inlined like the other kLL calls (run_lines_call).
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::run_two_shot_lines() {
  for (uint64_t i = 0; i < a_.rounds && x_.ok(); ++i) {
    const Round rd = round(i);
    two_shot_lines(rd, a_.kind == kAllreduce);
    x_.settle();
    signal_freed(rd.r);
  }
}

template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::two_shot_lines(const Round &rd, bool all) {
  const Parts p = parts(rd);
  const uint64_t off = rd.first * esize_, r = rd.r;
  const char *in = send() + off;
  char *out = recv() + off;
  for (int q = 0; q < n_; ++q) {  // rank order (reduce_lines says why)
    if (q == me_) continue;
    wait_freed(q, r);
    x_.put_lines(line_slot(q, r, me_), in + p.first(q) * esize_, p.count(q) * esize_, r);
  }
  // My part's result goes on to every other rank (all), or to the root (unless I am it).
  const int root = a_.root;
  const int nout = all ? n_ - 1 : me_ != root ? 1 : 0;
  const auto outs = indexed([this, all, root, r](int j) { return line_slot(all ? other(j) : root, r, n_ + me_); });
  const auto srcs = indexed([this, in, &p, r](int q) {
    return q == me_ ? static_cast<const void *>(in + p.first(q) * esize_)
                    : static_cast<const void *>(line_slot(me_, r, q));
  });
  x_.reduce_lines(all || me_ == root ? out + p.first(me_) * esize_ : nullptr, outs, nout, srcs, n_, me_,
                  p.count(me_), r);
  if (!all && me_ != root) return;
  // The other ranks' parts: the full ones (parts 0 .. full - 1) in one get, their loads
  // overlapping; a short last one on its own; empty ones (small calls) not at all.
  const int full = static_cast<int>(p.part ? p.elems / p.part : 0);
  const int skip = me_ < full ? me_ : full;  // my own full part, if any, is not fetched
  auto full_part = [skip](int j) { return j < skip ? j : j + 1; };
  x_.get_lines(indexed([out, &p, full_part, this](int j) { return out + p.first(full_part(j)) * esize_; }),
               indexed([this, full_part, r](int j) {
                 return static_cast<const char *>(line_slot(me_, r, n_ + full_part(j)));
               }),
               indexed(full_part), full - (me_ < full ? 1 : 0), p.part * esize_, r);
  if (full < n_ && full != me_ && p.count(full) > 0) {
    const char *from = line_slot(me_, r, n_ + full);
    x_.get_lines(same(out + p.first(full) * esize_), same(from), same(full), 1, p.count(full) * esize_, r);
  }
}

// Ring (n > 1): n parts; in step s < n - 1 this rank pushes its partial of part me - s into the
// right neighbour's slot s (step 0: its own input; later: the left's partial reduced with its
// own). In step n - 1 the part me + 1 is complete: kept and pushed; then n - 2 steps forward
// complete parts around the ring. Every part is reduced once, by one rank, so every rank gets
// the same bits.
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::allreduce_ring(const Round &rd) {
  const uint64_t slot = slot_bytes();
  const uint64_t part = (rd.elems + n_ - 1) / n_;
  auto first = [&](int j) { return uint64_t(j) * part < rd.elems ? uint64_t(j) * part : rd.elems; };
  auto elems = [&](int j) { return first(j + 1) - first(j); };  // first(n) is rd.elems
  const uint64_t off = rd.first * esize_;
  const int right = mod(me_ + 1), left = mod(me_ - 1);
  auto my_part = [&](int j) { return send() + off + first(j) * esize_; };
  auto out_part = [&](int j) { return recv() + off + first(j) * esize_; };
  wait_freed(right, rd.r);
  for (int s = 0; s < n_; ++s) {
    const int p = mod(me_ - s);
    void *to_right = scratch(right, rd.r) + s * slot;
    if (s == 0) {
      x_.copy(to_right, my_part(p), elems(p) * esize_);
    } else {
      wait_arrived(s - 1, left, rd.r);
      const void *partial = scratch(me_, rd.r) + (s - 1) * slot, *own = my_part(p);
      x_.reduce(pair_of(to_right, static_cast<void *>(out_part(p))), s == n_ - 1 ? 2 : 1, pair_of(partial, own), 2,
                elems(p));
    }
    x_.barrier();
    tell_arrived(s, right, rd.r);
  }
  for (int t = n_; t < 2 * (n_ - 1) + 1; ++t) {
    const int p = mod(me_ + 1 - (t - n_ + 1));
    wait_arrived(t - 1, left, rd.r);
    const char *got = scratch(me_, rd.r) + (t - 1) * slot;
    x_.copy(out_part(p), got, elems(p) * esize_);
    if (t == 2 * (n_ - 1)) break;  // the last part: nothing to forward
    x_.copy(scratch(right, rd.r) + t * slot, got, elems(p) * esize_);
    x_.barrier();
    tell_arrived(t, right, rd.r);
  }
}

// GSB: every rank pushes into the root's slot `me`; the root reduces once and pushes the result
// into every peer's result slot (slot n); peers copy it out. Root: communicator rank 0.
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::allreduce_gsb(const Round &rd) {
  const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_, slot = slot_bytes();
  const int root = 0;
  if (me_ != root) {
    wait_freed(root, rd.r);
    x_.copy(scratch(root, rd.r) + me_ * slot, send() + off, bytes);
    x_.barrier();
    tell_arrived(0, root, rd.r);
    wait_arrived(1, root, rd.r);
    x_.copy(recv() + off, scratch(me_, rd.r) + n_ * slot, bytes);
    return;
  }
  wait_arrived_all(0, all_peers(), rd.r);
  wait_freed_all(all_peers(), rd.r);
  // The result: mine, then every peer's result slot.
  char *out = recv() + off;
  const uint64_t r = rd.r;
  const auto dsts = indexed([this, out, slot, r](int j) {
    return static_cast<void *>(j == 0 ? out : scratch(other(j - 1), r) + n_ * slot);
  });
  x_.reduce(dsts, n_, slots_and_own(r, send() + off), n_, rd.elems);
  x_.barrier();
  for (int q = 0; q < n_; ++q)
    if (q != me_) tell_arrived(1, q, rd.r);
}

// BTB: a binomial tree rooted at rank 0. Each rank reduces its input with its children's
// partials (slot = the child's rank) into its parent's slot `me`; the root's result goes back
// down the tree through the result slots (slot n).
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::allreduce_btb(const Round &rd) {
  const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_, slot = slot_bytes();
  const bool root = me_ == a_.root;
  const uint64_t r = rd.r;
  int children = 0;
  tree_children([&](int c) {
    wait_arrived(0, c, r);
    ++children;
  });
  // Sources: my input, then my children's partials (slot = the child's rank), nearest first.
  const char *own = send() + off, *slots = scratch(me_, r);
  const auto srcs = indexed([this, own, slots, slot](int j) {
    return static_cast<const void *>(j == 0 ? own : slots + tree_child(j - 1) * slot);
  });
  if (root) {
    tree_children([&](int c) { wait_freed(c, r); });
    char *out = recv() + off;
    const auto dsts = indexed([this, out, slot, r](int j) {
      return static_cast<void *>(j == 0 ? out : scratch(tree_child(j - 1), r) + n_ * slot);
    });
    x_.reduce(dsts, 1 + children, srcs, 1 + children, rd.elems);
  } else {
    wait_freed(tree_parent(), r);
    x_.reduce(same(static_cast<void *>(scratch(tree_parent(), r) + me_ * slot)), 1, srcs, 1 + children, rd.elems);
  }
  x_.barrier();
  if (root) {
    tree_children([&](int c) { tell_arrived(1, c, rd.r); });
    return;
  }
  tell_arrived(0, tree_parent(), rd.r);
  wait_arrived(1, tree_parent(), rd.r);
  const char *result = scratch(me_, rd.r) + n_ * slot;
  x_.copy(recv() + off, result, bytes);
  tree_children([&](int c) {
    wait_freed(c, rd.r);
    x_.copy(scratch(c, rd.r) + n_ * slot, result, bytes);
  });
  x_.barrier();
  tree_children([&](int c) { tell_arrived(1, c, rd.r); });
}

// In place, each unit of the input is read (for every push) by the thread that later stores the
// unit of the result: put_lines and reduce_lines share their units' threads.
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::reduce_lines(const Round &rd, bool all) {
  const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_;
  const char *src = send() + off;
  // Rank order, not push_peer's: kLL calls are too small for an incast to cost bandwidth, and
  // on 4 H100s the rotated order took 0.1-0.3 us more per allreduce of 8 B-32 KiB.
  if (all) {
    wait_freed_all(all_peers(), rd.r);
    put_lines_to(n_ - 1, others(), same(src), rd.r, bytes);
  } else if (me_ != a_.root) {
    wait_freed(a_.root, rd.r);
    put_lines_to(1, same(a_.root), same(src), rd.r, bytes);
    return;
  }
  x_.settle();  // in place, another thread may have read a unit for a push that this one overwrites
  const auto srcs = indexed([this, src, &rd](int q) {
    return q == me_ ? static_cast<const void *>(src) : static_cast<const void *>(line_slot(me_, rd.r, q));
  });
  x_.reduce_lines(recv() + off, static_cast<char *const *>(nullptr), 0, srcs, n_, me_, rd.elems, rd.r);
}

}  // namespace mpix::coll::detail
