#include "solver.h"

#include <mpix/mpix_st.h>

#include "kernels.h"
#include "xdev.h"

namespace stencil {

Solver::Solver(const Decomposition &d, void *stream) : d_(d), stream_(stream) {
  // The library allocates window memory the stream can reach: device memory on GPU backends
  // (with this info key), shared memory on the host backend.
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpix_st_memory", "device");
  const MPI_Aint bytes = static_cast<MPI_Aint>(d.box.points() * sizeof(double));
  for (int k = 0; k < 2; ++k) MPI_Win_allocate(bytes, sizeof(double), info, d.cart, &u_[k], &win_[k]);
  MPI_Info_free(&info);
}

Solver::~Solver() {
  for (MPI_Win &w : win_) MPI_Win_free(&w);
}

void Solver::init() {
  const Box &b = d_.box;
  // Pinned: a copy from pageable memory may still be landing when cudaMemcpy returns, unordered
  // with the stream's first epoch (and the neighbours' first puts into these halos).
  const size_t bytes = static_cast<size_t>(b.points()) * sizeof(double);
  auto *host = static_cast<double *>(xdev::alloc_pinned(bytes));
  for (int z = 0; z <= b.n[2] + 1; ++z)
    for (int y = 0; y <= b.n[1] + 1; ++y)
      for (int x = 0; x <= b.n[0] + 1; ++x)
        host[b.index(x, y, z)] = initial_value(d_.global, d_.coords[0] * b.n[0] + x, d_.coords[1] * b.n[1] + y,
                                               d_.coords[2] * b.n[2] + z);
  for (double *u : u_) xdev::copy_to_device(u, host, bytes);
  xdev::free_pinned(host);
}

void Solver::enqueue(int first, int count) {
  if (count <= 0) return;
  // The first iteration's exposure; each later one is posted an iteration ahead (below).
  MPIX_Win_post_stream(d_.group, win_[first % 2], stream_);
  for (int t = first; t < first + count; ++t) {
    const int cur = t % 2;
    double *in = u_[cur];
    MPI_Win win = win_[cur];
    // Post ahead: iteration t+1's array may take the neighbours' halos from now on. Its halos were
    // last read by the sweep of t-1, already behind us on the stream, and the sweep of t writes
    // only its interior; so the neighbours find it exposed a whole iteration before they put.
    if (t + 1 < first + count) MPIX_Win_post_stream(d_.group, win_[1 - cur], stream_);
    MPI_Win_start(d_.group, MPIX_MODE_STREAM, win);
    for (const Face &f : d_.faces) MPI_Put(in, 1, f.origin, f.peer, 0, 1, f.target, win);  // recorded
    MPIX_Win_complete_stream(win, stream_);  // one launch: wait the posts, move every layer, signal
    MPIX_Win_wait_stream(win, stream_);      // one launch: wait until the neighbours' layers are in
    // (Captured, the post ahead, this complete and this wait are recorded as one kernel: nothing
    // comes between them; README, Graph capture, "Post ahead".)
    kernels::sweep(d_.box, in, u_[1 - cur], stream_);
  }
}

RunStats Solver::run(int iterations, int block) {
  RunStats s;
  MPI_Barrier(d_.cart);
  const unsigned long long ops0 = MPIX_St_stream_ops_enqueued();
  const double t0 = MPI_Wtime();
  int done = 0;
  void *graph = nullptr;
  if (block > 0) {
    // Captured once; each replay is the next `block` epochs on each window (the library's epoch
    // cursors advance on the stream), and an even block ends on the array it began with.
    xdev::stream_begin_capture(stream_);
    enqueue(0, block);
    graph = xdev::stream_end_capture(stream_);
    for (; done + block <= iterations; done += block) xdev::graph_launch(graph, stream_);
    s.enqueued_iterations += block;
  }
  enqueue(done, iterations - done);
  s.enqueued_iterations += iterations - done;
  xdev::stream_sync(stream_);  // the only synchronisation
  s.seconds = MPI_Wtime() - t0;
  s.stream_ops = MPIX_St_stream_ops_enqueued() - ops0;
  if (graph) xdev::graph_destroy(graph);  // before the windows it holds epochs of
  return s;
}

}  // namespace stencil
