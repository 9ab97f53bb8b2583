// Peers a watchdog report found dead (a process on this node that no longer runs). Once the
// program has taken such a report, or the fault monitor (fault_monitor.h) saw it, every later epoch
// call on a window that names the peer fails at once with that news instead of waiting out the
// watchdog again, and the epochs already queued on other windows naming it end at once, so a job
// whose peer died ends in about one watchdog period, not one per window or per epoch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "window.h"

namespace mpix::core {

// Whether process `pid` of this node has ended (no such process, or a zombie).
bool process_gone(int pid);
// Records that `peer` of `w` is gone (peer_state found its process dead) and marks the fault word
// of every other live window whose group holds it; returns how gone_peer_among names it.
std::string note_gone_peer(const Window &w, int peer);
// The same for a process known by its world rank and pid (the fault monitor, which holds no window
// while it looks); true where it was not known dead before.
bool note_gone_process(int world_rank, int pid, uint32_t except_window_id);
// The first gone peer among window ranks `peers` of `w`, as "window rank r (world rank q, pid p) is
// no longer running"; "" when none is (the common case costs one load).
std::string gone_peer_among(const Window &w, const std::vector<int> &peers);

}  // namespace mpix::core
