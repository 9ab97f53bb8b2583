// What the examples need to know of the library's settings and of its node split, read the way the
// library reads them, so that a program can tell beforehand which of its two-sided messages the
// library takes (doc/guide/two-sided.md, "What they take").
#pragma once
#include <mpi.h>
#include <mpix/mpix_st.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace library_view {

// A numeric MPIX_ST_* setting (decimal digits only; unset or empty: 0). The library refuses other
// values at MPI_Init, so they never get here.
inline long setting(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v || std::strspn(v, "0123456789") != std::strlen(v)) return 0;
  return std::strtol(v, nullptr, 10);
}

// The data bytes of a mailbox: the largest two-sided message toward a rank on another node
// (node-local messages of any length move through it in chunks).
constexpr size_t kMailboxBytesHost = size_t(16) << 10;  // host backend
constexpr size_t kMailboxBytesGpu = size_t(1) << 20;    // CUDA and HIP backends
inline size_t mailbox_bytes() {
  if (const long kib = setting("MPIX_ST_P2P_SLOT_KIB")) return static_cast<size_t>(kib) << 10;
  return std::strcmp(MPIX_St_backend_name(), "host") == 0 ? kMailboxBytesHost : kMailboxBytesGpu;
}

// Each rank of `comm`'s node as the library sees nodes: ranks of one shared-memory node, split into
// virtual nodes of MPIX_ST_VNODE_SIZE consecutive world ranks. Collective over comm.
inline std::vector<long> node_of_each_rank(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int rank = 0, size = 1, world_rank = 0, node_lead = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Allreduce(&rank, &node_lead, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  const long k = setting("MPIX_ST_VNODE_SIZE");  // 0: physical nodes
  const long mine = static_cast<long>(node_lead) * (1L << 20) + (k > 0 ? world_rank / k : 0);
  std::vector<long> all(static_cast<size_t>(size));
  MPI_Allgather(&mine, 1, MPI_LONG, all.data(), 1, MPI_LONG, comm);
  return all;
}

}  // namespace library_view
