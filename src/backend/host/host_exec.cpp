#include "host_exec.h"

#include "kernels/line_puts.h"
#include "kernels/message_chunks.h"
#include "launch_stamps.h"

#include <sched.h>
#include <sys/uio.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace mpix::gpu::host_exec {
namespace {
using work::Item;

uint64_t load_acquire(uint64_t addr) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t *>(addr)).load(std::memory_order_acquire);
}

uint64_t load_relaxed(const uint64_t *word) {
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t *>(word)).load(std::memory_order_relaxed);
}

// The lines of epoch `tag` in the area of kLineArea item `area` (line_puts.h), copied into the
// window, as the kernel's wait_flags does with a block's threads; false while any has not landed.
bool take_lines(const Item &area, uint32_t tag) {
  const auto *lines = reinterpret_cast<const uint64_t *>(area.a);
  uint64_t w0 = load_relaxed(lines), w1 = load_relaxed(lines + 1);
  if (!coll::line_has(w0, w1, tag)) return false;
  const uint64_t header = coll::line_payload(w0, w1);
  if (!work::line_put_fits(header, area.bytes)) return true;
  const uint64_t bytes = work::line_put_bytes(header);
  char *dst = reinterpret_cast<char *>(area.b) + work::line_put_offset(header);
  for (uint64_t u = 0; u < coll::unit_count(bytes); ++u) {
    w0 = load_relaxed(lines + 2 * (u + 1));
    w1 = load_relaxed(lines + 2 * (u + 1) + 1);
    if (!coll::line_has(w0, w1, tag)) return false;
    coll::store_unit(dst + u * coll::kLinePayload, coll::line_payload(w0, w1), coll::unit_bytes(bytes, u));
  }
  return true;
}

void put_lines(const Item &put, const Item &tag_item) {
  const uint32_t tag = coll::line_tag(work::item_value(tag_item));
  auto *lines = reinterpret_cast<uint64_t *>(put.a);
  const char *src = reinterpret_cast<const char *>(put.b);
  const uint64_t units = coll::unit_count(put.bytes);
  for (uint64_t u = 0; u <= units; ++u) {
    const uint64_t v = work::line_put_payload(src, tag_item.a, put.bytes, u);
    std::atomic_ref<uint64_t>(lines[2 * u]).store(coll::line_word(v, tag), std::memory_order_relaxed);
    std::atomic_ref<uint64_t>(lines[2 * u + 1]).store(coll::line_word(v >> 32, tag), std::memory_order_relaxed);
  }
}

// A wait item; `companion` is the item after it (a kWaitLines item's kLineArea).
bool wait_item(const Item &it, const Item *companion, uint64_t want, uint64_t watchdog_ns, uint64_t *seen,
               FaultWatch *watch) {
  const bool lines = it.kind == work::kWaitLines && companion;
  const uint32_t tag = lines ? coll::line_tag(want) : 0;
  return wait_until([&] { return (*seen = load_acquire(it.a)) >= want || (lines && take_lines(*companion, tag)); },
                    watchdog_ns, watch);
}

bool cma_transfer(bool write, int pid, void *local, uint64_t remote, uint64_t bytes, std::string *why) {
  char *l = static_cast<char *>(local);
  while (bytes > 0) {
    struct iovec liov = {l, bytes};
    struct iovec riov = {reinterpret_cast<void *>(remote), bytes};
    ssize_t n = write ? process_vm_writev(pid, &liov, 1, &riov, 1, 0) : process_vm_readv(pid, &liov, 1, &riov, 1, 0);
    if (n <= 0) {
      *why = std::string("cross-memory attach (process_vm_") + (write ? "writev" : "readv") + ") to pid " +
             std::to_string(pid) + " failed: " + std::strerror(errno);
      return false;
    }
    l += n;
    remote += static_cast<uint64_t>(n);
    bytes -= static_cast<uint64_t>(n);
  }
  return true;
}

template <typename T>
void accumulate_local(T *dst, const T *src, uint64_t n, uint8_t op) {
  for (uint64_t i = 0; i < n; ++i) {
    std::atomic_ref<T> ref(dst[i]);
    if (op == work::kReplace) {
      ref.store(src[i], std::memory_order_relaxed);
      continue;
    }
    T cur = ref.load(std::memory_order_relaxed);
    while (!ref.compare_exchange_weak(cur, work::apply_op<T>(op, cur, src[i]), std::memory_order_relaxed)) {
    }
  }
}

template <typename T>
void accumulate_buffer(T *dst, const T *src, uint64_t n, uint8_t op) {
  for (uint64_t i = 0; i < n; ++i) dst[i] = work::apply_op<T>(op, dst[i], src[i]);
}

void accumulate_dispatch(void *dst, const void *src, uint64_t bytes, uint8_t dtype, uint8_t op, bool atomic) {
  switch (dtype) {
#define MPIX_ACC_CASE(code, T)                                                                 \
  case code:                                                                                   \
    if (atomic)                                                                                \
      accumulate_local(static_cast<T *>(dst), static_cast<const T *>(src), bytes / sizeof(T), op); \
    else                                                                                       \
      accumulate_buffer(static_cast<T *>(dst), static_cast<const T *>(src), bytes / sizeof(T), op); \
    break;
    MPIX_ACC_CASE(work::kInt32, int32_t)
    MPIX_ACC_CASE(work::kInt64, int64_t)
    MPIX_ACC_CASE(work::kFloat, float)
    MPIX_ACC_CASE(work::kDouble, double)
#undef MPIX_ACC_CASE
  }
}

void lock(uint64_t addr) {
  std::atomic_ref<uint64_t> word(*reinterpret_cast<uint64_t *>(addr));
  for (unsigned spin = 0;; ++spin) {
    uint64_t expected = 0;
    if (word.compare_exchange_weak(expected, 1, std::memory_order_acquire)) return;
    if (spin > 64) sched_yield();
  }
}

// The ranges origin it.peer staged (work_items.h), from the mirror at it.b into the window at it.a.
void copy_staged(const Item &it) {
  const auto *ranges = reinterpret_cast<const work::StagedRanges *>(work::staged_ranges_at(it.b, it.bytes, it.peer));
  const uint64_t n = std::atomic_ref<uint64_t>(const_cast<uint64_t &>(ranges->count)).load(std::memory_order_acquire);
  for (uint64_t r = 0; r < n && r < work::kStagedRangesMax; ++r) {
    const uint64_t offset = ranges->range[r].offset, bytes = ranges->range[r].bytes;
    if (offset > it.bytes || bytes > it.bytes - offset) continue;  // the origin checked; never trust the network
    std::memcpy(reinterpret_cast<char *>(it.a) + offset, reinterpret_cast<const char *>(it.b) + offset, bytes);
  }
}

// The message length a counted copy reads (work::kCopyCounted, work::kCountedPieces).
uint64_t counted_length(const Item &it) {
  const auto *length = reinterpret_cast<const uint64_t *>(it.b + static_cast<int64_t>(it.peer));
  return std::atomic_ref<uint64_t>(const_cast<uint64_t &>(*length)).load(std::memory_order_acquire);
}

bool run_op(const Item &it, std::string *why) {
  if (it.kind == work::kCopyStaged) {
    copy_staged(it);
    return true;
  }
  if (it.kind == work::kCopyCounted) {
    const uint64_t n = counted_length(it);
    if (n <= it.bytes) std::memmove(reinterpret_cast<void *>(it.a), reinterpret_cast<const void *>(it.b), n);
    return true;
  }
  if (it.kind == work::kStore2) {
    auto *words = reinterpret_cast<uint64_t *>(it.a);
    words[0] = it.b;
    words[1] = it.bytes;
    return true;
  }
  if (it.kind == work::kLockAcquire) {
    lock(it.a);
    return true;
  }
  if (it.kind == work::kLockRelease) {
    std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t *>(it.a)).store(0, std::memory_order_release);
    return true;
  }
  void *dst = reinterpret_cast<void *>(it.a);
  const void *src = reinterpret_cast<const void *>(it.b);
  if (it.kind == work::kCopy) {
    if (it.flags & work::kDstRemoteCma) return cma_transfer(true, it.peer, const_cast<void *>(src), it.a, it.bytes, why);
    if (it.flags & work::kSrcRemoteCma) return cma_transfer(false, it.peer, dst, it.b, it.bytes, why);
    std::memmove(dst, src, it.bytes);
    return true;
  }
  if (it.flags & work::kDstRemoteCma) {
    // Read-modify-write through cross-memory attach, under the target's accumulate lock.
    std::vector<char> tmp(it.bytes);
    if (!cma_transfer(false, it.peer, tmp.data(), it.a, it.bytes, why)) return false;
    accumulate_dispatch(tmp.data(), src, it.bytes, it.dtype, it.op, false);
    return cma_transfer(true, it.peer, tmp.data(), it.a, it.bytes, why);
  }
  accumulate_dispatch(dst, src, it.bytes, it.dtype, it.op, true);
  return true;
}
constexpr uint64_t kNoLimit = UINT64_MAX;
// Calls f(piece) for each piece of runs [0, n), in order, while it returns true.
template <typename F>
bool for_each_piece(const work::Run *runs, uint64_t n, uint64_t limit, F &&f) {
  for (uint64_t i = 0; i < n; ++i)
    for (uint64_t k = 0; k < runs[i].count; ++k) {
      work::Pair p = work::piece_of(runs[i], k);
      // Only the first `limit` bytes of the packed side, where there is one (a shorter two-sided
      // message: its packed offsets start at 0; other lists' offsets may be negative).
      if (limit != kNoLimit) {
        const uint64_t at = static_cast<uint64_t>(p.src);
        if (at >= limit) continue;
        p.bytes = std::min<uint64_t>(p.bytes, limit - at);
      }
      if (!f(p)) return false;
    }
  return true;
}

// A pairs item (work::kCopyPairs, kAccumulatePairs) with the runs of the kPairList item after it:
// each piece as a copy or accumulate of its own, through cross-memory attach where the item says.
// Copies of pieces through cross-memory attach, many pieces per system call: one call per piece
// made Faces --datatypes (faces of one-double pieces) several times slower on the host backend.
// A short transfer (the kernel may stop early) redoes its batch piece by piece; copying a piece
// twice is harmless.
bool cma_runs(const Item &head, const work::Run *runs, uint64_t n, uint64_t limit, std::string *why) {
  const bool write = head.flags & work::kDstRemoteCma;
  constexpr size_t kBatch = 1024;  // IOV_MAX on Linux
  struct iovec local[kBatch], remote[kBatch];
  size_t m = 0;
  uint64_t total = 0;
  auto flush = [&]() {
    const ssize_t got = write ? process_vm_writev(head.peer, local, m, remote, m, 0)
                              : process_vm_readv(head.peer, local, m, remote, m, 0);
    bool ok = true;
    if (got < 0 || static_cast<uint64_t>(got) != total)
      for (size_t k = 0; ok && k < m; ++k)
        ok = cma_transfer(write, head.peer, local[k].iov_base, reinterpret_cast<uint64_t>(remote[k].iov_base),
                          local[k].iov_len, why);
    m = 0, total = 0;
    return ok;
  };
  const bool all = for_each_piece(runs, n, limit, [&](const work::Pair &p) {
    const uint64_t dst = head.a + static_cast<uint64_t>(p.dst), src = head.b + static_cast<uint64_t>(p.src);
    local[m] = {reinterpret_cast<void *>(write ? src : dst), p.bytes};
    remote[m] = {reinterpret_cast<void *>(write ? dst : src), p.bytes};
    total += p.bytes;
    return ++m < kBatch || flush();
  });
  return all && (m == 0 || flush());
}

bool run_pairs(const Item &head, const Item &list, std::string *why) {
  // A counted receive (two-sided, work::kCountedPieces): a shorter message fills the pieces its
  // packed bytes reach, a longer one none.
  uint64_t limit = kNoLimit;
  if (head.flags & work::kCountedPieces) {
    limit = counted_length(head);
    if (limit > head.bytes) return true;
  }
  const auto *runs = reinterpret_cast<const work::Run *>(list.a);
  if (head.kind == work::kCopyPairs && (head.flags & (work::kDstRemoteCma | work::kSrcRemoteCma)))
    return cma_runs(head, runs, list.b, limit, why);
  return for_each_piece(runs, list.b, limit, [&](const work::Pair &p) {
    Item one = head;
    one.kind = head.kind == work::kCopyPairs ? work::kCopy : work::kAccumulate;
    one.a = head.a + static_cast<uint64_t>(p.dst);
    one.b = head.b + static_cast<uint64_t>(p.src);
    one.bytes = p.bytes;
    return run_op(one, why);
  });
}

// Whether the list moves chunks of two-sided messages longer than a mailbox (message_chunks.h).
bool moves_chunks(const std::vector<Item> &ops) {
  for (size_t i = 0; i + 1 < ops.size(); ++i)
    if (work::is_chunks_head(ops[i].kind) && ops[i + 1].kind == work::kChunkWords) return true;
  return false;
}

// A receive's lane read straight from the send buffer where this process reaches it (mapped, or
// by cross-memory attach): the bytes its chunks would have brought. False where it cannot (then the
// chunks bring them, over whatever a failed attempt wrote).
bool pull_directly(const Item &head, const Item &words, const work::ChunkState &s, uint32_t lane) {
  const work::DirectSource d = work::chunk_direct_source(head, words, s);
  if (!d.src) return false;
  std::string why;
  for (uint32_t k = 0; k < s.total; ++k) {
    const work::ChunkMove c = work::chunk_direct_move(head, words, s, d, lane, k);
    if (!c.bytes) continue;
    if (!d.pid) std::memcpy(c.dst, c.src, c.bytes);
    else if (!cma_transfer(false, d.pid, c.dst, reinterpret_cast<uint64_t>(c.src), c.bytes, &why)) return false;
  }
  return true;
}

// The chunks items of a list that moves chunks, before its waits (work::kChunked): every lane of
// every message moves its share of a chunk as soon as its peer's lane allows (a receive's once its
// own header is in), so that no message of the list waits for another (an exchange's send and
// receive, a ping-pong's), as the kernel's blocks do. False when the watchdog (or `watch`) ended a
// wait: *report says which.
bool run_chunks(const std::vector<Item> &ops, const WorkList &list, WatchdogReport *report, FaultWatch *watch) {
  struct Moving {
    const Item *head, *words;
    uint32_t lane;
    work::ChunkState s;
    bool started;   // the header is in (a send's always is): the state is known
    bool draining;  // a send between nodes whose chunks all rang: its puts are completing
    bool done;
  };
  std::vector<Moving> moving;
  for (size_t i = 0; i + 1 < ops.size(); ++i)
    if (work::is_chunks_head(ops[i].kind))
      for (uint32_t lane = 0; lane < ops[i + 1].dtype; ++lane)
        moving.push_back({&ops[i], &ops[i + 1], lane, {}, false, false, false});
  size_t left = moving.size();
  const Moving *stuck = nullptr;
  uint64_t want = 0, stuck_word = 0;
  auto hand_over = [](const work::Handover &h) {
    if (h.word) std::atomic_ref<uint64_t>(*h.word).store(h.value, std::memory_order_release);
  };
  auto store = [&](const Moving &m, uint64_t v) { hand_over(work::chunk_handover(*m.head, *m.words, m.s, m.lane, v)); };
  // The item moves no more chunks: it rings what it still owes (between nodes), and a send between
  // nodes waits for its puts.
  auto end = [&](Moving &m) {
    hand_over(work::chunks_release(*m.head, *m.words, m.s));
    if (work::chunks_drain(*m.head, *m.words)) m.draining = true;
    else m.done = true, --left;
  };
  const bool moved = wait_until(
      [&] {
        for (Moving &m : moving) {
          if (m.done) continue;
          const Item &head = *m.head, &words = *m.words;
          if (m.draining) {
            const uint64_t v = work::chunks_done_value(m.s);
            bool all = true;
            for (uint32_t h = 0; h < 2 && all; ++h) {
              const uint64_t word = reinterpret_cast<uint64_t>(work::chunks_done_word(words, h));
              if (load_acquire(word) < v) all = false, stuck = &m, want = v, stuck_word = word;
            }
            if (all) m.draining = false, m.done = true, --left;
            continue;
          }
          if (!m.started) {
            const uint64_t full = reinterpret_cast<uint64_t>(work::chunk_full_word(words));
            const uint64_t header_in = work::chunk_full_value(head, words);
            if (head.kind == work::kChunksIn && load_acquire(full) < header_in) {
              stuck = &m, want = header_in, stuck_word = full;
              continue;
            }
            m.started = true;
            m.s = work::chunk_start(head, words);
            if (work::chunks_abandon(head, m.s)) store(m, work::chunks_abandoned(m.s));
            if (!work::chunks_progress(m.s)) {
              end(m);
              continue;
            }
            if (pull_directly(head, words, m.s, m.lane)) {
              store(m, m.s.base | work::kChunksTaken);
              m.done = true, --left;
              continue;
            }
            if (head.kind == work::kChunksIn) store(m, work::chunks_go(m.s));
          }
          while (!m.done && !m.draining) {
            const uint64_t wait_word = work::chunk_wait_word(head, words, m.s, m.lane);
            const uint64_t seen = load_acquire(wait_word);
            const bool out = head.kind == work::kChunksOut;
            if ((out && work::chunks_go_final(m.s, seen)) || !work::chunk_ready(m.s, seen)) {
              const bool dropped =
                  out && work::chunks_dropped(m.s, seen, load_acquire(reinterpret_cast<uint64_t>(work::chunk_full_word(words))));
              if (dropped) end(m);
              else stuck = &m, want = work::chunk_want(m.s), stuck_word = wait_word;
              break;
            }
            const work::ChunkMove c = work::chunk_move(head, words, m.s, m.lane);
            if (c.bytes) std::memcpy(c.dst, c.src, c.bytes);  // a share past the end: a handover only
            store(m, c.signal);
            if (++m.s.next == m.s.total) {
              if (work::chunks_drain(head, words)) m.draining = true;
              else m.done = true, --left;
            }
          }
        }
        return left == 0;
      },
      list.watchdog_ns, watch);
  if (!moved && stuck) {
    *report = WatchdogReport{list.window_id, stuck->head->peer, stuck->head->dtype, want, load_acquire(stuck_word)};
    report->after_fault = watch && watch->ended;
  }
  return moved;
}

// Chunks items are not ops: run_chunks moves them before the waits.
bool run_ops(const std::vector<Item> &ops, std::string *why) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (work::is_companion(ops[i].kind)) continue;  // read with the item before it
    if (work::is_chunks_head(ops[i].kind)) {
      if (i + 1 == ops.size() || ops[i + 1].kind != work::kChunkWords) {
        *why = "a chunks item without its words";
        return false;
      }
      continue;  // moved before the waits (run_chunks)
    }
    if (ops[i].kind == work::kPutLines) {
      if (i + 1 == ops.size() || ops[i + 1].kind != work::kLineTag) {
        *why = "a line put without its tag";
        return false;
      }
      put_lines(ops[i], ops[i + 1]);
      continue;
    }
    if (work::is_pairs_head(ops[i].kind)) {
      if (i + 1 == ops.size() || ops[i + 1].kind != work::kPairList) {
        *why = "a pairs item without its list";
        return false;
      }
      if (!run_pairs(ops[i], ops[i + 1], why)) return false;
      continue;
    }
    if (!run_op(ops[i], why)) return false;
  }
  return true;
}

// A stored signal: a release, so what this list (and the tasks before it) did is seen first.
void store_signal(const Item &it) {
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t *>(it.a)).store(work::item_value(it), std::memory_order_release);
}

// Counting signals (kSignalAdd) mark the list as run: they come last, also after a timeout.
void count(const WorkList &list) {
  for (const Item &sig : list.signals)
    if (sig.flags & work::kSignalAdd)
      std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t *>(sig.a)).fetch_add(sig.b, std::memory_order_release);
}

bool wait_all(const std::vector<Item> &waits, const WorkList &list, WatchdogReport *report, FaultWatch *watch) {
  for (size_t i = 0; i < waits.size(); ++i) {
    const Item &it = waits[i];
    if (work::is_companion(it.kind)) continue;
    uint64_t seen = 0;
    const uint64_t want = work::item_value(it);
    if (!wait_item(it, i + 1 < waits.size() ? &waits[i + 1] : nullptr, want, list.watchdog_ns, &seen, watch)) {
      *report = WatchdogReport{list.window_id, it.peer, it.dtype, want, seen};
      report->after_fault = watch && watch->ended;
      return false;
    }
  }
  return true;
}

}  // namespace

uint64_t clock_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// Spins briefly, then yields, then sleeps with growing pauses: CI runs several ranks, each with a
// stream thread, on two cores, so a hard spin would starve the process being waited for.
void pause_after(unsigned spin) {
  if (spin < 64) return;
  if (spin < 256) {
    sched_yield();
    return;
  }
  std::this_thread::sleep_for(std::chrono::microseconds(spin < 1024 ? 5 : 50));
}

bool wait_at_least(const uint64_t *flag, uint64_t want, uint64_t watchdog_ns, uint64_t *seen, FaultWatch *watch) {
  Item it{};
  it.a = reinterpret_cast<uint64_t>(flag);
  return wait_item(it, nullptr, want, watchdog_ns, seen, watch);
}

// The list's parts as the kernel's launch header would count them (launch_trace.h).
static uint16_t trace_parts(const WorkList &list) {
  work::LaunchHeader h{};
  for (const Item &it : list.signals) ++*((it.flags & work::kSignalAdd) ? &h.ncount : &h.nsignal);
  h.nlead = !list.leading_signals.empty();
  h.nwait = !list.waits.empty();
  h.ncopy = !list.ops.empty();
  h.ntrail = !list.trailing_waits.empty();
  return work::trace_parts(h);
}

int run(const WorkList &list, WatchdogReport *report, std::string *why, work::TraceLog *trace, FaultWatch *watch) {
  LaunchStamps stamp(trace, list.window_id, trace ? trace_parts(list) : 0);
  stamp(work::kTraceEnter);
  // Leading signals (a merged post's) order what earlier tasks did, as the kernel boundary does.
  for (const Item &it : list.leading_signals) store_signal(it);
  // A wait the watchdog ends skips the rest of the epoch, but the list still counts as run.
  const bool chunked = moves_chunks(list.ops);
  const bool waited_first = (!chunked || run_chunks(list.ops, list, report, watch)) &&
                            wait_all(list.waits, list, report, watch);
  stamp(work::kTraceWaited);
  if (!waited_first) {
    // Skipped signals may include a network doorbell: later rings of the window must not fire
    // this list's operations (work::LaunchHeader::skip_addr). Before the counts, which release it.
    if (list.skip_word)
      std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t *>(list.skip_word)).store(1, std::memory_order_release);
    count(list);
    stamp(work::kTraceExit);
    return kErrTimeout;
  }
  if (!run_ops(list.ops, why)) return kErrRuntime;
  if (list.signals.empty() && list.trailing_waits.empty() && list.trailing_ops.empty()) {
    stamp(work::kTraceExit);  // nothing after the data: as the kernel, no tail stamps
    return kOk;
  }
  stamp(work::kTraceOpsDone);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (const Item &it : list.signals)
    if (!(it.flags & work::kSignalAdd) && !work::ring_stopped(it, list.skip_word)) store_signal(it);
  stamp(work::kTraceSignalled);
  const bool waited = wait_all(list.trailing_waits, list, report, watch);
  stamp(work::kTraceTrailDone);
  if (waited && !run_ops(list.trailing_ops, why)) return kErrRuntime;
  count(list);
  stamp(work::kTraceExit);
  return waited ? kOk : kErrTimeout;
}

}  // namespace mpix::gpu::host_exec
