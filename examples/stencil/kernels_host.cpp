// Host-backend sweep: a loop run by the MPIX_Host_stream worker, in stream order with the
// library's epoch tasks.
#include <mpix/mpix_st.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "kernels.h"

namespace stencil::kernels {
namespace {

struct Task {
  Box b;
  const double *in;
  double *out;
};

void run(void *arg) {
  const Task &t = *static_cast<const Task *>(arg);
  for (int z = 1; z <= t.b.n[2]; ++z)
    for (int y = 1; y <= t.b.n[1]; ++y)
      for (int x = 1; x <= t.b.n[0]; ++x) {
        const int64_t i = t.b.index(x, y, z);
        t.out[i] = jacobi_point(t.b, t.in, i);
      }
}

// A captured task runs at every replay of its graph, so tasks are never freed: one per distinct
// call (two here, one per direction between the arrays) serves all its repeats.
Task *task_for(const Box &b, const double *in, double *out) {
  using Key = std::tuple<int, int, int, const double *, double *>;
  static std::mutex mu;
  static std::map<Key, std::unique_ptr<Task>> tasks;
  std::lock_guard<std::mutex> lock(mu);
  auto &slot = tasks[Key{b.n[0], b.n[1], b.n[2], in, out}];
  if (!slot) slot = std::make_unique<Task>(Task{b, in, out});
  return slot.get();
}

}  // namespace

void sweep(const Box &b, const double *in, double *out, void *stream) {
  if (MPIX_Host_stream_enqueue(static_cast<MPIX_Host_stream>(stream), run, task_for(b, in, out)) != MPI_SUCCESS) {
    std::fprintf(stderr, "stencil: MPIX_Host_stream_enqueue failed\n");
    std::abort();
  }
}

}  // namespace stencil::kernels
