// Pieces the collective and datatype benchmarks share: device choice, clock, timed loops.
#pragma once
#include <mpi.h>

#include <chrono>

#include "xdev.h"

namespace bench {

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Picks this rank's device by its rank on the node (call after MPI_Init).
inline void init_device() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  xdev::init(local);
}

// Enqueues `body` `iters` times, synchronises the stream once; the slowest rank's seconds per call.
template <typename Body>
double timed(int iters, void *stream, Body &&body) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now();
  for (int i = 0; i < iters; ++i) body();
  xdev::stream_sync(stream);
  double t = (now() - t0) / iters, worst = 0;
  MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

}  // namespace bench
