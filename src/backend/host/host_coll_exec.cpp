// The host backend's executor of collective schedules (kernels/coll/run_schedule.h): one thread, the
// stream's worker, runs every step of every channel, channel after channel; flags are atomics on
// shared memory.
#include <atomic>
#include <cstring>

#include "host_exec.h"
#include "kernels/coll/reduce_ops.h"
#include "kernels/coll/run_schedule.h"
#include "launch_stamps.h"

namespace mpix::gpu::host_exec {
namespace {

// Elements are combined as ReduceIn<T>::Acc (float for the half types) and stored once.
template <typename T, class Dsts, class Srcs>
void reduce_typed(const Dsts &dsts, int ndst, const Srcs &srcs, int nsrc, uint64_t n, uint8_t op) {
  using In = coll::ReduceIn<T>;
  using Acc = typename In::Acc;
  for (uint64_t i = 0; i < n; ++i) {
    Acc acc = In::load(static_cast<const T *>(srcs[0])[i]);
    for (int s = 1; s < nsrc; ++s) acc = coll::reduce_op<Acc>(op, acc, In::load(static_cast<const T *>(srcs[s])[i]));
    const T out = In::store(acc);
    for (int d = 0; d < ndst; ++d) static_cast<T *>(dsts[d])[i] = out;
  }
}

class HostCollExecutor {
 public:
  HostCollExecutor(const coll::Args &a, WatchdogReport *report, LaunchStamps *stamp, FaultWatch *watch)
      : a_(a), report_(report), stamp_(stamp), watch_(watch), waited_ns_(stamp->on() ? clock_ns() : 0) {}

  bool ok() const { return ok_; }
  uint64_t load(const uint64_t *p) const { return word(p).load(std::memory_order_acquire); }
  uint64_t cursor() const { return load(cursor_word()); }
  void set(uint64_t *p, uint64_t value) { word(p).store(value, std::memory_order_release); }
  void wait(const uint64_t *flag, uint64_t want, int peer) {
    if (!ok_) return;
    uint64_t seen = 0;
    if (wait_at_least(flag, want, a_.watchdog_ns, &seen, watch_)) return note_waited();
    *report_ = WatchdogReport{a_.comm_id, peer, work::kWaitCollective, want, seen};
    report_->after_fault = watch_ && watch_->ended;
    ok_ = false;
  }
  void wait_all(const uint64_t *first, uint64_t peers, uint64_t want) {
    for (int q = 0; q < coll::kMaxRanks && ok_; ++q)
      if ((peers >> q) & 1) wait(first + q, want, q);
  }
  void copy(void *dst, const void *src, uint64_t bytes) {
    if (ok_ && bytes) std::memmove(dst, src, bytes);
  }
  template <class Dsts, class Srcs>
  void reduce(const Dsts &dsts, int ndst, const Srcs &srcs, int nsrc, uint64_t n) {
    if (!ok_ || n == 0) return;
    coll::with_reduce_type(a_.dtype, [&](auto t) {
      reduce_typed<typename decltype(t)::type>(dsts, ndst, srcs, nsrc, n, a_.op);
    });
  }
  void barrier() { std::atomic_thread_fence(std::memory_order_seq_cst); }
  void settle() {}  // one thread: its steps are done in program order
  const coll::PeerTable *table() const { return reinterpret_cast<const coll::PeerTable *>(a_.table); }

  // Lines (kernels/coll/lines.h): each word one 64-bit atomic store or load.
  void put_lines(char *lines, const char *src, uint64_t bytes, uint64_t round) {
    if (!ok_) return;
    const uint32_t tag = coll::line_tag(round);
    for (uint64_t u = 0; u < coll::unit_count(bytes); ++u)
      store_line(lines, u, coll::load_unit(src + u * coll::kLinePayload, coll::unit_bytes(bytes, u)), tag);
  }
  template <class Lines, class Srcs>
  void put_lines_each(const Lines &lines, const Srcs &srcs, int pieces, uint64_t bytes, uint64_t round) {
    for (int k = 0; k < pieces; ++k) put_lines(lines[k], srcs[k], bytes, round);
  }
  template <class Dsts, class Lines, class Peers>
  void get_lines(const Dsts &dsts, const Lines &lines, const Peers &peers, int pieces, uint64_t bytes, uint64_t round) {
    for (int k = 0; k < pieces; ++k) {
      for (uint64_t u = 0; u < coll::unit_count(bytes) && ok_; ++u) {
        uint64_t v = 0;
        if (await_line(lines[k], u, round, peers[k], &v))
          coll::store_unit(dsts[k] + u * coll::kLinePayload, v, coll::unit_bytes(bytes, u));
      }
    }
  }
  template <class Outs, class Srcs>
  void reduce_lines(char *dst, const Outs &outs, int nout, const Srcs &srcs, int nsrc, int own, uint64_t n,
                    uint64_t round) {
    coll::with_reduce_type(a_.dtype, [&](auto t) {
      reduce_lines_typed<typename decltype(t)::type>(dst, outs, nout, srcs, nsrc, own, n, round);
    });
  }
  void signal(uint64_t *flag, uint64_t value) {
    if (ok_) word(flag).store(value, std::memory_order_release);
  }
  template <class AddressOf>
  void signal_each(uint64_t peers, uint64_t value, AddressOf &&address_of) {
    for (int q = 0; q < coll::kMaxRanks; ++q)
      if ((peers >> q) & 1) signal(address_of(q), value);
  }
  // The cursor advances even after a timeout: the call is over, and the report says it failed.
  void finish(uint64_t value) {
    stamp_->at(work::kTraceWaited, waited_ns_);
    (*stamp_)(work::kTraceOpsDone);
    word(cursor_word()).store(value, std::memory_order_release);
    if (a_.counted)
      word(cursor_word() + (coll::FlagLayout::eager_calls(a_.size) - coll::FlagLayout::cursor(a_.size)))
          .fetch_add(1, std::memory_order_release);
  }

 private:
  static std::atomic_ref<uint64_t> word(const uint64_t *p) { return std::atomic_ref<uint64_t>(*const_cast<uint64_t *>(p)); }
  const uint64_t *cursor_word() const {
    const auto *table = reinterpret_cast<const coll::PeerTable *>(a_.table);
    return reinterpret_cast<const uint64_t *>(table[a_.rank].flags) + coll::FlagLayout::cursor(a_.size);
  }
  static uint64_t *line(const char *lines, uint64_t u, int w) {
    return reinterpret_cast<uint64_t *>(const_cast<char *>(lines) + u * coll::kLineBytes) + w;
  }
  static void store_line(char *lines, uint64_t u, uint64_t payload, uint32_t tag) {
    word(line(lines, u, 0)).store(coll::line_word(payload, tag), std::memory_order_relaxed);
    word(line(lines, u, 1)).store(coll::line_word(payload >> 32, tag), std::memory_order_relaxed);
  }
  // Line u of round `round` from `peer`: its payload, or false when the watchdog fired.
  bool await_line(const char *lines, uint64_t u, uint64_t round, int peer, uint64_t *payload) {
    const uint32_t tag = coll::line_tag(round);
    uint64_t w0 = 0, w1 = 0;
    const bool ready = wait_until(
        [&] {
          w0 = word(line(lines, u, 0)).load(std::memory_order_relaxed);
          w1 = word(line(lines, u, 1)).load(std::memory_order_relaxed);
          return coll::line_has(w0, w1, tag);
        },
        a_.watchdog_ns, watch_);
    if (ready) {
      *payload = coll::line_payload(w0, w1);
      note_waited();
      return true;
    }
    *report_ = WatchdogReport{a_.comm_id, peer, work::kWaitCollective, round, coll::line_round_seen(w0)};
    report_->after_fault = watch_ && watch_->ended;
    ok_ = false;
    return false;
  }
  template <typename T, class Outs, class Srcs>
  void reduce_lines_typed(char *dst, const Outs &outs, int nout, const Srcs &srcs, int nsrc, int own, uint64_t n,
                          uint64_t round) {
    const uint64_t bytes = n * sizeof(T);
    const uint32_t tag = coll::line_tag(round);
    for (uint64_t u = 0; u < coll::unit_count(bytes) && ok_; ++u) {
      const uint64_t k = coll::unit_bytes(bytes, u);
      uint64_t out = 0;
      auto fetch = [&](int src, uint64_t *v) {
        if (src != own) return await_line(static_cast<const char *>(srcs[src]), u, round, src, v);
        *v = coll::load_unit(static_cast<const char *>(srcs[src]) + u * coll::kLinePayload, k);
        return true;
      };
      if (!coll::reduce_unit<T>(a_.op, nsrc, fetch, &out)) continue;
      if (dst) coll::store_unit(dst + u * coll::kLinePayload, out, k);
      for (int d = 0; d < nout; ++d) store_line(outs[d], u, out, tag);
    }
  }

  // MPIX_ST_TRACE's waited: when the call's last wait on a peer ended (its start, without any).
  void note_waited() {
    if (stamp_->on()) waited_ns_ = clock_ns();
  }

  const coll::Args &a_;
  WatchdogReport *report_;
  LaunchStamps *stamp_;
  FaultWatch *watch_;
  uint64_t waited_ns_;
  bool ok_ = true;
};

}  // namespace

int run_collective(const coll::Args &args, WatchdogReport *report, FaultWatch *watch) {
  LaunchStamps stamp(reinterpret_cast<work::TraceLog *>(args.trace), args.comm_id, work::trace_collective_parts(args.kind));
  stamp(work::kTraceEnter);
  HostCollExecutor x(args, report, &stamp, watch);
  coll::run_schedule(x, args, 0, 1);
  stamp(work::kTraceExit);
  return x.ok() ? kOk : kErrTimeout;
}

}  // namespace mpix::gpu::host_exec
