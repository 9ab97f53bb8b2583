// Pieces the collective, datatype and two-sided benchmarks share: device choice, clock, timed loops,
// eager and replayed timings.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

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

// Seconds per call of `reps` timings of `once()` (each returns one): median, fastest, slowest.
struct Timing {
  double median, min, max;
};
template <typename Once>
Timing repeated(int reps, Once &&once) {
  std::vector<double> t(static_cast<size_t>(reps));
  for (double &v : t) v = once();
  std::sort(t.begin(), t.end());
  const size_t m = t.size() / 2;
  return {t.size() % 2 ? t[m] : (t[m - 1] + t[m]) / 2, t.front(), t.back()};
}

// `iters` calls back to back, `reps` times.
template <typename F>
Timing timed_eager(int iters, int reps, void *stream, F &&enqueue) {
  return repeated(reps, [&] { return timed(iters, stream, enqueue); });
}

// The same calls captured into one graph once, which is replayed `reps` times, each replay timed.
template <typename F>
Timing timed_graph(int iters, int reps, void *stream, F &&enqueue) {
  xdev::stream_begin_capture(stream);
  for (int i = 0; i < iters; ++i) enqueue();
  void *graph = xdev::stream_end_capture(stream);
  xdev::graph_launch(graph, stream);  // warm-up replay (uploads the graph)
  xdev::stream_sync(stream);
  const Timing t = repeated(reps, [&] { return timed(1, stream, [&] { xdev::graph_launch(graph, stream); }) / iters; });
  xdev::graph_destroy(graph);
  return t;
}

// Calls per timing of calls that move `bytes` each: `iters` up to 1 MiB, fewer above (about `iters`
// MiB per timing, at least 5), so that the largest sizes take seconds, not minutes.
inline int iters_for(size_t bytes, int iters) {
  return bytes <= (1u << 20) ? iters : std::max(5, int(double(iters) * (1 << 20) / double(bytes)));
}

}  // namespace bench
