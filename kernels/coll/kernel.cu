// Launches a collective call's kernel: the one of its path (paths.h: path_of), each built in a
// translation unit of its own (kernel_<path>.cu).
#include "kernels/epoch_launch.h"
#include "paths.h"

// Every kernel of a backend, epoch and collective, is built for the same architectures: where the
// collective kernels were built from PTX of sm_90 or later, every kernel waits for its predecessor
// where launched with overlap.
bool mpix_kernels_support_overlap() {
  for (mpix::coll::Path p : mpix::coll::kPaths)
    if (!mpix::coll::with_path(p, [](auto path) { return mpix_coll_path_supports_overlap<decltype(path)::value>(); }))
      return false;
  return true;
}

int mpix_launch_coll_kernel(const mpix::coll::Args &args, int blocks, int threads, void *stream, bool overlap) {
  return mpix::coll::with_path(mpix::coll::path_of(args), [&](auto path) {
    return mpix_launch_coll_path<decltype(path)::value>(args, blocks, threads, stream, overlap);
  });
}
