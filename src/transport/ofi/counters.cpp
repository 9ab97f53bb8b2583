// Counters (fi_cntr(3)) and provider progress.
#include <unistd.h>

#include <thread>
#include <utility>

#include "fabric_impl.h"

#if __has_include(<rdma/fi_cxi_ext.h>)
#include <rdma/fi_cxi_ext.h>
#endif

namespace mpix::ofi {

namespace {
// How often progress() pokes trigger counters (sockets): often enough that a stalled trigger
// costs little, rarely enough that the scans it causes cost nothing.
constexpr auto kPokeInterval = std::chrono::milliseconds(1);
}  // namespace

CounterEntry *Fabric::Impl::counter(Counter c) {
  if (!c || c.id > counters.size()) return nullptr;
  return counters[c.id - 1].get();
}

Counter Fabric::Impl::make_counter() {
  fi_cntr_attr attr{};
  attr.events = FI_CNTR_EVENTS_COMP;
  attr.wait_obj = FI_WAIT_NONE;  // we poll
  auto entry = std::make_unique<CounterEntry>();
  int rc = fi_cntr_open(domain, &attr, &entry->cntr, nullptr);
  std::lock_guard lock(mu);
  if (rc) return fail(kErrProvider, fi_error_text("fi_cntr_open", rc)), Counter{};
  counters.push_back(std::move(entry));
  return Counter{static_cast<uint32_t>(counters.size())};
}

bool Fabric::Impl::release_counter(Counter c) {
  std::lock_guard lock(mu);
  CounterEntry *e = counter(c);
  if (!e) return fail(kErrArg, "release_counter: unknown counter"), false;
  reclaim();
  if (!e->records.empty() || e->trigger_refs)
    return fail(kErrBusy, "release_counter: posted operations still use it"), false;
  int rc = e->ep ? fi_close(&e->ep->fid) : 0;
  if (!rc) rc = fi_close(&e->cntr->fid);
  counters[c.id - 1].reset();
  if (rc) return fail(kErrProvider, fi_error_text("fi_close (counter)", rc)), false;
  return true;
}

Status Fabric::Impl::add(Counter c, uint64_t value) {
  fid_cntr *cntr = nullptr;
  {
    std::lock_guard lock(mu);
    CounterEntry *e = counter(c);
    if (!e) return fail(kErrArg, "add: unknown counter");
    e->added += value;  // before the add: reclaim() never counts it as a completion
    cntr = e->cntr;
  }
  int rc = fi_cntr_add(cntr, value);
  if (rc) {
    std::lock_guard lock(mu);
    return fail(kErrProvider, fi_error_text("fi_cntr_add", rc));
  }
  return kOk;
}

namespace {
// The provider's counter behind a handle, looked up under the lock; null (and an error) if unknown.
fid_cntr *counter_fid(Fabric::Impl &impl, Counter c, const char *who) {
  std::lock_guard lock(impl.mu);
  CounterEntry *e = impl.counter(c);
  if (!e) return impl.fail(kErrArg, std::string(who) + ": unknown counter"), nullptr;
  return e->cntr;
}
}  // namespace

uint64_t Fabric::Impl::read(Counter c) {
  fid_cntr *cntr = counter_fid(*this, c, "read");
  return cntr ? fi_cntr_read(cntr) : 0;
}

uint64_t Fabric::Impl::read_errors(Counter c) {
  fid_cntr *cntr = counter_fid(*this, c, "read_errors");
  return cntr ? fi_cntr_readerr(cntr) : 0;
}

// CXI: the counter's MMIO region through its counter ops (fi_cxi_ext.h); a 64-bit store to its
// add address adds to the counter. Compiled only where that header exists; never run on this
// project's test machines.
Status Fabric::Impl::counter_mmio(Counter c, CounterMmio *out) {
  *out = CounterMmio{};
#ifdef FI_CXI_COUNTER_OPS
  fid_cntr *cntr = nullptr;
  bool was_mmio = false;  // asked before: a failure now leaves it as it was
  {
    std::lock_guard lock(mu);
    CounterEntry *e = counter(c);
    if (!e) return fail(kErrArg, "counter_mmio: unknown counter");
    if (provider != "cxi") return fail(kErrUnsupported, "counter_mmio: provider " + provider + " has no counter MMIO");
    if (!e->records.empty()) return fail(kErrArg, "counter_mmio: the counter counts operations' completions");
    was_mmio = std::exchange(e->mmio, true);  // from now on submit() refuses it as a completion counter
    cntr = e->cntr;
  }
  auto refuse = [&](Status status, std::string why) {
    std::lock_guard lock(mu);
    if (CounterEntry *e = counter(c)) e->mmio = was_mmio;
    return fail(status, std::move(why));
  };
  fi_cxi_cntr_ops *ops = nullptr;
  int rc = fi_open_ops(&cntr->fid, FI_CXI_COUNTER_OPS, 0, reinterpret_cast<void **>(&ops), nullptr);
  if (rc || !ops || !ops->get_mmio_addr)
    return refuse(kErrUnsupported, fi_error_text("counter_mmio: fi_open_ops(FI_CXI_COUNTER_OPS)",
                                                 rc ? rc : -FI_ENOSYS));
  void *mmio = nullptr;
  size_t len = 0;
  rc = ops->get_mmio_addr(&cntr->fid, &mmio, &len);
  if (rc || !mmio) return refuse(kErrProvider, fi_error_text("counter_mmio: get_mmio_addr", rc ? rc : -FI_EINVAL));
  // The reported length is the adder's, not the mapping's: register the whole system page that
  // holds the adder, which the provider's mapping covers.
  const auto page_bytes = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  out->adder = fi_cxi_get_cntr_add_addr(mmio);
  out->page = reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(out->adder) & ~(page_bytes - 1));
  out->page_bytes = page_bytes;
  return kOk;
#else
  std::lock_guard lock(mu);
  if (!counter(c)) return fail(kErrArg, "counter_mmio: unknown counter");
  return fail(kErrUnsupported, "counter_mmio: built without rdma/fi_cxi_ext.h");
#endif
}

Status Fabric::Impl::wait(Counter c, uint64_t value, uint64_t timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto pause = std::chrono::microseconds(1);
  for (;;) {
    uint64_t now_value = read(c);
    if (now_value >= value) return kOk;
    if (uint64_t errors = read_errors(c)) {
      std::lock_guard lock(mu);
      return fail(kErrProvider, "wait: " + std::to_string(errors) + " operation(s) counted by this counter failed");
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::lock_guard lock(mu);
      return fail(kErrTimeout, "wait: counter at " + std::to_string(now_value) + ", not " +
                                   std::to_string(value) + ", after " + std::to_string(timeout_ms) + " ms");
    }
    progress();
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(500));
  }
}

void Fabric::Impl::progress() {
  fi_cq_entry entries[16];
  for (;;) {
    ssize_t n = fi_cq_read(cq, entries, 16);
    if (n > 0) continue;  // no operation asks for a completion entry; nothing to do with one
    if (n != -FI_EAVAIL) break;
    fi_cq_err_entry err{};
    if (fi_cq_readerr(cq, &err, 0) != 1) break;
    std::lock_guard lock(mu);
    fail(kErrProvider, std::string("operation failed: ") + fi_strerror(err.err) + " (" +
                           fi_cq_strerror(cq, err.prov_errno, err.err_data, nullptr, 0) + ")");
  }
  if (!poke_triggers) return;
  std::lock_guard poking(poke_mu);
  std::vector<fid_cntr *> poke;
  {
    std::lock_guard lock(mu);
    auto now = std::chrono::steady_clock::now();
    if (now - last_poke < kPokeInterval) return;
    last_poke = now;
    reclaim();
    for (auto &c : counters)
      if (c && c->trigger_refs) poke.push_back(c->cntr);
  }
  for (fid_cntr *c : poke) fi_cntr_add(c, 0);  // sockets re-checks its triggers on any add
}

Counter Fabric::make_counter() { return impl_->make_counter(); }
bool Fabric::release_counter(Counter c) { return impl_->release_counter(c); }
Status Fabric::add(Counter c, uint64_t value) { return impl_->add(c, value); }
uint64_t Fabric::read(Counter c) { return impl_->read(c); }
uint64_t Fabric::read_errors(Counter c) { return impl_->read_errors(c); }
Status Fabric::counter_mmio(Counter c, CounterMmio *out) { return impl_->counter_mmio(c, out); }
Status Fabric::wait(Counter c, uint64_t value, uint64_t timeout_ms) { return impl_->wait(c, value, timeout_ms); }
void Fabric::progress() { impl_->progress(); }

}  // namespace mpix::ofi
