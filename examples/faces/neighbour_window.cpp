#include "neighbour_window.h"

namespace faces {

NeighbourWindow::NeighbourWindow(const Context &c, double *recv) : plan_(c.plan) {
  MPI_Win_create(recv, static_cast<MPI_Aint>(plan_.buffer_doubles * sizeof(double)), sizeof(double), MPI_INFO_NULL,
                 c.comm, &win_);
  MPI_Group all;
  MPI_Comm_group(c.comm, &all);
  // A group lists each rank once; a rank that neighbours us in several directions gets one put
  // per direction, each into its own slot.
  MPI_Group_incl(all, static_cast<int>(plan_.peers.size()), plan_.peers.data(), &group_);
  MPI_Group_free(&all);
}

NeighbourWindow::~NeighbourWindow() {
  MPI_Win_free(&win_);
  MPI_Group_free(&group_);
}

void NeighbourWindow::put_all(const double *send) const {
  for (const Link &l : plan_.links)
    MPI_Put(send + l.offset, static_cast<int>(l.count), MPI_DOUBLE, l.peer, l.peer_offset, static_cast<int>(l.count),
            MPI_DOUBLE, win_);
}

}  // namespace faces
