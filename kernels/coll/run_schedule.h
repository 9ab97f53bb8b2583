// Runs a collective call's schedule over an executor (schedule.h says what an executor provides):
// the entries the host executor and the device kernels call, with every collective's steps.
#pragma once
#include <cstdint>

#include "allgather.h"
#include "allreduce.h"
#include "bcast.h"
#include "local_steps.h"
#include "paths.h"
#include "reduce.h"
#include "schedule.h"

namespace mpix::coll {

// Runs channels first, first + step, ... of a kLL call (two-shot or not, as TwoShot says), in that
// order, then finishes it; inlined whole (Schedule::run_lines_call says why). A device kernel
// calls it with an executor of its own, which no outlined step receives.
template <bool TwoShot, class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_lines_schedule(X &x, const Args &a, uint32_t first, uint32_t step) {
  const uint64_t base = x.cursor();
  for (uint32_t c = first; c < channel_count(a); c += step)
    detail::Schedule<X>(x, a, c).template run_lines_call<TwoShot>();
  x.finish(base + a.rounds);
}

// The same for a kSimple call of path P.
template <Path P, class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_simple_schedule(X &x, const Args &a, uint32_t first, uint32_t step) {
  const uint64_t base = x.cursor();
  for (uint32_t c = first; c < channel_count(a); c += step) detail::Schedule<X>(x, a, c).template run<P>();
  x.finish(base + a.rounds);
}

// A call of path P, whichever protocol P runs.
template <Path P, class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_path_schedule(X &x, const Args &a, uint32_t first, uint32_t step) {
  if constexpr (P == Path::kLines || P == Path::kTwoShotLines)
    run_lines_schedule<P == Path::kTwoShotLines>(x, a, first, step);
  else
    run_simple_schedule<P>(x, a, first, step);
}

// Runs channels first, first + step, ... of the call, in that order, then finishes it.
template <class X>
MPIX_HOST_DEVICE void run_schedule(X &x, const Args &a, uint32_t first, uint32_t step) {
  with_path(path_of(a), [&](auto path) { run_path_schedule<decltype(path)::value>(x, a, first, step); });
}

}  // namespace mpix::coll
