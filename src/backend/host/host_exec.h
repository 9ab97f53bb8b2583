// Executes a work list on the calling thread with the semantics of the merged epoch kernel.
#pragma once
#include "backend/backend.h"
#include "kernels/coll/args.h"
#include "kernels/launch_trace.h"

namespace mpix::gpu::host_exec {

// Returns kOk, kErrTimeout (the watchdog fired; *report says where) or kErrRuntime (a
// cross-memory-attach copy failed; *why says why). `trace`: MPIX_ST_TRACE's log, stamped as the
// kernel does (kernels/launch_trace.h); null when off.
int run(const WorkList &list, WatchdogReport *report, std::string *why, work::TraceLog *trace = nullptr);

// Waits until *flag >= want, spinning then yielding then sleeping; false when watchdog_ns (if not
// 0) passed first, with the last value seen in *seen.
bool wait_at_least(const uint64_t *flag, uint64_t want, uint64_t watchdog_ns, uint64_t *seen);

// The pause between two polls of a wait that has polled `spin` times (spin, yield, then sleep),
// and the clock the watchdog reads.
void pause_after(unsigned spin);
uint64_t clock_ns();

// Polls ready() until it returns true (pausing as pause_after says); false when watchdog_ns (if
// not 0) passed first.
template <class Ready>
bool wait_until(Ready &&ready, uint64_t watchdog_ns) {
  const uint64_t start = clock_ns();
  for (unsigned spin = 0;; ++spin) {
    if (ready()) return true;
    if (spin >= 64 && watchdog_ns && clock_ns() - start > watchdog_ns) return false;
    pause_after(spin);
  }
}

// Runs one collective call's schedule (kernels/coll/run_schedule.h); kOk or kErrTimeout.
int run_collective(const coll::Args &args, WatchdogReport *report);

}  // namespace mpix::gpu::host_exec
