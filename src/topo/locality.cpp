#include "locality.h"

namespace mpix::topo {
namespace {

Locality g_here;
bool g_located = false;

Locality find(MPI_Comm comm, int vnode_size) {
  MPI_Comm node_comm;
  PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  Locality here;
  PMPI_Allreduce(&world_rank, &here.node, 1, MPI_INT, MPI_MIN, node_comm);
  PMPI_Comm_free(&node_comm);
  here.vnode = vnode_size > 0 ? world_rank / vnode_size : 0;
  return here;
}

}  // namespace

const Locality &locate_process(int vnode_size) {
  if (!g_located) {
    g_here = find(MPI_COMM_WORLD, vnode_size);
    g_located = true;
  }
  return g_here;
}

Locality locate(MPI_Comm comm, int vnode_size) { return g_located ? g_here : find(comm, vnode_size); }

}  // namespace mpix::topo
