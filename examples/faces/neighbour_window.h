// The RMA side shared by the rma and st modes: one window over the device receive buffer, the
// group of distinct neighbours, and one MPI_Put per neighbour into that neighbour's slot for us.
#pragma once
#include <mpi.h>

#include "exchange.h"

namespace faces {

class NeighbourWindow {
 public:
  NeighbourWindow(const Context &c, double *recv);
  ~NeighbourWindow();
  NeighbourWindow(const NeighbourWindow &) = delete;
  NeighbourWindow &operator=(const NeighbourWindow &) = delete;

  MPI_Win win() const { return win_; }
  MPI_Group group() const { return group_; }  // origins of our exposure and targets of our access
  // Inside an access epoch: this rank's region for each neighbour, from the send buffer.
  void put_all(const double *send) const;

 private:
  const Plan &plan_;
  MPI_Win win_ = MPI_WIN_NULL;
  MPI_Group group_ = MPI_GROUP_NULL;
};

}  // namespace faces
