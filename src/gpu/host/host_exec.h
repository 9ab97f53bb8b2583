// Executes a work list on the calling thread with the semantics of the merged epoch kernel.
#pragma once
#include "../../../kernels/coll_args.h"
#include "../backend.h"

namespace mpix::gpu::host_exec {

// Returns kOk, kErrTimeout (the watchdog fired; *report says where) or kErrRuntime (a
// cross-memory-attach copy failed; *why says why).
int run(const WorkList &list, WatchdogReport *report, std::string *why);

// Waits until *flag >= want, spinning then yielding then sleeping; false when watchdog_ns (if not
// 0) passed first, with the last value seen in *seen.
bool wait_at_least(const uint64_t *flag, uint64_t want, uint64_t watchdog_ns, uint64_t *seen);

// Runs one collective call's schedule (kernels/coll_schedules.h); kOk or kErrTimeout.
int run_collective(const coll::Args &args, WatchdogReport *report);

}  // namespace mpix::gpu::host_exec
