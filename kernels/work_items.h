// The stream work format shared by the core, the host backend and the device kernels.
// An epoch operation (post, complete, wait) becomes one ordered list of items:
//   waits first, then data operations, then signals.
// Executing the items of one list in that order is the whole epoch protocol of doc/design.md, The
// epoch protocol. Plain data only: the list travels to the GPU by value as kernel parameters.
#pragma once
#include <cstddef>
#include <cstdint>

// Helpers used by host code and by the kernels alike.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define MPIX_HOST_DEVICE __host__ __device__
#define MPIX_NOINLINE __noinline__
// The GNU attribute, which nvcc and hipcc both take: HIP defines __forceinline__ only in its
// runtime headers, which not every includer of this file has read first.
#define MPIX_FORCEINLINE __attribute__((always_inline)) inline
#else
#define MPIX_HOST_DEVICE
#define MPIX_NOINLINE
#define MPIX_FORCEINLINE inline
#endif

namespace mpix::work {

enum ItemKind : uint8_t {
  kWait = 1,        // spin until *flag >= value (acquire, system scope)
  kCopy = 2,        // bytes from src to dst
  kAccumulate = 3,  // dst[i] = op(dst[i], src[i]) per element, atomic per element
  kSignal = 4,      // *flag = value (system scope, after all data of the list: a release; see kNoData)
  // Host backend only: a spin lock around an accumulate into memory peers reach by copying.
  kLockAcquire = 5,  // a: lock word address
  kLockRelease = 6,
  // Staged inter-node puts (see StagedRanges below).
  kStore2 = 7,       // before the signals: the words at a and a + 8 become b and `bytes` (plain stores)
  kCopyStaged = 8,   // copies the ranges origin `peer` described from the mirror at b into the window at
                     // a; `bytes` is the window size (the mirror's too: bounds and grid size)
  // Derived datatypes (see Pair and Run below). Each is followed by one kPairList item: together they
  // take two slots, and a launch never separates them.
  kCopyPairs = 9,        // for each piece p: p.bytes bytes from b + p.src to a + p.dst; `bytes`: their sum
  kAccumulatePairs = 10, // the same, element-wise op(dst, src) as kAccumulate (dtype, op)
  kPairList = 11,        // the pieces of the item before: a = address of Run[b] the stream can read;
                         // its first `bytes` runs are large pieces (kPairLarge), the rest small runs,
                         // each taken by a group of 1 << `peer` threads (run_group_shift)
  // Line puts (see LineArea below). Each is followed by its companion item, as a pairs item is.
  kPutLines = 12,   // ops: `bytes` (<= kLinePutMaxBytes) from b as lines into the target's line area at a
  kLineTag = 13,    // its companion: a = the target window offset; the value (item_value) is the epoch
                    // the lines are tagged with (the complete signal they stand in for)
  kWaitLines = 14,  // a wait (as kWait) that a line put from the origin also ends: then the lines'
                    // data is copied into the window before the wait counts as passed
  kLineArea = 15,   // its companion: a = this rank's line area for that origin, b = the window base,
                    // bytes = the window size (line offsets are checked against it)
  // Two-sided messages: a copy whose length the stream reads. n = the 64-bit word at b + peer (a
  // signed byte offset; written before the signal the list waited for); n bytes go from b to a
  // when n <= bytes (the receive buffer's size, which also sizes the grid), nothing otherwise.
  kCopyCounted = 16,
  // Two-sided messages larger than a mailbox (kernels/message_chunks.h): the data of one message
  // travels through its mailbox in chunks, each followed by its kChunkWords item.
  kChunksOut = 17,   // a send's chunks: a = source, b = the mailbox's data, bytes = the length
  kChunksIn = 18,    // a receive's (of a buffer longer than the mailbox): a = destination, b = the mailbox's data,
                     // bytes = the buffer's size
  kChunkWords = 19,  // its companion: a = the word waited on, b = the peer's word stored (lane 0's; with
                     // kRemoteRings the message's doorbell), bytes = the message's round (kCursor:
                     // the cursor's address), peer = the chunk size, dtype = the lanes a chunk is cut into
};
inline constexpr bool has_companion(uint8_t kind) {
  return kind == kCopyPairs || kind == kAccumulatePairs || kind == kPutLines || kind == kWaitLines ||
         kind == kChunksOut || kind == kChunksIn;
}
inline constexpr bool is_companion(uint8_t kind) {
  return kind == kPairList || kind == kLineTag || kind == kLineArea || kind == kChunkWords;
}
// A list holding a chunks item runs a block per lane at least, and moves chunks before its waits
// (LaunchBits::kChunked): every message of it then makes progress on its own.
inline constexpr bool is_chunks_head(uint8_t kind) { return kind == kChunksOut || kind == kChunksIn; }

// Line puts: a small put to a node-local target travels as lines of the collectives' low-latency
// protocol (coll/lines.h: each 8 payload bytes in two 64-bit words that carry a tag), into an area
// the target keeps for each origin beside its flags, instead of into its window. The lines are
// their own signal: the origin stores no complete flag for that target and needs no system fence
// before it. The target's wait for that origin passes on the complete flag (an epoch that put
// directly) or on a header line tagged with the epoch it waits for (then it copies the lines'
// data into its window itself). Line 0 carries the window offset and the length, data lines
// follow (line_puts.h). One area per origin suffices: the origin writes epoch e + 1 only
// after the target's post e + 1, which follows its wait e on its stream.
constexpr uint64_t kLinePutMaxBytes = 256;
constexpr uint64_t kLineAreaBytes = (1 + kLinePutMaxBytes / 8) * 16 + 48;  // 576: whole 64-byte lines
// A word after the lines, written only by the target's stream: 1 while the last line put it took
// from that origin was one data line. The target then polls that line with the header (a put of
// 8 bytes needs no load after its header arrived), and only then: a third load per polling round
// delays seeing a directly made put's flag (Faces 2x1x1 on 2 H200s: 11.15 against 11.04 us).
constexpr uint64_t kLineHintWord = (1 + kLinePutMaxBytes / 8) * 2;
static_assert((kLineHintWord + 1) * 8 <= kLineAreaBytes, "the hint lies inside the area");
constexpr uint64_t kLineOffsetBits = 48;

// One contiguous piece of a derived-datatype operation: offsets from the item's dst and src
// bases (negative where a type's lower bound is). Lists are built once per (origin type and
// count, target type and count) and live as long as the process (src/core/pair_lists.h).
struct Pair {
  int64_t dst, src;
  uint64_t bytes;
};
// Pieces as the stream walks them: `count` pieces of `bytes` each, the first at (dst, src), each
// next one dst_stride and src_stride further (src/core/piece_runs.h). A group of threads takes a
// run and computes each piece's addresses, instead of every piece costing a 24-byte list entry
// (for 8 bytes of data in a face of a point-major field). Runs are short, at most kRunMaxPieces
// pieces and kRunMaxBytes, so that a list's runs spread over the grid as its pieces did: one run
// of a whole strided put would leave it to one group.
struct Run {
  int64_t dst, src;
  uint32_t bytes, count;
  int32_t dst_stride, src_stride;
};
static_assert(sizeof(Run) == 32, "Run is read by the kernels");
constexpr uint32_t kRunMaxPieces = 32;                  // a group's threads, one piece each
constexpr uint64_t kRunMaxBytes = 512;                  // a group's threads, one 16-byte unit each
constexpr uint64_t kRunPieceCut = uint64_t(1) << 30;    // pieces of 2 GiB and more are cut to this
// Threads of a group that takes a run, as a power of two, by the list's average small run: one
// thread for runs of one or two elements, so few threads idle; 8; or a warp. The kPairList item
// carries the exponent (its `peer`), so the walker's group arithmetic is shifts.
MPIX_HOST_DEVICE inline uint32_t run_group_shift(uint64_t small_bytes, uint64_t small_runs) {
  const uint64_t avg = small_runs ? small_bytes / small_runs : 0;
  return avg <= 16 ? 0 : avg <= 128 ? 3 : 5;
}
// Piece `k` of run `r` (k < r.count).
MPIX_HOST_DEVICE inline Pair piece_of(const Run &r, uint64_t k) {
  return {r.dst + static_cast<int64_t>(k) * r.dst_stride, r.src + static_cast<int64_t>(k) * r.src_stride, r.bytes};
}
// Pieces of at least this many bytes are moved by the whole grid, smaller ones by groups of threads;
// lists put the large pieces first, each a run of its own.
constexpr uint64_t kPairLarge = 8192;
inline constexpr bool is_pairs_head(uint8_t kind) { return kind == kCopyPairs || kind == kAccumulatePairs; }

// Staged inter-node puts. Where the network cannot reach window memory (device memory without
// FI_HMEM), puts land in a host "mirror" of the target window at their window offsets, and each
// origin describes its put ranges in its own block after the mirror. The target's wait copies
// those ranges into the window and clears the block, so a later epoch never replays them.
struct StagedRange {
  uint64_t offset, bytes;
};
constexpr int kStagedRangesMax = 64;
struct StagedRanges {
  uint64_t count;
  uint64_t pad;
  StagedRange range[kStagedRangesMax];
};
// Staged pieces (the mirror, the range blocks after it, data in staging buffers) start on this.
constexpr uint64_t kStagedAlign = 64;
inline constexpr uint64_t staged_align(uint64_t bytes) {
  return (bytes + kStagedAlign - 1) / kStagedAlign * kStagedAlign;
}
inline constexpr uint64_t staged_mirror_bytes(uint64_t window_bytes) { return staged_align(window_bytes); }
// Where origin `origin`'s block lies, given the mirror's start and the window size.
inline constexpr uint64_t staged_ranges_at(uint64_t mirror, uint64_t window_bytes, int origin) {
  return mirror + staged_mirror_bytes(window_bytes) + static_cast<uint64_t>(origin) * sizeof(StagedRanges);
}

enum Dtype : uint8_t { kInt32 = 0, kInt64 = 1, kFloat = 2, kDouble = 3 };
enum AccOp : uint8_t { kSum = 0, kMax = 1, kMin = 2, kReplace = 3 };

// What a wait waits for: named in watchdog reports.
enum WaitReason : uint8_t { kWaitPost = 0, kWaitComplete = 1, kFreedWindow = 2, kWaitCollective = 3 };

enum ItemFlags : uint8_t {
  kDstRemoteCma = 1,  // host backend: dst is an address in process `peer` (cross-memory attach)
  kSrcRemoteCma = 2,  // host backend: src is an address in process `peer`
  kSignalAdd = 4,     // signal: atomically add value instead of storing it (order-free counters)
  // Wait or stored signal whose value is relative to an epoch cursor: the value used is
  // b + *cursor, with the cursor's address in `bytes` (a word of this process's memory). The
  // list's counting signals advance the cursors it read, after everything else, so every block
  // and every launch of the list sees the same cursor, and each run (eager, or a replay of a
  // captured graph) is the next epoch.
  kCursor = 8,
  // Signal: a network doorbell's ring stored to the NIC itself (an MMIO adder), which no agent
  // forwards: it is not stored once the list's skip word is set (LaunchHeader::skip_addr), as the
  // agent forwards no ring of the window then (ring_stopped).
  kStopsOnSkip = 16,
  // Pairs copy (kCopyPairs) of a two-sided receive with a derived datatype: the 64-bit word at
  // b + peer (a signed byte offset, as kCopyCounted's) is the message's length; the pieces take
  // its bytes in type-map order (a shorter message fills those it reaches), none where it is
  // longer than `bytes` (the whole type).
  kCountedPieces = 32,
  // Counting signal a peer waits for (a two-sided receive's "free": the sender may reuse the
  // mailbox): a list holding one takes no later list under capture (src/backend/list_merge.h),
  // whose waits would run before it.
  kPeerCount = 64,
  // Chunks words (kChunkWords) of a message with a peer on another node (message_chunks.h, Between
  // nodes): handovers are rings of the message's own doorbell, not stores into the peer's words.
  kRemoteRings = 128,
};

struct Item {
  uint64_t a;      // wait/signal: flag address; copy/accumulate: dst address
  uint64_t b;      // wait/signal: value;        copy/accumulate: src address
  uint64_t bytes;  // copy/accumulate: length in bytes
  uint8_t kind;    // ItemKind
  uint8_t dtype;   // accumulate: Dtype; wait: WaitReason
  uint8_t op;      // accumulate: AccOp
  uint8_t flags;   // ItemFlags
  int32_t peer;    // wait: window rank waited on (diagnostics); CMA copies: the remote pid
};
static_assert(sizeof(Item) == 32, "Item is part of the kernel parameter layout");

// One kernel launch (or one host task). The largest fits the 4 KiB kernel-parameter limit of HIP
// and CUDA; smaller capacities exist because launch cost grows with the parameter block, and most
// epoch calls carry 2 to 4 items.
constexpr int kItemsPerLaunch = 120;
constexpr int kLaunchCapacities[] = {4, 16, 40, kItemsPerLaunch};

enum LaunchBits : uint16_t {
  kOrdered = 1,            // accumulates apply in list order (MPI's default accumulate ordering)
  kSkipIfWatchdogFired = 2,  // the rest of a list whose first launch may have timed out
  kCheckAlive = 4,           // captured launch: do nothing if its window was freed (window_key)
  // No launch of the list moves data (a post; a complete that put and got nothing, or put lines
  // only, which order themselves): its signals are relaxed stores, and no fence precedes them.
  // What precedes them on the stream ended at a kernel boundary, and the memory peers then reach
  // is coherent where those kernels' stores landed (this device's L2, or the network's target),
  // so a release would order nothing and cost a system fence.
  kNoData = 8,
  // The launch moves chunks of two-sided messages longer than a mailbox (message_chunks.h): a
  // block per lane, whose chunk loops run before the waits, each long receive waiting there for
  // its own message, so that no message of the list waits for another's.
  kChunked = 16,
  // The counting signals order none of the launch's data (WorkList::counts_unordered): no system
  // fence before them. A "free" count tells a peer its mailbox was read; every load of it fed a
  // store or a branch of its thread before the block's barrier, and neither issues before the
  // load's data arrived, so those loads are done before any count leaves (as a ring buffer's
  // consumer hands back space without a fence).
  kCountsUnordered = 32,
};

// Items of a launch, in order: leading signals (relaxed stores by block 0 before any wait: the
// signals of a post merged with the epoch calls after it, src/backend/list_merge.h), waits, ops
// (copies, accumulates, stores), signals (stores, the last block), trailing waits (that block,
// after its signals: e.g. the network's completion of what a signal rang, or a merged wait's
// flags), trailing ops (data the trailing waits release: the receives of a two-sided wait merged
// after its sends, src/backend/list_merge.h; every block waits and copies its share, through a
// second ticket), then counting signals (kSignalAdd: the list has run).
struct LaunchHeader {
  uint16_t nlead, nwait, ncopy, nsignal, ntrail, ncount;
  uint16_t bits;           // LaunchBits
  uint16_t ntrailop;       // trailing ops, after the trailing waits
  uint32_t window_id;      // diagnostics
  uint32_t ticket_expect;  // multi-block launches: ticket value the last block observes
  // A post of another window merged in front (src/backend/list_merge.h) signals into that window's
  // peers, so replays check it is alive too (lead_key); 0: none. Diagnostics, as window_id.
  uint32_t lead_window_id;
  uint32_t taken;          // the window's reports taken when the list was enqueued (fault_skips)
  uint64_t watchdog_ns;    // 0: wait forever
  uint64_t ticket_addr;    // multi-block launches: device counter shared by the blocks (two with trailing ops)
  uint64_t mailbox_addr;   // host-mapped WatchdogArea (its mailbox first, then the fault words)
  uint64_t table_addr;     // the live-window table (uint64_t keys[kWindowSlots])
  // The window's key in that table (window_slot: its entry); 0: none (host-driven work), and then
  // the list neither checks nor marks faults. lead_key: lead_window_id's key (kCheckAlive).
  uint64_t window_key, lead_key;
  uint64_t trace_addr;     // MPIX_ST_TRACE: the process's TraceLog (launch_trace.h); 0: off
  // A list that rings a network doorbell (src/core/remote_epochs.cpp): the host-mapped word it
  // sets when a wait the watchdog ended skips its signals, so that no later ring of the window is
  // forwarded to the trigger counter (it would fire the skipped operations). 0: none.
  uint64_t skip_addr;
};

// The live-window table, one per process and backend: the key of the live window each entry holds
// (0: none), in host memory or in device memory the kernels read (src/backend/window_table.h keeps
// the host's side). A window holds one entry from its creation to MPI_Win_free, and no other live
// window holds that entry meanwhile. Its key names the entry (window_slot) and the entry's
// generation, which grows each time the entry serves a new window, so a key is never given twice:
// a replayed launch whose window was freed finds another key (or 0) in the entry, however many
// windows came and went since, reports kFreedWindow and touches nothing. Window creation fails
// when every entry holds a live window.
constexpr uint32_t kWindowSlotBits = 16;
constexpr uint32_t kWindowSlots = 1u << kWindowSlotBits;
constexpr uint64_t kWindowGenerations = (uint64_t(1) << (64 - kWindowSlotBits)) - 1;  // 1 .. this
inline constexpr uint64_t window_key(uint64_t generation, uint32_t slot) {
  return generation << kWindowSlotBits | slot;
}
inline constexpr uint32_t window_slot(uint64_t key) { return static_cast<uint32_t>(key & (kWindowSlots - 1)); }
// Failing fast: each entry has a fault word (kFaultPending | reports taken, in its low 32 bits),
// marked pending when a stream wait of the entry's window times out, so that the window's lists
// queued behind it end their waits at once with the same report instead of each waiting the full
// watchdog for a peer that is gone. The host clears the mark when the program takes the report (a
// call on the window, a stream synchronisation), leaving the count of reports taken: lists
// enqueued before then (their `taken` lower) still end at once, lists enqueued after wait as
// usual. The words are host memory (device backends: host-mapped, after the mailbox, see
// WatchdogArea), so that the host reads and writes them without a stream operation.
constexpr uint64_t kFaultPending = uint64_t(1) << 63;
// Whether a list whose wait has not passed ends it at once: a report of its window is pending, or
// (lists enqueued eagerly) the program took one after the list was enqueued. A replay of a captured
// list was never enqueued by a call, so only a pending report ends its waits.
MPIX_HOST_DEVICE inline bool fault_skips(uint64_t fault, uint32_t taken, bool captured) {
  if (fault & kFaultPending) return true;
  return !captured && static_cast<int32_t>(static_cast<uint32_t>(fault) - taken) > 0;
}

// The value a wait expects or a stored signal carries (kCursor: relative to the cursor word).
MPIX_HOST_DEVICE inline uint64_t item_value(const Item &it) {
  return (it.flags & kCursor) ? it.b + *reinterpret_cast<const volatile uint64_t *>(it.bytes) : it.b;
}

// Whether a kStopsOnSkip ring must not be stored: an earlier list of the window skipped its own
// ring (the trigger counter is cumulative, so this one would fire the skipped epoch's operations).
// Set by earlier stream work only, so a plain load sees it.
MPIX_HOST_DEVICE inline bool ring_stopped(const Item &it, uint64_t skip_addr) {
  return (it.flags & kStopsOnSkip) && skip_addr && *reinterpret_cast<const volatile uint64_t *>(skip_addr) != 0;
}

template <int N>
struct LaunchParamsN {
  LaunchHeader h;
  Item items[N];
};
using LaunchParams = LaunchParamsN<kItemsPerLaunch>;
static_assert(sizeof(LaunchParams) <= 4000, "kernel parameters must stay under 4 KiB");

// Written once by the first wait that times out; read by the host.
struct WatchdogMailbox {
  uint32_t fired;  // 0 until a wait timed out
  uint32_t window_id;
  int32_t peer;
  uint32_t reason;  // WaitReason
  uint64_t expected;
  uint64_t observed;
};
// Communicators whose stream collectives have a fault word on a device backend (one each, given at
// a communicator's first collective, kept for the process's life); collectives of later ones wait
// out their own watchdog behind a timeout.
constexpr uint32_t kCommFaultWords = 4096;
// A device backend's host-mapped watchdog memory (LaunchHeader::mailbox_addr): the mailbox, the
// fault word of each live-window table entry, then those of communicators (coll::Args::fault).
struct WatchdogArea {
  WatchdogMailbox mailbox;
  uint64_t fault[kWindowSlots];
  uint64_t comm_fault[kCommFaultWords];
};
static_assert(offsetof(WatchdogArea, mailbox) == 0, "collective kernels read the mailbox at mailbox_addr");

// Element-wise accumulate operator, shared by host and device code.
template <typename T>
inline constexpr T apply_op(uint8_t op, T target, T origin) {
  switch (op) {
    case kSum: return target + origin;
    case kMax: return target > origin ? target : origin;
    case kMin: return target < origin ? target : origin;
    default: return origin;  // kReplace
  }
}

inline constexpr uint32_t dtype_size(uint8_t dtype) {
  return (dtype == kInt32 || dtype == kFloat) ? 4u : 8u;
}

}  // namespace mpix::work
