// The steps of stream collectives across nodes (multinode_steps.h): for each collective, and each
// way the leaders combine, the node-local steps, the epochs between nodes (post, start, puts,
// complete, wait on the stream) and the local reductions and copies of one call, chunk by chunk.
#include "multinode_steps.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/epochs.h"
#include "core/rma_ops.h"
#include "core/window.h"

namespace mpix::coll {
namespace {

// A group of communicator ranks (for post and start), freed when it goes out of scope.
class Group {
 public:
  Group(MPI_Comm comm, const std::vector<int> &ranks) {
    MPI_Group all;
    PMPI_Comm_group(comm, &all);
    PMPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &g_);
    PMPI_Group_free(&all);
  }
  ~Group() { PMPI_Group_free(&g_); }
  Group(const Group &) = delete;
  Group &operator=(const Group &) = delete;
  operator MPI_Group() const { return g_; }

 private:
  MPI_Group g_ = MPI_GROUP_NULL;
};

class Enqueuer {
 public:
  // reduce_algo, bcast_algo: what MPIX_ST_REDUCE_ALGO and MPIX_ST_BCAST_ALGO name, for the
  // node-local steps.
  // pipeline: MPIX_ST_COLL_PIPELINE (see Chunks).
  Enqueuer(Context &c, const Call &call, Algo reduce_algo, Algo bcast_algo, bool pipeline)
      : c_(c), n_(*c.net), call_(call), esize_(elem_size(call.dtype)), reduce_algo_(reduce_algo),
        bcast_algo_(bcast_algo), pipeline_(pipeline) {}

  // Bytes of one slot when the scratch is cut into `slots`, and elements one chunk moves.
  uint64_t slot_bytes(uint64_t slots) const { return n_.scratch_bytes / slots / kSlotAlign * kSlotAlign; }
  uint64_t chunk_elems(uint64_t slots) const { return slot_bytes(slots) / esize_; }
  char *slot(uint64_t slots, int j) const { return static_cast<char *>(n_.scratch) + j * slot_bytes(slots); }
  int node_size() const { return n_.node->size; }
  int local_root(int rank) const { return n_.local_rank_of[rank]; }

  // The chunks of a call (the pipelining of [Chu 2019], between nodes). A call larger than one
  // chunk of `slots` slots takes two sets of them, chunk k in set k % 2, and each target posts its
  // exposure for chunk k + 1 as soon as it has waited for chunk k, before it reduces or copies
  // chunk k out. Origins then put chunk k + 1 into the other set while the target still works on
  // chunk k: the post's round trip leaves the critical path, and where origins and targets do
  // different work (bcast, reduce) the network runs beside the node-local steps. A call that fits
  // one chunk, or MPIX_ST_COLL_PIPELINE=0, keeps one set and posts each chunk's exposure at its
  // start.
  struct Chunks {
    uint64_t slots = 1, sets = 1, cap = 0, count = 0;  // cap: elements a chunk moves; count: chunks
  };
  Chunks chunks(uint64_t slots) const {
    Chunks c;
    c.slots = slots;
    c.cap = chunk_elems(slots);
    if (pipeline_ && call_.count > c.cap && chunk_elems(2 * slots) > 0) {
      c.sets = 2;
      c.cap = chunk_elems(2 * slots);
    }
    c.count = c.cap ? (call_.count + c.cap - 1) / c.cap : 0;
    return c;
  }
  uint64_t set_slot_bytes(const Chunks &c) const { return slot_bytes(c.slots * c.sets); }
  // Slot j of chunk k's set: its offset in every rank's window, and its address here.
  uint64_t set_slot_offset(const Chunks &c, uint64_t k, int j) const {
    return ((k % c.sets) * c.slots + j) * set_slot_bytes(c);
  }
  char *set_slot(const Chunks &c, uint64_t k, int j) const {
    return static_cast<char *>(n_.scratch) + set_slot_offset(c, k, j);
  }

  // A node-local collective step on the node communicator.
  core::Result node_step(Kind kind, const void *send, void *recv, uint64_t count, int root) {
    Call step = call_;
    step.kind = kind;
    step.sendbuf = send;
    step.recvbuf = recv;
    step.count = count;
    step.root = root;
    step.comm = n_.node_comm;
    return enqueue_node_local(*n_.node, step, kind == kReduce ? reduce_algo_ : bcast_algo_, false);
  }

  // A local step (kLocalReduce / kLocalCopy) on this rank's memory.
  core::Result local_step(Kind kind, const void *send, void *recv, uint64_t count, uint32_t pieces,
                          uint64_t src_stride, uint64_t dst_stride, int own_piece = -1, const void *own = nullptr) {
    if (count == 0) return core::ok();  // nothing to do: no launch, nothing for the drain to count
    Args a{};
    a.kind = kind;
    a.dtype = kind == kLocalReduce ? call_.dtype : kBytes;
    a.op = call_.op;
    a.rank = 0;
    a.size = 1;
    a.root = own_piece;
    a.count = kind == kLocalReduce ? count : count * esize_;  // copies move bytes
    a.sendbuf = reinterpret_cast<uint64_t>(send);
    a.recvbuf = reinterpret_cast<uint64_t>(recv);
    a.table = reinterpret_cast<uint64_t>(local_table(n_));
    a.rounds = 1;
    a.round_elems = a.count;
    a.comm_id = c_.id;
    a.pieces = pieces;
    a.src_stride = src_stride;
    a.dst_stride = dst_stride;
    a.own = reinterpret_cast<uint64_t>(own);
    if (core::Result r = launch(call_.stream, a)) return r;
    ++n_.local_steps;
    return core::ok();
  }

  // One stream-triggered epoch: exposure to `origins`, access to the puts' targets, data moved by
  // `puts` (target communicator rank, origin address, target offset, bytes).
  struct Put {
    int target;
    const void *origin;
    uint64_t offset, bytes;
  };
  // The epoch of chunk (or step) k of `c` on window `on`: exposure to `origins` (expose_chunk),
  // the puts (access), the exposure closed and, with two sets, the next chunk's opened
  // (await_chunk). `targets`: the access group when it must not follow the puts (a ring step
  // with nothing to put still synchronises with its neighbour).
  core::Result epoch(const Chunks &c, uint64_t k, const std::vector<int> &origins, const std::vector<Put> &puts,
                     std::vector<int> targets = {}, core::Window *on = nullptr) {
    if (core::Result r = expose_chunk(c, k, origins, on)) return r;
    if (core::Result r = access(puts, std::move(targets), on)) return r;
    return await_chunk(c, k, origins, on);
  }
  // The epoch's parts: the exposure opened (post), the access epoch (start, puts, complete), the
  // exposure closed (wait). `on`: the window, the first unless a schedule names the second (Net).
  core::Result expose(const std::vector<int> &origins, core::Window *on = nullptr) {
    if (origins.empty()) return core::ok();
    Group g(call_.comm, origins);
    return core::post(on ? *on : *n_.window, g, 0, call_.stream, true);
  }
  core::Result access(const std::vector<Put> &puts, std::vector<int> targets = {}, core::Window *on = nullptr) {
    core::Window &w = on ? *on : *n_.window;
    if (targets.empty())
      for (const Put &p : puts) targets.push_back(p.target);
    if (targets.empty()) return core::ok();
    Group g(call_.comm, targets);
    if (core::Result r = core::start(w, g, core::kModeStream)) return r;
    for (const Put &p : puts) {
      core::RmaRequest q{core::RmaKind::put, const_cast<void *>(p.origin), static_cast<int>(p.bytes), MPI_BYTE,
                         p.target, static_cast<MPI_Aint>(p.offset), static_cast<int>(p.bytes), MPI_BYTE,
                         MPI_OP_NULL};
      if (core::Result r = core::record(w, q)) return r;
    }
    return core::complete(w, call_.stream, true);
  }
  core::Result await(const std::vector<int> &origins, core::Window *on = nullptr) {
    if (origins.empty()) return core::ok();
    return core::wait(on ? *on : *n_.window, call_.stream, true);
  }
  // A target's exposure for chunk k (Chunks): opened at the chunk's start with one set, or, with
  // two, for chunk 0 only: the wait for chunk k then opens chunk k + 1's. Every chunk of a call
  // must expose `on` to the same origins.
  core::Result expose_chunk(const Chunks &c, uint64_t k, const std::vector<int> &origins, core::Window *on = nullptr) {
    return c.sets == 1 || k == 0 ? expose(origins, on) : core::ok();
  }
  core::Result await_chunk(const Chunks &c, uint64_t k, const std::vector<int> &origins, core::Window *on = nullptr) {
    if (core::Result r = await(origins, on)) return r;
    return c.sets == 2 && k + 1 < c.count ? expose(origins, on) : core::ok();
  }

  const char *in() const { return static_cast<const char *>(call_.sendbuf); }
  char *out() const { return static_cast<char *>(call_.recvbuf); }

  // Leaders around a ring in node order (the ring of [Ji 2012], between nodes): a chunk is cut into
  // one part per node; in N - 1 reduce-scatter steps each leader puts one partial part into its
  // right neighbour's receive slot and adds what its left neighbour put into its own (the part then
  // holds the sum of the nodes it passed); the part that completes on a leader then travels N - 1
  // allgather steps straight into the other leaders' partial vectors. Each leader sends
  // 2 (N - 1) / N of the chunk instead of the direct exchange's N - 1 chunks; each step is one
  // epoch between neighbours. Scratch, unpipelined: slot 0 receives, slots 1..N hold the partial
  // vector. Every element is finished by one leader and copied to the rest, so every rank gets its
  // bits.
  // Pipelined (MPIX_ST_COLL_PIPELINE, as Chunks): every step exchanges with the same neighbours,
  // so each step's wait posts the next step's exposure at once and the post's round trip leaves
  // the critical path. The reduce-scatter then receives into two slots in turn (slots 0 and 1,
  // the partial vector after them): the left neighbour may put step s + 1 while this leader still
  // adds step s.
  core::Result allreduce_ring() {
    const int me = c_.rank, nodes = n_.nodes, i = n_.node_index, leader = n_.leader_of_node[i];
    const int right = n_.leader_of_node[(i + 1) % nodes], left = n_.leader_of_node[(i + nodes - 1) % nodes];
    const bool ahead = pipeline_;
    const uint64_t slots = nodes + (ahead ? 2 : 1), sb = slot_bytes(slots), cap = chunk_elems(slots) * nodes;
    const uint64_t got_slot[2] = {0, ahead ? 1u : 0u}, partial_slot = ahead ? 2 : 1;
    char *partial = slot(slots, static_cast<int>(partial_slot));
    // The steps of the whole call, counted alike on every leader, open and close their exposures
    // as Chunks' chunks do (expose_chunk, await_chunk), the two receive slots standing for the
    // two sets.
    Chunks steps;
    steps.sets = ahead ? 2 : 1;
    steps.count = (cap ? (call_.count + cap - 1) / cap : 0) * 2 * uint64_t(nodes - 1);
    uint64_t step = 0;
    const auto ring_step = [&](const std::vector<Put> &puts) -> core::Result {
      return epoch(steps, step++, {left}, puts, {right});
    };
    for (uint64_t f = 0; f < call_.count; f += cap) {
      const uint64_t e = std::min(cap, call_.count - f), off = f * esize_, part = (e + nodes - 1) / nodes;
      auto first = [&](int j) { return std::min<uint64_t>(uint64_t(j) * part, e); };
      auto elems = [&](int j) { return first(j + 1) - first(j); };  // first(nodes) is e
      auto mod = [&](int v) { return ((v % nodes) + nodes) % nodes; };
      if (core::Result r = node_step(kReduce, in() + off, partial, e, 0)) return r;
      if (me == leader) {
        for (int s = 0; s < nodes - 1; ++s) {
          const int p = mod(i - s), q = mod(i - s - 1);
          const uint64_t into = got_slot[step % 2];
          std::vector<Put> puts;
          if (elems(p)) puts.push_back({right, partial + first(p) * esize_, into * sb, elems(p) * esize_});
          if (core::Result r = ring_step(puts)) return r;
          char *got = slot(slots, static_cast<int>(into)), *mine = partial + first(q) * esize_;
          if (elems(q))
            if (core::Result r = local_step(kLocalReduce, got, mine, elems(q), 2, static_cast<uint64_t>(mine - got), 0))
              return r;
        }
        for (int t = 0; t < nodes - 1; ++t) {
          const int p = mod(i + 1 - t);
          std::vector<Put> puts;
          if (elems(p))
            puts.push_back({right, partial + first(p) * esize_, partial_slot * sb + first(p) * esize_, elems(p) * esize_});
          if (core::Result r = ring_step(puts)) return r;
        }
        if (core::Result r = local_step(kLocalCopy, partial, out() + off, e, 1, 0, 0)) return r;
      }
      if (node_size() > 1)
        if (core::Result r = node_step(kBcast, out() + off, out() + off, e, 0)) return r;
    }
    return core::ok();
  }

  // A binomial tree over the nodes (the BTB of [Faraji 2018], between leaders): nodes numbered from
  // the root's node, node v has parent v - lowbit(v) and a child v + 2^l on each level l with 2^l
  // below lowbit(v) (every level for the root) and v + 2^l below the node count. Its members are
  // the nodes' leaders, the root itself on its node.
  struct Tree {
    int parent = -1;            // communicator rank; -1 on the root
    int level = 0;              // the level this node hangs at below its parent
    std::vector<int> children;  // communicator ranks, by level from 0
  };
  Tree tree(int root_node, int root) const {
    const int nodes = n_.nodes, v = (n_.node_index - root_node + nodes) % nodes;
    auto member = [&](int u) {
      const int node = (u + root_node) % nodes;
      return node == root_node ? root : n_.leader_of_node[node];
    };
    Tree t;
    const int low = v ? v & -v : nodes;  // the root has every level below the node count
    for (int m = 1; m < low && v + m < nodes; m <<= 1) t.children.push_back(member(v + m));
    if (v) {
      t.parent = member(v - low);
      while ((1 << t.level) < low) ++t.level;
    }
    return t;
  }
  // Slots a tree step uses: its own vector (slot 0) and one receive slot per level.
  static uint64_t tree_slots(int nodes) {
    uint64_t levels = 0;
    while ((1 << levels) < nodes) ++levels;
    return 1 + levels;
  }

  // Reduce up the tree, chunk k of `ch` (tree_slots() slots a set): the children's partials arrive
  // in receive slots 1..k in one epoch and are added to slot 0 into `dst`; then a node below the
  // root puts slot 0 into its parent's receive slot for its level. Each node sends its vector once;
  // the root's result is ready after log2(N) steps. `dst` differs from slot 0 only at the root,
  // which has children (there are always two nodes or more). A node exposes to its children only,
  // so with two sets it posts chunk k + 1's exposure as soon as chunk k arrived (Chunks).
  core::Result tree_reduce(const Tree &t, const Chunks &ch, uint64_t k, uint64_t e, char *dst) {
    char *mine = set_slot(ch, k, 0);
    if (!t.children.empty()) {
      if (core::Result r = epoch(ch, k, t.children, {})) return r;
      if (core::Result r = local_step(kLocalReduce, mine, dst, e, static_cast<uint32_t>(t.children.size() + 1),
                                      set_slot_bytes(ch), 0))
        return r;
    }
    if (t.parent >= 0) return access({{t.parent, mine, set_slot_offset(ch, k, 1 + t.level), e * esize_}});
    return core::ok();
  }

  // Broadcast down the tree, chunk k of `ch` on window `on`: a node below the root receives the
  // vector in slot 0 from its parent, then every node puts it (the root: from `source`) into its
  // children's slot 0, in one epoch. A node exposes to its parent only (posted ahead as above).
  core::Result tree_bcast(const Tree &t, const Chunks &ch, uint64_t k, uint64_t e, const char *source,
                          core::Window *on) {
    if (t.parent >= 0)
      if (core::Result r = epoch(ch, k, {t.parent}, {}, {}, on)) return r;
    if (t.children.empty()) return core::ok();
    std::vector<Put> puts;
    const char *from = t.parent >= 0 ? set_slot(ch, k, 0) : source;
    for (int child : t.children) puts.push_back({child, from, set_slot_offset(ch, k, 0), e * esize_});
    return access(puts, {}, on);
  }

  // Allreduce with the leaders in a tree: reduce to node 0's leader, broadcast back; every rank
  // gets the bits node 0's leader computed. The way up exposes to children, the way down to the
  // parent: the way down runs on the second window, so both post ahead.
  core::Result allreduce_tree() {
    const int me = c_.rank, leader = n_.leader_of_node[n_.node_index];
    const Chunks ch = chunks(tree_slots(n_.nodes));
    const Tree t = tree(0, n_.leader_of_node[0]);
    for (uint64_t k = 0, f = 0; f < call_.count; ++k, f += ch.cap) {
      const uint64_t e = std::min(ch.cap, call_.count - f), off = f * esize_;
      char *mine = set_slot(ch, k, 0);
      if (core::Result r = node_step(kReduce, in() + off, mine, e, 0)) return r;
      if (me == leader) {
        if (core::Result r = tree_reduce(t, ch, k, e, mine)) return r;
        if (core::Result r = tree_bcast(t, ch, k, e, mine, n_.window2)) return r;
        if (core::Result r = local_step(kLocalCopy, mine, out() + off, e, 1, 0, 0)) return r;
      }
      if (node_size() > 1)
        if (core::Result r = node_step(kBcast, out() + off, out() + off, e, 0)) return r;
    }
    return core::ok();
  }

  core::Result allreduce() {
    const bool lead = c_.rank == n_.leader_of_node[n_.node_index];
    const Chunks ch = chunks(n_.nodes);
    const uint64_t sb = set_slot_bytes(ch);
    std::vector<int> others;
    for (int j = 0; j < n_.nodes; ++j)
      if (j != n_.node_index) others.push_back(n_.leader_of_node[j]);
    for (uint64_t k = 0, f = 0; f < call_.count; ++k, f += ch.cap) {
      const uint64_t e = std::min(ch.cap, call_.count - f), off = f * esize_;
      char *mine = set_slot(ch, k, n_.node_index);
      if (core::Result r = node_step(kReduce, in() + off, mine, e, 0)) return r;
      if (lead) {
        std::vector<Put> puts;
        for (int t : others) puts.push_back({t, mine, set_slot_offset(ch, k, n_.node_index), e * esize_});
        if (core::Result r = epoch(ch, k, others, puts)) return r;
        if (core::Result r = local_step(kLocalReduce, set_slot(ch, k, 0), out() + off, e, n_.nodes, sb, 0)) return r;
      }
      if (node_size() > 1)
        if (core::Result r = node_step(kBcast, out() + off, out() + off, e, 0)) return r;
    }
    return core::ok();
  }

  // Reduce with the leaders in a tree rooted at the root: the root's final step adds its
  // children's partials straight into recvbuf.
  core::Result reduce_tree() {
    const int me = c_.rank, root = call_.root, root_node = n_.node_of[root];
    const int leader = n_.node_index == root_node ? root : n_.leader_of_node[n_.node_index];
    const Chunks ch = chunks(tree_slots(n_.nodes));
    const Tree t = tree(root_node, root);
    for (uint64_t k = 0, f = 0; f < call_.count; ++k, f += ch.cap) {
      const uint64_t e = std::min(ch.cap, call_.count - f), off = f * esize_;
      char *mine = set_slot(ch, k, 0);
      if (core::Result r = node_step(kReduce, in() + off, mine, e, local_root(leader))) return r;
      if (me == leader)
        if (core::Result r = tree_reduce(t, ch, k, e, me == root ? out() + off : mine)) return r;
    }
    return core::ok();
  }

  core::Result reduce() {
    const int me = c_.rank, root = call_.root, root_node = n_.node_of[root];
    const bool on_root_node = n_.node_index == root_node;
    const int leader = on_root_node ? root : n_.leader_of_node[n_.node_index];
    const Chunks ch = chunks(n_.nodes);
    const uint64_t sb = set_slot_bytes(ch);
    std::vector<int> senders;
    for (int j = 0; j < n_.nodes; ++j)
      if (j != root_node) senders.push_back(n_.leader_of_node[j]);
    for (uint64_t k = 0, f = 0; f < call_.count; ++k, f += ch.cap) {
      const uint64_t e = std::min(ch.cap, call_.count - f), off = f * esize_;
      char *mine = set_slot(ch, k, n_.node_index);
      if (core::Result r = node_step(kReduce, in() + off, mine, e, local_root(leader))) return r;
      if (me == root) {
        if (core::Result r = epoch(ch, k, senders, {})) return r;
        if (core::Result r = local_step(kLocalReduce, set_slot(ch, k, 0), out() + off, e, n_.nodes, sb, 0)) return r;
      } else if (me == leader) {
        if (core::Result r = access({{root, mine, set_slot_offset(ch, k, n_.node_index), e * esize_}})) return r;
      }
    }
    return core::ok();
  }

  core::Result bcast() {
    const int me = c_.rank, root = call_.root, root_node = n_.node_of[root];
    const bool on_root_node = n_.node_index == root_node;
    const bool leader = !on_root_node && me == n_.leader_of_node[n_.node_index];
    const Chunks ch = chunks(1);
    std::vector<int> leaders;
    for (int j = 0; j < n_.nodes; ++j)
      if (j != root_node) leaders.push_back(n_.leader_of_node[j]);
    for (uint64_t k = 0, f = 0; f < call_.count; ++k, f += ch.cap) {
      const uint64_t e = std::min(ch.cap, call_.count - f), off = f * esize_;
      char *buf = out() + off;
      if (on_root_node && node_size() > 1)
        if (core::Result r = node_step(kBcast, buf, buf, e, local_root(root))) return r;
      if (me == root) {
        std::vector<Put> puts;
        for (int t : leaders) puts.push_back({t, buf, set_slot_offset(ch, k, 0), e * esize_});
        if (core::Result r = access(puts)) return r;
      } else if (leader) {
        if (core::Result r = epoch(ch, k, {root}, {})) return r;
        if (core::Result r = local_step(kLocalCopy, set_slot(ch, k, 0), buf, e, 1, 0, 0)) return r;
      }
      if (!on_root_node && node_size() > 1)
        if (core::Result r = node_step(kBcast, buf, buf, e, 0)) return r;
    }
    return core::ok();
  }

  // Bcast with the leaders in a tree rooted at the root: each leader forwards the chunk to its
  // children before it copies it out.
  core::Result bcast_tree() {
    const int me = c_.rank, root = call_.root, root_node = n_.node_of[root];
    const bool on_root_node = n_.node_index == root_node;
    const bool leader = me == (on_root_node ? root : n_.leader_of_node[n_.node_index]);
    const Chunks ch = chunks(1);
    const Tree t = tree(root_node, root);
    for (uint64_t k = 0, f = 0; f < call_.count; ++k, f += ch.cap) {
      const uint64_t e = std::min(ch.cap, call_.count - f), off = f * esize_;
      char *buf = out() + off;
      if (on_root_node && node_size() > 1)
        if (core::Result r = node_step(kBcast, buf, buf, e, local_root(root))) return r;
      if (leader) {
        if (core::Result r = tree_bcast(t, ch, k, e, buf, nullptr)) return r;
        if (!on_root_node)
          if (core::Result r = local_step(kLocalCopy, set_slot(ch, k, 0), buf, e, 1, 0, 0)) return r;
      }
      if (!on_root_node && node_size() > 1)
        if (core::Result r = node_step(kBcast, buf, buf, e, 0)) return r;
    }
    return core::ok();
  }

  // Allgather (personal: alltoall): every rank's chunk of each block into slot `me` of every
  // peer, then all slots copied out into the receive blocks.
  core::Result gather_blocks(bool personal) {
    const int me = c_.rank, n = c_.size;
    const Chunks ch = chunks(n);
    const uint64_t sb = set_slot_bytes(ch);
    const uint64_t block = call_.count * esize_;
    std::vector<int> peers;
    for (int q = 0; q < n; ++q)
      if (q != me) peers.push_back(q);
    for (uint64_t k = 0, f = 0; f < call_.count; ++k, f += ch.cap) {
      const uint64_t e = std::min(ch.cap, call_.count - f), off = f * esize_;
      std::vector<Put> puts;
      for (int q : peers)
        puts.push_back({q, in() + (personal ? q * block : 0) + off, set_slot_offset(ch, k, me), e * esize_});
      if (core::Result r = epoch(ch, k, peers, puts, peers)) return r;
      const char *own = in() + (personal ? me * block : 0) + off;
      if (core::Result r = local_step(kLocalCopy, set_slot(ch, k, 0), out() + off, e, n, sb, block, me, own)) return r;
    }
    return core::ok();
  }

  // Allgather over rails ([Kandadi Suresh 2022], no leader): a rank's block crosses the network
  // once per node, to that node's rank with the same local index (its rail peer; the local index
  // modulo the node's size where nodes differ), which forwards it to the rest of its node in a
  // node-local epoch together with its own block. Each rank sends nodes - 1 blocks over the network
  // instead of one per rank on other nodes; the node-local path carries the fan-out. The rail
  // epochs run on the first window and the node-local ones on the second, each exposing to one
  // group, so with two sets of slots (Chunks) chunk k + 1 crosses the network while chunk k is
  // forwarded within the node (the segment pipelining of [Kandadi Suresh 2022]).
  core::Result allgather_rails() {
    const int me = c_.rank, n = c_.size, my_node = n_.node_index;
    const Chunks ch = chunks(n);
    const uint64_t block = call_.count * esize_;
    std::vector<std::vector<int>> members(n_.nodes);  // each node's ranks, in communicator order
    for (int q = 0; q < n; ++q) members[n_.node_of[q]].push_back(q);
    const auto relay = [&](int source, int node) {
      const std::vector<int> &m = members[node];
      return m[n_.local_rank_of[source] % m.size()];
    };
    std::vector<int> rail_targets, rail_origins, locals;
    for (int v = 0; v < n_.nodes; ++v)
      if (v != my_node) rail_targets.push_back(relay(me, v));
    for (int q = 0; q < n; ++q)
      if (n_.node_of[q] != my_node && relay(q, my_node) == me) rail_origins.push_back(q);
    for (int q : members[my_node])
      if (q != me) locals.push_back(q);
    for (uint64_t k = 0, f = 0; f < call_.count; ++k, f += ch.cap) {
      const uint64_t e = std::min(ch.cap, call_.count - f), off = f * esize_, bytes = e * esize_;
      std::vector<Put> puts;
      for (int t : rail_targets) puts.push_back({t, in() + off, set_slot_offset(ch, k, me), bytes});
      if (core::Result r = epoch(ch, k, rail_origins, puts, rail_targets)) return r;
      puts.clear();
      for (int l : locals) {
        puts.push_back({l, in() + off, set_slot_offset(ch, k, me), bytes});
        for (int q : rail_origins) puts.push_back({l, set_slot(ch, k, q), set_slot_offset(ch, k, q), bytes});
      }
      if (core::Result r = epoch(ch, k, locals, puts, locals, n_.window2)) return r;
      if (core::Result r = local_step(kLocalCopy, set_slot(ch, k, 0), out() + off, e, n, set_slot_bytes(ch), block, me,
                                      in() + off))
        return r;
    }
    return core::ok();
  }

 private:
  Context &c_;
  Net &n_;
  const Call &call_;
  uint64_t esize_;
  Algo reduce_algo_, bcast_algo_;
  bool pipeline_;
};

}  // namespace

namespace {
// Slots the window is cut into: one (bcast), one per rank (allgather, alltoall), one per node
// (allreduce, reduce), one more for the ring's receive slot, or the tree's own vector and a
// receive slot per level.
uint64_t window_slots(const Context &c, const Call &call, LeaderAlgo leaders) {
  const bool tree = leaders == LeaderAlgo::tree;
  return call.kind == kBcast       ? 1
         : call.kind >= kAllgather ? c.size
         : tree                    ? Enqueuer::tree_slots(c.net->nodes)
                                   : c.net->nodes + (leaders == LeaderAlgo::ring ? 1 : 0);
}
}  // namespace

core::Result check_internode_steps(Context &c, const Call &call, const InternodeChoice &choice) {
  Enqueuer e(c, call, choice.reduce_algo, choice.bcast_algo, choice.pipeline);
  if (call.count && e.chunk_elems(window_slots(c, call, choice.leaders)) == 0)
    return core::fail(MPI_ERR_UNSUPPORTED_OPERATION, "the collective scratch (MPIX_ST_COLL_SCRATCH_KIB) is too small "
                                                     "for " + std::to_string(c.size) + " ranks across nodes");
  return core::ok();
}

core::Result enqueue_internode_steps(Context &c, const Call &call, const InternodeChoice &choice) {
  if (core::Result r = check_internode_steps(c, call, choice)) return r;
  Enqueuer e(c, call, choice.reduce_algo, choice.bcast_algo, choice.pipeline);
  const LeaderAlgo leaders = choice.leaders;
  const bool tree = leaders == LeaderAlgo::tree;
  switch (call.kind) {
    case kAllreduce:
      return leaders == LeaderAlgo::ring ? e.allreduce_ring() : tree ? e.allreduce_tree() : e.allreduce();
    case kReduce: return tree ? e.reduce_tree() : e.reduce();
    case kBcast: return tree ? e.bcast_tree() : e.bcast();
    case kAllgather: return choice.rails ? e.allgather_rails() : e.gather_blocks(false);
    default: return e.gather_blocks(true);
  }
}

}  // namespace mpix::coll
