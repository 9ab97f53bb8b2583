// The distributed Jacobi iteration. Two field arrays, each the memory of its own window: iteration
// t reads array t%2 and writes the other, and the neighbours' halo puts of iteration t go into
// array t%2 (the one about to be read), so each iteration is one epoch on that array's window;
// each iteration posts the next one's window ahead of its own complete (solver.cpp).
#pragma once
#include <mpi.h>

#include "decomposition.h"

namespace stencil {

struct RunStats {
  double seconds = 0;             // from the first enqueue to the end of the one synchronisation
  unsigned long long stream_ops = 0;  // MPIX_St_stream_ops_enqueued() over the run
  int enqueued_iterations = 0;    // iterations the host enqueued (a captured block counts once)
};

class Solver {
 public:
  Solver(const Decomposition &d, void *stream);
  ~Solver();
  Solver(const Solver &) = delete;
  Solver &operator=(const Solver &) = delete;

  // Writes the initial field (boundary values in the halos at the domain boundary) into both arrays.
  void init();
  // Runs `iterations` iterations and synchronises the stream once at the end. With `block` > 0,
  // captures `block` (even) iterations into a graph and replays it; the remainder runs eagerly.
  RunStats run(int iterations, int block);
  // The array holding iteration t's field (device memory).
  const double *field(int t) const { return u_[t % 2]; }

 private:
  void enqueue(int first, int count);

  const Decomposition &d_;
  void *stream_;
  double *u_[2] = {nullptr, nullptr};
  MPI_Win win_[2] = {MPI_WIN_NULL, MPI_WIN_NULL};
};

}  // namespace stencil
