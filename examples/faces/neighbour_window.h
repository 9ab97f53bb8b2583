// The RMA side shared by the rma and st modes: one window over the device receive buffer, the
// group of distinct neighbours, and one MPI_Put per neighbour into that neighbour's slot for us.
#pragma once
#include <mpi.h>

#include <memory>

#include "exchange.h"
#include "face_types.h"

namespace faces {

class NeighbourWindow {
 public:
  // With c.datatypes, builds the regions' derived types for this pass (freed with the window).
  NeighbourWindow(const Context &c, double *recv);
  ~NeighbourWindow();
  NeighbourWindow(const NeighbourWindow &) = delete;
  NeighbourWindow &operator=(const NeighbourWindow &) = delete;

  MPI_Win win() const { return win_; }
  MPI_Group group() const { return group_; }  // origins of our exposure and targets of our access
  // Inside an access epoch: this rank's region for each neighbour, from the packed send buffer,
  // or with --datatypes (send is null) straight from the field through the region's type. The
  // peer's slot is contiguous either way: its unpack-add sums it into its field.
  void put_all(const double *send) const;

 private:
  const Plan &plan_;
  const double *field_;
  std::unique_ptr<FaceTypes> types_;
  MPI_Win win_ = MPI_WIN_NULL;
  MPI_Group group_ = MPI_GROUP_NULL;
};

}  // namespace faces
