#include "decomposition.h"

#include <algorithm>

namespace stencil {
namespace {

// One layer of the local array: index `at` along dimension d, the interior along the others.
// Subarray dimensions are in C order (z slowest), ours are x, y, z.
MPI_Datatype layer(const Box &b, int d, int at) {
  int sizes[3], subsizes[3], starts[3];
  for (int k = 0; k < 3; ++k) {
    const int c = 2 - k;
    sizes[c] = b.n[k] + 2;
    subsizes[c] = k == d ? 1 : b.n[k];
    starts[c] = k == d ? at : 1;
  }
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return t;
}

}  // namespace

Decomposition::Decomposition(MPI_Comm comm, const int n[3], const int want[3]) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  for (int d = 0; d < 3; ++d) dims[d] = want[d];
  MPI_Dims_create(size, 3, dims);
  const int periods[3] = {0, 0, 0};
  MPI_Cart_create(comm, 3, dims, periods, 1, &cart);
  int rank = 0;
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, 3, coords);
  for (int d = 0; d < 3; ++d) {
    box.n[d] = n[d];
    global[d] = dims[d] * n[d];
  }
  std::vector<int> peers;
  for (int d = 0; d < 3; ++d) {
    int lo = MPI_PROC_NULL, hi = MPI_PROC_NULL;
    MPI_Cart_shift(cart, d, 1, &lo, &hi);
    // My first interior layer fills the low neighbour's high halo, my last the high one's low halo.
    if (lo != MPI_PROC_NULL) faces.push_back({lo, layer(box, d, 1), layer(box, d, n[d] + 1)});
    if (hi != MPI_PROC_NULL) faces.push_back({hi, layer(box, d, n[d]), layer(box, d, 0)});
    for (int p : {lo, hi})
      if (p != MPI_PROC_NULL) peers.push_back(p);
  }
  // A group lists each rank once (non-periodic neighbours are distinct anyway).
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  MPI_Group all;
  MPI_Comm_group(cart, &all);
  MPI_Group_incl(all, static_cast<int>(peers.size()), peers.data(), &group);
  MPI_Group_free(&all);
}

Decomposition::~Decomposition() {
  for (Face &f : faces) {
    MPI_Type_free(&f.origin);
    MPI_Type_free(&f.target);
  }
  if (group != MPI_GROUP_EMPTY) MPI_Group_free(&group);  // a lone rank's group is the predefined one
  MPI_Comm_free(&cart);
}

}  // namespace stencil
