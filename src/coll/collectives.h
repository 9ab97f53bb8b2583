// Enqueueing stream collectives: algorithm choice, rounds, one backend launch per call.
#pragma once
#include <mpi.h>

#include <cstdint>

#include "core/result.h"
#include "kernels/coll/args.h"

namespace mpix::coll {

// A call whose arguments the API layer checked. Buffers are resolved: MPI_IN_PLACE is already
// replaced by the address the schedule reads its own input from (see kernels/coll/schedule.h).
struct Call {
  Kind kind = kAllreduce;
  const void *sendbuf = nullptr;
  void *recvbuf = nullptr;
  uint64_t count = 0;  // elements (of one rank's block for allgather and alltoall)
  Dtype dtype = kBytes;
  Op op = kNoOp;       // kNoOp for collectives that only move data
  int root = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  void *stream = nullptr;
};

struct Context;

// Enqueues the call on its stream (collective over call.comm the first time, see context.h).
core::Result enqueue(const Call &call);
// The same on a communicator whose ranks share a node, whose context `c` is: one launch.
// `requested`: the algorithm MPIX_ST_<COLL>_ALGO names for call.kind (algorithm_from_env).
core::Result enqueue_node_local(Context &c, const Call &call, Algo requested, bool capturing);

// One backend launch of a call's arguments, completed with their geometry (set_geometry); every
// collective launch goes through here.
core::Result launch(void *stream, Args a);

// The algorithm MPIX_ST_<COLL>_ALGO names (read at each call, so a program may switch between
// calls), or kAuto; an unknown name is an error.
core::Result algorithm_from_env(Kind kind, Algo *out);

}  // namespace mpix::coll
