// Triggered puts and atomics in both provider styles (fi_trigger(3)), and the records that keep
// their descriptions alive until they complete.
#include <algorithm>
#include <thread>

#include "fabric_impl.h"

namespace mpix::ofi {

namespace {

// Data is visible at the target when a put completes: the chained signal may then announce it.
constexpr uint64_t kOpFlags = FI_DELIVERY_COMPLETE;

// Points an RMA or atomic message (fi_msg_rma, fi_msg_atomic: same field names) at `n` local and
// `n` remote vectors.
template <typename Msg, typename LocalIov, typename RemoteIov>
void point_message(Msg &msg, LocalIov *local, void **desc, fi_addr_t dest, RemoteIov *remote, size_t n = 1) {
  msg.msg_iov = local;
  msg.desc = desc;
  msg.iov_count = n;
  msg.addr = dest;
  msg.rma_iov = remote;
  msg.rma_iov_count = n;
}

size_t ofi_datatype_bytes(fi_datatype t) { return (t == FI_INT32 || t == FI_UINT32 || t == FI_FLOAT) ? 4 : 8; }

}  // namespace

fi_datatype ofi_datatype(AtomicType t) {
  switch (t) {
    case AtomicType::i32: return FI_INT32;
    case AtomicType::i64: return FI_INT64;
    case AtomicType::f32: return FI_FLOAT;
    case AtomicType::f64: return FI_DOUBLE;
  }
  return FI_INT64;
}

fi_op ofi_op(AtomicOp op) {
  switch (op) {
    case AtomicOp::sum: return FI_SUM;
    case AtomicOp::min: return FI_MIN;
    case AtomicOp::max: return FI_MAX;
    case AtomicOp::replace: return FI_ATOMIC_WRITE;
  }
  return FI_SUM;
}

size_t atomic_type_bytes(AtomicType type) { return ofi_datatype_bytes(ofi_datatype(type)); }

// Releases the records of completed operations. A counter tells how many of its operations
// completed, not which, and they complete out of order; but an operation whose trigger counter is
// still below its threshold has not run, so it is not among them. Once a completion counter
// covers every other operation it counts, those are all complete and their records are released.
// Returns how many unreleased operations may be running.
size_t Fabric::Impl::reclaim() {
  size_t running = 0;
  std::vector<std::pair<uint32_t, uint64_t>> trigger_values;  // read after the completion counter
  for (auto &c : counters) {
    if (!c || c->records.empty()) continue;
    const uint64_t counted = fi_cntr_read(c->cntr) + fi_cntr_readerr(c->cntr);
    trigger_values.clear();
    auto may_have_run = [&](const OpRecord &o) {
      auto it = std::find_if(trigger_values.begin(), trigger_values.end(),
                             [&](const auto &tv) { return tv.first == o.trigger_counter; });
      if (it == trigger_values.end()) {
        CounterEntry *t = counter(Counter{o.trigger_counter});
        trigger_values.emplace_back(o.trigger_counter, fi_cntr_read(t->cntr) + fi_cntr_readerr(t->cntr));
        it = trigger_values.end() - 1;
      }
      return it->second >= o.threshold;
    };
    auto idle = std::partition(c->records.begin(), c->records.end(),
                               [&](uint32_t r) { return may_have_run(records[r]); });
    const uint64_t ran = static_cast<uint64_t>(idle - c->records.begin());
    if (ran == 0) continue;
    if (counted < c->added + c->retired + ran) {
      running += ran;
      continue;
    }
    for (auto it = c->records.begin(); it != idle; ++it) {
      --counter(Counter{records[*it].trigger_counter})->trigger_refs;
      free_records.push_back(*it);
    }
    c->retired += ran;
    c->records.erase(c->records.begin(), idle);
  }
  return running;
}

// A free record; while none is free but some operations are running, waits (bounded) for them.
Status Fabric::Impl::take_record(const char *what, uint32_t *rec) {
  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(1);
  std::unique_lock lock(mu);
  for (;;) {
    size_t running = free_records.empty() ? reclaim() : 0;
    if (!free_records.empty()) {
      *rec = free_records.back();
      free_records.pop_back();
      return kOk;
    }
    if (running == 0 || waited_too_long(start))
      return fail(kErrBusy, std::string(what) + ": all " + std::to_string(record_count) +
                                " operation records are in flight (" + std::to_string(running) + " running)");
    lock.unlock();
    progress();
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
    lock.lock();
  }
}

// Triggered context style: an operation's completion counter is the one bound to its endpoint,
// so each completion counter gets an endpoint of its own (same address vector and queue).
// Registrations stay bound to the first endpoint only: a provider with FI_MR_ENDPOINT would need
// them here too, but the only provider seen taking this style (sockets) has no such mode.
Status Fabric::Impl::endpoint_for(CounterEntry *completion, fid_ep **out) {
  if (!completion->ep) {
    fid_ep *e = nullptr;
    int rc = fi_endpoint(domain, info, &e, nullptr);
    if (!rc) rc = fi_ep_bind(e, &av->fid, 0);
    if (!rc) rc = fi_ep_bind(e, &cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION);
    if (!rc) rc = fi_ep_bind(e, &completion->cntr->fid, FI_WRITE | FI_READ);
    if (!rc) rc = fi_enable(e);
    if (rc) {
      if (e) fi_close(&e->fid);
      return fail(kErrProvider, fi_error_text("endpoint for a completion counter", rc));
    }
    completion->ep = e;
  }
  *out = completion->ep;
  return kOk;
}

Status Fabric::Impl::local_range(Region local_region, const void *local, size_t bytes, const char *what,
                                 void **desc) {
  const char *p = static_cast<const char *>(local);
  RegionEntry *r = region(local_region);
  if (!r || p < r->base || bytes > r->bytes || p - r->base > static_cast<ptrdiff_t>(r->bytes - bytes))
    return fail(kErrArg, std::string(what) + ": the local buffer lies outside its registered region");
  *desc = r->desc;
  return kOk;
}

Status Fabric::Impl::rma(TriggerStyle s, OpKind kind, const Fabric::Piece *pieces, size_t n, fi_addr_t dest,
                         const RemoteRegion &remote, const Trigger &trigger) {
  const char *what = kind == OpKind::put ? "triggered_put" : "triggered_get";
  void *desc[kMaxPieces] = {};
  {
    std::lock_guard lock(mu);
    if (n == 0 || n > pieces_limit)
      return fail(kErrArg, std::string(what) + ": " + std::to_string(n) + " pieces, the provider takes 1 to " +
                               std::to_string(pieces_limit));
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      const size_t bytes = pieces[i].bytes;
      const uint64_t remote_offset = pieces[i].remote_offset;
      if (Status st = local_range(pieces[i].region, pieces[i].local, bytes, what, &desc[i])) return st;
      if (remote_offset > remote.bytes || bytes > remote.bytes - remote_offset)
        return fail(kErrArg, std::string(what) + ": " + std::to_string(bytes) + " bytes at offset " +
                                 std::to_string(remote_offset) + " exceed the remote region of " +
                                 std::to_string(remote.bytes) + " bytes");
      if (bytes == 0) return fail(kErrArg, std::string(what) + ": zero bytes");
      total += bytes;
    }
    if (total > info->ep_attr->max_msg_size)
      return fail(kErrArg, std::string(what) + ": " + std::to_string(total) + " bytes exceed the provider's " +
                               std::to_string(info->ep_attr->max_msg_size));
  }
  uint32_t rec;
  if (Status st = take_record(what, &rec)) return st;
  OpRecord &o = records[rec];  // ours until submitted
  o = OpRecord{};
  for (size_t i = 0; i < n; ++i) {
    o.iov[i] = {pieces[i].local, pieces[i].bytes};
    o.desc[i] = desc[i];
    o.rma_iov[i] = {remote.base + pieces[i].remote_offset, pieces[i].bytes, remote.key};
  }
  point_message(o.rma.msg, o.iov, o.desc, dest, o.rma_iov, n);
  return submit(s, kind, rec, trigger);
}

Status Fabric::Impl::atomic(TriggerStyle s, fi_op op, fi_datatype type, const void *local, size_t count,
                            Region local_region, uint64_t operand, fi_addr_t dest, const RemoteRegion &remote,
                            uint64_t remote_offset, const Trigger &trigger) {
  const size_t elem = ofi_datatype_bytes(type);
  void *desc = records_desc;
  {
    std::lock_guard lock(mu);
    if (op == FI_ATOMIC_WRITE && type == FI_UINT64 && !local && !atomic_write)
      return fail(kErrUnsupported, "triggered_atomic_write_u64: " + provider + " has no 64-bit atomic write");
    if (count == 0) return fail(kErrArg, "triggered atomic: zero elements");
    if (remote_offset % elem || remote_offset > remote.bytes || (remote.bytes - remote_offset) / elem < count)
      return fail(kErrArg, "triggered atomic: offset " + std::to_string(remote_offset) + " and " +
                               std::to_string(count) + " elements are unaligned or outside the remote region");
    if (local)
      if (Status st = local_range(local_region, local, count * elem, "triggered accumulate", &desc)) return st;
  }
  uint32_t rec;
  if (Status st = take_record("triggered atomic", &rec)) return st;
  OpRecord &o = records[rec];
  o = OpRecord{};
  o.operand = operand;
  o.desc[0] = desc;
  o.ioc = {local ? const_cast<void *>(local) : &o.operand, count};
  o.rma_ioc = {remote.base + remote_offset, count, remote.key};
  point_message(o.atomic.msg, &o.ioc, o.desc, dest, &o.rma_ioc);
  o.atomic.msg.datatype = type;
  o.atomic.msg.op = op;
  return submit(s, OpKind::atomic, rec, trigger);
}

// Adds the trigger to a filled record and hands it to the provider in style `s`.
Status Fabric::Impl::submit(TriggerStyle s, OpKind kind, uint32_t rec, const Trigger &trigger) {
  OpRecord &o = records[rec];
  fid_domain *dom = domain;
  fid_ep *target_ep = ep;
  {
    std::lock_guard lock(mu);
    CounterEntry *trig = counter(trigger.counter), *done = counter(trigger.completion);
    Status st = kOk;
    if (!trig || !done) st = fail(kErrArg, "triggered operation: unknown trigger or completion counter");
    else if (done->mmio) st = fail(kErrArg, "triggered operation: a counter rung through MMIO counts no completions");
    else if (s == TriggerStyle::triggered_context) st = endpoint_for(done, &target_ep);
    if (st) {
      free_records.push_back(rec);
      return st;
    }
    o.trigger_counter = trigger.counter.id;
    o.threshold = trigger.threshold;
    ++trig->trigger_refs;
    done->records.push_back(rec);
    if (s == TriggerStyle::deferred_work_queue) {
      // sockets requires the operation's context to be the work's own (else -FI_EINVAL).
      o.work.threshold = trigger.threshold;
      o.work.triggering_cntr = trig->cntr;
      o.work.completion_cntr = done->cntr;
      if (kind != OpKind::atomic) {
        o.work.op_type = kind == OpKind::put ? FI_OP_WRITE : FI_OP_READ;
        o.work.op.rma = &o.rma;
        o.rma.ep = ep;
        o.rma.msg.context = &o.work.context;
        o.rma.flags = kind == OpKind::put ? kOpFlags : 0;  // a read completes once its data is here
      } else {
        o.work.op_type = FI_OP_ATOMIC;
        o.work.op.atomic = &o.atomic;
        o.atomic.ep = ep;
        o.atomic.msg.context = &o.work.context;
        o.atomic.flags = kOpFlags;
      }
    } else {
      o.trigger.event_type = FI_TRIGGER_THRESHOLD;
      o.trigger.trigger.threshold.cntr = trig->cntr;
      o.trigger.trigger.threshold.threshold = trigger.threshold;
      o.rma.msg.context = &o.trigger;
      o.atomic.msg.context = &o.trigger;
    }
  }

  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(1);
  ssize_t rc;
  for (;;) {
    if (s == TriggerStyle::deferred_work_queue)
      rc = fi_control(&dom->fid, FI_QUEUE_WORK, &o.work);
    else if (kind == OpKind::put)
      rc = fi_writemsg(target_ep, &o.rma.msg, FI_TRIGGER | kOpFlags);
    else if (kind == OpKind::get)
      rc = fi_readmsg(target_ep, &o.rma.msg, FI_TRIGGER);
    else
      rc = fi_atomicmsg(target_ep, &o.atomic.msg, FI_TRIGGER | kOpFlags);
    if (rc != -FI_EAGAIN || waited_too_long(start)) break;
    progress();
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
  if (!rc) return kOk;

  std::lock_guard lock(mu);
  CounterEntry *trig = counter(trigger.counter), *done = counter(trigger.completion);
  --trig->trigger_refs;  // both still exist: counters are not released while in use
  done->records.erase(std::find(done->records.begin(), done->records.end(), rec));
  free_records.push_back(rec);
  const char *call = s == TriggerStyle::deferred_work_queue ? "fi_control(FI_QUEUE_WORK)"
                     : kind == OpKind::put                  ? "fi_writemsg(FI_TRIGGER)"
                     : kind == OpKind::get                  ? "fi_readmsg(FI_TRIGGER)"
                                                            : "fi_atomicmsg(FI_TRIGGER)";
  if (rc == -FI_EAGAIN)
    return fail(kErrBusy, std::string(call) + ": the provider answered -FI_EAGAIN (queue full) for " +
                              std::to_string(busy_wait_ms) + " ms");
  return fail(kErrProvider, fi_error_text(call, rc));
}

Status Fabric::Impl::peer_address(int peer, fi_addr_t *out) {
  std::lock_guard lock(mu);
  if (peer < 0 || static_cast<size_t>(peer) >= peers.size())
    return fail(kErrArg, "unknown peer " + std::to_string(peer) + " (" + std::to_string(peers.size()) + " inserted)");
  *out = peers[peer];
  return kOk;
}

Status Fabric::triggered_put(const void *local, size_t bytes, Region local_region, int peer,
                             const RemoteRegion &remote, uint64_t remote_offset, const Trigger &trigger) {
  const Piece piece{const_cast<void *>(local), local_region, remote_offset, bytes};
  return triggered_put_pieces(&piece, 1, peer, remote, trigger);
}

Status Fabric::triggered_get(void *local, size_t bytes, Region local_region, int peer, const RemoteRegion &remote,
                             uint64_t remote_offset, const Trigger &trigger) {
  const Piece piece{local, local_region, remote_offset, bytes};
  return triggered_get_pieces(&piece, 1, peer, remote, trigger);
}

Status Fabric::triggered_put_pieces(const Piece *pieces, size_t n, int peer, const RemoteRegion &remote,
                                    const Trigger &trigger) {
  fi_addr_t dest;
  if (Status s = impl_->peer_address(peer, &dest)) return s;
  return impl_->rma(impl_->style, OpKind::put, pieces, n, dest, remote, trigger);
}

Status Fabric::triggered_get_pieces(const Piece *pieces, size_t n, int peer, const RemoteRegion &remote,
                                    const Trigger &trigger) {
  fi_addr_t dest;
  if (Status s = impl_->peer_address(peer, &dest)) return s;
  return impl_->rma(impl_->style, OpKind::get, pieces, n, dest, remote, trigger);
}

size_t Fabric::rma_pieces_limit() const { return impl_->pieces_limit; }

Status Fabric::triggered_accumulate(const void *local, size_t count, AtomicType type, AtomicOp op,
                                    Region local_region, int peer, const RemoteRegion &remote,
                                    uint64_t remote_offset, const Trigger &trigger) {
  fi_addr_t dest;
  if (Status s = impl_->peer_address(peer, &dest)) return s;
  {
    std::lock_guard lock(impl_->mu);
    if (!local) return impl_->fail(kErrArg, "triggered_accumulate: null buffer");
    const size_t limit = atomic_count_limit(type, op);
    if (count > limit)
      return impl_->fail(kErrUnsupported, "triggered accumulate: " + impl_->provider + " takes " +
                                              std::to_string(limit) + " elements of this type and operation, not " +
                                              std::to_string(count));
  }
  return impl_->atomic(impl_->style, ofi_op(op), ofi_datatype(type), local, count, local_region, 0, dest, remote,
                       remote_offset, trigger);
}

size_t Fabric::atomic_count_limit(AtomicType type, AtomicOp op) const {
  return impl_->atomic_limits[static_cast<int>(type)][static_cast<int>(op)];
}

Status Fabric::Impl::atomic_u64(fi_op op, uint64_t operand, int peer, const RemoteRegion &remote,
                                uint64_t remote_offset, const Trigger &trigger) {
  fi_addr_t dest;
  if (Status s = peer_address(peer, &dest)) return s;
  return atomic(style, op, FI_UINT64, nullptr, 1, Region{}, operand, dest, remote, remote_offset, trigger);
}

Status Fabric::triggered_atomic_add_u64(uint64_t value, int peer, const RemoteRegion &remote,
                                        uint64_t remote_offset, const Trigger &trigger) {
  return impl_->atomic_u64(FI_SUM, value, peer, remote, remote_offset, trigger);
}

Status Fabric::triggered_atomic_write_u64(uint64_t value, int peer, const RemoteRegion &remote,
                                          uint64_t remote_offset, const Trigger &trigger) {
  return impl_->atomic_u64(FI_ATOMIC_WRITE, value, peer, remote, remote_offset, trigger);
}

Status Fabric::triggered_atomic_max_u64(uint64_t value, int peer, const RemoteRegion &remote,
                                        uint64_t remote_offset, const Trigger &trigger) {
  return impl_->atomic_u64(FI_MAX, value, peer, remote, remote_offset, trigger);
}

size_t Fabric::pending_ops() {
  std::lock_guard lock(impl_->mu);
  impl_->reclaim();
  return impl_->record_count - impl_->free_records.size();
}

}  // namespace mpix::ofi
