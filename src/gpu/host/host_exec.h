// Executes a work list on the calling thread with the semantics of the merged epoch kernel.
#pragma once
#include "../backend.h"

namespace mpix::gpu::host_exec {

// Returns kOk, kErrTimeout (the watchdog fired; *report says where) or kErrRuntime (a
// cross-memory-attach copy failed; *why says why).
int run(const WorkList &list, WatchdogReport *report, std::string *why);

}  // namespace mpix::gpu::host_exec
