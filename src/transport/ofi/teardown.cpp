// Releasing a group of counters (a window's) whose queued operations will partly never be
// triggered: an epoch the watchdog skipped never rang its doorbell, and its operations must not
// run later (they would read origin buffers the application may have freed, and write the peer's
// window). libfabric 1.17's sockets provider cannot cancel a triggered operation (fi_cancel only
// finds posted receives, FI_FLUSH_WORK is -FI_ENOSYS), but it keeps untriggered operations in a
// list of their trigger counter, and closing that counter drops the list without running it.
#include <algorithm>
#include <thread>

#include "fabric_impl.h"

namespace mpix::ofi {

namespace {

// Which unreclaimed operations of the group will eventually be triggered, and the value each
// counter of the group will reach. The group only grows by the provider's completions: a counter
// ends at what was added to it plus the completions of operations that fire, and an operation
// fires once its trigger counter ends at or above its threshold (a fixpoint, as completions of
// one operation can trigger the next: chained signals, ordered accumulates).
struct Outcome {
  std::vector<uint32_t> fire, never;            // records
  std::vector<std::pair<fid_cntr *, uint64_t>> ends;  // completion counters and their final values
};

// mu held. kErrArg where an operation links the group to a counter outside it.
Status predict(Fabric::Impl &impl, const std::vector<Counter> &group, Outcome *out) {
  auto in_group = [&](uint32_t id) {
    for (Counter c : group)
      if (c.id == id) return true;
    return false;
  };
  std::vector<uint64_t> end(group.size());
  std::vector<std::pair<uint32_t, size_t>> pending;  // record, index of its completion counter
  for (size_t i = 0; i < group.size(); ++i) {
    CounterEntry *e = impl.counter(group[i]);
    if (!e) return impl.fail(kErrArg, "releasing counters: unknown counter");
    // A counter rung through MMIO holds only those stores; others what add() and completions put.
    end[i] = e->mmio ? fi_cntr_read(e->cntr) : e->added + e->retired;
    for (uint32_t r : e->records) {
      if (!in_group(impl.records[r].trigger_counter))
        return impl.fail(kErrArg, "releasing counters: an operation they count is triggered by another counter");
      pending.emplace_back(r, i);
    }
  }
  for (auto &c : impl.counters)
    if (c && !in_group(static_cast<uint32_t>(&c - impl.counters.data()) + 1))
      for (uint32_t r : c->records)
        if (in_group(impl.records[r].trigger_counter))
          return impl.fail(kErrArg, "releasing counters: they trigger an operation another counter counts");
  auto index_of = [&](uint32_t id) {
    size_t i = 0;
    while (group[i].id != id) ++i;
    return i;
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (auto it = pending.begin(); it != pending.end();) {
      const OpRecord &o = impl.records[it->first];
      if (end[index_of(o.trigger_counter)] < o.threshold) {
        ++it;
        continue;
      }
      ++end[it->second];
      out->fire.push_back(it->first);
      it = pending.erase(it);
      grew = true;
    }
  }
  for (const auto &p : pending) out->never.push_back(p.first);
  for (size_t i = 0; i < group.size(); ++i) {
    CounterEntry *e = impl.counter(group[i]);
    if (!e->records.empty()) out->ends.emplace_back(e->cntr, end[i]);
  }
  return kOk;
}

}  // namespace

Status Fabric::settle(const std::vector<Counter> &group, uint64_t timeout_ms, size_t *never_triggered) {
  Impl &impl = *impl_;
  Outcome outcome;
  {
    std::lock_guard lock(impl.mu);
    if (Status st = predict(impl, group, &outcome)) return st;
  }
  if (never_triggered) *never_triggered = outcome.never.size();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto pause = std::chrono::microseconds(1);
  for (;;) {
    bool done = true;
    for (const auto &[cntr, value] : outcome.ends)
      done = done && fi_cntr_read(cntr) + fi_cntr_readerr(cntr) >= value;
    if (done) return kOk;
    if (std::chrono::steady_clock::now() >= deadline) {
      std::lock_guard lock(impl.mu);
      return impl.fail(kErrTimeout, std::to_string(outcome.fire.size()) +
                                        " triggered operation(s) have not all completed after " +
                                        std::to_string(timeout_ms) + " ms");
    }
    impl.progress();
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(500));
  }
}

Status Fabric::release_counters(const std::vector<Counter> &group) {
  Impl &impl = *impl_;
  std::vector<std::unique_ptr<CounterEntry>> closing;
  {
    std::lock_guard lock(impl.mu);
    Outcome outcome;
    if (Status st = predict(impl, group, &outcome)) return st;
    for (const auto &[cntr, value] : outcome.ends)
      if (fi_cntr_read(cntr) + fi_cntr_readerr(cntr) < value)
        return impl.fail(kErrBusy, "releasing counters: triggered operations are still running (settle first)");
    // Every record of the group is either complete or never triggered: all are free again.
    for (Counter c : group) {
      std::unique_ptr<CounterEntry> &slot = impl.counters[c.id - 1];
      for (uint32_t r : slot->records) impl.free_records.push_back(r);
      closing.push_back(std::move(slot));
    }
  }
  // progress() may be poking these counters with the pointers it collected: let it finish.
  { std::lock_guard poking(impl.poke_mu); }
  // Endpoints first: they hold references on the counters bound to them. Nothing adds to the
  // counters any more, so no queued operation runs on a closed endpoint before its list goes.
  std::string failed;
  for (auto &e : closing)
    if (e->ep)
      if (int rc = fi_close(&e->ep->fid)) failed = fi_error_text("fi_close (endpoint of a counter)", rc);
  for (auto &e : closing)
    if (int rc = fi_close(&e->cntr->fid)) failed = fi_error_text("fi_close (counter)", rc);
  if (failed.empty()) return kOk;
  std::lock_guard lock(impl.mu);
  return impl.fail(kErrProvider, failed);
}

}  // namespace mpix::ofi
