// The inter-node side of epochs (doc/design.md, The inter-node path): peers on other nodes are
// reached with triggered operations posted at enqueue time and fired when the stream rings a
// doorbell.
//   post      a triggered atomic add into each remote origin's post slot, fired by the post doorbell
//   complete  triggered puts, gets and accumulates fired by the complete doorbell, and per target
//             an atomic add into its complete slot chained to the operations' completion counter
//   wait      nothing here: the waits on the flag slots are the same as for node-local peers
// The doorbells' trigger counters are cumulative: a list the watchdog cut short sets the window's
// skip word instead of ringing, and no later ring of the window is forwarded (remote_epochs.cpp,
// add_doorbell_ring), since it would fire the skipped epoch's operations with its own.
#pragma once
#include <string>
#include <vector>

#include "backend/backend.h"
#include "result.h"
#include "window.h"

namespace mpix::core::remote {

// Window creation: registers the window's memory and flags, or for a staged window (see
// staged_transfers.h) its landing area, when the transport is up. The handles travel in the window's
// exchange; attach() then keeps them when some peer is remote.
struct Exchange {
  ofi::RemoteRegion data, flags;
  uint64_t mirrors = 0;  // 1: a staged window that copies its data into the mirror at each post
};
struct Registration {
  ofi::Region data, flags;
  gpu::HostMapped landing;  // staged windows only
};
Result register_window(Window &w, Registration *reg, Exchange *mine);
Result attach(Window &w, const Registration &reg, const std::vector<Exchange> &all);
void release_registrations(Registration *reg);
// Window destruction: quiesce() waits for the window's triggered operations; detach(), once no
// peer targets the window any more, releases them and the registrations.
Result quiesce(Window &w);
Result detach(Window &w);
// This rank's side of the window's network path, for reports: doorbells rung and forwarded, and
// operations and signals completed of those posted. Empty for a window without one.
std::string network_state(Window &w);

// The contiguous pieces of one operation, as (dst, src, bytes) offsets from its destination and
// source addresses (a derived datatype's pair list; one piece for predefined types), and the
// bytes [origin_lo, origin_hi) around the origin address that they touch.
struct Pieces {
  const work::Pair *pairs;
  uint64_t count;
  int64_t origin_lo, origin_hi;
};
// Appends `op` (origin address, target offset, kind, element type) to the open access epoch as
// one RemoteOp per piece, after checking what the network, staging and the triggered-operation
// budget can take. Errors start with `who` (e.g. "MPI_Put").
Result record(Window &w, const RemoteOp &op, const Pieces &pieces, const std::string &who);

// Triggered operations `op` takes (it is split where it exceeds what one carries); 0 where the
// provider cannot do it (an accumulate of a type or operation it lacks).
uint64_t fabric_operations(const RemoteOp &op);
// Triggered operations `ops` take, pieces that join their predecessor sharing operations.
uint64_t fabric_operations(const std::vector<RemoteOp> &ops);

// Exposure epochs of windows that mirror (staged_transfers.h): the window copied into its host
// mirror before the post signals (stream mode: added to the post's list; host mode: run now).
void mirror(Window &w, const std::vector<int> &origins, gpu::WorkList &list);
Result mirror_now(Window &w, const std::vector<int> &origins);
// Stream mode: posts the operations and adds the doorbell store to `list`.
Result post(Window &w, const std::vector<int> &remote_origins, gpu::WorkList &list);
Result complete(Window &w, const std::vector<int> &remote_targets, gpu::WorkList &list);
// Host mode: runs the epoch's fabric operations now and waits until they are complete.
Result complete_now(Window &w);
// Exposure epochs of staged windows: what origins on other nodes put, copied into the window
// after their complete signals (stream mode: added to the wait's list; host mode: run now).
void wait(Window &w, const std::vector<int> &origins, gpu::WorkList &list);
Result wait_now(Window &w, const std::vector<int> &origins);

}  // namespace mpix::core::remote
