// Built instead of internode.cpp, remote_epochs.cpp and staged_transfers.cpp where libfabric is not available: every
// window stays node-local, and one with peers on other nodes is refused with the reason.
#include "internode.h"
#include "remote_epochs.h"
#include "staged_transfers.h"

namespace mpix::core {

void internode::open_if_needed() {}
void internode::close() {}
Result internode::available() {
  return fail(MPI_ERR_OTHER, "peers on other nodes need the inter-node transport, and this build of mpix-st has "
                             "no libfabric (install libfabric-dev and rebuild)");
}

Result remote::register_window(Window &, Registration *reg, Exchange *mine) {
  *reg = {};
  *mine = {};
  return ok();
}
void remote::release_registrations(Registration *) {}
Result remote::attach(Window &, const Registration &, const std::vector<Exchange> &) {
  return internode::available();
}
// Unreachable without attach(): a window never has remote state here.
Result remote::detach(Window &) { return ok(); }
void remote::mirror(Window &, const std::vector<int> &, gpu::WorkList &) {}
Result remote::mirror_now(Window &, const std::vector<int> &) { return ok(); }
Result remote::post(Window &, const std::vector<int> &, gpu::WorkList &) { return internode::available(); }
Result remote::complete(Window &, const std::vector<int> &, gpu::WorkList &) { return internode::available(); }
Result remote::complete_now(Window &) { return internode::available(); }
void remote::wait(Window &, const std::vector<int> &, gpu::WorkList &) {}
Result remote::wait_now(Window &, const std::vector<int> &) { return ok(); }
Result staged::check(const Window &, const RemoteOp &) { return internode::available(); }
bool staged::mirror_requested(MPI_Info) { return false; }

}  // namespace mpix::core
