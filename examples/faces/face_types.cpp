#include "face_types.h"

namespace faces {
namespace {

// Replaces *t by `count` copies of it, `stride_bytes` apart, and frees the old one (the new type
// keeps what it needs of it).
void repeat(MPI_Datatype *t, int count, int64_t stride_bytes) {
  MPI_Datatype outer;
  MPI_Type_create_hvector(count, 1, static_cast<MPI_Aint>(stride_bytes), *t, &outer);
  MPI_Type_free(t);
  *t = outer;
}

// A region walks (element, point) pairs x fastest, elements outside points in each dimension
// (layout.h), while memory holds elements outside all three point dimensions: so the type nests
// x's elements and points innermost, then y's points and elements, then z's.
MPI_Datatype region_type(const Shape &s, const Region &r) {
  const int64_t n = s.n, element = s.element_points();
  MPI_Datatype t;
  // x: per element a run of ni[0] adjacent copies, elements n^3 doubles apart.
  MPI_Type_vector(r.ne[0], r.ni[0], static_cast<int>(element), MPI_DOUBLE, &t);
  const int64_t point_stride[3] = {1, n, n * n};
  int64_t element_stride = element * s.m[0];
  for (int d = 1; d < 3; ++d) {
    repeat(&t, r.ni[d], point_stride[d] * int64_t(sizeof(double)));
    repeat(&t, r.ne[d], element_stride * int64_t(sizeof(double)));
    element_stride *= s.m[d];
  }
  MPI_Type_commit(&t);
  return t;
}

}  // namespace

FaceTypes::FaceTypes(const Plan &plan) {
  for (int k = 0; k < plan.regions.count; ++k) {
    const Region &r = plan.regions.r[k];
    types_.push_back(region_type(plan.shape, r));
    first_.push_back(region_point(plan.shape, r, 0));
  }
}

FaceTypes::~FaceTypes() {
  for (MPI_Datatype &t : types_) MPI_Type_free(&t);
}

}  // namespace faces
