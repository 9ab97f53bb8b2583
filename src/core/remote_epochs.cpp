#include "remote_epochs.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <mutex>
#include <thread>

#include "accumulated_spans.h"
#include "config.h"
#include "internode.h"
#include "list_items.h"
#include "settings/settings.h"
#include "staged_transfers.h"

namespace mpix::core::remote {
namespace {

using internode::transport_failure;

// The window's doorbell words (RemoteState::doorbell_mem): post rings, complete rings, and the
// skip word (doorbell_ring).
constexpr size_t kSkipWord = 2, kDoorbellWords = 3;

// The backend's device memory, as the transport registers it.
ofi::DeviceMemory device_memory() { return ofi::DeviceMemory{gpu::backend().name(), gpu::backend().device_ordinal()}; }

// Releases origin registrations whose operations have all completed (see RemoteState).
void release_completed_origins(RemoteState &s, bool all) {
  if (s.origin_releases.empty() && s.origin_retired.empty()) return;
  ofi::Fabric &f = internode::fabric();
  const uint64_t done = all ? UINT64_MAX : f.read(s.op_done);
  std::erase_if(s.origin_retired, [&](const std::pair<uint64_t, ofi::Region> &r) {
    if (r.first > done) return false;
    f.deregister(r.second);
    return true;
  });
  while (!s.origin_releases.empty() && s.origin_releases.front().first <= done) {
    const auto [use, base] = s.origin_releases.front();
    s.origin_releases.pop_front();
    auto it = s.origin_regs.find(base);
    if (it == s.origin_regs.end() || it->second.last_use != use) continue;  // used again since
    f.deregister(it->second.region);
    s.origin_regs.erase(it);
  }
}

// The registration of [buffer, buffer + bytes) for operations of this epoch, whose last one will
// bring ops_posted to `last_use`.
ofi::Region origin_region(RemoteState &s, void *buffer, uint64_t bytes, uint64_t last_use) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(buffer);
  auto it = s.origin_regs.upper_bound(p);
  if (it != s.origin_regs.begin()) {
    --it;
    if (p + bytes <= it->first + it->second.bytes) {
      it->second.last_use = last_use;
      s.origin_releases.emplace_back(last_use, it->first);
      return it->second.region;
    }
  }
  gpu::Backend &be = gpu::backend();
  const ofi::DeviceMemory device = device_memory();
  const bool on_device = std::strcmp(be.name(), "host") != 0 && be.manages_memory(buffer);
  ofi::Region r = internode::fabric().register_memory(buffer, bytes, on_device ? &device : nullptr);
  if (!r) return r;
  ++s.origin_registrations;
  // A registration at the same base that is too short stays until its operations are done; the
  // map names the new one from now on.
  auto &slot = s.origin_regs[p];
  if (slot.region) s.origin_retired.emplace_back(slot.last_use, slot.region);
  slot = RemoteState::OriginRegistration{bytes, r, last_use};
  s.origin_releases.emplace_back(last_use, p);
  return r;
}

ofi::AtomicType atomic_type(uint8_t dtype) {
  switch (dtype) {
    case work::kInt32: return ofi::AtomicType::i32;
    case work::kInt64: return ofi::AtomicType::i64;
    case work::kFloat: return ofi::AtomicType::f32;
    default: return ofi::AtomicType::f64;
  }
}

ofi::AtomicOp atomic_op(uint8_t op) {
  switch (op) {
    case work::kSum: return ofi::AtomicOp::sum;
    case work::kMax: return ofi::AtomicOp::max;
    case work::kMin: return ofi::AtomicOp::min;
    default: return ofi::AtomicOp::replace;
  }
}

// Bytes one triggered operation of `op`'s kind carries (a whole number of elements).
uint64_t chunk_bytes(const RemoteOp &op) {
  ofi::Fabric &f = internode::fabric();
  if (op.kind != RemoteKind::accumulate) return f.max_put_bytes();
  const ofi::AtomicType type = atomic_type(op.dtype);
  return f.atomic_count_limit(type, atomic_op(op.op)) * ofi::atomic_type_bytes(type);
}

// How many ops from ops[i] on travel as one network operation: pieces of one put or get joined
// up to the provider's vector limit and message size. 1: ops[i] alone (split where it is large).
size_t group_size(const std::vector<RemoteOp> &ops, size_t i) {
  if (ops[i].kind == RemoteKind::accumulate) return 1;
  ofi::Fabric &f = internode::fabric();
  const uint64_t most = f.max_put_bytes();
  const size_t limit = f.rma_pieces_limit();
  uint64_t bytes = ops[i].bytes;
  size_t n = 1;
  while (n < limit && i + n < ops.size() && ops[i + n].joins && bytes + ops[i + n].bytes <= most)
    bytes += ops[i + n++].bytes;
  return n;
}

// The registration a fabric operation reads or writes at the origin: the staging buffer, or the
// origin memory (the span shared by a derived datatype's pieces, else the piece alone, also where
// the span cannot be registered as a whole).
ofi::Region local_region(RemoteState &s, const RemoteOp &op, uint64_t last_use) {
  if (op.staged) return op.staged_region;
  if (op.span)
    if (ofi::Region r = origin_region(s, op.span, op.span_bytes, last_use)) return r;
  return origin_region(s, op.origin, op.bytes, last_use);
}

// Posts operations, fired when `trigger` reaches `ring`; each counts on op_done.
Result post_ops(Window &w, const std::vector<RemoteOp> &ops, ofi::Counter trigger, uint64_t ring) {
  RemoteState &s = *w.remote;
  ofi::Fabric &f = internode::fabric();
  // Accumulates of one origin to the same elements apply in program order (MPI's default
  // accumulate_ordering): one that overlaps an earlier one starts a wave, which fires once every
  // operation posted before it has completed, and every later operation of the epoch fires with
  // it. A counter tells how many of its operations completed, not which: an operation fired by the
  // doorbell after the overlapping one could complete first and count toward its threshold.
  ofi::Trigger wave{trigger, ring, s.op_done};
  AccumulatedSpans accumulated;  // by the accumulates posted so far in this epoch
  release_completed_origins(s, false);
  for (size_t i = 0, n = 0; i < ops.size(); i += n) {
    n = group_size(ops, i);
    const RemoteOp &op = ops[i];
    const int peer = w.peers[op.target].world_rank;
    const ofi::RemoteRegion &target = s.peer_data[op.target];
    if (n > 1) {  // pieces of one put or get, one vector each
      ofi::Fabric::Piece pieces[ofi::kMaxPieces];
      for (size_t k = 0; k < n; ++k) {
        const RemoteOp &p = ops[i + k];
        const ofi::Region local = local_region(s, p, s.ops_posted + 1);
        if (!local) return transport_failure("registering an origin buffer");
        pieces[k] = {p.staged ? p.staged : p.origin, local, p.offset, p.bytes};
      }
      const ofi::Status st = op.kind == RemoteKind::put ? f.triggered_put_pieces(pieces, n, peer, target, wave)
                                                        : f.triggered_get_pieces(pieces, n, peer, target, wave);
      if (st) return transport_failure("posting a triggered operation");
      ++s.ops_posted;
      continue;
    }
    const uint64_t last_use = s.ops_posted + fabric_operations(op);
    ofi::Region local = local_region(s, op, last_use);
    if (!local) return transport_failure("registering an origin buffer");
    void *const source = op.staged ? op.staged : op.origin;
    const uint64_t chunk = chunk_bytes(op);
    if (op.kind == RemoteKind::accumulate) {
      if (accumulated.overlaps(op.target, op.offset, op.offset + op.bytes))
        wave = ofi::Trigger{s.op_done, s.ops_posted, s.op_done};
      accumulated.add(op.target, op.offset, op.offset + op.bytes);
    }
    for (uint64_t done = 0, bytes = 0; done < op.bytes; done += bytes) {
      char *origin = static_cast<char *>(source) + done;
      const uint64_t offset = op.offset + done;
      bytes = std::min(chunk, op.bytes - done);
      ofi::Status st = ofi::kOk;
      switch (op.kind) {
        case RemoteKind::put: st = f.triggered_put(origin, bytes, local, peer, target, offset, wave); break;
        case RemoteKind::get: st = f.triggered_get(origin, bytes, local, peer, target, offset, wave); break;
        case RemoteKind::accumulate: {
          const ofi::AtomicType type = atomic_type(op.dtype);
          st = f.triggered_accumulate(origin, bytes / ofi::atomic_type_bytes(type), type, atomic_op(op.op), local, peer,
                                      target, offset, wave);
          break;
        }
      }
      if (st) return transport_failure("posting a triggered operation");
      ++s.ops_posted;
    }
  }
  return ok();
}

// Whether the network reaches window memory and flags as they are: host memory, or device
// memory the provider registers (FI_HMEM; never run here, see Fabric::registers_device_memory).
bool direct_access() {
  return std::strcmp(gpu::backend().name(), "host") == 0 || internode::fabric().registers_device_memory();
}

// Adds to `list` the stream's `ring`th ring of doorbell `which` (0 post, 1 complete): one store to
// the trigger counter's MMIO adder, or the ring count stored into the word the agent watches.
// The list also gets the window's skip word, which it sets where the watchdog skips its signals:
// the trigger counter is cumulative, so a later ring would fire the skipped epoch's operations
// with its own. Once the word is set the agent forwards no ring (watch_doorbell), and the stream
// stores no MMIO ring (work::kStopsOnSkip).
void add_doorbell_ring(RemoteState &s, int which, uint64_t ring, gpu::WorkList &list) {
  uint64_t *words = static_cast<uint64_t *>(s.doorbell_mem.device);
  list.skip_word = reinterpret_cast<uint64_t>(words + kSkipWord);
  if (!s.mmio_adder[which]) {
    list.signals.push_back(signal_item(words + which, ring));
    return;
  }
  work::Item rung = signal_item(s.mmio_adder[which], 1);
  rung.flags |= work::kStopsOnSkip;
  list.signals.push_back(rung);
}

// The agent forwards the rings of doorbell `which` to `trigger`, until the window's skip word is set.
uint64_t watch_doorbell(RemoteState &s, int which, ofi::Counter trigger) {
  return internode::doorbells().watch(&s.doorbell[which], trigger, &s.doorbell[kSkipWord]);
}

// Whether a list of the window skipped its doorbell (see add_doorbell_ring).
bool rings_stopped(const RemoteState &s) {
  return std::atomic_ref<uint64_t>(s.doorbell[kSkipWord]).load(std::memory_order_acquire) != 0;
}

// MPIX_ST_OFI_DOORBELL=auto|mmio|agent: how streams ring doorbells (auto: the MMIO adder where the
// provider has one, i.e. CXI; else the agent).
enum class DoorbellMode { automatic, mmio, agent };
DoorbellMode doorbell_mode() {
  const std::string &v = settings::word(settings::Id::MPIX_ST_OFI_DOORBELL);
  return v == "mmio" ? DoorbellMode::mmio : v == "agent" ? DoorbellMode::agent : DoorbellMode::automatic;
}

// Maps `counter`'s MMIO adder for the stream as doorbell `which`; false where the provider or the
// GPU runtime cannot (the agent then watches the doorbell word).
bool map_mmio_doorbell(RemoteState &s, int which, ofi::Counter counter, std::string *why) {
  ofi::Fabric::CounterMmio m;
  if (internode::fabric().counter_mmio(counter, &m) != ofi::kOk) {
    *why = internode::fabric().last_error();
    return false;
  }
  void *device = nullptr;
  gpu::Backend &be = gpu::backend();
  if (be.map_io_memory(m.page, m.page_bytes, &device) != gpu::kOk) {
    *why = "mapping the counter's MMIO page for the stream: " + be.last_error();
    return false;
  }
  s.mmio_page[which] = m.page;
  s.mmio_adder[which] =
      reinterpret_cast<uint64_t *>(static_cast<char *>(device) + (static_cast<char *>(m.adder) - static_cast<char *>(m.page)));
  return true;
}

// Runs `list` now and waits for it (host-driven epochs); an empty list is nothing to do.
Result run_now(const gpu::WorkList &list, const char *what) {
  gpu::Backend &be = gpu::backend();
  if (list.empty() || !be.execute(list)) return ok();
  return fail(MPI_ERR_OTHER, std::string(what) + " failed: " + be.last_error());
}

// The epoch's operations as the network runs them. A staged window points them at staging memory
// in `buffer`: in `staged` (a copy, so a refused epoch keeps its own), with the staging copies
// added to `list`.
Result network_ops(Window &w, StagingBuffer &buffer, gpu::WorkList &list, std::vector<RemoteOp> &staged,
                   const std::vector<RemoteOp> **ops) {
  *ops = &w.access.remote_ops;
  if (!w.remote->staged || w.access.remote_ops.empty()) return ok();
  staged = w.access.remote_ops;
  if (Result r = staged::stage(w, buffer, staged, list)) return r;
  *ops = &staged;
  return ok();
}

}  // namespace

uint64_t fabric_operations(const RemoteOp &op) {
  const uint64_t chunk = chunk_bytes(op);
  return chunk ? op.bytes / chunk + (op.bytes % chunk != 0) : 0;
}

uint64_t fabric_operations(const std::vector<RemoteOp> &ops) {
  uint64_t total = 0;
  for (size_t i = 0, n = 0; i < ops.size(); i += n) {
    n = group_size(ops, i);
    total += n > 1 ? 1 : fabric_operations(ops[i]);
  }
  return total;
}

Result register_window(Window &w, Registration *reg, Exchange *mine) {
  *reg = {};
  *mine = {};
  if (internode::available()) return ok();  // no transport: attach() reports it if a peer needs it
  ofi::Fabric &f = internode::fabric();
  if (staged::enabled()) {
    if (Result r = staged::allocate_landing(w, reg)) return r;
  } else if (direct_access()) {
    // Window memory and flags as they are: host memory, or device memory with FI_HMEM.
    const ofi::DeviceMemory dm = device_memory();
    const ofi::DeviceMemory *device = std::strcmp(gpu::backend().name(), "host") != 0 ? &dm : nullptr;
    if (w.bytes > 0) {
      reg->data = f.register_memory(w.base, w.bytes, device);
      if (!reg->data) return transport_failure("registering window memory");
    }
    reg->flags = f.register_memory(w.flags, Window::flag_slots(w.size) * sizeof(uint64_t), device);
    if (!reg->flags) return transport_failure("registering window flags");
  } else {
    return ok();  // see attach()
  }
  if (reg->data) mine->data = f.remote(reg->data);
  mine->flags = f.remote(reg->flags);
  mine->mirrors = reg->landing.host && w.mirror_requested;
  return ok();
}

void release_registrations(Registration *reg) {
  if (!internode::available()) {
    if (reg->data) internode::fabric().deregister(reg->data);
    if (reg->flags) internode::fabric().deregister(reg->flags);
  }
  if (reg->landing.host) gpu::backend().free_host_mapped(&reg->landing);
  *reg = {};
}

Result attach(Window &w, const Registration &reg, const std::vector<Exchange> &all) {
  if (Result r = internode::available()) return r;
  if (!staged::enabled() && !direct_access())
    return fail(MPI_ERR_OTHER, std::string("MPIX_ST_OFI_STAGING=0: peers on other nodes need the network to reach ") +
                                   gpu::backend().name() + " memory, and the provider " +
                                   internode::fabric().provider() + " does not register it (no FI_HMEM)");
  if (!reg.flags) return transport_failure("window registration");
  ofi::Fabric &f = internode::fabric();
  auto s = std::make_unique<RemoteState>();
  s->data = reg.data;
  s->flags = reg.flags;
  s->staged = reg.landing.host != nullptr;
  s->landing = reg.landing;
  s->net_flags = s->staged ? staged::net_flags(w, reg.landing) : w.flags;
  for (const Exchange &e : all) {
    s->peer_data.push_back(e.data);
    s->peer_flags.push_back(e.flags);
    s->peer_mirrors.push_back(e.mirrors != 0);
  }
  s->mirrors = s->peer_mirrors[w.rank];  // what register_window() told the peers
  if (gpu::backend().allocate_host_mapped(kDoorbellWords * sizeof(uint64_t), &s->doorbell_mem))
    return fail(MPI_ERR_NO_MEM, "doorbell words: " + gpu::backend().last_error());
  s->doorbell = static_cast<uint64_t *>(s->doorbell_mem.host);
  std::memset(s->doorbell, 0, kDoorbellWords * sizeof(uint64_t));  // the skip word starts clear
  w.remote = std::move(s);  // from here on detach() releases what follows
  RemoteState &r = *w.remote;
  for (ofi::Counter *c : {&r.post_trigger, &r.complete_trigger, &r.host_trigger, &r.op_done, &r.signal_done})
    if (!(*c = f.make_counter())) return transport_failure("creating counters");
  const DoorbellMode mode = doorbell_mode();
  const ofi::Counter triggers[2] = {r.post_trigger, r.complete_trigger};
  for (int which = 0; which < 2; ++which) {
    std::string why;
    if (mode != DoorbellMode::agent && map_mmio_doorbell(r, which, triggers[which], &why)) continue;
    if (mode == DoorbellMode::mmio)
      return fail(MPI_ERR_OTHER, "MPIX_ST_OFI_DOORBELL=mmio: the provider " + f.provider() +
                                     " gives the stream no MMIO doorbell: " + why);
    r.watch_ids[which] = watch_doorbell(r, which, triggers[which]);
  }
  return ok();
}

namespace {
// A window's counters, released together: its operations are triggered and counted among them.
std::vector<ofi::Counter> window_counters(const RemoteState &s) {
  std::vector<ofi::Counter> all;
  for (ofi::Counter c : {s.post_trigger, s.complete_trigger, s.host_trigger, s.op_done, s.signal_done})
    if (c) all.push_back(c);
  return all;
}

// The agent stops watching the window's doorbells, and what the stream rang after its last pass
// is forwarded here. An MMIO doorbell's rings are in the trigger counter already.
Result stop_doorbells(RemoteState &s) {
  ofi::Fabric &f = internode::fabric();
  const ofi::Counter triggers[2] = {s.post_trigger, s.complete_trigger};
  for (int which = 0; which < 2; ++which) {
    if (!s.watch_ids[which]) continue;
    internode::doorbells().unwatch(s.watch_ids[which]);
    s.watch_ids[which] = 0;
    const uint64_t rung = std::atomic_ref<uint64_t>(s.doorbell[which]).load(std::memory_order_acquire);
    const uint64_t forwarded = f.read(triggers[which]);
    if (rung > forwarded && !rings_stopped(s) && f.add(triggers[which], rung - forwarded) != ofi::kOk)
      return transport_failure("forwarding the window's last doorbell");
  }
  return ok();
}

// The agent watches again, from what the trigger counters hold now.
void watch_doorbells(RemoteState &s) {
  const ofi::Counter triggers[2] = {s.post_trigger, s.complete_trigger};
  for (int which = 0; which < 2; ++which)
    if (!s.mmio_adder[which] && !s.watch_ids[which] && triggers[which])
      s.watch_ids[which] = watch_doorbell(s, which, triggers[which]);
}
}  // namespace

Result quiesce(Window &w) {
  RemoteState &s = *w.remote;
  ofi::Fabric &f = internode::fabric();
  if (!s.op_done || !s.signal_done) return ok();  // attach failed before anything could be posted
  // The stream has run every list of the window. A list the watchdog skipped never rang: its
  // operations stay below their trigger threshold and are never run (its report said its data and
  // signals were skipped; its origin buffers may be gone by now). The doorbells are watched again
  // afterwards: MPI_Win_free may still fail on another rank and the window stay in use.
  if (Result r = stop_doorbells(s)) return r;
  size_t skipped = 0;
  const ofi::Status settled = f.settle(window_counters(s), internode::wait_limit_ms(), &skipped);
  watch_doorbells(s);
  if (settled != ofi::kOk)
    return fail(MPI_ERR_RMA_SYNC,
                "MPI_Win_free while triggered operations of the window have not completed (synchronize the stream "
                "before freeing the window): " +
                    network_state(w) + "; " + std::to_string(skipped) + " never triggered");
  return ok();
}

std::string network_state(Window &w) {
  if (!w.remote || !w.remote->op_done || !w.remote->signal_done) return "";
  RemoteState &s = *w.remote;
  ofi::Fabric &f = internode::fabric();
  auto doorbell = [&](const char *name, int which, uint64_t rings, ofi::Counter trigger) {
    const uint64_t rung = s.mmio_adder[which] ? f.read(trigger)
                                              : std::atomic_ref<uint64_t>(s.doorbell[which]).load(std::memory_order_acquire);
    return std::string(name) + " doorbell " + std::to_string(rung) + " of " + std::to_string(rings) + " rung, " +
           std::to_string(f.read(trigger)) + " at the trigger";
  };
  // Failed operations are reported in the completion queue, which progress() reads into the
  // transport's last error (sockets counts a triggered operation's failure on no counter).
  const std::string agent = s.watch_ids[0] || s.watch_ids[1] ? internode::doorbells().error() : "";
  const std::string transport = f.last_error();
  // The cause first: Open MPI's MPI_Error_string keeps 255 characters.
  return (rings_stopped(s) ? "the watchdog skipped a doorbell of the window: later rings are not forwarded; " : "") +
         doorbell("post", 0, s.post_rings, s.post_trigger) + "; " +
         doorbell("complete", 1, s.complete_rings, s.complete_trigger) + "; operations " +
         std::to_string(f.read(s.op_done)) + " of " + std::to_string(s.ops_posted) + " done, signals " +
         std::to_string(f.read(s.signal_done)) + " of " + std::to_string(s.signals_posted) + " done" +
         (agent.empty() ? "" : "; doorbell agent: " + agent) +
         (transport.empty() ? "" : "; the transport's last error: " + transport);
}

Result detach(Window &w) {
  if (Result r = quiesce(w)) return r;
  RemoteState &s = *w.remote;
  ofi::Fabric &f = internode::fabric();
  if (Result r = stop_doorbells(s)) return r;  // for good; the stream rings nothing any more
  release_completed_origins(s, true);  // quiesce() waited for every operation that runs
  // The budget counts the slots of operations that never run free again with those that completed.
  internode::forget_completed(s.op_done);
  internode::forget_completed(s.signal_done);
  for (void *page : s.mmio_page)
    if (page) gpu::backend().unmap_io_memory(page);
  // Closing the counters discards the operations of skipped epochs, untriggered.
  if (const std::vector<ofi::Counter> counters = window_counters(s); !counters.empty())
    if (f.release_counters(counters) != ofi::kOk) return transport_failure("releasing the window's counters");
  if (s.data) f.deregister(s.data);
  if (s.flags) f.deregister(s.flags);
  staged::release_staging(s);
  gpu::Backend &be = gpu::backend();
  if (s.landing.host) be.free_host_mapped(&s.landing);
  if (s.doorbell_mem.host) be.free_host_mapped(&s.doorbell_mem);
  w.remote.reset();
  return ok();
}

void mirror(Window &w, const std::vector<int> &origins, gpu::WorkList &list) {
  staged::mirror_window(w, origins, list);
}

Result mirror_now(Window &w, const std::vector<int> &origins) {
  gpu::WorkList list;
  staged::mirror_window(w, origins, list);
  return run_now(list, "copying the window into its host mirror");
}

Result post(Window &w, const std::vector<int> &origins, gpu::WorkList &list) {
  if (origins.empty()) return ok();
  RemoteState &s = *w.remote;
  ofi::Fabric &f = internode::fabric();
  const uint64_t n = origins.size();
  if (Result r = internode::reserve(n, s.signal_done, s.signals_posted + n)) return r;
  const uint64_t ring = s.post_rings + 1;
  for (int o : origins) {
    const ofi::Trigger when{s.post_trigger, ring, s.signal_done};
    if (f.triggered_atomic_add_u64(1, w.peers[o].world_rank, s.peer_flags[o], w.rank * sizeof(uint64_t), when))
      return transport_failure("posting a triggered post signal");
  }
  s.signals_posted += n;
  s.post_rings = ring;
  add_doorbell_ring(s, 0, ring, list);
  if (s.watch_ids[0]) internode::doorbells().arm(s.watch_ids[0], ring);  // the agent watches closely until it rings
  return ok();
}

Result complete(Window &w, const std::vector<int> &targets, gpu::WorkList &list) {
  // Windows with no peer on another node have no RemoteState: nothing to bind before this check.
  if (targets.empty()) return ok();
  RemoteState &s = *w.remote;
  ofi::Fabric &f = internode::fabric();
  std::vector<RemoteOp> staged_ops;
  const std::vector<RemoteOp> *ops = nullptr;
  if (Result r = network_ops(w, s.stream_staging, list, staged_ops, &ops)) return r;
  const uint64_t nt = targets.size(), nops = fabric_operations(*ops);
  // One reservation, before anything is posted: the operations, a signal per target, and the
  // local completion signal. A second one could wait for operations only this list's doorbell
  // fires, and a refused one must leave nothing half posted.
  const uint64_t local_done = nops ? 1 : 0;
  if (Result r = internode::reserve(nops + nt + local_done, s.signal_done, s.signals_posted + nt + local_done))
    return r;
  const uint64_t ring = s.complete_rings + 1;
  if (Result r = post_ops(w, *ops, s.complete_trigger, ring)) return r;
  // Each target's complete signal follows every operation posted so far (chained on their
  // completion counter); an epoch without operations signals when the doorbell rings.
  const ofi::Trigger signal = nops ? ofi::Trigger{s.op_done, s.ops_posted, s.signal_done}
                                   : ofi::Trigger{s.complete_trigger, ring, s.signal_done};
  const uint64_t slot = (static_cast<uint64_t>(w.size) + w.rank) * sizeof(uint64_t);
  for (int t : targets)
    if (f.triggered_atomic_add_u64(1, w.peers[t].world_rank, s.peer_flags[t], slot, signal))
      return transport_failure("posting a triggered complete signal");
  s.signals_posted += nt;
  s.complete_rings = ring;
  add_doorbell_ring(s, 1, ring, list);
  if (s.watch_ids[1]) internode::doorbells().arm(s.watch_ids[1], ring);
  if (nops) {
    // Origin buffers (and staging) may be reused, and gotten data read, once the stream passes this epoch, so
    // the stream waits for the operations: their completion counter triggers an add into our own
    // flag slot (the stream cannot read NIC counters, [Namashivayam 2023] §3.2).
    const size_t slot = Window::remote_done_slot(w.size);
    const ofi::Trigger done{s.op_done, s.ops_posted, s.signal_done};
    if (f.triggered_atomic_add_u64(1, w.peers[w.rank].world_rank, s.peer_flags[w.rank], slot * sizeof(uint64_t), done))
      return transport_failure("posting the local completion signal");
    ++s.signals_posted;
    list.trailing_waits.push_back(wait_item(s.net_flags + slot, ++s.op_epochs, w.rank, work::kWaitComplete));
  }
  return ok();
}

Result complete_now(Window &w) {
  if (w.access.remote_ops.empty()) return ok();
  RemoteState &s = *w.remote;
  ofi::Fabric &f = internode::fabric();
  std::vector<RemoteOp> staged_ops;
  const std::vector<RemoteOp> *ops = nullptr;
  gpu::WorkList copies, unstage;  // staging before the operations, and gotten data after them
  if (Result r = network_ops(w, s.host_staging, copies, staged_ops, &ops)) return r;
  std::swap(unstage.ops, copies.trailing_ops);
  if (Result r = run_now(copies, "staging the epoch's data")) return r;
  const uint64_t nops = fabric_operations(*ops);
  if (Result r = internode::reserve(nops, s.op_done, s.ops_posted + nops)) return r;
  const uint64_t ring = s.host_rings + 1;
  if (Result r = post_ops(w, *ops, s.host_trigger, ring)) return r;
  s.host_rings = ring;
  if (f.add(s.host_trigger, 1) || f.wait(s.op_done, s.ops_posted, internode::wait_limit_ms()))
    return transport_failure("completing the epoch's operations");
  return run_now(unstage, "copying staged MPI_Get data into the origin buffers");
}

void wait(Window &w, const std::vector<int> &origins, gpu::WorkList &list) {
  if (w.remote && w.remote->staged) staged::apply(w, origins, list);
}

Result wait_now(Window &w, const std::vector<int> &origins) {
  gpu::WorkList list;
  wait(w, origins, list);
  return run_now(list, "copying staged puts and accumulates into the window");
}

}  // namespace mpix::core::remote
