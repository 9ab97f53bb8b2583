// The steps of reduce of its own: the pipelined chain to the root (schedule.h: Schedule; the
// one-shot and two-shot steps it shares with allreduce are in allreduce.h).
#pragma once
#include <cstdint>

#include "schedule.h"

namespace mpix::coll::detail {

// Pipelined chain to the root, bcast's chain run backwards: virtual rank n - 1 pushes its chunk
// into n - 2's scratch; each rank reduces what arrived with its own input into the next rank's
// scratch, the root into its receive buffer. Every link carries the vector once (two-shot's root
// takes in 2 (n - 1)/n of it); while rank v - 1 reduces chunk r, rank v reduces chunk r + 1.
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::reduce_chain(const Round &rd) {
  const uint64_t off = rd.first * esize_;
  const int v = virt();
  const bool has_next = v + 1 < n_;  // what the next rank reduced lies in my scratch
  if (has_next) wait_arrived(0, real(v + 1), rd.r);
  const void *own = send() + off;
  const auto srcs = pair_of(has_next ? static_cast<const void *>(scratch(me_, rd.r)) : own, own);
  void *dst = recv() + off;
  if (v > 0) {
    wait_freed(real(v - 1), rd.r);
    dst = scratch(real(v - 1), rd.r);
  }
  x_.reduce(same(dst), 1, srcs, has_next ? 2 : 1, rd.elems);
  if (v == 0) return;
  x_.barrier();
  tell_arrived(0, real(v - 1), rd.r);
}

}  // namespace mpix::coll::detail
