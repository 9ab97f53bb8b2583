#include "two_sided.h"

#include <mpix/mpix_st.h>

#include "library_view.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace faces {

std::string two_sided_unavailable(const Plan &plan, MPI_Comm comm, bool graph) {
  const std::vector<long> node = library_view::node_of_each_rank(comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Messages to neighbours on other nodes: at most a mailbox each, and not captured yet.
  int64_t mine = 0, largest = 0;
  int remote_mine = 0, remote = 0;
  for (const Link &l : plan.links)
    if (node[l.peer] != node[rank]) {
      remote_mine = 1;
      mine = std::max<int64_t>(mine, l.count * int64_t(sizeof(double)));
    }
  MPI_Allreduce(&mine, &largest, 1, MPI_INT64_T, MPI_MAX, comm);
  MPI_Allreduce(&remote_mine, &remote, 1, MPI_INT, MPI_LOR, comm);
  const size_t limit = library_view::mailbox_bytes();
  if (static_cast<size_t>(largest) > limit)
    return "the largest face message to a neighbour on another node, " + std::to_string(largest) +
           " B, exceeds the " + std::to_string(limit >> 10) + " KiB that such a message may carry on the " +
           MPIX_St_backend_name() + " backend (doc/guide/two-sided.md)";
  if (remote && graph)
    return "a neighbour is on another node (or virtual node, MPIX_ST_VNODE_SIZE), and two-sided messages between "
           "nodes cannot be captured into a graph yet (doc/guide/two-sided.md)";
  return "";
}

}  // namespace faces
