// Geometry of one rank's block, shared by host code and device kernels: how points are laid out in
// memory, which points a face / edge / corner region holds, and the initial value of a point.
#pragma once
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define FACES_HD __host__ __device__
#else
#define FACES_HD
#endif

namespace faces {

// A rank owns m[0] x m[1] x m[2] elements of n^3 points, x fastest. Neighbouring elements share
// their boundary points, each keeping its own copy (spectral-element style), so a point on an
// element boundary has several copies that an exchange sums.
struct Shape {
  int m[3];
  int n;
  FACES_HD int64_t element_points() const { return int64_t(n) * n * n; }
  FACES_HD int64_t points() const { return int64_t(m[0]) * m[1] * m[2] * element_points(); }
};

// Memory index of point (i[0], i[1], i[2]) of element (e[0], e[1], e[2]).
FACES_HD inline int64_t point_index(const Shape &s, const int e[3], const int i[3]) {
  const int64_t element = (int64_t(e[2]) * s.m[1] + e[1]) * s.m[0] + e[0];
  return element * s.n * s.n * s.n + (int64_t(i[2]) * s.n + i[1]) * s.n + i[0];
}

// The copies one neighbour shares with this rank. Per dimension, a region spans elements
// [e0, e0 + ne) and points [i0, i0 + ni) of each; `offset` is where it lies in a message buffer.
// Regions are enumerated x fastest over (element, point) pairs, so the two sides of a shared
// boundary list the same global points in the same order.
struct Region {
  int e0[3], ne[3], i0[3], ni[3];
  int64_t offset;
  int64_t count;
};

// Element and point of the k-th copy of a region.
FACES_HD inline int64_t region_point(const Shape &s, const Region &r, int64_t k) {
  int e[3], i[3];
  for (int d = 0; d < 3; ++d) {
    const int span = r.ne[d] * r.ni[d];
    const int g = static_cast<int>(k % span);
    k /= span;
    e[d] = r.e0[d] + g / r.ni[d];
    i[d] = r.i0[d] + g % r.ni[d];
  }
  return point_index(s, e, i);
}

// Up to 26 neighbours: the regions of the present ones.
constexpr int kDirections = 26;
struct RegionList {
  int count;
  Region r[kDirections];
};

// Where this rank's block lies in the global point grid, for initial values.
struct Placement {
  int64_t origin[3];  // global point coordinate of local point (element 0, point 0)
  int64_t period[3];  // global points per dimension when periodic, else 0 (no wrap)
};

// Global point coordinate along d of local point (element e, point i): neighbouring elements
// share their end points, and a periodic grid wraps.
FACES_HD inline int64_t global_coordinate(const Shape &s, const Placement &p, int d, int e, int i) {
  const int64_t g = p.origin[d] + int64_t(e) * (s.n - 1) + i;
  return p.period[d] ? g % p.period[d] : g;
}

// Initial values: a deterministic small positive integer per global point (exact in double), so
// a misrouted or misplaced copy changes a sum. The hash is an xor of one term per dimension,
// which lets the host reference tabulate the terms.
FACES_HD inline uint32_t coordinate_hash(int d, int64_t g) {
  const uint32_t factor = d == 0 ? 73856093u : d == 1 ? 19349663u : 83492791u;
  return static_cast<uint32_t>(g) * factor;
}
FACES_HD inline double hashed_value(uint32_t h) { return 1.0 + static_cast<double>(h % 1021u); }

// Initial value of local point (e, i) times `scale`: every copy of a global point starts equal.
FACES_HD inline double initial_value(const Shape &s, const Placement &p, const int e[3], const int i[3],
                                     double scale) {
  uint32_t h = 0;
  for (int d = 0; d < 3; ++d) h ^= coordinate_hash(d, global_coordinate(s, p, d, e[d], i[d]));
  return hashed_value(h) * scale;
}

}  // namespace faces
