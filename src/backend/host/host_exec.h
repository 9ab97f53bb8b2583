// Executes a work list on the calling thread with the semantics of the merged epoch kernel.
#pragma once
#include <atomic>

#include "backend/backend.h"
#include "kernels/coll/args.h"
#include "kernels/launch_trace.h"

namespace mpix::gpu::host_exec {

// A fault word a list's (or collective call's) waits read while they have not passed
// (work::fault_skips): once it says an earlier wait of the window (or communicator) timed out,
// they end at once, and `ended` says so (the report then has after_fault).
struct FaultWatch {
  const uint64_t *fault = nullptr;  // read through std::atomic_ref
  uint32_t taken = 0;               // the reports taken when the work was enqueued
  bool captured = false;            // a replay of captured work
  bool ended = false;
  bool skips() const {
    return fault && work::fault_skips(std::atomic_ref<uint64_t>(*const_cast<uint64_t *>(fault)).load(
                                          std::memory_order_acquire),
                                      taken, captured);
  }
};

// Returns kOk, kErrTimeout (the watchdog fired, or `watch` ended a wait; *report says where) or
// kErrRuntime (a cross-memory-attach copy failed; *why says why). `trace`: MPIX_ST_TRACE's log,
// stamped as the kernel does (kernels/launch_trace.h); null when off.
int run(const WorkList &list, WatchdogReport *report, std::string *why, work::TraceLog *trace = nullptr,
        FaultWatch *watch = nullptr);

// Waits until *flag >= want, spinning then yielding then sleeping; false when watchdog_ns (if not
// 0) passed first, or `watch` says to end it, with the last value seen in *seen.
bool wait_at_least(const uint64_t *flag, uint64_t want, uint64_t watchdog_ns, uint64_t *seen,
                   FaultWatch *watch = nullptr);

// The pause between two polls of a wait that has polled `spin` times (spin, yield, then sleep),
// and the clock the watchdog reads.
void pause_after(unsigned spin);
uint64_t clock_ns();

// Polls ready() until it returns true (pausing as pause_after says); false when watchdog_ns (if
// not 0) passed first, or once `watch` (if given) says to end the wait (its `ended` is then set).
// The watchdog compares elapsed nanoseconds with watchdog_ns, never a deadline, so no value of it
// overflows.
template <class Ready>
bool wait_until(Ready &&ready, uint64_t watchdog_ns, FaultWatch *watch = nullptr) {
  const uint64_t start = clock_ns();
  for (unsigned spin = 0;; ++spin) {
    if (ready()) return true;
    if (spin >= 64) {
      if (watch && watch->skips()) {
        watch->ended = true;
        return false;
      }
      if (watchdog_ns && clock_ns() - start > watchdog_ns) return false;
    }
    pause_after(spin);
  }
}

// Runs one collective call's schedule (kernels/coll/run_schedule.h); kOk or kErrTimeout (`watch`,
// if given, as for run).
int run_collective(const coll::Args &args, WatchdogReport *report, FaultWatch *watch = nullptr);

}  // namespace mpix::gpu::host_exec
