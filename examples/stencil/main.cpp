// Stencil: a 3-D 7-point Jacobi on a block-distributed grid whose halo exchange is stream-triggered
// RMA with subarray datatypes: every iteration is enqueued, the stream is synchronised once.
// See options.h for the command line, and README.md, "Tutorial: a stencil code".
#include <mpi.h>
#include <mpix/mpix_st.h>

#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <string>

#include "check.h"
#include "decomposition.h"
#include "options.h"
#include "report.h"
#include "solver.h"
#include "xdev.h"

namespace {

int node_rank(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

// Ends the run with a message from rank 0 (every rank reaches the same verdict).
int fail(int rank, const std::string &why) {
  if (rank == 0) std::fprintf(stderr, "stencil: %s\n", why.c_str());
  MPI_Finalize();
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  // The library must drive the memory this binary's kernels use: host memory on the host build,
  // device memory on the CUDA build. An explicit MPIX_ST_BACKEND is respected, and checked below.
  setenv("MPIX_ST_BACKEND", xdev::kind(), 0);
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  stencil::Options o;
  std::string error;
  if (!stencil::parse_options(argc, argv, &o, &error)) {
    if (rank == 0) std::fputs(stencil::usage(), stderr);
    return fail(rank, error);
  }
  const int fixed = (o.dims[0] ? o.dims[0] : 1) * (o.dims[1] ? o.dims[1] : 1) * (o.dims[2] ? o.dims[2] : 1);
  const bool all_fixed = o.dims[0] && o.dims[1] && o.dims[2];
  if (size % fixed || (all_fixed && fixed != size))
    return fail(rank, "--dims " + std::to_string(o.dims[0]) + " " + std::to_string(o.dims[1]) + " " +
                          std::to_string(o.dims[2]) + " does not fit " + std::to_string(size) + " ranks");
  xdev::init(node_rank(MPI_COMM_WORLD));
  const std::string backend = MPIX_St_backend_name();
  if (backend != xdev::kind())
    return fail(rank, "the library's backend is '" + backend + "' but this binary's memory is '" + xdev::kind() +
                          "' (MPIX_ST_BACKEND=" + xdev::kind() + " runs it)");

  bool passed = false;
  {
    const stencil::Decomposition d(MPI_COMM_WORLD, o.n, o.dims);
    void *stream = xdev::stream_create();
    {
      stencil::Solver solver(d, stream);
      solver.init();
      stencil::Report r;
      r.stats = solver.run(o.iterations, o.graph ? o.block : 0);
      // The slowest rank's time is the run's.
      MPI_Allreduce(MPI_IN_PLACE, &r.stats.seconds, 1, MPI_DOUBLE, MPI_MAX, d.cart);
      r.check = stencil::check(d, solver, o.iterations, o.check);
      const char *slash = std::strrchr(argv[0], '/');
      r.binary = slash ? slash + 1 : argv[0];
      r.backend = backend;
      r.ranks = size;
      r.options = &o;
      r.decomposition = &d;
      passed = r.check.passed;
      if (rank == 0) {
        stencil::print_report(r);
        if (!o.json.empty() && !stencil::write_json(o.json, r)) passed = false;
      }
    }
    xdev::stream_destroy(stream);
  }
  int verdict = passed ? 1 : 0;
  MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD);  // rank 0 alone knows whether the JSON was written
  MPI_Finalize();
  return verdict ? 0 : 1;
}
