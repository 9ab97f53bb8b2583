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
  bool stream_ok = false;  // `stream` passed the API's check (the backend may be asked about it)
};

struct Context;

// Enqueues the call on its stream (collective over call.comm the first time, see context.h).
// `local`: why this rank refuses the call (its arguments), or ok. A refused call still counts on
// the communicator (doc/guide/collectives.md, "After an error"): across nodes every rank agrees
// before anything is enqueued, so a call refused on one rank is refused on all; within a node the
// call board (call_board.h) finds a refusal that not every rank made and fails the communicator.
// call.comm must be a usable intra-communicator.
core::Result enqueue(const Call &call, core::Result local);
// The same on a communicator whose ranks share a node, whose context `c` is: one launch, with
// nothing recorded on the call board (the steps of a call across nodes, which agreed already).
// `requested`: the algorithm MPIX_ST_<COLL>_ALGO names for call.kind (algorithm_from_env).
core::Result enqueue_node_local(Context &c, const Call &call, Algo requested, bool capturing);

// One backend launch of a call's arguments, completed with their geometry (set_geometry); every
// collective launch goes through here.
core::Result launch(void *stream, Args a);

// MPIX_ST_COLL_PROTOCOL can be read (a value the table refuses is MPI_ERR_ARG naming it).
core::Result protocol_setting_readable();

// The algorithm MPIX_ST_<COLL>_ALGO names (read at each call, so a program may switch between
// calls), or kAuto; an unknown name is an error.
core::Result algorithm_from_env(Kind kind, Algo *out);

}  // namespace mpix::coll
