// The examples that compare against NCCL (Faces' nccl mode, coll_bench, p2p_bench): a failed NCCL
// call ends the job, naming the program and the call.
#pragma once
#include <mpi.h>
#include <nccl.h>

#include <cstdio>

namespace xdev {

inline void nccl_check(ncclResult_t r, const char *program, const char *what) {
  if (r == ncclSuccess) return;
  std::fprintf(stderr, "%s: %s: %s\n", program, what, ncclGetErrorString(r));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace xdev
