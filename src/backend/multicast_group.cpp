// The set-up of a hardware multicast group across ranks, over a driver table (multicast.h).
// Order matters: the driver blocks a bind or a mapping until every device has joined, so no rank
// binds before all have said they joined; a rank that failed says so at the next agreement, and
// every rank then releases what it made and returns the same answer, never waiting on a peer
// that gave up.
#include "multicast.h"

#include <cstdio>

namespace mpix::gpu {
namespace {

size_t round_up(size_t bytes, size_t unit) { return unit ? (bytes + unit - 1) / unit * unit : bytes; }

std::string failed(const MulticastDriver &d, const char *step) {
  return std::string(step) + ": " + (d.last_error ? d.last_error() : std::string("failed"));
}

}  // namespace

void multicast_release(const MulticastDriver &d, MulticastGroup *g) {
  if (g->mem_va) d.unmap(g->mem_va, g->bytes);
  if (g->mc_va) d.unmap(g->mc_va, g->bytes);
  if (g->bound) d.unbind(g->mc, g->bytes);
  if (g->have_mem) d.release(g->mem);
  if (g->have_mc) d.release(g->mc);
  *g = MulticastGroup{};
}

bool multicast_setup(const MulticastDriver &d, const MulticastExchange &x, size_t bytes, MulticastGroup *g,
                     std::string *why) {
  *g = MulticastGroup{};
  const bool root = x.rank == x.root;
  std::string mine;  // this rank's failure

  // 1. Every rank learns the size unit (its mappings are aligned to it); the root rounds the size
  //    up to it, creates the object and exports it for the others.
  MulticastCreated made;
  MulticastShareable exported;
  bool have_export = false;
  size_t unit = 0;
  if (d.granularity(x.size, bytes, &unit)) mine = failed(d, "multicast granularity");
  if (root) {
    if (mine.empty()) {
      made.bytes = round_up(bytes, unit);
      if (d.create(x.size, made.bytes, &g->mc)) {
        mine = failed(d, "multicast object creation");
      } else {
        g->have_mc = true;
        g->bytes = made.bytes;
        if (d.export_handle(g->mc, &exported))
          mine = failed(d, "multicast handle export");
        else
          have_export = true;
      }
    }
    made.ok = mine.empty();
    made.handle = exported;
    std::snprintf(made.why, sizeof made.why, "%s", mine.c_str());
  }
  x.bcast_from_root(&made, sizeof made);
  if (!made.ok) {
    multicast_release(d, g);
    *why = root ? mine : "rank " + std::to_string(x.root) + ": " + made.why;
    return false;
  }
  g->bytes = made.bytes;

  // 2. The others import it; everyone adds its device. The export may close once all agreed.
  if (!root && mine.empty()) {
    if (d.import_handle(made.handle, &g->mc))
      mine = failed(d, "multicast handle import");
    else
      g->have_mc = true;
  }
  if (mine.empty() && d.add_device(g->mc)) mine = failed(d, "adding the device to the multicast group");
  const bool all_joined = x.all_true(mine.empty());
  if (have_export) d.close_export(&exported);
  if (!all_joined) {
    multicast_release(d, g);
    *why = mine.empty() ? "another rank could not join the multicast group" : mine;
    return false;
  }

  // 3. Everyone binds its memory and maps the multicast object and its own memory.
  if (d.allocate(g->bytes, &g->mem)) {
    mine = failed(d, "multicast buffer allocation");
  } else {
    g->have_mem = true;
    if (d.bind(g->mc, g->mem, g->bytes))
      mine = failed(d, "binding memory to the multicast object");
    else if (g->bound = true; d.map(g->mc, g->bytes, &g->mc_va))
      mine = failed(d, "mapping the multicast object");
    else if (d.map(g->mem, g->bytes, &g->mem_va))
      mine = failed(d, "mapping the multicast buffer");
  }
  if (!x.all_true(mine.empty())) {
    multicast_release(d, g);
    *why = mine.empty() ? "another rank could not bind or map its multicast memory" : mine;
    return false;
  }
  g->ready = true;
  return true;
}

}  // namespace mpix::gpu
