// Peers a watchdog report found dead (a process on this node that no longer runs). Once the
// program has taken such a report, every later epoch call on a window that names the peer fails at
// once with that news instead of waiting out the watchdog again, so a job whose peer died ends in
// one watchdog period per window with work queued toward it, not one per epoch it goes on making.
#pragma once
#include <string>
#include <vector>

#include "window.h"

namespace mpix::core {

// Records that `peer` of `w` is gone (peer_state found its process dead); returns how
// gone_peer_among names it.
std::string note_gone_peer(const Window &w, int peer);
// The first gone peer among window ranks `peers` of `w`, as "window rank r (world rank q, pid p) is
// no longer running"; "" when none is (the common case costs one load).
std::string gone_peer_among(const Window &w, const std::vector<int> &peers);

}  // namespace mpix::core
