// Built instead of network.cpp where libfabric is not available: a communicator's peers on other
// nodes cannot be reached, and its two-sided calls toward them are refused saying why (engine.cpp,
// match); node-local messages work as in any build.
#include "network.h"

#include "context.h"
#include "core/internode.h"
#include "engine.h"

namespace mpix::p2p::net {

core::Result attach(Context &c, const std::vector<topo::Locality> &) {
  c.remote.reset();
  c.remote_why = "peers on other nodes need the inter-node transport, and this build of mpix-st has no libfabric "
                 "(install libfabric-dev and rebuild with MPIX_ST_OFI=AUTO or ON)";
  return core::ok();
}
void detach(Context &c) { c.remote.reset(); }
Bell::~Bell() {}
// Nothing below is reached: no context has a Remote.
core::Result post_send(const Op &, Queue &) { return core::internode::available(); }
core::Result post_receive(const Op &, Queue &) { return core::internode::available(); }
core::Result ring(gpu::WorkList &, Queue &) { return core::internode::available(); }
core::Result post_chunks(Op &, uint64_t **) { return core::internode::available(); }
uint64_t operations(const Op &, bool) { return 0; }
core::Result check_chunk_budget(const Op &) { return core::ok(); }
uint64_t list_budget() { return 1; }
void ring_lost(Queue &) {}
void settle(Queue &) {}
void settle_all() {}

}  // namespace mpix::p2p::net
