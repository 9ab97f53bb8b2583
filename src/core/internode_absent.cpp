// Built instead of internode.cpp and remote_epochs.cpp where libfabric is not available: every
// window stays node-local, and one with peers on other nodes is refused with the reason.
#include "internode.h"
#include "remote_epochs.h"

namespace mpix::core {

void internode::open_if_needed() {}
void internode::close() {}
Result internode::available() {
  return fail(MPI_ERR_OTHER, "peers on other nodes need the inter-node transport, and this build of mpix-st has "
                             "no libfabric (install libfabric-dev and rebuild)");
}

Result remote::register_window(Window &, ofi::Region *data, ofi::Region *flags, Exchange *mine) {
  *data = {};
  *flags = {};
  *mine = {};
  return ok();
}
void remote::release_registrations(ofi::Region, ofi::Region) {}
Result remote::attach(Window &, ofi::Region, ofi::Region, const std::vector<Exchange> &) {
  return internode::available();
}
// Unreachable without attach(): a window never has remote state here.
Result remote::detach(Window &) { return ok(); }
Result remote::post(Window &, const std::vector<int> &, gpu::WorkList &) { return internode::available(); }
Result remote::complete(Window &, const std::vector<int> &, gpu::WorkList &) { return internode::available(); }
Result remote::complete_now(Window &) { return internode::available(); }

}  // namespace mpix::core
