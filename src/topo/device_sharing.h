// How many ranks of a node run on one GPU (several ranks per GPU: Faces' --ranks-per-gpu, tests on
// a one-GPU machine). Counted from records every rank exchanged at a collective set-up.
#pragma once
#include <cstring>

namespace mpix::topo {

// Records whose `device` names the same device as `mine` and for which same_node(record) holds
// (this rank's own included); 1 where devices have no name (the host backend).
template <typename Records, typename SameNode>
int device_sharers(const Records &all, SameNode &&same_node, const char *mine) {
  if (!mine[0]) return 1;
  int n = 0;
  for (const auto &r : all) n += same_node(r) && std::strcmp(r.device, mine) == 0;
  return n > 0 ? n : 1;
}

}  // namespace mpix::topo
