// The block distribution: a non-periodic Cartesian communicator over the ranks, this rank's block
// of the global grid, and for each neighbour the pair of subarray types that moves one halo layer
// straight from this rank's field into the neighbour's (no pack or unpack).
#pragma once
#include <mpi.h>

#include <vector>

#include "box.h"

namespace stencil {

struct Face {
  int peer;              // rank in `cart`
  MPI_Datatype origin;   // my boundary layer facing the peer
  MPI_Datatype target;   // the peer's halo layer facing me (same array shape: every block is equal)
};

class Decomposition {
 public:
  // `dims`: ranks per dimension, 0 where MPI_Dims_create chooses.
  Decomposition(MPI_Comm comm, const int n[3], const int dims[3]);
  ~Decomposition();
  Decomposition(const Decomposition &) = delete;
  Decomposition &operator=(const Decomposition &) = delete;

  MPI_Comm cart = MPI_COMM_NULL;
  int dims[3] = {1, 1, 1};
  int coords[3] = {0, 0, 0};
  int global[3] = {0, 0, 0};  // interior points of the whole grid
  Box box;                    // this rank's block
  std::vector<Face> faces;    // one per neighbour (fewer than 6 at the domain boundary)
  MPI_Group group = MPI_GROUP_NULL;  // the neighbours: origins of my exposure, targets of my access
};

}  // namespace stencil
