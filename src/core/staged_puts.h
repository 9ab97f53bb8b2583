// Staged inter-node puts: windows whose memory the network cannot reach (device memory, and no
// FI_HMEM registration) receive puts from other nodes through a host mirror (see RemoteState and
// work::StagedRanges). Puts only: a get would need the target's data in the mirror before the
// origin reads it, and an accumulate the target's current values; both are refused here.
#pragma once
#include <vector>

#include "remote_epochs.h"
#include "result.h"
#include "window.h"

namespace mpix::core::staged {

// MPIX_ST_OFI_STAGING=1|0 (default: staged on GPU backends, direct on the host backend).
bool enabled();

// A staged window's landing area, allocated and registered before the window's exchange:
// reg->data covers [mirror | range blocks], reg->flags the flag slots after them.
Result allocate_landing(const Window &w, remote::Registration *reg);
// Device view of the flag slots of a landing area.
uint64_t *net_flags(const Window &w, const gpu::HostMapped &landing);

// Refuses what staging cannot do, before an operation joins the epoch.
Result check(const Window &w, const RemoteOp &op);

// Origin: points the epoch's puts at copies in `buffer`, appends the copies and the range blocks
// to `items` (they run before the doorbell), and a put of each target's range block to `ops`.
Result stage(Window &w, StagingBuffer &buffer, std::vector<RemoteOp> &ops, std::vector<work::Item> &items);

// Target: copies what `origins` (on other nodes) staged into the window, then clears their blocks.
void apply(const Window &w, const std::vector<int> &origins, gpu::WorkList &list);

// Frees a window's staging buffers (deregistered first).
void release_staging(RemoteState &s);

}  // namespace mpix::core::staged
