// Stream collectives across nodes (multinode.h): the state of a communicator that spans nodes,
// and for each call its checks and the ways it takes, read at each call (its steps:
// multinode_steps.cpp).
#include "multinode.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "collectives.h"
#include "context.h"
#include "core/epochs.h"
#include "core/window.h"
#include "core/window_setup.h"
#include "kernels/coll/geometry.h"
#include "multinode_steps.h"
#include "settings/settings.h"

namespace mpix::coll {
namespace {

// How the nodes' leaders exchange partials or data across nodes, read at each call from
// MPIX_ST_ALLREDUCE_LEADERS, MPIX_ST_REDUCE_LEADERS or MPIX_ST_BCAST_LEADERS:
//   direct  one epoch: every leader puts to every other (allreduce), to the root (reduce), or the
//           root to every leader (bcast)
//   ring    allreduce only: reduce-scatter + allgather around the leaders, 2 (N - 1) epochs
//   tree    a binomial tree of leaders (the BTB of [Faraji 2018]): log2(N) steps up (reduce), down
//           (bcast) or both (allreduce), each node sending its vector once per direction
// auto: for allreduce the ring from 4 nodes and 1 MiB, where the direct exchange's N - 1 copies
// per leader outweigh the ring's 2 (N - 1) epochs; direct otherwise and for reduce and bcast.
// Provisional: no network has measured them.
constexpr uint64_t kLeaderRingMinBytes = 1 << 20;
constexpr int kLeaderRingMinNodes = 4;

// A call setting read now: its word, or MPI_ERR_ARG naming what the table accepts (the table lists
// each setting's words: ring is allreduce's only).
core::Result call_setting_word(settings::Id id, std::string *word) {
  settings::Value v;
  std::string why;
  if (!settings::read(id, &v, &why)) return core::fail(MPI_ERR_ARG, why);
  *word = v.text;
  return core::ok();
}

core::Result leader_algorithm(const Net &n, Kind kind, uint64_t bytes, LeaderAlgo *out) {
  using settings::Id;
  const Id id = kind == kAllreduce ? Id::MPIX_ST_ALLREDUCE_LEADERS
                : kind == kReduce  ? Id::MPIX_ST_REDUCE_LEADERS
                                   : Id::MPIX_ST_BCAST_LEADERS;
  std::string v;
  if (core::Result r = call_setting_word(id, &v)) return r;
  if (v == "auto") {
    const bool ring = kind == kAllreduce && n.nodes >= kLeaderRingMinNodes && bytes >= kLeaderRingMinBytes;
    *out = ring ? LeaderAlgo::ring : LeaderAlgo::direct;
    return core::ok();
  }
  *out = v == "tree" ? LeaderAlgo::tree : v == "ring" ? LeaderAlgo::ring : LeaderAlgo::direct;
  return core::ok();
}

// How allgather crosses nodes (MPIX_ST_ALLGATHER_ACROSS, read at each call): `direct`, every rank
// puts its block to every rank on other nodes; `rails` ([Kandadi Suresh 2022]), once per node to
// its rail peer, which forwards it within its node. auto: rails where some node has several ranks
// (the network then carries each block once per node instead of once per rank); with one rank per
// node the two are the same. Provisional: no network has measured them.
core::Result allgather_rails_chosen(const Net &n, bool *rails) {
  std::string v;
  if (core::Result r = call_setting_word(settings::Id::MPIX_ST_ALLGATHER_ACROSS, &v)) return r;
  *rails = v == "auto" ? n.nodes < static_cast<int>(n.node_of.size()) : v == "rails";
  return core::ok();
}

// Whether calls larger than a chunk pipeline their chunks (multinode_steps.cpp, Enqueuer::Chunks):
// MPIX_ST_COLL_PIPELINE, read at each call, a boolean (default 1). Provisional: no network has
// measured it.
core::Result pipeline_chosen(bool *pipeline) {
  settings::Value v;
  std::string why;
  if (!settings::read(settings::Id::MPIX_ST_COLL_PIPELINE, &v, &why)) return core::fail(MPI_ERR_ARG, why);
  *pipeline = v.number != 0;
  return core::ok();
}

bool local_steps_drained(const Net &n) {
  return core::stream_work_drained(n.flags + FlagLayout::cursor(1), n.local_steps);
}

}  // namespace

core::Result build_net(Context &c, MPI_Comm comm, const std::vector<int> &node_index_of, uint64_t bytes) {
  gpu::Backend &be = gpu::backend();
  auto n = std::make_unique<Net>();
  n->node_of = node_index_of;
  n->nodes = *std::max_element(node_index_of.begin(), node_index_of.end()) + 1;
  n->node_index = node_index_of[c.rank];
  n->leader_of_node.assign(n->nodes, -1);
  n->local_rank_of.assign(c.size, 0);
  std::vector<int> seen(n->nodes, 0);
  for (int q = 0; q < c.size; ++q) {
    const int j = node_index_of[q];
    if (n->leader_of_node[j] < 0) n->leader_of_node[j] = q;
    n->local_rank_of[q] = seen[j]++;
  }
  PMPI_Comm_split(comm, n->node_index, c.rank, &n->node_comm);
  PMPI_Comm_dup(comm, &n->agree_comm);
  Net &net = *n;
  c.net = std::move(n);
  if (net.nodes > kMaxRanks)
    return core::fail(MPI_ERR_UNSUPPORTED_OPERATION, "stream collectives span at most " + std::to_string(kMaxRanks) +
                                                         " nodes; this communicator spans " +
                                                         std::to_string(net.nodes));
  // Every rank learns whether every node made its node-local state, so none is left waiting below.
  core::Result node = context_of(net.node_comm, false, &net.node);
  int mine_ok = node ? 0 : 1, all_ok = 0;
  PMPI_Allreduce(&mine_ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
  if (node) return node;
  if (!all_ok) return core::fail(core::resource_error_class(), "another node could not make its collective state");

  // Memory first, then the window (collective: every rank takes part even if its memory failed,
  // and create_window fails on every rank then).
  std::string why;
  void *flags = nullptr;
  if (be.allocate_window_memory(bytes, &net.scratch)) {
    why = "scratch allocation: " + be.last_error();
    net.scratch = nullptr;
  } else if (be.allocate_flags(kLocalFlagWords * sizeof(uint64_t) + sizeof(PeerTable), &flags)) {
    why = "flag allocation: " + be.last_error();
  } else {
    net.flags = static_cast<uint64_t *>(flags);
    net.scratch_bytes = bytes;
    std::vector<uint64_t> init(kLocalFlagWords, 0);
    const PeerTable self{reinterpret_cast<uint64_t>(net.scratch), reinterpret_cast<uint64_t>(net.flags)};
    if (be.copy_to_device(net.flags, init.data(), init.size() * sizeof(uint64_t)) ||
        be.copy_to_device(local_table(net), &self, sizeof self))
      why = "collective flag upload: " + be.last_error();
  }
  // Both windows over the same scratch (Net::win2); creation is collective, so every rank makes both
  // whatever the first gave.
  const bool have = why.empty();
  core::Result r = core::create_window(have ? net.scratch : nullptr, have ? bytes : 0, 1, MPI_INFO_NULL, comm, false,
                                       &net.win);
  core::Result r2 = core::create_window(have ? net.scratch : nullptr, have ? bytes : 0, 1, MPI_INFO_NULL, comm, false,
                                        &net.win2);
  if (!have) return core::fail(core::resource_error_class(), why);
  if (r) return core::fail(r.mpi_class, "the collective window across nodes: " + r.message);
  if (r2) return core::fail(r2.mpi_class, "the second collective window across nodes: " + r2.message);
  net.window = core::find_window(net.win);
  net.window2 = core::find_window(net.win2);
  if (!net.window || !net.window2) return core::fail(MPI_ERR_OTHER, "a collective window across nodes is not managed");
  return core::ok();
}

bool release_net(Context &c) {
  Net &n = *c.net;
  gpu::Backend &be = gpu::backend();
  bool drained = !n.flags || local_steps_drained(n);
  // Node-local steps first: their context drains its own rounds (which write this scratch).
  if (n.node_comm != MPI_COMM_NULL) PMPI_Comm_free(&n.node_comm);
  if (n.agree_comm != MPI_COMM_NULL) PMPI_Comm_free(&n.agree_comm);
  for (MPI_Win *win : {&n.win, &n.win2}) {
    if (*win == MPI_WIN_NULL) continue;
    bool owned = false;
    void *base = nullptr;
    MPI_Win handle = *win;
    if (core::Result r = core::free_window(win, &owned, &base)) {
      std::fprintf(stderr, "mpix-st: freeing a collective window of communicator %u: %s\n", c.id, r.message.c_str());
      drained = false;
    } else {
      core::note_window_freed(handle);
    }
  }
  if (drained) {
    if (n.scratch) be.free_window_memory(n.scratch);
    if (n.flags) be.free_flags(n.flags);
  }
  c.net.reset();
  return drained;
}

namespace {

// What a rank checks of a call across nodes before the ranks agree on it, and the choices its
// steps take (settings read now).
core::Result prepare_multinode(Context &c, const Call &call, bool capturing, InternodeChoice *choice) {
  if (capturing)
    return core::fail(MPI_ERR_UNSUPPORTED_OPERATION,
                      "a stream collective on a communicator that spans nodes cannot be captured into a graph: its "
                      "steps across nodes are triggered network operations, which fire once (enqueue it outside "
                      "the capture)");
  if (core::Result r = core::take_watchdog_error(c.id, nullptr)) return r;
  if (core::Result r = core::take_watchdog_error(c.net->window->id, nullptr)) return r;
  if (core::Result r = core::take_watchdog_error(c.net->window2->id, nullptr)) return r;
  // Everything a step could refuse is checked before the first step is enqueued, so a refused
  // call leaves nothing half-enqueued on the stream.
  Algo reduce_algo = kAuto, bcast_algo = kAuto;
  if (core::Result r = algorithm_from_env(kReduce, &reduce_algo)) return r;
  if (core::Result r = algorithm_from_env(kBcast, &bcast_algo)) return r;
  if (c.net->node->size > kMaxRanks)
    return core::fail(MPI_ERR_UNSUPPORTED_OPERATION, "stream collectives handle up to " + std::to_string(kMaxRanks) +
                                                         " ranks per node");
  if (core::Result r = core::take_watchdog_error(c.net->node->id, nullptr)) return r;
  LeaderAlgo leaders = LeaderAlgo::direct;
  if (call.kind == kAllreduce || call.kind == kReduce || call.kind == kBcast)
    if (core::Result r = leader_algorithm(*c.net, call.kind, call.count * elem_size(call.dtype), &leaders)) return r;
  bool rails = false;
  if (call.kind == kAllgather)
    if (core::Result r = allgather_rails_chosen(*c.net, &rails)) return r;
  bool pipeline = true;
  if (core::Result r = pipeline_chosen(&pipeline)) return r;
  // The node-local steps read the protocol setting.
  if (core::Result r = protocol_setting_readable()) return r;
  *choice = InternodeChoice{reduce_algo, bcast_algo, leaders, rails, pipeline};
  return check_internode_steps(c, call, *choice);
}

uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// What decides the steps of a call: equal on every rank of a correct program.
uint64_t signature(const Call &call, const InternodeChoice &ch) {
  uint64_t h = mix(call.count + 0x9e3779b97f4a7c15ull);
  for (uint64_t v : {uint64_t{call.kind}, uint64_t{call.dtype}, uint64_t{call.op}, uint64_t{static_cast<uint32_t>(call.root)},
                     uint64_t{ch.reduce_algo}, uint64_t{ch.bcast_algo}, static_cast<uint64_t>(ch.leaders),
                     uint64_t{ch.rails}, uint64_t{ch.pipeline}})
    h = mix(h ^ v);
  return h;
}

std::string class_text(int cls) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  PMPI_Error_string(cls, text, &len);
  return "error class " + std::to_string(cls) + ", " + text;
}

}  // namespace

core::Result enqueue_multinode(Context &c, const Call &call, bool capturing, core::Result local) {
  InternodeChoice choice{};
  if (!local) local = c.failed;
  if (!local) local = prepare_multinode(c, call, capturing, &choice);
  // Every rank agrees on the call before anything is enqueued: the lowest rank that refuses it (and
  // its error class), and whether the calls are the same (min of the signature and of its
  // complement). One host allreduce per call; the call's steps cost several network epochs. The
  // words are signed and below 2^62, as some MPIs compare 64-bit unsigned words as signed ones.
  constexpr int64_t kNone = int64_t{1} << 62, kMask = kNone - 1;
  const int64_t sig = local ? 0 : static_cast<int64_t>(signature(call, choice) & kMask);
  int64_t mine[3] = {local ? (int64_t{c.rank} << 32 | static_cast<uint32_t>(local.mpi_class)) : kNone,
                     local ? kNone : sig, local ? kNone : kMask - sig};
  int64_t all[3] = {0, 0, 0};
  PMPI_Allreduce(mine, all, 3, MPI_INT64_T, MPI_MIN, c.net->agree_comm);
  if (local) return local;
  if (all[0] != kNone)
    return core::fail(MPI_ERR_OTHER, "rank " + std::to_string(all[0] >> 32) + " refused this call (" +
                                         class_text(static_cast<int>(all[0] & 0xFFFFFFFFu)) +
                                         "), so every rank refuses it; the communicator remains usable");
  if (all[1] != kMask - all[2])
    return core::fail(MPI_ERR_OTHER, "the ranks' calls differ (collective, count, datatype, operator, root or the "
                                     "collective settings): every rank refuses it; the communicator remains usable");
  if (call.count == 0) return core::ok();
  if (core::Result r = enqueue_internode_steps(c, call, choice)) {
    // Steps may be enqueued in part: this rank refuses every later call, and so (agreeing) does
    // every rank.
    c.failed = core::fail(MPI_ERR_OTHER, "the stream collectives of this communicator failed: a call could not be "
                                         "enqueued on rank " + std::to_string(c.rank) + " (" + r.message +
                                         "); every later stream collective on the communicator is refused (use a "
                                         "new communicator)");
    return r;
  }
  return core::ok();
}

}  // namespace mpix::coll
