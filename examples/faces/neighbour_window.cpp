#include "neighbour_window.h"

#include <cstdio>

namespace faces {

NeighbourWindow::NeighbourWindow(const Context &c, double *recv) : plan_(c.plan), field_(c.field) {
  if (c.datatypes) types_ = std::make_unique<FaceTypes>(plan_);
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
  if (!types_ && !send) {
    std::fprintf(stderr, "faces: no send buffer and no region types to put from\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (size_t k = 0; k < plan_.links.size(); ++k) {
    const Link &l = plan_.links[k];
    const int count = static_cast<int>(l.count);
    if (types_)
      MPI_Put(field_ + types_->first(k), 1, types_->type(k), l.peer, l.peer_offset, count, MPI_DOUBLE, win_);
    else
      MPI_Put(send + l.offset, count, MPI_DOUBLE, l.peer, l.peer_offset, count, MPI_DOUBLE, win_);
  }
}

}  // namespace faces
