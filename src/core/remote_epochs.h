// The inter-node side of epochs (DESIGN.md §4): peers on other nodes are reached with triggered
// operations posted at enqueue time and fired when the stream rings a doorbell.
//   post      a triggered atomic add into each remote origin's post slot, fired by the post doorbell
//   complete  triggered puts fired by the complete doorbell, and per remote target an atomic add
//             into its complete slot chained to the puts' completion counter
//   wait      nothing here: the waits on the flag slots are the same as for node-local peers
#pragma once
#include <vector>

#include "../gpu/backend.h"
#include "result.h"
#include "window.h"

namespace mpix::core::remote {

// Window creation: registers the window and flag memory when the transport is up. The handles
// travel in the window's exchange; attach() then keeps them when some peer is remote.
struct Exchange {
  ofi::RemoteRegion data, flags;
};
Result register_window(Window &w, ofi::Region *data, ofi::Region *flags, Exchange *mine);
Result attach(Window &w, ofi::Region data, ofi::Region flags, const std::vector<Exchange> &all);
void release_registrations(ofi::Region data, ofi::Region flags);
// Window destruction: waits for the window's triggered operations, then releases them.
Result detach(Window &w);

// Stream mode: posts the operations and adds the doorbell store to `list`.
Result post(Window &w, const std::vector<int> &remote_origins, gpu::WorkList &list);
Result complete(Window &w, const std::vector<int> &remote_targets, gpu::WorkList &list);
// Host mode: moves the epoch's remote puts now and waits until they are complete.
Result complete_now(Window &w);

}  // namespace mpix::core::remote
