// --datatypes: each link's region (face, edge or corner) as one MPI derived datatype over the
// field, so rma and st put straight from the field instead of packing a send buffer first.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "plan.h"

namespace faces {

// Built and committed for one niface pass, freed with it (MPI_Type_free).
class FaceTypes {
 public:
  explicit FaceTypes(const Plan &plan);
  ~FaceTypes();
  FaceTypes(const FaceTypes &) = delete;
  FaceTypes &operator=(const FaceTypes &) = delete;

  // Of plan.links[k]: one element of type(k) at field + first(k) lists the region's copies in
  // the order of its slot in a packed buffer, which is what the peer's unpack expects.
  MPI_Datatype type(size_t k) const { return types_[k]; }
  int64_t first(size_t k) const { return first_[k]; }

 private:
  std::vector<MPI_Datatype> types_;
  std::vector<int64_t> first_;  // field index of the region's first copy
};

}  // namespace faces
