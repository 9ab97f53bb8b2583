#include "remote_epochs.h"

#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "config.h"
#include "internode.h"
#include "list_items.h"

namespace mpix::core::remote {
namespace {

Result transport_failure(const char *what) {
  return fail(MPI_ERR_OTHER, std::string(what) + ": " + internode::fabric().last_error());
}

// Put sources must be registered memory. Registrations of user buffers are kept for the life of
// the transport (a later put from the same buffer finds its registration).
struct SourceRegistrations {
  std::mutex mu;
  std::map<uintptr_t, std::pair<size_t, ofi::Region>> by_base;

  ofi::Region find_or_register(const void *src, size_t bytes) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(src);
    std::lock_guard<std::mutex> lock(mu);
    auto it = by_base.upper_bound(p);
    if (it != by_base.begin()) {
      --it;
      if (p + bytes <= it->first + it->second.first) return it->second.second;
    }
    ofi::Region r = internode::fabric().register_memory(const_cast<void *>(src), bytes);
    if (r) by_base[p] = {bytes, r};
    return r;
  }
};

SourceRegistrations &sources() {
  static SourceRegistrations s;
  return s;
}

// Posts the epoch's puts, fired when `trigger` reaches `ring`; each counts on put_done.
Result post_puts(Window &w, ofi::Counter trigger, uint64_t ring) {
  RemoteState &s = *w.remote;
  ofi::Fabric &f = internode::fabric();
  for (const RemotePut &p : w.access.remote_puts) {
    ofi::Region src = sources().find_or_register(p.src, p.bytes);
    if (!src) return transport_failure("registering a put's origin buffer");
    const ofi::Trigger when{trigger, ring, s.put_done};
    if (f.triggered_put(p.src, p.bytes, src, w.peers[p.target].world_rank, s.peer_data[p.target], p.offset, when))
      return transport_failure("posting a triggered put");
    ++s.puts_posted;
  }
  return ok();
}

uint64_t wait_limit_ms() {
  const uint64_t ms = config().watchdog_ns / 1000000;
  return ms ? ms : 24ull * 3600 * 1000;
}

}  // namespace

Result register_window(Window &w, ofi::Region *data, ofi::Region *flags, Exchange *mine) {
  *data = {};
  *flags = {};
  *mine = {};
  if (internode::available()) return ok();  // no transport: attach() reports it if a peer needs it
  if (std::strcmp(gpu::backend().name(), "host") != 0) return ok();  // see attach()
  ofi::Fabric &f = internode::fabric();
  if (w.bytes > 0) {
    *data = f.register_memory(w.base, w.bytes);
    if (!*data) return transport_failure("registering window memory");
    mine->data = f.remote(*data);
  }
  *flags = f.register_memory(w.flags, Window::flag_slots(w.size) * sizeof(uint64_t));
  if (!*flags) return transport_failure("registering window flags");
  mine->flags = f.remote(*flags);
  return ok();
}

void release_registrations(ofi::Region data, ofi::Region flags) {
  if (internode::available()) return;
  if (data) internode::fabric().deregister(data);
  if (flags) internode::fabric().deregister(flags);
}

Result attach(Window &w, ofi::Region data, ofi::Region flags, const std::vector<Exchange> &all) {
  if (Result r = internode::available()) return r;
  if (std::strcmp(gpu::backend().name(), "host") != 0)
    return fail(MPI_ERR_OTHER, std::string("peers on other nodes are reached from the host backend only so far; the ") +
                                   gpu::backend().name() + " backend needs FI_HMEM registration or host staging");
  if (!flags) return transport_failure("window registration");
  ofi::Fabric &f = internode::fabric();
  auto s = std::make_unique<RemoteState>();
  s->data = data;
  s->flags = flags;
  for (const Exchange &e : all) {
    s->peer_data.push_back(e.data);
    s->peer_flags.push_back(e.flags);
  }
  for (ofi::Counter *c : {&s->post_trigger, &s->complete_trigger, &s->host_trigger, &s->put_done, &s->signal_done})
    if (!(*c = f.make_counter())) return transport_failure("creating counters");
  s->watch_ids[0] = internode::doorbells().watch(&s->doorbell[0], s->post_trigger);
  s->watch_ids[1] = internode::doorbells().watch(&s->doorbell[1], s->complete_trigger);
  w.remote = std::move(s);
  return ok();
}

Result detach(Window &w) {
  RemoteState &s = *w.remote;
  ofi::Fabric &f = internode::fabric();
  if (f.wait(s.put_done, s.puts_posted, wait_limit_ms()) != ofi::kOk ||
      f.wait(s.signal_done, s.signals_posted, wait_limit_ms()) != ofi::kOk)
    return fail(MPI_ERR_RMA_SYNC, "MPI_Win_free while triggered operations of the window have not completed "
                                  "(synchronize the stream before freeing the window): " +
                                      f.last_error());
  internode::doorbells().unwatch(s.watch_ids[0]);
  internode::doorbells().unwatch(s.watch_ids[1]);
  for (ofi::Counter c : {s.post_trigger, s.complete_trigger, s.host_trigger, s.put_done, s.signal_done})
    f.release_counter(c);
  if (s.data) f.deregister(s.data);
  f.deregister(s.flags);
  w.remote.reset();
  return ok();
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
  list.signals.push_back(signal_item(&s.doorbell[0], ring));
  internode::doorbells().arm(s.watch_ids[0], ring);  // the agent watches closely until it rings
  return ok();
}

Result complete(Window &w, const std::vector<int> &targets, gpu::WorkList &list) {
  RemoteState &s = *w.remote;
  const std::vector<RemotePut> &puts = w.access.remote_puts;
  if (targets.empty()) return ok();
  ofi::Fabric &f = internode::fabric();
  const uint64_t nt = targets.size();
  // One reservation, before anything is posted: the puts, a signal per target, and the local
  // completion signal. A second one could wait for operations only this list's doorbell fires,
  // and a refused one must leave nothing half posted.
  const uint64_t local_done = puts.empty() ? 0 : 1;
  if (Result r = internode::reserve(puts.size() + nt + local_done, s.signal_done, s.signals_posted + nt + local_done))
    return r;
  const uint64_t ring = s.complete_rings + 1;
  if (Result r = post_puts(w, s.complete_trigger, ring)) return r;
  // Each target's complete signal follows every put posted so far (chained on their completion
  // counter); an epoch without puts signals when the doorbell rings.
  const ofi::Trigger signal = puts.empty() ? ofi::Trigger{s.complete_trigger, ring, s.signal_done}
                                           : ofi::Trigger{s.put_done, s.puts_posted, s.signal_done};
  const uint64_t slot = (static_cast<uint64_t>(w.size) + w.rank) * sizeof(uint64_t);
  for (int t : targets)
    if (f.triggered_atomic_add_u64(1, w.peers[t].world_rank, s.peer_flags[t], slot, signal))
      return transport_failure("posting a triggered complete signal");
  s.signals_posted += nt;
  s.complete_rings = ring;
  list.signals.push_back(signal_item(&s.doorbell[1], ring));
  internode::doorbells().arm(s.watch_ids[1], ring);
  if (!puts.empty()) {
    // The origin buffers may be reused once the stream passes this epoch, so the stream waits
    // for the puts: their completion counter triggers an add into our own flag slot (the stream
    // cannot read NIC counters, seed 002 §3.2).
    const size_t slot = Window::remote_done_slot(w.size);
    const ofi::Trigger done{s.put_done, s.puts_posted, s.signal_done};
    if (f.triggered_atomic_add_u64(1, w.peers[w.rank].world_rank, s.peer_flags[w.rank], slot * sizeof(uint64_t), done))
      return transport_failure("posting the local completion signal");
    ++s.signals_posted;
    list.trailing_waits.push_back(wait_item(w.flags + slot, ++s.put_epochs, w.rank, work::kWaitComplete));
  }
  return ok();
}

Result complete_now(Window &w) {
  const std::vector<RemotePut> &puts = w.access.remote_puts;
  if (puts.empty()) return ok();
  RemoteState &s = *w.remote;
  ofi::Fabric &f = internode::fabric();
  if (Result r = internode::reserve(puts.size(), s.put_done, s.puts_posted + puts.size())) return r;
  const uint64_t ring = s.host_rings + 1;
  if (Result r = post_puts(w, s.host_trigger, ring)) return r;
  s.host_rings = ring;
  if (f.add(s.host_trigger, 1) || f.wait(s.put_done, s.puts_posted, wait_limit_ms()))
    return transport_failure("completing the epoch's puts");
  return ok();
}

}  // namespace mpix::core::remote
