// A call's path, the steps its schedule can take, and the host-side entries to each path's kernel.
#pragma once
#include <type_traits>

#include "args.h"
#include "geometry.h"

namespace mpix::coll {

// A call's path: the steps its schedule can take. A device backend runs each path as a kernel of
// its own (kernel_<path>.cu), every step inlined, so that the schedule, its executor and the call's
// arguments stay in registers (Schedule::run_lines_call says why); one kernel holding every
// reduction's steps took ptxas more than ten minutes to compile. The host backend runs the same
// schedules through run_schedule.
enum class Path {
  kMoves,          // kSimple calls that reduce nothing: bcast, allgather, alltoall, local copies
  kLines,          // kLL: one-shot allreduce and reduce, direct bcast, allgather, alltoall
  kTwoShotLines,   // kLL two-shot allreduce and reduce
  kTwoShot,        // kSimple two-shot allreduce and reduce
  kRing,           // kSimple ring allreduce
  kChainReduce,    // kSimple pipelined chain reduce
  kOneShot,        // kSimple one-shot allreduce and direct reduce
  kReduce,         // other kSimple reductions: GSB, BTB, local reductions
};
// Every path, and fn(PathTag<P>{}) called for the path p names: the one enumeration that the host
// schedule, the kernel launch and the kernels' checks dispatch through.
constexpr Path kPaths[] = {Path::kMoves,   Path::kLines,       Path::kTwoShotLines, Path::kTwoShot,
                           Path::kRing,    Path::kChainReduce, Path::kOneShot,      Path::kReduce};
template <Path P>
using PathTag = std::integral_constant<Path, P>;
template <class Fn>
MPIX_HOST_DEVICE decltype(auto) with_path(Path p, Fn &&fn) {
  switch (p) {
    case Path::kLines: return fn(PathTag<Path::kLines>{});
    case Path::kTwoShotLines: return fn(PathTag<Path::kTwoShotLines>{});
    case Path::kTwoShot: return fn(PathTag<Path::kTwoShot>{});
    case Path::kRing: return fn(PathTag<Path::kRing>{});
    case Path::kChainReduce: return fn(PathTag<Path::kChainReduce>{});
    case Path::kOneShot: return fn(PathTag<Path::kOneShot>{});
    case Path::kReduce: return fn(PathTag<Path::kReduce>{});
    case Path::kMoves: break;
  }
  return fn(PathTag<Path::kMoves>{});
}

MPIX_HOST_DEVICE inline Path path_of(const Args &a) {
  if (a.proto == kLL) return is_two_shot(a.kind, a.algo) ? Path::kTwoShotLines : Path::kLines;
  if (a.kind == kLocalReduce) return Path::kReduce;
  if (a.kind != kAllreduce && a.kind != kReduce) return Path::kMoves;
  if (a.algo == kTwoShot) return Path::kTwoShot;
  if (a.kind == kAllreduce && a.algo == kRing && a.size > 1) return Path::kRing;
  if (is_chain(a.kind, a.algo)) return Path::kChainReduce;
  if (a.kind == kAllreduce && (a.algo == kGsb || a.algo == kBtb)) return Path::kReduce;
  return Path::kOneShot;
}

}  // namespace mpix::coll

// Each path's kernel is built in a translation unit of its own, kernel_<path>.cu, which
// instantiates these two for it (their definitions are in device.h), so the kernels compile in
// parallel.
template <mpix::coll::Path P>
int mpix_launch_coll_path(const mpix::coll::Args &args, int blocks, int threads, void *stream, bool overlap);
// Whether the path's kernel was built to wait for its predecessor (launch_overlap.h).
template <mpix::coll::Path P>
bool mpix_coll_path_supports_overlap();
