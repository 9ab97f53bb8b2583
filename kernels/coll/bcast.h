// The steps of bcast: direct pushes from the root, the pipelined chain, the binomial tree, and
// kLL lines (schedule.h: Schedule).
#pragma once
#include <cstdint>

#include "schedule.h"

namespace mpix::coll::detail {

// Pipelined chain from the root (virtual ranks in order): each rank copies the chunk out and
// forwards it; while the next rank forwards chunk r, this one handles chunk r + 1.
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::bcast_chain(const Round &rd) {
  const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_;
  const int v = virt();
  const char *src = send() + off;
  if (v > 0) {
    wait_arrived(0, real(v - 1), rd.r);
    src = scratch(me_, rd.r);
    x_.copy(recv() + off, src, bytes);
  }
  if (v + 1 < n_) {
    const int next = real(v + 1);
    wait_freed(next, rd.r);
    x_.copy(scratch(next, rd.r), src, bytes);
    x_.barrier();
    tell_arrived(0, next, rd.r);
  }
}

// Binomial tree from the root: each rank copies the chunk out and pushes it to its children.
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::bcast_binomial(const Round &rd) {
  const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_;
  const char *src = send() + off;
  if (me_ != a_.root) {
    wait_arrived(0, tree_parent(), rd.r);
    src = scratch(me_, rd.r);
    x_.copy(recv() + off, src, bytes);
  }
  tree_children([&](int c) {
    wait_freed(c, rd.r);
    x_.copy(scratch(c, rd.r), src, bytes);
  });
  x_.barrier();
  tree_children([&](int c) { tell_arrived(0, c, rd.r); });
}

// The root pushes the round into every peer's scratch; each peer copies it out.
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::bcast(const Round &rd) {
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

template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::bcast_lines(const Round &rd) {
  const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_;
  if (me_ != a_.root) {
    char *dst = recv() + off;
    const char *from = line_slot(me_, rd.r, a_.root);
    return x_.get_lines(same(dst), same(from), same(a_.root), 1, bytes, rd.r);
  }
  wait_freed_all(all_peers(), rd.r);
  put_lines_to(n_ - 1, others(), same(send() + off), rd.r, bytes);
}

}  // namespace mpix::coll::detail
