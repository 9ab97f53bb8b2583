// The merged epoch kernel: one launch runs a whole item list (doc/design.md, The epoch protocol).
//   -. every block loads the values of the list's signals and waits (cursor-relative epochs),
//      each wait's flag and each line wait's hint at once, into shared memory,
//   0. block 0 stores the leading signals (a post merged with the calls after it under capture),
//   1. every block waits for the list's flags (so no grid-wide barrier is needed before copying),
//   2. all blocks share the copies and accumulates,
//   3. the last block to finish stores the signals: release stores at system scope, which order
//      the data before them (relaxed where the list moves no data).
// The same source builds as CUDA (nvcc) and HIP (hipcc -x hip).
#include <cstdio>

#include "work_items.h"
#include "line_puts.h"
#include "message_chunks.h"
#include "device_atomics.h"
#include "device_copy.h"
#include "epoch_launch.h"
#include "launch_overlap.h"
#include "launch_trace.h"
#include "watchdog_report.h"

namespace {
using mpix::work::Item;

// Writes a line put (kPutLines: area, source, bytes; its kLineTag: the window offset and the
// epoch) with the grid's threads: line 0 the header, line u + 1 data unit u.
__device__ void put_lines(uint64_t area, uint64_t src_addr, uint64_t bytes, uint64_t offset, uint64_t epoch,
                          uint64_t tid, uint64_t nthreads) {
  const uint32_t tag = mpix::coll::line_tag(epoch);
  auto *lines = reinterpret_cast<uint64_t *>(area);
  const char *src = reinterpret_cast<const char *>(src_addr);
  const uint64_t units = mpix::coll::unit_count(bytes);
  for (uint64_t u = tid; u <= units; u += nthreads) {
    const uint64_t v = mpix::work::line_put_payload(src, offset, bytes, u);
    mpix_store_tagged_line(lines + 2 * u, v, tag);
  }
}

// A wait that timed out, or ended at once behind an earlier timeout of its window (`after_fault`,
// work::fault_skips): the window's fault word and the mailbox (watchdog_report.h), and a message
// for the process's first report. Out of line, with its arguments by
// value: the message's arguments are packed in local memory, which the kernel's own path never
// touches (README, How it works, "Local memory").
__device__ __noinline__ void report_wait_timeout(uint64_t mailbox_addr, uint32_t window_id, int peer, uint32_t reason,
                                                 uint64_t watchdog_ns, uint64_t want, uint64_t seen,
                                                 uint64_t fault_addr, bool after_fault) {
  if (mpix_report_timeout(mailbox_addr, fault_addr, after_fault, window_id, peer, reason, want, seen)) {
    if (after_fault)
      printf("mpix-st watchdog: window %u: a wait for %s #%llu from rank %d ended at once behind an earlier timeout "
             "of the window (flag at %llu)\n",
             window_id, reason == mpix::work::kWaitPost ? "post" : "complete", (unsigned long long)want, peer,
             (unsigned long long)seen);
    else
      printf("mpix-st watchdog: window %u waited %llu ms for %s #%llu from rank %d (flag at %llu)\n", window_id,
             (unsigned long long)(watchdog_ns / 1000000ull), reason == mpix::work::kWaitPost ? "post" : "complete",
             (unsigned long long)want, peer, (unsigned long long)seen);
  }
}
// The fault word of the launch's window (key 0: host-driven work, which has none): host-mapped,
// after the mailbox (work::WatchdogArea).
__device__ inline uint64_t fault_addr_of(uint64_t mailbox_addr, uint64_t window_key) {
  if (!window_key) return 0;
  return mailbox_addr + offsetof(mpix::work::WatchdogArea, fault) + mpix::work::window_slot(window_key) * 8ull;
}
template <typename Params>
__device__ void report_timeout(const Params &p, const Item &it, uint64_t want, uint64_t seen, bool after_fault = false) {
  report_wait_timeout(p.h.mailbox_addr, p.h.window_id, it.peer, it.dtype, p.h.watchdog_ns, want, seen,
                      fault_addr_of(p.h.mailbox_addr, p.h.window_key), after_fault);
}
// Whether the window's waits end at once (work::fault_skips). Read only by waits that have not
// passed, and only where a watchdog is set (faults come from its timeouts).
__device__ inline bool fault_ends(uint64_t fault_addr, uint32_t taken, bool captured) {
  return fault_addr && mpix::work::fault_skips(*reinterpret_cast<const volatile uint64_t *>(fault_addr), taken, captured);
}
template <typename Params>
__device__ bool fault_ends_wait(const Params &p, uint64_t fault_addr) {
  return fault_ends(fault_addr, p.h.taken, p.h.bits & mpix::work::kCheckAlive);
}

// Waits for items [first, first + count) with the block's threads; false when the watchdog fired.
// `values` holds every item's value by item index, loaded at the kernel's start; `seen`, where
// given, the flag each wait item had then (by item index too), so a wait already satisfied costs
// no second load.
// A kWaitLines item also passes on a header line of its origin's line put (work_items.h); the
// block's threads then copy the put's data lines into the window together, each waiting for its
// line's tag (one thread alone would pay a memory round trip per line: on 2 H100s a captured
// 256-byte epoch took 12.6 us that way against 6.9 with the put made directly). `hints` holds
// each kWaitLines item's line hint (work_items.h, kLineHintWord) by item index: where it is set
// the first data line is polled with the header; one block (`keeps_hints`) keeps them up to date.
// Companion items wait for nothing.
template <typename Params>
__device__ bool wait_flags(const Params &p, int first, int count, const uint64_t *values, const uint64_t *seen_then,
                           const uint8_t *hints, bool keeps_hints) {
  __shared__ int timed_out;
  __shared__ uint64_t line_headers[mpix::work::kItemsPerLaunch];  // by item - first; 0: no lines taken
  __shared__ uint64_t line_wants[mpix::work::kItemsPerLaunch];  // the epochs those lines carry
  __shared__ uint64_t first_lines[mpix::work::kItemsPerLaunch][2];  // data line 0 as polled (0: not polled)
  if (threadIdx.x == 0) timed_out = 0;
  __syncthreads();
  for (int i = first + threadIdx.x; i < first + count; i += blockDim.x) {
    const Item &it = p.items[i];
    line_headers[i - first] = 0;
    if (mpix::work::is_companion(it.kind)) continue;
    const uint64_t *flag = reinterpret_cast<const uint64_t *>(it.a);
    const uint64_t want = values[i];
    if (seen_then && seen_then[i] >= want) continue;
    const bool lines = it.kind == mpix::work::kWaitLines && i + 1 < first + count;
    const uint32_t tag = lines ? mpix::coll::line_tag(want) : 0;
    uint64_t *area = lines ? reinterpret_cast<uint64_t *>(p.items[i + 1].a) : nullptr;
    const bool hinted = lines && hints[i];
    uint64_t start = p.h.watchdog_ns ? mpix_clock_ns() : 0;
    const uint64_t fault = p.h.watchdog_ns ? fault_addr_of(p.h.mailbox_addr, p.h.window_key) : 0;
    uint64_t seen;
    for (uint32_t polls = 0;; ++polls) {
      // The header's load goes first, so it is in flight with the flag's: polling both costs about
      // what polling the flag alone does.
      uint64_t w0 = 0, w1 = 0, d0 = 0, d1 = 0;
      if (lines) mpix_load_line(area, &w0, &w1);
      if (hinted) mpix_load_line(area + 2, &d0, &d1);
      if ((seen = mpix_load_acquire_sys(flag)) >= want) {
        // A put made directly: a hint left from line puts would cost every later wait a load.
        if (hinted && keeps_hints) area[mpix::work::kLineHintWord] = 0;
        break;
      }
      if (lines && mpix::coll::line_has(w0, w1, tag)) {
        const uint64_t header = mpix::coll::line_payload(w0, w1);  // never 0: a line put has a byte
        line_headers[i - first] = header;
        line_wants[i - first] = want;
        first_lines[i - first][0] = d0;  // its tag is checked where it is used
        first_lines[i - first][1] = d1;
        const bool one_line = mpix::work::line_put_bytes(header) <= mpix::coll::kLinePayload;
        if (one_line != hinted && keeps_hints)
          area[mpix::work::kLineHintWord] = one_line;
        break;
      }
      if (timed_out) break;
      // Behind an earlier timeout of the window: at the first poll that found nothing, then every 64.
      if ((polls & 63) == 0 && fault_ends_wait(p, fault)) {
        report_timeout(p, it, want, seen, true);
        timed_out = 1;
        break;
      }
      if (p.h.watchdog_ns && mpix_clock_ns() - start > p.h.watchdog_ns) {
        report_timeout(p, it, want, seen);
        timed_out = 1;
        break;
      }
    }
  }
  __syncthreads();
  for (int i = first; i + 1 < first + count && !timed_out; ++i) {
    const uint64_t header = line_headers[i - first];
    if (!header) continue;
    const Item &area = p.items[i + 1];
    if (!mpix::work::line_put_fits(header, area.bytes)) continue;
    const uint64_t bytes = mpix::work::line_put_bytes(header);
    const auto *lines = reinterpret_cast<const uint64_t *>(area.a);
    char *dst = reinterpret_cast<char *>(area.b) + mpix::work::line_put_offset(header);
    const uint64_t want = line_wants[i - first];
    const uint32_t tag = mpix::coll::line_tag(want);
    const uint64_t start = p.h.watchdog_ns ? mpix_clock_ns() : 0;
    for (uint64_t u = threadIdx.x; u < mpix::coll::unit_count(bytes); u += blockDim.x) {
      uint64_t w0 = 0, w1 = 0;
      if (u == 0) {
        w0 = first_lines[i - first][0];
        w1 = first_lines[i - first][1];
      }
      if (!mpix::coll::line_has(w0, w1, tag)) mpix_load_line(lines + 2 * (u + 1), &w0, &w1);
      while (!mpix::coll::line_has(w0, w1, tag)) {
        if (p.h.watchdog_ns && mpix_clock_ns() - start > p.h.watchdog_ns) {
          report_timeout(p, p.items[i], want, mpix::coll::line_round_seen(w0));
          timed_out = 1;
          break;
        }
        mpix_load_line(lines + 2 * (u + 1), &w0, &w1);
      }
      if (timed_out) break;
      mpix::coll::store_unit(dst + u * mpix::coll::kLinePayload, mpix::coll::line_payload(w0, w1),
                             mpix::coll::unit_bytes(bytes, u));
    }
  }
  __syncthreads();
  return !timed_out;
}

// The chunks items of a launch that moves chunks of two-sided messages longer than a mailbox
// (message_chunks.h, work::kChunked: before the launch's waits), copied by the kernel into shared
// memory (`head`, `words`: indexing the launch's parameters by a value this loop computes would put
// the whole parameter block in local memory, a 4 KiB stack frame every launch paid for, about 1 us
// per hop). Block b moves lane b of every message that has one, then lane b + gridDim.x, ... (a
// launch has a block per lane where the GPU's share allows). Per lane, its thread 0 polls,
// round-robin, each message that is not done: a receive first for its own header (then it stores
// its lane's go, or abandon word), then for its peer's lane word (a send also learns there that
// its receiver dropped the message), and picks one whose next share may move; the block's threads
// move it; thread 0 hands it over with a release store, which the barrier before it makes cover
// every thread's stores. So no message of the list waits for another (an
// exchange's send and receive, a ping-pong's), nor a lane for another lane. Out of line, with the
// launch header's few fields by value, so the kernel's own path keeps its registers. False when
// the watchdog (or a fault of the context) ended a wait.
struct ChunkLaunch {
  uint64_t watchdog_ns, mailbox_addr, fault_addr;
  uint32_t window_id, taken;
  bool captured;
};
__device__ __noinline__ bool run_chunks(const Item *head, const Item *words, int count, ChunkLaunch l, uint32_t lane) {
  using namespace mpix::work;
  __shared__ ChunkState state[kItemsPerLaunch / 2];
  // 0: its header awaited, 1: moving, 2: done, 3: pull it, 4: a send between nodes whose puts complete
  __shared__ uint8_t phase[kItemsPerLaunch / 2];
  __shared__ const char *pull_from[kItemsPerLaunch / 2];  // phase 3: the send buffer (message_chunks.h)
  __shared__ int pick;
  if (threadIdx.x == 0)
    for (int m = 0; m < count; ++m) {
      const bool out = head[m].kind == kChunksOut;
      if (out) state[m] = chunk_start(head[m], words[m]);
      phase[m] = lane >= words[m].dtype ? 2 : out ? 1 : 0;
    }
  __syncthreads();
  uint64_t start = l.watchdog_ns ? mpix_clock_ns() : 0;
  int at = 0;
  uint32_t polls = 0;
  for (;;) {
    if (threadIdx.x == 0) {
      int left = 0, stuck = -1;
      uint64_t seen = 0, want = 0;
      pick = -1;
      for (int n = 0; n < count && pick < 0; ++n) {
        const int m = (at + n) % count;
        if (phase[m] == 2) continue;
        auto hand_over = [&](uint64_t value) {
          const Handover h = chunk_handover(head[m], words[m], state[m], lane, value);
          mpix_store_release_sys(h.word, h.value);
        };
        // It moves no more chunks: it rings what it still owes (between nodes); a send between
        // nodes then waits for its puts.
        auto end = [&] {
          const Handover h = chunks_release(head[m], words[m], state[m]);
          if (h.word) mpix_store_release_sys(h.word, h.value);
          phase[m] = chunks_drain(head[m], words[m]) ? 4 : 2;
        };
        if (phase[m] == 4) {
          want = chunks_done_value(state[m]);
          if ((seen = mpix_load_acquire_sys(chunks_done_word(words[m], 0))) >= want &&
              (seen = mpix_load_acquire_sys(chunks_done_word(words[m], 1))) >= want)
            phase[m] = 2;
          else
            ++left, stuck = m;
          continue;
        }
        if (phase[m] == 0) {
          want = chunk_full_value(head[m], words[m]);
          if ((seen = mpix_load_acquire_sys(chunk_full_word(words[m]))) < want) {
            ++left, stuck = m;
            continue;
          }
          state[m] = chunk_start(head[m], words[m]);
          if (chunks_abandon(head[m], state[m])) hand_over(chunks_abandoned(state[m]));
          if (!chunks_progress(state[m])) {
            end();
            continue;
          }
          const DirectSource d = chunk_direct_source(head[m], words[m], state[m]);
          if (d.src && !d.pid) {  // the send buffer is mapped here: read it, no chunks
            pull_from[m] = d.src;
            phase[m] = 3;
            pick = m;
            break;
          }
          hand_over(chunks_go(state[m]));
          phase[m] = 1;
        }
        seen = mpix_load_acquire_sys(
            reinterpret_cast<const uint64_t *>(chunk_wait_word(head[m], words[m], state[m], lane)));
        const bool out = head[m].kind == kChunksOut;
        if (out && chunks_go_final(state[m], seen)) {
          end();
        } else if (chunk_ready(state[m], seen)) {
          pick = m;
        } else if (out && chunks_dropped(state[m], seen, mpix_load_acquire_sys(chunk_full_word(words[m])))) {
          end();
        } else {
          ++left, stuck = m, want = chunk_want(state[m]);
        }
      }
      if (pick < 0 && left == 0) pick = -2;  // every message moved
      if (pick < 0 && left > 0) {
        // Behind an earlier timeout of the context (work::fault_skips), or the watchdog.
        const bool after_fault = (++polls & 63) == 0 && fault_ends(l.fault_addr, l.taken, l.captured);
        if (after_fault || (l.watchdog_ns && mpix_clock_ns() - start > l.watchdog_ns)) {
          report_wait_timeout(l.mailbox_addr, l.window_id, head[stuck].peer, head[stuck].dtype, l.watchdog_ns, want,
                              seen, l.fault_addr, after_fault);
          pick = -3;
        }
      }
    }
    __syncthreads();
    const int m = pick;
    if (m == -2) return true;
    if (m == -3) return false;
    if (m >= 0 && phase[m] == 3) {
      // The lane's share of every chunk, straight from the send buffer; then the sender's lane ends.
      uint64_t signal = 0;
      for (uint32_t k = 0; k < state[m].total; ++k) {
        const ChunkMove c = chunk_direct_move(head[m], words[m], state[m], DirectSource{pull_from[m], 0}, lane, k);
        copy_bytes(c.dst, c.src, c.bytes, threadIdx.x, blockDim.x);
        signal = c.signal;
      }
      __syncthreads();
      if (threadIdx.x == 0) {
        mpix_store_release_sys(reinterpret_cast<uint64_t *>(lane_word(words[m].b, lane)), signal);
        phase[m] = 2;
        at = m + 1;
        if (l.watchdog_ns) start = mpix_clock_ns();
      }
    } else if (m >= 0) {
      const ChunkMove c = chunk_move(head[m], words[m], state[m], lane);
      copy_bytes(c.dst, c.src, c.bytes, threadIdx.x, blockDim.x);
      __syncthreads();
      if (threadIdx.x == 0) {
        const Handover h = chunk_handover(head[m], words[m], state[m], lane, c.signal);
        mpix_store_release_sys(h.word, h.value);
        if (++state[m].next == state[m].total) phase[m] = chunks_drain(head[m], words[m]) ? 4 : 2;
        at = m + 1;
        if (l.watchdog_ns) start = mpix_clock_ns();
      }
    }
    __syncthreads();
  }
}

// run_chunks for the launch's chunks items among items [first, end).
template <typename Params>
__device__ bool move_chunks(const Params &p, int first, int end) {
  constexpr int kMax = mpix::work::kItemsPerLaunch / 2;
  __shared__ Item head[kMax], words[kMax];
  __shared__ int count;
  if (threadIdx.x == 0) {
    count = 0;
    for (int i = first; i + 1 < end; ++i)
      if (mpix::work::is_chunks_head(p.items[i].kind)) {
        head[count] = p.items[i];
        words[count] = p.items[i + 1];
        ++count;
      }
  }
  __syncthreads();
  const ChunkLaunch l{p.h.watchdog_ns, p.h.mailbox_addr,
                      p.h.watchdog_ns ? fault_addr_of(p.h.mailbox_addr, p.h.window_key) : 0, p.h.window_id, p.h.taken,
                      (p.h.bits & mpix::work::kCheckAlive) != 0};
  // Lanes in rising order on every rank: the lowest lane not done anywhere is moving everywhere, so
  // a block of several lanes never waits for one its peer moves after it.
  uint32_t lanes = 0;
  for (int m = 0; m < count; ++m) lanes = max(lanes, static_cast<uint32_t>(words[m].dtype));
  for (uint32_t lane = blockIdx.x; lane < lanes; lane += gridDim.x)
    if (!run_chunks(head, words, count, l, lane)) return false;
  return true;
}

template <typename T, typename Bits>
__device__ void accumulate_range(T *dst, const T *src, uint64_t n, uint8_t op, uint64_t tid, uint64_t nthreads) {
  for (uint64_t i = tid; i < n; i += nthreads) {
    if (op == mpix::work::kReplace) {
      atomicExch_system(reinterpret_cast<Bits *>(dst + i), *reinterpret_cast<const Bits *>(src + i));
    } else {
      mpix_atomic_apply<T, Bits>(dst + i, src[i], op);
    }
  }
}

// An accumulate's element type and the unsigned type of its width (the atomics' operand): calls
// f(T{}, Bits{}) with the pair the item's dtype names, for every accumulate path of this kernel.
template <typename F>
__device__ void with_element_type(uint8_t dtype, F &&f) {
  switch (dtype) {
    case mpix::work::kInt32: f(int32_t{}, 0u); break;
    case mpix::work::kInt64: f(0ll, 0ull); break;
    case mpix::work::kFloat: f(0.0f, 0u); break;
    default: f(0.0, 0ull); break;
  }
}

// `bytes` at dst and src: a copy, or an accumulate of the item's element type and op.
__device__ void move_bytes(const Item &it, bool acc, char *dst, const char *src, uint64_t bytes, uint64_t tid,
                           uint64_t nthreads) {
  if (!acc) {
    copy_bytes(dst, src, bytes, tid, nthreads);
    return;
  }
  with_element_type(it.dtype, [&](auto t, auto bits) {
    using T = decltype(t);
    accumulate_range<T, decltype(bits)>(reinterpret_cast<T *>(dst), reinterpret_cast<const T *>(src), bytes / sizeof(T),
                                        it.op, tid, nthreads);
  });
}

// The items of a launch hand their work to the threads round-robin: each item starts at the
// thread after the one the item before it ended with. Were every item to start at thread 0, a
// halo's 26 faces, edges and corners (most of them a few short pieces) would make thread 0's
// share one chain of dependent memory round trips as long as the item list.
struct ThreadCursor {
  uint32_t at = 0;  // the thread that takes the next item's first unit of work
  // Every thread does this for every item of the launch, so it stays off long instruction
  // sequences: both operands below nthreads, a wrap is one subtraction, and a remainder is taken
  // once an item (in 32 bits where the units allow; a 64-bit one is a long sequence).
  // This thread's place among nthreads, counted from `at`.
  __device__ uint32_t rank(uint32_t tid, uint32_t nthreads) const { return tid >= at ? tid - at : tid + nthreads - at; }
  __device__ void advance(uint64_t units, uint32_t nthreads) {
    const uint32_t wrap = units >> 32 ? static_cast<uint32_t>(units % nthreads) : static_cast<uint32_t>(units) % nthreads;
    at = at + wrap >= nthreads ? at + wrap - nthreads : at + wrap;
  }
};
// Units of work (threads busy) of moving `bytes`: 16-byte vectors, or elements of an accumulate.
__device__ uint64_t work_units(bool acc, const Item &it, uint64_t bytes) {
  return acc ? bytes / mpix::work::dtype_size(it.dtype) : (bytes + 15) / 16;
}

// A derived-datatype item (kCopyPairs, kAccumulatePairs) and its kPairList of runs (work_items.h):
// the large pieces (first, a run each) with the whole grid one after the other, then the small
// runs by groups of threads as wide as the list says (run_group_shift), one run per group at a
// time, the group's threads sharing the run's units.
// Offset of unit u of a run whose pieces hold `per` units of `unit` bytes each, `stride` apart.
__device__ inline int64_t run_unit_offset(uint32_t u, uint32_t per, uint32_t unit, int32_t stride) {
  const uint32_t k = per == 1 ? u : u / per;
  return int64_t(k) * stride + int64_t(u - k * per) * unit;
}
// Run r's units of W bytes (every piece's ends and length are multiples of W) by `width` threads:
// thread `lane` takes units lane, lane + width, ..., with four loads in flight before their stores
// (a piece's addresses are computed, so nothing but the data is loaded).
template <typename W>
__device__ void copy_run_words(char *dst, const char *src, const mpix::work::Run &r, uint32_t lane, uint32_t width) {
  const uint32_t per = r.bytes / sizeof(W), units = per * r.count;
  constexpr int kUnroll = 4;
  uint32_t u = lane;
  for (; u + (kUnroll - 1) * width < units; u += kUnroll * width) {
    W v[kUnroll];
#pragma unroll
    for (int i = 0; i < kUnroll; ++i)
      v[i] = *reinterpret_cast<const W *>(src + run_unit_offset(u + i * width, per, sizeof(W), r.src_stride));
#pragma unroll
    for (int i = 0; i < kUnroll; ++i)
      *reinterpret_cast<W *>(dst + run_unit_offset(u + i * width, per, sizeof(W), r.dst_stride)) = v[i];
  }
  for (; u < units; u += width)
    *reinterpret_cast<W *>(dst + run_unit_offset(u, per, sizeof(W), r.dst_stride)) =
        *reinterpret_cast<const W *>(src + run_unit_offset(u, per, sizeof(W), r.src_stride));
}
__device__ void copy_run(char *dst, const char *src, const mpix::work::Run &r, uint32_t lane, uint32_t width) {
  const uint64_t m = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) | r.bytes |
                     static_cast<uint32_t>(r.dst_stride) | static_cast<uint32_t>(r.src_stride);
  if ((m & 15) == 0) copy_run_words<uint4>(dst, src, r, lane, width);
  else if ((m & 7) == 0) copy_run_words<uint64_t>(dst, src, r, lane, width);
  else if ((m & 3) == 0) copy_run_words<uint32_t>(dst, src, r, lane, width);
  else if ((m & 1) == 0) copy_run_words<uint16_t>(dst, src, r, lane, width);
  else copy_run_words<uint8_t>(dst, src, r, lane, width);
}
// Run r's elements, each op(dst, src) as an accumulate does (the recorder checked their alignment).
template <typename T, typename Bits>
__device__ void accumulate_run_elements(char *dst, const char *src, const mpix::work::Run &r, uint8_t op, uint32_t lane,
                                        uint32_t width) {
  const uint32_t per = r.bytes / sizeof(T), units = per * r.count;
  for (uint32_t u = lane; u < units; u += width)
    accumulate_range<T, Bits>(reinterpret_cast<T *>(dst + run_unit_offset(u, per, sizeof(T), r.dst_stride)),
                              reinterpret_cast<const T *>(src + run_unit_offset(u, per, sizeof(T), r.src_stride)), 1,
                              op, 0, 1);
}
__device__ void accumulate_run(const Item &it, char *dst, const char *src, const mpix::work::Run &r, uint32_t lane,
                               uint32_t width) {
  with_element_type(it.dtype, [&](auto t, auto bits) {
    accumulate_run_elements<decltype(t), decltype(bits)>(dst, src, r, it.op, lane, width);
  });
}
// `move` false: the cursor advances as if the runs were walked, and nothing moves (a two-sided
// receive whose message is not the whole type, work::kCountedPieces: a shorter one moved its
// prefix in copy_runs_prefix, a longer one moves nothing).
__device__ void walk_runs(const Item &head, const Item &list, uint64_t tid, uint64_t nthreads, ThreadCursor &cursor,
                          bool move) {
  const auto *runs = reinterpret_cast<const mpix::work::Run *>(list.a);
  const bool acc = head.kind == mpix::work::kAccumulatePairs;
  char *dst = reinterpret_cast<char *>(head.a);
  const char *src = reinterpret_cast<const char *>(head.b);
  const uint64_t n = list.b, large = list.bytes < n ? list.bytes : n;
  for (uint64_t i = 0; i < large; ++i) {  // one piece each (pair_lists.cpp)
    const mpix::work::Run r = runs[i];
    if (move) move_bytes(head, acc, dst + r.dst, src + r.src, r.bytes, cursor.rank(tid, nthreads), nthreads);
    cursor.advance(work_units(acc, head, r.bytes), nthreads);
  }
  const uint32_t nthreads32 = static_cast<uint32_t>(nthreads), tid32 = static_cast<uint32_t>(tid);
  // Groups of 1 << shift threads (run_group_shift): shifts, not divisions (see ThreadCursor).
  const uint32_t shift = static_cast<uint32_t>(list.peer), width = 1u << shift;
  const uint32_t groups = nthreads32 >> shift;
  const uint32_t at_group = cursor.at >> shift, first_group = at_group >= groups ? at_group - groups : at_group;
  cursor.advance((n - large) << shift, nthreads32);
  if (!move || tid32 >= groups << shift) return;  // threads beyond whole groups (none with 512-thread blocks)
  const uint32_t mine = tid32 >> shift;
  const uint32_t group = mine >= first_group ? mine - first_group : mine + groups - first_group;
  const uint32_t lane = tid32 & (width - 1);
  for (uint64_t i = large + group; i < n; i += groups) {
    const mpix::work::Run r = runs[i];
    if (acc) accumulate_run(head, dst + r.dst, src + r.src, r, lane, width);
    else copy_run(dst + r.dst, src + r.src, r, lane, width);
  }
}

// A two-sided receive of a derived type whose message is shorter than the type
// (work::kCountedPieces, `n` < head.bytes): the pieces hold the packed stream in type-map order,
// so each piece takes what of the first `n` bytes falls in it, the whole grid per piece. A rare
// path: a byte loop (copy_bytes here spilled registers in every launch; a call, too).
__device__ __forceinline__ void copy_runs_prefix(char *dst, const char *src, const mpix::work::Run *runs, uint64_t nruns,
                                               uint64_t n, uint64_t tid, uint64_t nthreads) {
  for (uint64_t i = 0; i < nruns; ++i) {
    const mpix::work::Run r = runs[i];
    for (uint64_t k = 0; k < r.count; ++k) {
      const mpix::work::Pair piece = mpix::work::piece_of(r, k);
      const uint64_t at = static_cast<uint64_t>(piece.src);
      if (at >= n) continue;
      const uint64_t bytes = n - at < piece.bytes ? n - at : piece.bytes;
      for (uint64_t b = tid; b < bytes; b += nthreads)
        dst[piece.dst + static_cast<int64_t>(b)] = src[piece.src + static_cast<int64_t>(b)];
    }
  }
}

// The ranges one origin staged for this window (work_items.h): mirror -> window, all threads.
__device__ void copy_staged(const Item &it, uint64_t tid, uint64_t nthreads) {
  const auto *ranges = reinterpret_cast<const volatile mpix::work::StagedRanges *>(
      mpix::work::staged_ranges_at(it.b, it.bytes, it.peer));
  const uint64_t n = ranges->count;
  for (uint64_t r = 0; r < n && r < mpix::work::kStagedRangesMax; ++r) {
    const uint64_t offset = ranges->range[r].offset, bytes = ranges->range[r].bytes;
    if (offset > it.bytes || bytes > it.bytes - offset) continue;  // the origin checked; never trust the network
    copy_bytes(reinterpret_cast<char *>(it.a) + offset, reinterpret_cast<const char *>(it.b) + offset, bytes, tid,
               nthreads);
  }
}

// The live-window table's keys of a captured launch's entries: its window's, and that of a post
// merged in front (0 where there is none; a value, never a choice between the table and the
// launch's parameters, whose address would then escape and put them in local memory). Eager
// launches never check them (0, 0).
struct AliveWords {
  uint64_t window, lead;
};
__device__ AliveWords alive_words(const mpix::work::LaunchHeader &h) {
  if (!(h.bits & mpix::work::kCheckAlive)) return {0, 0};
  const volatile uint64_t *table = reinterpret_cast<const volatile uint64_t *>(h.table_addr);
  const uint64_t window = table[mpix::work::window_slot(h.window_key)];
  const uint64_t lead = h.lead_window_id ? table[mpix::work::window_slot(h.lead_key)] : 0;
  return {window, lead};
}

// A replayed launch whose window (or merged post's window) was freed: its entry holds another
// window's key, or none. Report it once and touch nothing more (its memory and its peers' mappings
// are gone; its own flag memory stays mapped, see the kernel).
__device__ bool window_freed(const mpix::work::LaunchHeader &h, AliveWords alive) {
  if (!(h.bits & mpix::work::kCheckAlive)) return false;
  const bool lead_alive = !h.lead_window_id || (h.lead_key && alive.lead == h.lead_key);
  if (h.window_key && alive.window == h.window_key && lead_alive) return false;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    auto *box = reinterpret_cast<mpix::work::WatchdogMailbox *>(h.mailbox_addr);
    if (atomicCAS(&box->fired, 0u, 1u) == 0u) {
      box->window_id = lead_alive ? h.window_id : h.lead_window_id;
      box->peer = -1;
      box->reason = mpix::work::kFreedWindow;
      box->expected = box->observed = 0;
      mpix_fence_sys();
    }
  }
  return true;
}

// Whether this block is the last of the grid to arrive at `ticket_addr` (all its threads get the
// answer). The last resets the ticket for the next launch that uses it (a replay of the same
// captured launch, or a later eager one). Its acquire-release carries each block's stores, seen
// through its barrier, to the last block.
__device__ bool last_to_arrive(uint64_t ticket_addr, uint32_t expect) {
  __shared__ int last;
  if (threadIdx.x == 0) {
    unsigned int *ticket_word = reinterpret_cast<unsigned int *>(ticket_addr);
    last = (mpix_ticket_add(ticket_word, 1u) + 1 == expect);
    if (last) atomicExch(ticket_word, 0u);
  }
  __syncthreads();
  return last;
}

// The data items [begin, end) of the launch, spread over `nthreads` threads (the grid for the ops,
// one block for trailing ops).
template <int N>
__device__ __forceinline__ void run_data_ops(const mpix::work::LaunchParamsN<N> &p, int begin, int end, uint64_t tid,
                                             uint64_t nthreads) {
  ThreadCursor cursor;
  for (int i = begin; i < end; ++i) {
    const Item &it = p.items[i];
    if (mpix::work::is_chunks_head(it.kind)) continue;  // moved before the waits
    if (it.kind == mpix::work::kCopy) {
      copy_bytes(reinterpret_cast<char *>(it.a), reinterpret_cast<const char *>(it.b), it.bytes,
                 cursor.rank(tid, nthreads), nthreads);
      cursor.advance(work_units(false, it, it.bytes), nthreads);
    } else if (it.kind == mpix::work::kCopyCounted) {
      // Every thread reads the length (after the list's waits); the grid is sized by the bound.
      const uint64_t n = *reinterpret_cast<const volatile uint64_t *>(it.b + static_cast<int64_t>(it.peer));
      if (n <= it.bytes)
        copy_bytes(reinterpret_cast<char *>(it.a), reinterpret_cast<const char *>(it.b), n,
                   cursor.rank(tid, nthreads), nthreads);
      cursor.advance(work_units(false, it, it.bytes), nthreads);
    } else if (it.kind == mpix::work::kCopyStaged) {
      copy_staged(it, tid, nthreads);
    } else if (it.kind == mpix::work::kStore2) {
      if (tid == 0) {
        reinterpret_cast<volatile uint64_t *>(it.a)[0] = it.b;
        reinterpret_cast<volatile uint64_t *>(it.a)[1] = it.bytes;
      }
    } else if (it.kind == mpix::work::kPutLines) {
      if (i + 1 < end)  // launches keep the two together
        put_lines(it.a, it.b, it.bytes, p.items[i + 1].a, mpix::work::item_value(p.items[i + 1]), tid, nthreads);
    } else if (mpix::work::is_companion(it.kind)) {
      continue;  // used with the item before it
    } else {
      if (mpix::work::is_pairs_head(it.kind)) {
        // Every thread reads a counted receive's length (after the list's waits), as kCopyCounted:
        // the whole type walks its runs, a shorter message its prefix, a longer one nothing.
        // (Values, never a choice between a loaded word and a parameter: its address would put the
        // launch's parameters in local memory.)
        const bool counted = it.flags & mpix::work::kCountedPieces;
        const uint64_t length =
            counted ? *reinterpret_cast<const volatile uint64_t *>(it.b + static_cast<int64_t>(it.peer)) : 0;
        if (i + 1 < end) {  // launches keep the two together
          if (counted && length < it.bytes)
            copy_runs_prefix(reinterpret_cast<char *>(it.a), reinterpret_cast<const char *>(it.b),
                             reinterpret_cast<const mpix::work::Run *>(p.items[i + 1].a), p.items[i + 1].b, length,
                             tid, nthreads);
          walk_runs(it, p.items[i + 1], tid, nthreads, cursor, !counted || length == it.bytes);
        }
        if (it.kind == mpix::work::kCopyPairs) continue;
      } else {
        move_bytes(it, true, reinterpret_cast<char *>(it.a), reinterpret_cast<const char *>(it.b), it.bytes,
                   cursor.rank(tid, nthreads), nthreads);
        cursor.advance(work_units(true, it, it.bytes), nthreads);
      }
      // Ordered lists run as one block: a block barrier orders this accumulate before the next.
      if (p.h.bits & mpix::work::kOrdered) {
        mpix_fence_sys();
        __syncthreads();
      }
    }
  }
}

// kChunks: the instance for launches that move chunks (work::kChunked); kTrailOps: for launches
// with trailing ops (a two-sided wait merged after its sends). Other launches carry neither's code
// (a second inlined copy of the data ops spilled registers) nor shared memory.
template <int N, bool kChunks, bool kTrailOps>
__global__ void MPIX_RESIDENT_BOUNDS(kLaunchThreads, kEpochBlocksPerSm) epoch_kernel(const mpix::work::LaunchParamsN<N> p) {
  // MPIX_ST_TRACE (launch_trace.h): one thread's clock reads, in shared memory rather than the
  // registers the copies need, written to the log at the end.
  const uint64_t trace = p.h.trace_addr;
  const bool tracer = trace && mpix_trace_thread();
  __shared__ uint64_t stamps[mpix::work::kTraceEvents];
  // The live-window table changes only under the host's hand (window creation and free, on an
  // internal stream it synchronises), never by stream work: it loads during the overlap with the
  // previous kernel (launch_overlap.h). A freed window's cursors and flags may still be read below:
  // they lie in its own flag memory, which the backend never hands back (device_memory.cpp,
  // free_flags).
  const AliveWords alive = alive_words(p.h);
  // Everything below reads cursors or flags earlier stream work may write.
  mpix_grid_dependency_wait();
  mpix_grid_launch_dependents();
  if (tracer) stamps[0] = mpix_clock_ns();
  // Every value the list stores or waits for, loaded at once into shared memory (registers are
  // the copies'): a cursor-relative value costs a memory round trip, and loaded where it is used
  // it cost one before the waits, one between the data and the signals and one before the
  // trailing waits. Nothing this launch does moves a cursor before its counts, which come last.
  // Each wait's flag loads beside its value: a peer's post usually arrived an exchange ago, and
  // then the wait costs no load of its own.
  __shared__ uint64_t values[mpix::work::kItemsPerLaunch];
  __shared__ uint64_t seen[mpix::work::kItemsPerLaunch];
  __shared__ uint8_t line_hints[mpix::work::kItemsPerLaunch];  // kWaitLines items (work_items.h)
  const int first_wait = p.h.nlead, end_waits = first_wait + p.h.nwait;
  const int end_ops = end_waits + p.h.ncopy;
  const int end_signals = end_ops + p.h.nsignal, end_trail = end_signals + p.h.ntrail;
  for (int i = threadIdx.x; i < end_trail; i += blockDim.x) {
    if (i >= end_waits && i < end_ops) continue;  // data items read their own
    const Item &it = p.items[i];
    if (mpix::work::is_companion(it.kind)) continue;  // its fields mean other things (work_items.h)
    const bool wait = i >= first_wait && i < end_waits, trail = i >= end_signals;
    const bool hint =
        it.kind == mpix::work::kWaitLines && ((wait && i + 1 < end_waits) || (trail && i + 1 < end_trail));
    // Every load before any store to shared memory: the flag's acquire orders all memory accesses
    // before it, so a store of a loaded value ahead of it would wait for that load's round trip.
    // A line hint is written only by this stream's launches.
    const uint64_t value = mpix::work::item_value(it);
    const uint64_t hinted =
        hint ? reinterpret_cast<const volatile uint64_t *>(p.items[i + 1].a)[mpix::work::kLineHintWord] : 0;
    const uint64_t flag = wait ? mpix_load_acquire_sys(reinterpret_cast<const uint64_t *>(it.a)) : 0;
    values[i] = value;
    line_hints[i] = hinted != 0;
    seen[i] = flag;
  }
  __syncthreads();
  if (window_freed(p.h, alive)) return;
  // Leading signals order no data (a post's: what precedes it ended at a kernel boundary), and
  // they go before the waits, which may wait for peers that wait for them.
  if (blockIdx.x == 0)
    for (int i = threadIdx.x; i < first_wait; i += blockDim.x)
      mpix_store_relaxed_sys(reinterpret_cast<uint64_t *>(p.items[i].a), values[i]);
  // A wait the watchdog ended skips the epoch's data and stores; its counting signals (the
  // window's retire count) still run, so the host sees the list as finished.
  // A launch that moves chunks moves them first (run_chunks), then waits as any launch.
  bool waited =
      (!kChunks || move_chunks(p, end_waits, end_ops)) &&
      wait_flags(p, first_wait, p.h.nwait, values, seen, line_hints, blockIdx.x == 0) &&
      !((p.h.bits & mpix::work::kSkipIfWatchdogFired) &&
        reinterpret_cast<volatile mpix::work::WatchdogMailbox *>(p.h.mailbox_addr)->fired);
  // Skipped signals may include a network doorbell: mark the window so that no later ring of it is
  // forwarded (it would fire this list's operations; work_items.h, skip_addr). The kernel's end
  // orders the mark before any later kernel's ring.
  if (!waited && p.h.skip_addr && blockIdx.x == 0 && threadIdx.x == 0) {
    mpix_store_relaxed_sys(reinterpret_cast<uint64_t *>(p.h.skip_addr), 1);
    mpix_fence_sys();
  }
  if (tracer) {
    stamps[1] = mpix_clock_ns();
    // Block 0 hands enter and waited to the finishing block, before the ticket that tells it.
    if (blockIdx.x == 0 && gridDim.x > 1 && p.h.ticket_addr) {
      uint64_t *h = mpix_trace_handoff(trace, p.h.ticket_addr);
      h[0] = stamps[0];
      h[1] = stamps[1];
    }
  }
  const uint64_t tid = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t nthreads = uint64_t(gridDim.x) * blockDim.x;
  if (waited) run_data_ops(p, end_waits, end_ops, tid, nthreads);
  const int end_trail_ops = end_trail + p.h.ntrailop;
  if (end_trail_ops + p.h.ncount == end_ops) {
    if (trace && blockIdx.x == 0) {
      __syncthreads();
      if (tracer) {
        stamps[2] = mpix_clock_ns();
        const uint16_t events[] = {mpix::work::kTraceEnter, mpix::work::kTraceWaited, mpix::work::kTraceExit};
        mpix_trace_write(trace, p.h.window_id, stamps, events, 3, mpix::work::trace_parts(p.h));
      }
    }
    return;
  }

  // The data stores before any signal, with one system fence on the way: the signals are release
  // stores at system scope, which are cumulative over every store the thread has seen. A single
  // block's stores reach its signalling threads through the barrier; several blocks tell the last
  // one through the ticket, whose acquire-release at gpu scope carries each block's stores (seen
  // through its barrier) to the last block. A system fence per block on top of that cost two more
  // fences on the last block's path (about 1.5 us each on H100). Without signals an explicit fence
  // orders the data before the counts.
  __syncthreads();
  const bool relaxed = p.h.bits & mpix::work::kNoData;  // nothing to order (work_items.h): no fence
  // Several blocks: the last to get here signals. Without trailing ops the others are done; with
  // them they go on to the trailing waits and their share of the trailing ops.
  const bool signaller = gridDim.x == 1 || last_to_arrive(p.h.ticket_addr, p.h.ticket_expect);
  if constexpr (!kTrailOps) {
    if (!signaller) return;
  }
  if (signaller) {
    if (tracer) stamps[2] = mpix_clock_ns();
    if (p.h.ncopy && !relaxed && threadIdx.x == 0 && p.h.nsignal == 0 && !(p.h.bits & mpix::work::kCountsUnordered))
      mpix_fence_sys();
    __syncthreads();
    for (int i = end_ops + threadIdx.x; waited && i < end_signals; i += blockDim.x) {
      if (mpix::work::ring_stopped(p.items[i], p.h.skip_addr)) continue;
      auto *flag = reinterpret_cast<uint64_t *>(p.items[i].a);
      if (relaxed) mpix_store_relaxed_sys(flag, values[i]);
      else mpix_store_release_sys(flag, values[i]);
    }
    if (trace) {
      __syncthreads();
      if (tracer) stamps[3] = mpix_clock_ns();
    }
  }
  // Trailing waits: what the signals started (a doorbell rung) has finished, or a merged list's
  // later waits (a two-sided wait's receives after its sends; each block of a launch with trailing
  // ops waits, as for the first waits).
  bool trail_waited = true;
  if (p.h.ntrail) {
    __syncthreads();
    trail_waited = wait_flags(p, end_signals, waited ? p.h.ntrail : 0, values, nullptr, line_hints, signaller);
  }
  // Trailing ops (their own instance of the kernel): the data those waits released, over the grid,
  // stored before any count (a receive's count frees the mailbox it read, so its loads are fenced
  // too); the last block to finish them counts, through a second ticket.
  if constexpr (kTrailOps) {
    __syncthreads();
    if (waited && trail_waited) run_data_ops(p, end_trail, end_trail_ops, tid, nthreads);
    // The block that counts may not be the one that signalled: the signaller hands its stamps on
    // through the second ticket, as block 0 hands on its own through the first.
    uint64_t *trail_handoff = trace && gridDim.x > 1 ? mpix_trace_handoff(trace, p.h.ticket_addr + sizeof(uint32_t)) : nullptr;
    if (tracer && signaller && trail_handoff) {
      trail_handoff[0] = stamps[2];
      trail_handoff[1] = stamps[3];
    }
    __syncthreads();
    if (gridDim.x > 1 && !last_to_arrive(p.h.ticket_addr + sizeof(uint32_t), p.h.ticket_expect)) return;
    if (tracer && !signaller) {
      stamps[2] = trail_handoff[0];
      stamps[3] = trail_handoff[1];
    }
    if (threadIdx.x == 0 && !(p.h.bits & mpix::work::kCountsUnordered)) mpix_fence_sys();
  }
  if (tracer) stamps[4] = mpix_clock_ns();
  __syncthreads();  // every cursor-relative value above is read before the counts advance cursors
  for (int i = end_trail_ops + threadIdx.x; i < end_trail_ops + p.h.ncount; i += blockDim.x)
    atomicAdd_system(reinterpret_cast<unsigned long long *>(p.items[i].a), static_cast<unsigned long long>(p.items[i].b));
  if (trace) {
    __syncthreads();
    if (tracer) {
      stamps[5] = mpix_clock_ns();
      if (blockIdx.x != 0) {  // block 0's stamps, made visible by the ticket and the barrier after it
        const volatile uint64_t *h = mpix_trace_handoff(trace, p.h.ticket_addr);
        stamps[0] = h[0];
        stamps[1] = h[1];
      }
      const uint16_t events[] = {mpix::work::kTraceEnter, mpix::work::kTraceWaited, mpix::work::kTraceOpsDone,
                                 mpix::work::kTraceSignalled, mpix::work::kTraceTrailDone, mpix::work::kTraceExit};
      mpix_trace_write(trace, p.h.window_id, stamps, events, 6, mpix::work::trace_parts(p.h));
    }
  }
}

int item_count(const mpix::work::LaunchHeader &h) {
  return h.nlead + h.nwait + h.ncopy + h.nsignal + h.ntrail + h.ntrailop + h.ncount;
}

// The list in the parameter block of capacity N.
template <int N>
mpix::work::LaunchParamsN<N> with_capacity(const mpix::work::LaunchParams &params) {
  mpix::work::LaunchParamsN<N> p;
  p.h = params.h;
  const int n = item_count(params.h);
  for (int i = 0; i < n; ++i) p.items[i] = params.items[i];
  return p;
}

bool moves_chunks(const mpix::work::LaunchParams &params) { return params.h.bits & mpix::work::kChunked; }

// The instance that runs the list: one for launches that move chunks, one for trailing ops, one
// for every other launch.
template <int N>
using EpochKernel = void (*)(mpix::work::LaunchParamsN<N>);
template <int N>
EpochKernel<N> instance_for(const mpix::work::LaunchParams &params) {
  if (moves_chunks(params)) return epoch_kernel<N, true, false>;
  if (params.h.ntrailop) return epoch_kernel<N, false, true>;
  return epoch_kernel<N, false, false>;
}

template <int N>
int launch_with_capacity(const mpix::work::LaunchParams &params, int blocks, int threads, void *stream, bool overlap) {
  return mpix_launch_kernel(instance_for<N>(params), blocks, threads, stream, overlap, with_capacity<N>(params));
}

// The kernel node a capture recorded from launch_with_capacity, given a new list to run.
template <int N>
int set_node_with_capacity(const mpix::work::LaunchParams &params, int blocks, int threads, void *node) {
  mpix::work::LaunchParamsN<N> p = with_capacity<N>(params);
  void *args[] = {&p};  // the runtime copies the parameters now
  mpix_gpu_kernel_node_params_t k{};
  k.func = reinterpret_cast<void *>(instance_for<N>(params));
  k.gridDim = dim3(blocks);
  k.blockDim = dim3(threads);
  k.kernelParams = args;
  return static_cast<int>(mpix_gpu_graph_kernel_node_set_params(static_cast<mpix_gpu_graph_node_t>(node), &k));
}
}  // namespace

int mpix_set_epoch_kernel_node(void *node, const mpix::work::LaunchParams &params, int blocks, int threads) {
  constexpr const int *caps = mpix::work::kLaunchCapacities;
  const int n = item_count(params.h);
  if (n <= caps[0]) return set_node_with_capacity<caps[0]>(params, blocks, threads, node);
  if (n <= caps[1]) return set_node_with_capacity<caps[1]>(params, blocks, threads, node);
  if (n <= caps[2]) return set_node_with_capacity<caps[2]>(params, blocks, threads, node);
  return set_node_with_capacity<caps[3]>(params, blocks, threads, node);
}

// Launches the instance with the smallest parameter block that holds the list.
int mpix_launch_epoch_kernel(const mpix::work::LaunchParams &params, int blocks, int threads, void *stream,
                             bool overlap) {
  constexpr const int *caps = mpix::work::kLaunchCapacities;
  const int n = item_count(params.h);
  if (n <= caps[0]) return launch_with_capacity<caps[0]>(params, blocks, threads, stream, overlap);
  if (n <= caps[1]) return launch_with_capacity<caps[1]>(params, blocks, threads, stream, overlap);
  if (n <= caps[2]) return launch_with_capacity<caps[2]>(params, blocks, threads, stream, overlap);
  return launch_with_capacity<caps[3]>(params, blocks, threads, stream, overlap);
}
