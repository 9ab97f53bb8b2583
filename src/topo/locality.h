// Which ranks share a node. Peers on the same node reach each other through mapped memory (IPC);
// others through the network. MPIX_ST_VNODE_SIZE=k splits every node into virtual nodes of k
// consecutive MPI_COMM_WORLD ranks, so one host exercises the inter-node path (k=1: every peer is
// remote) and mixed epochs.
#pragma once
#include <mpi.h>

#include <cstdint>

namespace mpix::topo {

struct Locality {
  int32_t node = 0;   // lowest MPI_COMM_WORLD rank on this physical node
  int32_t vnode = 0;  // world rank / vnode_size (0 when vnode_size is 0)
  bool same_node_as(const Locality &o) const { return node == o.node && vnode == o.vnode; }
};

// This process's locality, found once, collectively over MPI_COMM_WORLD (MPI_Init calls it): a
// node does not change, and asking per window cost each window creation a communicator split.
// vnode_size 0: physical nodes only.
const Locality &locate_process(int vnode_size);
// This process's locality: locate_process's where it ran, otherwise found collectively over
// `comm` (a program whose MPI_Init did not pass through the library).
Locality locate(MPI_Comm comm, int vnode_size);

}  // namespace mpix::topo
