// Launches of the GPU backend: a work list as merged epoch-kernel launches (large copies on the
// copy engine, waits outside the kernel where processes time-slice the device), a collective call
// as one launch, and the stream operations that run or wait for them.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backend/list_merge.h"
#include "kernels/message_chunks.h"
#include "device_backend.h"

namespace mpix::gpu {

// Copies of at least MPIX_ST_COPY_ENGINE_MIB ride the copy engine: the list becomes a kernel for
// its waits and other work, the engine copies, and a kernel for its signals. Below that size one
// merged kernel is cheaper (one enqueue instead of three).
int DeviceBackend::enqueue(void *stream, const WorkList &list) {
  wait_outside_kernels(stream, list);
  if (copy_engine_bytes_ == 0 || !has_large_copy(list)) {
    if (!list.captured || !graph_merge_enabled()) return launch_all(stream, list, true);
    if (merge_into_tail(stream, list)) return kOk;
    const uint64_t before = launches_.load();
    if (int st = launch_all(stream, list, true)) return st;
    // A list of several launches is no tail: the next call's capture check finds another node.
    if (launches_.load() == before + 1) remember_tail(stream, list);
    return kOk;
  }
  WorkList head, tail;
  head.window_id = tail.window_id = list.window_id;
  head.watchdog_ns = tail.watchdog_ns = list.watchdog_ns;
  head.captured = tail.captured = list.captured;
  head.waits = list.waits;
  std::vector<const work::Item *> large;
  for (const work::Item &it : list.ops) {
    if (is_large_copy(it)) large.push_back(&it);
    else head.ops.push_back(it);
  }
  tail.signals = list.signals;
  tail.skip_word = list.skip_word;  // the signals, and so any doorbell, are the tail's
  tail.trailing_waits = list.trailing_waits;
  tail.trailing_ops = list.trailing_ops;
  if (int st = launch_all(stream, head, true)) return st;
  for (const work::Item *it : large) {
    gpuError_t e = MPIX_GPU(MemcpyAsync)(reinterpret_cast<void *>(it->a), reinterpret_cast<const void *>(it->b),
                                         it->bytes, MPIX_GPU(MemcpyDeviceToDevice), static_cast<gpuStream_t>(stream));
    if (int st = check(e, "copy-engine put")) return st;
    ++launches_;
  }
  return launch_all(stream, tail, true, work::kSkipIfWatchdogFired);
}

bool DeviceBackend::is_large_copy(const work::Item &it) const {
  return it.kind == work::kCopy && it.bytes >= copy_engine_bytes_;
}

bool DeviceBackend::has_large_copy(const WorkList &list) const {
  for (const work::Item &it : list.ops)
    if (is_large_copy(it)) return true;
  return false;
}

// One launch per call: a block per channel, as many as stay resident beside the device's other
// ranks (a block runs several channels in turn beyond that).
int DeviceBackend::enqueue_collective(void *stream, coll::Args args) {
  const int blocks = static_cast<int>(std::min<uint64_t>(coll_max_blocks_, coll::channel_count(args)));
  args.mailbox = reinterpret_cast<uint64_t>(mailbox_);
  if (const CommFault cf = comm_fault(args.comm_id); cf.word) {
    args.fault = reinterpret_cast<uint64_t>(cf.word);
    args.taken = cf.taken;
  }
  args.barrier = reinterpret_cast<uint64_t>(barriers_ + 4 * (next_barrier_.fetch_add(1) % kBarrierSlots));
  args.trace = reinterpret_cast<uint64_t>(trace_);
  // The call's block size (src/coll/collectives.cpp), within what the kernel is built for.
  const int threads = args.threads ? std::min<int>(static_cast<int>(args.threads), kThreadsPerBlock) : kThreadsPerBlock;
  const int err = mpix_launch_coll_kernel(args, blocks, threads, stream, launch_overlap());
  if (err != 0)
    return fail(kErrRuntime,
                std::string("collective kernel launch: ") + MPIX_GPU(GetErrorString)(static_cast<gpuError_t>(err)));
  ++launches_;
  return kOk;
}

int DeviceBackend::enqueue_host_call(void *stream, void (*fn)(void *), void *arg) {
  if (int st = check(MPIX_GPU(LaunchHostFunc)(static_cast<gpuStream_t>(stream), fn, arg), "host call on the stream"))
    return st;
  ++launches_;
  return kOk;
}

int DeviceBackend::execute(const WorkList &list) {
  if (int st = launch_all(internal_, list, false)) return st;
  return synchronize(internal_);
}

int DeviceBackend::synchronize(void *stream) {
  if (int st = check(MPIX_GPU(StreamSynchronize)(static_cast<gpuStream_t>(stream)), "stream synchronize"))
    return st;
  return mailbox_->fired ? kErrTimeout : kOk;
}

void DeviceBackend::choose_waits() {
  memop_waits_ =
      wait_mode_ == WaitMode::memop || (wait_mode_ == WaitMode::automatic && sharers_ > 1 && time_sliced_);
}

void DeviceBackend::wait_outside_kernels(void *stream, const WorkList &list) {
  if (!memop_waits_ || list.captured || list.watchdog_ns) return;
  for (const work::Item &it : list.waits) {
    if (it.flags & work::kCursor) continue;  // relative to a cursor: only the kernel can read it
    if (it.kind != work::kWait) continue;    // a line put may end it without the flag (kWaitLines)
    if (gpu_stream_wait_geq(static_cast<gpuStream_t>(stream), reinterpret_cast<const uint64_t *>(it.a), it.b) !=
        gpuSuccess) {
      (void)MPIX_GPU(GetLastError)();
      memop_waits_ = false;  // the runtime refuses them: the kernels wait, as they always can
      return;
    }
  }
}

// The list's windows in the live-window table: both are live while their calls enqueue (or
// capture) it. The hint makes an eager enqueue of the window the thread enqueued last lock-free.
DeviceBackend::ListKeys DeviceBackend::keys_of(const WorkList &list) const {
  thread_local uint32_t hint = 0;
  ListKeys k;
  k.window = table_.key_of(list.window_id, &hint);
  k.lead = table_.key_of(list.lead_window_id);
  k.taken = table_.reports_taken(k.window);
  return k;
}

// Splits the list into launches of at most kItemsPerLaunch items, preserving the order
// leading signals < waits < ops < signals; a list that fits (every Faces exchange does) is one
// launch. Trailing ops start a launch of their own (all blocks copy, after the trailing waits of
// the one before). Calls launch(params, blocks) for each, in order; stops at its first error.
template <class Launch>
int DeviceBackend::for_each_launch(const WorkList &list, const ListKeys &keys, uint16_t bits, Launch &&launch) {
  // MPI orders accumulates of one origin by default: a list holding several runs each launch as
  // one block that applies them in order (see the kernel); the launches of a list that needs
  // more than one run in stream order, which keeps them ordered across launches too.
  int accumulates = 0;
  for (const work::Item &it : list.ops)
    accumulates += it.kind == work::kAccumulate || it.kind == work::kAccumulatePairs;
  const bool ordered = accumulates > 1;
  const bool no_data = list.trailing_ops.empty() && std::all_of(list.ops.begin(), list.ops.end(), [](const work::Item &it) {
                         return it.kind == work::kPutLines || it.kind == work::kLineTag;
                       });
  // Trailing ops join the launch where the whole list fits one (a two-sided wait's receives merged
  // after its sends, list_merge.h): every block waits for the trailing waits and copies its share,
  // and the last to finish counts (the kernel's second ticket). Otherwise they start a launch of
  // their own. Never with line waits among the trailing waits (every block would copy the lines),
  // chunks (moved before the first waits) or accumulates (ordered in one block).
  const bool trailing_inline = !list.trailing_ops.empty() && [&] {
    const size_t items = list.leading_signals.size() + list.waits.size() + list.ops.size() + list.signals.size() +
                         list.trailing_waits.size() + list.trailing_ops.size();
    if (ordered || items > static_cast<size_t>(work::kItemsPerLaunch)) return false;
    for (const work::Item &it : list.trailing_waits)
      if (it.kind == work::kWaitLines) return false;
    for (const auto *part : {&list.ops, &list.trailing_ops})
      for (const work::Item &it : *part)
        if (work::is_chunks_head(it.kind) || it.kind == work::kAccumulate || it.kind == work::kAccumulatePairs)
          return false;
    return true;
  }();
  // Launch order (work_items.h): leading signals, waits, ops, stored signals, trailing waits,
  // trailing ops where they join the launch, counting signals. Scratch kept per thread: enqueue
  // is the hot path, and it allocates nothing once warm.
  thread_local std::vector<work::Item> stores, counts_signals;
  stores.clear();
  counts_signals.clear();
  for (const work::Item &it : list.signals) ((it.flags & work::kSignalAdd) ? counts_signals : stores).push_back(it);
  // Each part fills one count of the launch header (0 leading signals, 1 waits, 2 ops,
  // 3 signals, 4 trailing waits, 5 counting signals, 6 trailing ops); trailing ops that do not join
  // the launch fill the ops of a later one.
  struct Part {
    const std::vector<work::Item> *items;
    int slot;
  };
  Part parts[7] = {{&list.leading_signals, 0}, {&list.waits, 1}, {&list.ops, 2}, {&stores, 3},
                   {&list.trailing_waits, 4}, {&counts_signals, 5}};
  size_t nparts = 6, second_phase = nparts;
  if (trailing_inline) {
    parts[5] = {&list.trailing_ops, 6};
    parts[6] = {&counts_signals, 5};
    nparts = second_phase = 7;
  } else if (!list.trailing_ops.empty()) {
    parts[5] = {&list.trailing_ops, 2};
    parts[6] = {&counts_signals, 5};
    nparts = 7;
    second_phase = 5;
  }
  size_t part = 0, index = 0;
  while (part < nparts) {
    work::LaunchParams p;
    std::memset(&p.h, 0, sizeof p.h);
    p.h.window_id = list.window_id;
    p.h.lead_window_id = list.lead_window_id;
    p.h.watchdog_ns = list.watchdog_ns;
    p.h.mailbox_addr = reinterpret_cast<uint64_t>(mailbox_);
    p.h.table_addr = reinterpret_cast<uint64_t>(keys_);
    p.h.window_key = keys.window;
    p.h.lead_key = keys.lead;
    p.h.taken = keys.taken;
    p.h.trace_addr = reinterpret_cast<uint64_t>(trace_);
    p.h.skip_addr = list.skip_word;
    uint16_t *counts[7] = {&p.h.nlead, &p.h.nwait, &p.h.ncopy, &p.h.nsignal, &p.h.ntrail, &p.h.ncount, &p.h.ntrailop};
    size_t n = 0;
    uint64_t bytes = 0, runs = 0;
    bool chunked = false;
    uint32_t lanes = 1;  // of the launch's long messages (epoch_kernel.cu, run_chunks)
    const bool after_trailing_waits = part >= second_phase;
    for (; part < nparts; ++part, index = 0) {
      if (part == second_phase && !after_trailing_waits) break;  // trailing ops: a launch of their own
      const auto &v = *parts[part].items;
      const int slot = parts[part].slot;
      for (; index < v.size() && n < work::kItemsPerLaunch; ++index, ++n) {
        // An item and its companion (a pairs list, a line tag or area) share a launch.
        if (work::has_companion(v[index].kind) && n + 1 == work::kItemsPerLaunch) break;
        p.items[n] = v[index];
        // Data moved sizes the grid (a kPairList's `b` counts runs, its head has the bytes).
        const uint8_t kind = v[index].kind;
        const bool data = slot == 2 || slot == 6;  // ops, trailing ops: both spread over the grid
        if (data && kind != work::kStore2 && !work::is_companion(kind) && !work::is_chunks_head(kind))
          bytes += v[index].bytes;
        // A message that may move in chunks: a block per lane moves them as its peer allows.
        if (work::is_chunks_head(kind)) {
          chunked = true;
          if (index + 1 < v.size()) lanes = std::max<uint32_t>(lanes, v[index + 1].dtype);
        }
        if (kind == work::kPairList) runs += v[index].b;
        ++*counts[slot];
      }
      if (index < v.size()) break;  // this launch is full; the rest goes in the next
    }
    if (n == 0) {
      if (part < nparts) continue;  // an empty first phase
      break;
    }
    // Trailing ops are copies, never ordered accumulates; a timed-out trailing wait skips them.
    const bool one_block = ordered && !after_trailing_waits;
    p.h.bits = bits | (one_block ? work::kOrdered : 0) | (after_trailing_waits ? work::kSkipIfWatchdogFired : 0) |
               (list.captured ? work::kCheckAlive : 0) | (no_data ? work::kNoData : 0) | (chunked ? work::kChunked : 0) |
               (list.counts_unordered ? work::kCountsUnordered : 0);
    // Derived-datatype lists of many short runs are bound by their latency, not by bytes: a
    // block per pairs_per_block_ runs. Not per thread the runs take: every thread of a launch
    // walks every item, so blocks beyond the work cost instructions (doc/guide/datatypes.md).
    const uint64_t want = std::max({bytes / bytes_per_block_, runs / pairs_per_block_,
                                    std::min<uint64_t>(spread_blocks_, bytes / kSpreadBlockBytes)});
    int blocks = one_block ? 1 : static_cast<int>(std::min<uint64_t>(max_blocks_, std::max<uint64_t>(1, want)));
    // A block per lane, within the GPU's share of this rank (a block takes several lanes in turn).
    if (chunked) blocks = std::max(blocks, std::min(max_blocks_, static_cast<int>(lanes)));
    // The last of the blocks resets its ticket, so a replay of a captured launch finds it at 0.
    // Trailing ops take a second ticket, the word after the first.
    if (blocks > 1 && p.h.nsignal + p.h.ntrail + p.h.ntrailop + p.h.ncount > 0) {
      const uint32_t words = p.h.ntrailop ? 2 : 1;
      const uint32_t slot = next_ticket_.fetch_add(words) % (kTicketSlots - words + 1);
      p.h.ticket_addr = reinterpret_cast<uint64_t>(tickets_ + slot);
      p.h.ticket_expect = static_cast<uint32_t>(blocks);
    }
    if (int st = launch(p, blocks)) return st;
  }
  return kOk;
}

// `user_stream`: counts toward stream_ops_enqueued() (host-driven work on the internal stream does
// not, nor does it check or mark faults: its caller reports a timeout at once, and may retry).
int DeviceBackend::launch_all(void *stream, const WorkList &list, bool user_stream, uint16_t bits) {
  return for_each_launch(list, user_stream ? keys_of(list) : ListKeys{}, bits, [&](const work::LaunchParams &p, int blocks) {
    int err = mpix_launch_epoch_kernel(p, blocks, kThreadsPerBlock, stream, user_stream && launch_overlap());
    if (err != 0)
      return fail(kErrRuntime, std::string("epoch kernel launch: ") +
                                   MPIX_GPU(GetErrorString)(static_cast<gpuError_t>(err)));
    if (user_stream) ++launches_;
    return static_cast<int>(kOk);
  });
}

// The parameters and grid of `list` where it goes out as exactly one launch; false where it takes
// more (merging under capture needs one).
bool DeviceBackend::one_launch(const WorkList &list, work::LaunchParams *params, int *blocks) {
  int launches = 0;
  (void)for_each_launch(list, keys_of(list), 0, [&](const work::LaunchParams &p, int b) {
    if (++launches == 1) {
      *params = p;
      *blocks = b;
    }
    return static_cast<int>(kOk);
  });
  return launches == 1;
}

}  // namespace mpix::gpu
