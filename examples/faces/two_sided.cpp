#include "two_sided.h"

#include <mpix/mpix_st.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace faces {
namespace {

// A numeric MPIX_ST_* setting as the library reads it (decimal digits only; unset or empty: 0).
// The library refuses other values at MPI_Init, so they never get here.
long setting(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v || std::strspn(v, "0123456789") != std::strlen(v)) return 0;
  return std::strtol(v, nullptr, 10);
}

// Whether some neighbour of this rank is on another node, as the library sees nodes: ranks of one
// shared-memory node, split into virtual nodes of MPIX_ST_VNODE_SIZE consecutive world ranks.
bool has_remote_peer(const Plan &plan, MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int rank = 0, size = 1, world_rank = 0, node_lead = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Allreduce(&rank, &node_lead, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  const long k = setting("MPIX_ST_VNODE_SIZE");  // 0: physical nodes
  const int mine[2] = {node_lead, k > 0 ? static_cast<int>(world_rank / k) : 0};
  std::vector<int> all(2 * static_cast<size_t>(size));
  MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm);
  for (const Link &l : plan.links)
    if (all[2 * l.peer] != mine[0] || all[2 * l.peer + 1] != mine[1]) return true;
  return false;
}

}  // namespace

size_t mailbox_bytes() {
  if (const long kib = setting("MPIX_ST_P2P_SLOT_KIB")) return static_cast<size_t>(kib) << 10;
  return std::strcmp(MPIX_St_backend_name(), "host") == 0 ? kMailboxBytesHost : kMailboxBytesGpu;
}

std::string two_sided_unavailable(const Plan &plan, MPI_Comm comm, bool graph) {
  int64_t mine = 0, largest = 0;
  for (const Link &l : plan.links) mine = std::max<int64_t>(mine, l.count * int64_t(sizeof(double)));
  MPI_Allreduce(&mine, &largest, 1, MPI_INT64_T, MPI_MAX, comm);
  const int remote_mine = graph && has_remote_peer(plan, comm) ? 1 : 0;
  int remote = 0;
  MPI_Allreduce(&remote_mine, &remote, 1, MPI_INT, MPI_LOR, comm);
  const size_t limit = mailbox_bytes();
  if (static_cast<size_t>(largest) > limit)
    return "the largest face message, " + std::to_string(largest) + " B, exceeds the " + std::to_string(limit >> 10) +
           " KiB that one two-sided message may carry on the " + MPIX_St_backend_name() +
           " backend (doc/guide/two-sided.md)";
  if (remote && graph)
    return "a neighbour is on another node (or virtual node, MPIX_ST_VNODE_SIZE), and two-sided messages between "
           "nodes cannot be captured into a graph yet (doc/guide/two-sided.md)";
  return "";
}

}  // namespace faces
