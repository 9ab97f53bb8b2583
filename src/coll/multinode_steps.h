// The steps of a stream collective across nodes (multinode.h), as built for a call: node-local
// steps, stream-triggered epochs between nodes and local reductions and copies, per collective and
// per way the leaders combine (multinode_steps.cpp). Which way a call takes is read at each call
// (multinode.cpp).
#pragma once
#include <cstdint>

#include "collectives.h"
#include "context.h"
#include "core/result.h"
#include "kernels/coll/geometry.h"
#include "net.h"

namespace mpix::coll {

// The local steps' flag area: a one-rank FlagLayout (only its cursor is used), then the one-entry
// PeerTable the executor reads the cursor through.
constexpr uint64_t kLocalFlagWords = FlagLayout::words(1);
inline PeerTable *local_table(const Net &n) { return reinterpret_cast<PeerTable *>(n.flags + kLocalFlagWords); }

// How the nodes' leaders exchange partials or data across nodes (multinode.cpp says when each).
enum class LeaderAlgo { direct, ring, tree };

// The ways a call across nodes takes, as read for it.
struct InternodeChoice {
  Algo reduce_algo = kAuto, bcast_algo = kAuto;  // of the node-local steps (MPIX_ST_REDUCE_ALGO, MPIX_ST_BCAST_ALGO)
  LeaderAlgo leaders = LeaderAlgo::direct;       // allreduce, reduce and bcast
  bool rails = false;                            // allgather over rails
  bool pipeline = true;                          // chunks pipelined (MPIX_ST_COLL_PIPELINE)
};

// What refuses a call alike on every rank before any step (a scratch too small for the call).
core::Result check_internode_steps(Context &c, const Call &call, const InternodeChoice &choice);
// Enqueues the steps of a checked call of count > 0; a scratch too small for the call is refused
// before any step is enqueued.
core::Result enqueue_internode_steps(Context &c, const Call &call, const InternodeChoice &choice);

}  // namespace mpix::coll
