// The fault monitor (doc/design.md, Faults): while a watchdog is set, a thread looks every few
// milliseconds at the watchdog reports the program has not taken yet. A report whose wait named a
// node-local process that has ended makes that process known dead (gone_peers.h) at once, so the
// epochs queued on every other window toward it end at once, while the program is still blocked
// in a stream synchronisation, instead of each window waiting out its own watchdog. The monitor
// takes no report: the program still gets each one from its call or synchronisation.
#pragma once

namespace mpix::core {

// Starts the thread where a watchdog is set (no-op otherwise, or when it runs already).
void start_fault_monitor();
// Stops and joins it (MPI_Finalize, before the backend and the windows go).
void stop_fault_monitor();

}  // namespace mpix::core
