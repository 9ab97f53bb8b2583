// Staged inter-node transfers: windows whose memory the network cannot reach (device memory, and
// no FI_HMEM registration) are reached from other nodes through a host mirror (see RemoteState
// and work::StagedRanges).
//   puts         land in the target's mirror at their window offsets; the origin describes their
//                ranges, and the target's wait copies exactly those into the window.
//   gets         read the mirror into the origin's staging memory, and the origin's complete copies
//                them into the origin buffer once the network is done.
//   accumulates  the network's atomics combine the origin's staged operands into the mirror, and
//                the target's wait copies the ranges into the window like puts.
// Gets and accumulates need the mirror to hold the window's data: a target copies its window
// into the mirror at every post when it asks for this (info key mpix_st_staged_get_accumulate,
// or MPIX_ST_STAGED_GET_ACCUMULATE=1 for every window), and they are refused otherwise. Such a
// target then takes accumulates from every origin through the network, node-local ones too
// (device atomics and the network's atomics on the mirror are not atomic together), so every
// origin signals its completes through the network.
#pragma once
#include <mpi.h>

#include <vector>

#include "remote_epochs.h"
#include "result.h"
#include "window.h"

namespace mpix::core::staged {

// MPIX_ST_OFI_STAGING=1|0 (default: staged on GPU backends, direct on the host backend).
bool enabled();

// Whether a window created with `info` asks to mirror its data at each post (see above).
bool mirror_requested(MPI_Info info);

// A staged window's landing area, allocated and registered before the window's exchange:
// reg->data covers [mirror | range blocks], reg->flags the flag slots after them.
Result allocate_landing(const Window &w, remote::Registration *reg);
// Device view of the flag slots of a landing area.
uint64_t *net_flags(const Window &w, const gpu::HostMapped &landing);

// Refuses what staging cannot do, before an operation of `pieces` contiguous pieces joins the
// epoch.
Result check(const Window &w, const RemoteOp &op, uint64_t pieces);

// Target, at post: copies the window into the mirror (a target that mirrors, with origins).
void mirror_window(const Window &w, const std::vector<int> &origins, gpu::WorkList &list);

// Origin, at complete: points the epoch's operations at staging memory in `buffer`. Copies of put
// and accumulate data and the range blocks go to list.ops (before the doorbell), a put of each
// target's range block to `ops`, and the copies of gotten data to list.trailing_ops.
Result stage(Window &w, StagingBuffer &buffer, std::vector<RemoteOp> &ops, gpu::WorkList &list);

// Target, at wait: copies what `origins` staged into the window, then clears their blocks.
void apply(const Window &w, const std::vector<int> &origins, gpu::WorkList &list);

// Frees a window's staging buffers (deregistered first).
void release_staging(RemoteState &s);

}  // namespace mpix::core::staged
