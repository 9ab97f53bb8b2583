// The stream work format shared by the core, the host backend and the device kernels.
// An epoch operation (post, complete, wait) becomes one ordered list of items:
//   waits first, then data operations, then signals.
// Executing the items of one list in that order is the whole epoch protocol of DESIGN.md §3.
// Plain data only: the list travels to the GPU by value as kernel parameters.
#pragma once
#include <cstdint>

namespace mpix::work {

enum ItemKind : uint8_t {
  kWait = 1,        // spin until *flag >= value (acquire, system scope)
  kCopy = 2,        // bytes from src to dst
  kAccumulate = 3,  // dst[i] = op(dst[i], src[i]) per element, atomic per element
  kSignal = 4,      // *flag = value (release, system scope), after all data of the list
  // Host backend only: a spin lock around an accumulate into memory peers reach by copying.
  kLockAcquire = 5,  // a: lock word address
  kLockRelease = 6,
};

enum Dtype : uint8_t { kInt32 = 0, kInt64 = 1, kFloat = 2, kDouble = 3 };
enum AccOp : uint8_t { kSum = 0, kMax = 1, kMin = 2, kReplace = 3 };

// What a wait waits for: named in watchdog reports.
enum WaitReason : uint8_t { kWaitPost = 0, kWaitComplete = 1 };

enum ItemFlags : uint8_t {
  kDstRemoteCma = 1,  // host backend: dst is an address in process `peer` (cross-memory attach)
  kSrcRemoteCma = 2,  // host backend: src is an address in process `peer`
  kSignalAdd = 4,     // signal: atomically add value instead of storing it (order-free counters)
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
};

struct LaunchHeader {
  uint16_t nwait, ncopy, nsignal;
  uint16_t bits;           // LaunchBits
  uint32_t window_id;      // diagnostics
  uint32_t ticket_expect;  // multi-block launches: ticket value the last block observes
  uint64_t watchdog_ns;    // 0: wait forever
  uint64_t ticket_addr;    // multi-block launches: device counter shared by the blocks
  uint64_t mailbox_addr;   // host-mapped WatchdogMailbox
};

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
