// Built instead of internode.cpp, remote_epochs.cpp and staged_transfers.cpp where libfabric is not
// available (MPIX_ST_OFI=OFF, or none found). Windows whose peers are all on this node work as in
// any build: their epochs have no remote origins or targets, so the calls below have nothing to do.
// A window with a peer on another (virtual) node is refused at creation, naming that peer; epochs
// can then never reach one.
#include <string>

#include "internode.h"
#include "remote_epochs.h"
#include "staged_transfers.h"

namespace mpix::core {
namespace {

Result no_transport(const std::string &who) {
  return fail(MPI_ERR_OTHER, who + " is on another node (or virtual node, MPIX_ST_VNODE_SIZE), and peers on other "
                                   "nodes need the inter-node transport: this build of mpix-st has no libfabric "
                                   "(install libfabric-dev and rebuild with MPIX_ST_OFI=AUTO or ON)");
}

// Nothing may reach here with work for another node: creation refused every such window.
Result nothing_remote(const std::vector<int> &peers, const char *call) {
  if (peers.empty()) return ok();
  return no_transport(std::string(call) + ": window rank " + std::to_string(peers.front()));
}

}  // namespace

void internode::open_if_needed() {}
void internode::close() {}
Result internode::available() { return no_transport("a peer"); }

Result remote::register_window(Window &, Registration *reg, Exchange *mine) {
  *reg = {};
  *mine = {};
  return ok();
}
void remote::release_registrations(Registration *) {}
// Called only when some peer of the window is not node-local.
Result remote::attach(Window &w, const Registration &, const std::vector<Exchange> &) {
  for (int p = 0; p < w.size; ++p)
    if (!w.peers[p].node_local)
      return no_transport("window rank " + std::to_string(p) + " (world rank " + std::to_string(w.peers[p].world_rank) +
                          ")");
  return internode::available();
}
// A window never has remote state here.
Result remote::quiesce(Window &) { return ok(); }
std::string remote::network_state(Window &) { return ""; }
Result remote::detach(Window &) { return ok(); }
uint64_t remote::fabric_operations(const RemoteOp &) { return 0; }
void remote::mirror(Window &, const std::vector<int> &, gpu::WorkList &) {}
Result remote::mirror_now(Window &, const std::vector<int> &) { return ok(); }
Result remote::post(Window &, const std::vector<int> &origins, gpu::WorkList &) {
  return nothing_remote(origins, "MPIX_Win_post_stream");
}
Result remote::complete(Window &, const std::vector<int> &targets, gpu::WorkList &) {
  return nothing_remote(targets, "MPIX_Win_complete_stream");
}
Result remote::complete_now(Window &w) {
  if (w.access.remote_ops.empty()) return ok();
  return no_transport("MPI_Win_complete: window rank " + std::to_string(w.access.remote_ops.front().target));
}
void remote::wait(Window &, const std::vector<int> &, gpu::WorkList &) {}
Result remote::wait_now(Window &, const std::vector<int> &) { return ok(); }
Result staged::check(const Window &, const RemoteOp &op, uint64_t) {
  return no_transport("window rank " + std::to_string(op.target));
}
Result remote::record(Window &, const RemoteOp &op, const Pieces &, const std::string &who) {
  return no_transport(who + " to window rank " + std::to_string(op.target));
}
bool staged::mirror_requested(MPI_Info) { return false; }

}  // namespace mpix::core
