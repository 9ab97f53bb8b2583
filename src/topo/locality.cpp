#include "locality.h"

namespace mpix::topo {

Locality locate(MPI_Comm comm, int vnode_size) {
  MPI_Comm node_comm;
  PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
  int rank = 0, world_rank = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  Locality here;
  PMPI_Allreduce(&rank, &here.node, 1, MPI_INT, MPI_MIN, node_comm);
  PMPI_Comm_free(&node_comm);
  here.vnode = vnode_size > 0 ? world_rank / vnode_size : 0;
  return here;
}

}  // namespace mpix::topo
