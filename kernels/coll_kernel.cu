// Launches a collective call's kernel: the one of its path (coll_schedules.h: path_of), each built
// in a translation unit of its own (coll_paths.h).
#include "coll_paths.h"
#include "epoch_launch.h"

using mpix::coll::Path;

// Every kernel of a backend, epoch and collective, is built for the same architectures: where the
// collective kernels were built from PTX of sm_90 or later, every kernel waits for its predecessor
// where launched with overlap.
bool mpix_kernels_support_overlap() {
  return mpix_coll_path_supports_overlap<Path::kMoves>() && mpix_coll_path_supports_overlap<Path::kLines>() &&
         mpix_coll_path_supports_overlap<Path::kTwoShotLines>() && mpix_coll_path_supports_overlap<Path::kTwoShot>() &&
         mpix_coll_path_supports_overlap<Path::kRing>() && mpix_coll_path_supports_overlap<Path::kChainReduce>() &&
         mpix_coll_path_supports_overlap<Path::kOneShot>() && mpix_coll_path_supports_overlap<Path::kReduce>();
}

int mpix_launch_coll_kernel(const mpix::coll::Args &args, int blocks, int threads, void *stream, bool overlap) {
  switch (mpix::coll::path_of(args)) {
    case Path::kLines: return mpix_launch_coll_path<Path::kLines>(args, blocks, threads, stream, overlap);
    case Path::kTwoShotLines: return mpix_launch_coll_path<Path::kTwoShotLines>(args, blocks, threads, stream, overlap);
    case Path::kTwoShot: return mpix_launch_coll_path<Path::kTwoShot>(args, blocks, threads, stream, overlap);
    case Path::kRing: return mpix_launch_coll_path<Path::kRing>(args, blocks, threads, stream, overlap);
    case Path::kChainReduce: return mpix_launch_coll_path<Path::kChainReduce>(args, blocks, threads, stream, overlap);
    case Path::kOneShot: return mpix_launch_coll_path<Path::kOneShot>(args, blocks, threads, stream, overlap);
    case Path::kReduce: return mpix_launch_coll_path<Path::kReduce>(args, blocks, threads, stream, overlap);
    case Path::kMoves: break;
  }
  return mpix_launch_coll_path<Path::kMoves>(args, blocks, threads, stream, overlap);
}
