// Stream collectives on communicators that span nodes (doc/design.md, Collectives): node-local
// steps are the one-launch collectives of a node communicator; steps across nodes are
// stream-triggered active-target epochs (post / start / put / complete / wait on the stream) on an
// internal window over the communicator, whose scratch receives the data; local steps
// (kLocalReduce, kLocalCopy) reduce or copy it out. The stream drives every step; nothing waits on
// the host.
//
//   allreduce  hierarchical: node-local reduce to the node's leader (its lowest rank), the
//              leaders combine partials (MPIX_ST_ALLREDUCE_LEADERS: a direct exchange in one epoch
//              then a reduce in node order, reduce-scatter + allgather around a ring of leaders,
//              or up and down a binomial tree of leaders), node-local bcast. Every rank gets the
//              same bits.
//   reduce     node-local reduce to the leader (on the root's node: the root), then leaders put
//              their partials into the root's scratch and the root reduces in node order, or
//              (MPIX_ST_REDUCE_LEADERS=tree) they reduce up a binomial tree rooted at the root.
//   bcast      node-local bcast on the root's node, the root puts into every other leader's
//              scratch (or, MPIX_ST_BCAST_LEADERS=tree, down a binomial tree of leaders), leaders
//              copy out and bcast within their nodes.
//   allgather, alltoall  no leader: every rank puts its block(s) into every peer's scratch in one
//              epoch (node-local peers through IPC, others through the network), then copies out.
//              Allgather over rails (MPIX_ST_ALLGATHER_ACROSS, [Kandadi Suresh 2022]): a block
//              crosses the network once per node, to the rank with the sender's local index, which
//              forwards it within its node in a second, node-local epoch.
// Vectors larger than a scratch slot run in chunks, each chunk a full pass of the steps; with two
// sets of slots, a target posts its exposure for the next chunk before it uses this one, so the
// next chunk travels while this one is reduced or copied out (Enqueuer::Chunks, in multinode_steps.cpp).
// The rails allgather's node step and the tree's way down run on a second window over the same
// scratch, so every window exposes to one group and can post ahead; the leaders' ring posts each
// step ahead.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "core/result.h"
#include "net.h"

namespace mpix::coll {

struct Call;
struct Context;

// Builds the state (collective over comm). node_index_of: by communicator rank, nodes numbered in
// order of their lowest rank. bytes: scratch per rank (the same on every rank).
core::Result build_net(Context &c, MPI_Comm comm, const std::vector<int> &node_index_of, uint64_t bytes);
// Releases it after its stream work drained (collective over the communicator). false: the work
// did not drain (watchdog) and memory was leaked instead of freed.
bool release_net(Context &c);

// Enqueues a call on a communicator that spans nodes, once every rank agreed on it (one host
// allreduce): refused on every rank when any rank refuses it (`local`: why this rank does) or the
// ranks' calls differ.
core::Result enqueue_multinode(Context &c, const Call &call, bool capturing, core::Result local);

}  // namespace mpix::coll
