#include "network.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "context.h"
#include "core/config.h"
#include "core/internode.h"
#include "core/list_items.h"
#include "engine.h"
#include "kernels/message_chunks.h"
#include "layout.h"
#include "topo/locality.h"

namespace mpix::p2p::net {

using core::fail;
using core::ok;
using core::Result;
namespace internode = core::internode;

namespace {

constexpr int kSkipWord = 1;
// Queues that made a doorbell, settled at MPI_Finalize (settle_all). Never destroyed at exit.
std::vector<std::weak_ptr<Queue>> &g_belled = *new std::vector<std::weak_ptr<Queue>>;

// The handles one rank publishes.
struct Handles {
  ofi::RemoteRegion areas, flags;
  int32_t ok;
};

// The doorbells of long messages (post_chunks), settled at MPI_Finalize with the queues'.
std::vector<std::weak_ptr<Bell>> &g_chunk_bells = *new std::vector<std::weak_ptr<Bell>>;

Result make_doorbell(const char *whose, std::shared_ptr<Bell> *out) {
  ofi::Fabric &f = internode::fabric();
  auto b = std::make_shared<Bell>();
  gpu::Backend &be = gpu::backend();
  if (be.allocate_host_mapped(2 * sizeof(uint64_t), &b->mem))
    return fail(core::resource_error_class(), std::string(whose) + " doorbell: " + be.last_error());
  std::memset(b->mem.host, 0, 2 * sizeof(uint64_t));
  b->trigger = f.make_counter();
  b->signal_done = f.make_counter();
  if (!b->trigger || !b->signal_done) return internode::transport_failure("making a doorbell's counters");
  auto *words = static_cast<uint64_t *>(b->mem.host);
  b->watch_id = internode::doorbells().watch(words, b->trigger, words + kSkipWord);
  *out = b;
  return ok();
}

Result make_bell(Queue &q) {
  if (q.bell) return ok();
  if (Result r = make_doorbell("the queue's", &q.bell)) return r;
  std::erase_if(g_belled, [](const std::weak_ptr<Queue> &w) { return w.expired(); });
  g_belled.push_back(q.shared_from_this());
  return ok();
}

uint64_t flag_offset(uint64_t word) { return word * sizeof(uint64_t); }

// The counters of a doorbell, for settling and releasing them together.
std::vector<ofi::Counter> counters_of(const Bell &b) {
  std::vector<ofi::Counter> group{b.trigger, b.signal_done};
  for (const Bell::PutCounter &p : b.puts) group.push_back(p.done);
  return group;
}

std::atomic_ref<uint64_t> skip_word(const Bell &b) { return std::atomic_ref<uint64_t>(static_cast<uint64_t *>(b.mem.host)[kSkipWord]); }

uint64_t puts_for(uint64_t bytes) {
  const uint64_t most = internode::fabric().max_put_bytes();
  return (bytes + most - 1) / most;
}
// Puts that carry op's header and data (a chunked send's header only): at most what the provider
// takes each.
uint64_t puts_of(const Op &op) { return puts_for(kDataAt + (op.chunked ? 0 : op.bytes)); }

// The chunks of a long message (kernels/message_chunks.h, Between nodes): a send's, of half a
// mailbox each, or those a receive's buffer holds (K).
uint64_t chunks_of(const Op &op) { return work::chunk_count(op.bytes, op.ctx->slot_bytes / 2); }
// Operations of a long message's chunks: per chunk its puts and its signal, and a send's two done
// signals; a receive's K + 1 go signals.
uint64_t chunk_operations(const Op &op) {
  if (!op.send) return chunks_of(op) + 1;
  const uint64_t half = op.ctx->slot_bytes / 2, n = chunks_of(op);
  uint64_t ops = n + 2;
  for (uint64_t k = 0; k < n; ++k) ops += puts_for(std::min(half, op.bytes - k * half));
  return ops;
}
// A failed post, naming the peer (the transport may already have dropped a rank that died).
Result post_failed(const char *what, const Op &op) {
  const std::string text =
      std::string("posting ") + what + (op.send ? " to rank " : " from rank ") + std::to_string(op.peer);
  return internode::transport_failure(text.c_str());
}
// Whether op moves chunks between nodes in a wait point's list.
bool moves_chunks(const Op &op) { return op.send ? op.chunked : op.bytes > op.ctx->slot_bytes; }

}  // namespace

Result attach(Context &c, const std::vector<topo::Locality> &where) {
  auto r = std::make_shared<Remote>();
  c.remote = r;
  r->index.assign(c.size, -1);
  r->my_index.assign(c.size, -1);
  r->world.assign(c.size, -1);
  // Remote indices number the ranks on other nodes in rank order, at every rank: this rank's index
  // at q counts the ranks before it that are not on q's node.
  for (int q = 0; q < c.size; ++q) {
    if (where[q].same_node_as(where[c.rank])) continue;
    r->index[q] = r->nremote++;
    r->my_index[q] = 0;
    for (int p = 0; p < c.rank; ++p) r->my_index[q] += !where[p].same_node_as(where[q]);
  }
  MPI_Group group, world;
  PMPI_Comm_group(c.comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> ranks(c.size);
  for (int q = 0; q < c.size; ++q) ranks[q] = q;
  PMPI_Group_translate_ranks(group, c.size, ranks.data(), world, r->world.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);

  if (Result e = internode::available()) {  // alike on every rank: the transport opens collectively
    c.remote.reset();
    c.remote_why = e.message;
    return ok();
  }
  std::string why;
  Handles mine{};
  ofi::Fabric *f = &internode::fabric();
  gpu::Backend &be = gpu::backend();
  r->area_bytes = area_bytes(c.slot_bytes);
  const uint64_t bytes = r->area_bytes * r->nremote, flag_bytes = kRemoteFlags.words(r->nremote) * sizeof(uint64_t);
  if (why.empty() && (be.allocate_host_mapped(bytes, &r->areas) || be.allocate_host_mapped(bytes, &r->staging) ||
                      be.allocate_host_mapped(flag_bytes, &r->flags)))
    why = "mailbox memory for peers on other nodes (" + std::to_string(2 * bytes) + " bytes): " + be.last_error();
  if (why.empty()) {
    std::memset(r->flags.host, 0, flag_bytes);
    r->areas_reg = f->register_memory(r->areas.host, bytes);
    r->staging_reg = f->register_memory(r->staging.host, bytes);
    r->flags_reg = f->register_memory(r->flags.host, flag_bytes);
    if (!r->areas_reg || !r->staging_reg || !r->flags_reg)
      why = "registering the mailbox memory with the fabric: " + f->last_error();
  }
  if (why.empty()) {
    mine.areas = f->remote(r->areas_reg);
    mine.flags = f->remote(r->flags_reg);
    r->own_flags = mine.flags;
  }
  mine.ok = why.empty();
  PMPI_Comm_dup(c.comm, &r->sync);
  std::vector<Handles> all(c.size);
  PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, c.comm);
  for (int q = 0; q < c.size && why.empty(); ++q)
    if (!all[q].ok) why = "rank " + std::to_string(q) + " could not make its mailbox memory for other nodes";
  if (!why.empty()) return fail(MPI_ERR_OTHER, why);
  r->peer_areas.resize(r->nremote);
  r->peer_flags.resize(r->nremote);
  for (int q = 0; q < c.size; ++q) {
    if (r->index[q] < 0) continue;
    r->peer_areas[r->index[q]] = all[q].areas;
    r->peer_flags[r->index[q]] = all[q].flags;
  }
  return ok();
}

void detach(Context &c) {
  if (!c.remote) return;
  Remote &r = *c.remote;
  if (!internode::available()) {  // else the transport is closed already (MPI_Finalize)
    if (r.sync != MPI_COMM_NULL && !barrier_within(r.sync, std::chrono::milliseconds(internode::wait_limit_ms()))) {
      std::fprintf(stderr, "mpix-st: a rank of communicator %u did not reach MPI_Comm_free within the watchdog; the "
                           "memory its peers on other nodes reach is leaked\n", c.id);
      c.remote.reset();
      return;
    }
    if (r.sync != MPI_COMM_NULL) PMPI_Comm_free(&r.sync);
    ofi::Fabric &f = internode::fabric();
    if (r.areas_reg) f.deregister(r.areas_reg);
    if (r.staging_reg) f.deregister(r.staging_reg);
    if (r.flags_reg) f.deregister(r.flags_reg);
  }
  gpu::Backend &be = gpu::backend();
  for (gpu::HostMapped *m : {&r.areas, &r.staging, &r.flags})
    if (m->host) be.free_host_mapped(m);
  c.remote.reset();
}

}  // namespace mpix::p2p::net

namespace mpix::p2p::net {

Bell::~Bell() {
  if (!internode::available() && trigger && signal_done) {
    ofi::Fabric &f = internode::fabric();
    // Rings the stream stored reach the counter through the agent: wait for them before it stops
    // watching (the queue's lists have run), unless the doorbell stopped.
    if (!skip_word(*this).load(std::memory_order_acquire))
      (void)f.wait(trigger, std::atomic_ref<uint64_t>(*static_cast<uint64_t *>(mem.host)).load(std::memory_order_acquire),
                   internode::wait_limit_ms());
    if (watch_id) internode::doorbells().unwatch(watch_id);
    const std::vector<ofi::Counter> group = counters_of(*this);
    size_t never = 0;
    (void)f.settle(group, internode::wait_limit_ms(), &never);
    internode::forget_completed(signal_done);
    (void)f.release_counters(group);
  }
  if (mem.host) gpu::backend().free_host_mapped(&mem);
}

uint64_t operations(const Op &op, bool in_send_list) {
  if (!op.ctx || op.ctx->local[op.peer] >= 0) return 0;
  if (in_send_list) return puts_of(op) + 1;
  if (op.send) return chunk_operations(op);  // its header went with a send list
  return 1 + chunk_operations(op);           // as in a list that moves chunks
}

Result check_chunk_budget(const Op &op) {
  if (!op.ctx || op.ctx->local[op.peer] >= 0 || !moves_chunks(op) || internode::available()) return ok();
  const uint64_t need = chunk_operations(op) + (op.send ? 0 : 1), most = list_budget();
  if (need <= most) return ok();
  return fail(core::resource_error_class(),
              std::string(op.send ? "a message of " : "a receive buffer of ") + std::to_string(op.bytes) +
                  " bytes with a rank on another node moves in chunks of " + std::to_string(op.ctx->slot_bytes / 2) +
                  " bytes that take " + std::to_string(need) + " triggered operations, more than one list may (" +
                  std::to_string(most) + ", half the budget): raise MPIX_ST_P2P_SLOT_KIB or MPIX_ST_TRIGGERED_OPS_MAX");
}

uint64_t list_budget() {
  if (internode::available()) return UINT64_MAX;  // no operations toward other nodes to count
  return std::max<uint64_t>(1, internode::budget().capacity() / 2);
}

// The completion counter of the puts of ring `ring` (the queue's next), chosen at its first put:
// one whose puts all completed, else a new one, else the one used longest ago, once its puts
// completed (bounded by the watchdog; MPIX_ST_THROTTLE=app reports instead). A ring with puts
// takes at least two of the triggered-operation budget (a put, a signal), so up to half the budget
// in counters the host never waits here where the budget would not make it wait anyway.
Result put_counter(Bell &b, uint64_t ring, Bell::PutCounter **out) {
  if (b.ring_puts >= 0 && b.puts[b.ring_puts].last_ring == ring) {
    *out = &b.puts[b.ring_puts];
    return ok();
  }
  ofi::Fabric &f = internode::fabric();
  int pick = -1, oldest = -1;
  for (size_t i = 0; i < b.puts.size() && pick < 0; ++i) {
    const Bell::PutCounter &p = b.puts[i];
    if (f.read(p.done) + f.read_errors(p.done) >= p.posted) pick = static_cast<int>(i);  // none still running
    else if (oldest < 0 || p.last_ring < b.puts[oldest].last_ring) oldest = static_cast<int>(i);
  }
  if (pick < 0 && b.puts.size() < std::max<uint64_t>(1, internode::budget().capacity() / 2)) {
    if (const ofi::Counter c = f.make_counter()) {
      b.puts.push_back({c, 0, 0});
      pick = static_cast<int>(b.puts.size()) - 1;
    } else if (b.puts.empty()) {
      return internode::transport_failure("making a completion counter for messages");
    }  // else the provider has no more: wait for one
  }
  if (pick < 0) {
    const std::string earlier = "the messages toward other nodes of " + std::to_string(b.puts.size()) +
                                " earlier lists of this queue have not completed";
    if (internode::budget().mode() == throttle::Mode::app)
      return fail(core::resource_error_class(), earlier + " (MPIX_ST_THROTTLE=app never waits): synchronize the stream "
                                                          "every few iterations, or set MPIX_ST_THROTTLE=static or adaptive");
    Bell::PutCounter &p = b.puts[oldest];
    if (f.wait(p.done, p.posted, internode::wait_limit_ms()))
      return fail(MPI_ERR_OTHER, earlier + " within the watchdog (" + std::to_string(internode::wait_limit_ms()) + " ms)");
    pick = oldest;
  }
  b.ring_puts = pick;
  b.puts[pick].last_ring = ring;
  *out = &b.puts[pick];
  return ok();
}

// Operations of a stopped doorbell would never fire: the call fails instead of its stream waiting.
Result doorbell_rings(const Bell &b) {
  if (!skip_word(b).load(std::memory_order_acquire)) return ok();
  return fail(MPI_ERR_OTHER, "an earlier list of this queue toward another node was cut short (the watchdog, or a "
                             "failed call): its doorbell no longer rings, so no message toward another node can go on "
                             "this queue");
}

Result post_send(const Op &op, Queue &q) {
  if (Result e = make_bell(q)) return e;
  if (Result e = doorbell_rings(*q.bell)) return e;
  const Remote &r = *op.ctx->remote;
  Bell &b = *q.bell;
  ofi::Fabric &f = internode::fabric();
  const int box = box_index(op.channel, op.use), ri = r.index[op.peer], mine = r.my_index[op.peer];
  const uint64_t ring = b.rings + 1;
  Bell::PutCounter *puts = nullptr;
  if (Result e = put_counter(b, ring, &puts)) return e;
  // Header and data in puts of at most what the provider carries, then the full word's add, which
  // ring() chains to the ring's puts: one reservation for all.
  const uint64_t total = kDataAt + (op.chunked ? 0 : op.bytes), most = f.max_put_bytes();
  if (Result e = internode::reserve(operations(op, true), b.signal_done, b.signals_posted + 1)) return e;
  const uint64_t at_peer = r.offset(mine, box);
  const char *from = r.staging_host(op.peer, box);
  for (uint64_t done = 0; done < total; done += most) {
    const uint64_t n = std::min(most, total - done);
    if (f.triggered_put(from + done, n, r.staging_reg, r.world[op.peer], r.peer_areas[ri], at_peer + done,
                        ofi::Trigger{b.trigger, ring, puts->done}))
      return post_failed("the triggered put of a message", op);
    ++puts->posted;
  }
  b.pending.push_back({r.world[op.peer], r.peer_flags[ri], flag_offset(kRemoteFlags.full(mine, box))});
  ++b.signals_posted;  // its reservation completes with it
  return ok();
}

Result post_receive(const Op &op, Queue &q) {
  if (Result e = make_bell(q)) return e;
  if (Result e = doorbell_rings(*q.bell)) return e;
  const Remote &r = *op.ctx->remote;
  Bell &b = *q.bell;
  ofi::Fabric &f = internode::fabric();
  const int box = box_index(op.channel, op.use), ri = r.index[op.peer], mine = r.my_index[op.peer];
  if (Result e = internode::reserve(1, b.signal_done, b.signals_posted + 1)) return e;
  if (f.triggered_atomic_add_u64(1, r.world[op.peer], r.peer_flags[ri], flag_offset(kRemoteFlags.free(mine, box)),
                                 ofi::Trigger{b.trigger, b.rings + 1, b.signal_done}))
    return post_failed("the triggered signal of a receive", op);
  ++b.signals_posted;
  return ok();
}

Result post_chunks(Op &op, uint64_t **bell) {
  std::shared_ptr<Bell> b;
  if (Result e = make_doorbell("a long message's", &b)) return e;
  const Remote &r = *op.ctx->remote;
  ofi::Fabric &f = internode::fabric();
  const int box = box_index(op.channel, op.use), ri = r.index[op.peer], mine = r.my_index[op.peer];
  const int peer_world = r.world[op.peer], self_world = r.world[op.ctx->rank];
  const uint64_t half = op.ctx->slot_bytes / 2, n = chunks_of(op), round = box_round(op.use);
  const uint64_t ops = chunk_operations(op);
  // One reservation for all, complete once every signal is: a send's last are its done words,
  // chained on all its puts.
  if (Result e = internode::reserve(ops, b->signal_done, op.send ? n + 2 : n + 1)) return e;
  auto signal = [&](int world, const ofi::RemoteRegion &flags, uint64_t word, uint64_t value, ofi::Trigger when) {
    ++b->signals_posted;
    return f.triggered_atomic_max_u64(value, world, flags, flag_offset(word), when);
  };
  if (op.send) {
    // Chunk k: ring k + 1 puts it from the staging mailbox's half k % 2 into the same place of the
    // receiver's, then the chunk word of that half says so, once that half's puts completed.
    b->puts = {{f.make_counter()}, {f.make_counter()}};
    if (!b->puts[0].done || !b->puts[1].done) return internode::transport_failure("making a long message's counters");
    const uint64_t most = f.max_put_bytes();
    for (uint64_t k = 0; k < n; ++k) {
      Bell::PutCounter &p = b->puts[k & 1];
      const uint64_t at = kDataAt + (k & 1) * half, len = std::min(half, op.bytes - k * half);
      const char *from = r.staging_host(op.peer, box) + at;
      for (uint64_t done = 0; done < len; done += most) {
        if (f.triggered_put(from + done, std::min(most, len - done), r.staging_reg, peer_world, r.peer_areas[ri],
                            r.offset(mine, box) + at + done, ofi::Trigger{b->trigger, k + 1, p.done}))
          return post_failed("a triggered put of a long message", op);
        ++p.posted;
      }
      const uint64_t word = kRemoteFlags.chunk(mine, box) + (k & 1) * (work::kLaneStride / sizeof(uint64_t));
      if (signal(peer_world, r.peer_flags[ri], word, (round << 32) | (k + 1),
                 ofi::Trigger{p.done, p.posted, b->signal_done}))
        return post_failed("a triggered signal of a long message", op);
    }
    for (int h = 0; h < 2; ++h)
      if (signal(self_world, r.own_flags, kRemoteFlags.done(ri, box, h), round + 1,
                 ofi::Trigger{b->puts[h].done, b->puts[h].posted, b->signal_done}))
        return post_failed("a triggered signal of a long message", op);
    b->rings = n;
  } else {
    // Ring i: go = i + 1 in the sender's go word; the last, ring K + 1: the sender need not wait
    // for this receive any more (it took the whole message, or nothing of it).
    for (uint64_t i = 1; i <= n + 1; ++i)
      if (signal(peer_world, r.peer_flags[ri], kRemoteFlags.go(mine, box),
                 (round << 32) | (i <= n ? i + 1 : work::kChunksAbandoned),
                 ofi::Trigger{b->trigger, i, b->signal_done}))
        return post_failed("a triggered signal of a long receive", op);
    b->rings = n + 1;
  }
  internode::doorbells().arm(b->watch_id, b->rings);
  std::erase_if(g_chunk_bells, [](const std::weak_ptr<Bell> &w) { return w.expired(); });
  g_chunk_bells.push_back(b);
  op.chunk_bell = b;
  *bell = static_cast<uint64_t *>(b->mem.device);
  return ok();
}

Result ring(gpu::WorkList &list, Queue &q) {
  Bell &b = *q.bell;
  ofi::Fabric &f = internode::fabric();
  const Bell::PutCounter *puts = b.pending.empty() ? nullptr : &b.puts[b.ring_puts];
  for (const Bell::Signal &s : b.pending)
    if (f.triggered_atomic_add_u64(1, s.world, s.flags, s.offset, ofi::Trigger{puts->done, puts->posted, b.signal_done})) {
      b.pending.clear();
      return internode::transport_failure("posting a message's triggered signal");
    }
  b.pending.clear();
  auto *words = static_cast<uint64_t *>(b.mem.device);
  ++b.rings;
  list.skip_word = reinterpret_cast<uint64_t>(words + kSkipWord);
  list.signals.push_back(core::signal_item(words, b.rings));
  internode::doorbells().arm(b.watch_id, b.rings);  // the agent watches closely until it rings
  return ok();
}

void ring_lost(Queue &q) {
  if (!q.bell) return;
  q.bell->pending.clear();
  skip_word(*q.bell).store(1, std::memory_order_release);
}

namespace {
void settle_bell(const Bell &b) {
  // After a stopped doorbell, operations of the lists that did not ring never run.
  if (skip_word(b).load(std::memory_order_acquire)) return;
  ofi::Fabric &f = internode::fabric();
  for (const Bell::PutCounter &p : b.puts) (void)f.wait(p.done, p.posted, internode::wait_limit_ms());
  (void)f.wait(b.signal_done, b.signals_posted, internode::wait_limit_ms());
}
}  // namespace

void settle(Queue &q) {
  if (!q.bell || internode::available()) return;
  settle_bell(*q.bell);
}

void settle_all() {
  std::lock_guard<std::recursive_mutex> guard(lock());
  for (const std::weak_ptr<Queue> &w : g_belled)
    if (std::shared_ptr<Queue> q = w.lock()) settle(*q);
  if (internode::available()) return;
  for (const std::weak_ptr<Bell> &w : g_chunk_bells)
    if (std::shared_ptr<Bell> b = w.lock()) settle_bell(*b);
}

}  // namespace mpix::p2p::net
