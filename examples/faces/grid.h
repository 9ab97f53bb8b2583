// The 3-D rank grid (x fastest) and the 26 neighbour directions.
#pragma once
#include <array>

namespace faces {

// Directions are numbered 0..25 over (dx, dy, dz) in {-1, 0, 1}^3 without (0, 0, 0), x fastest,
// so that the opposite of direction j is 25 - j.
using Vec3 = std::array<int, 3>;
Vec3 direction_vector(int j);
inline int opposite(int j) { return 25 - j; }

struct Grid {
  Vec3 size{};   // lx, ly, lz
  bool periodic = false;
  int rank = 0;
  Vec3 coord{};  // this rank's position

  Grid(Vec3 size, bool periodic, int rank);
  // Rank of the neighbour in direction j, or -1 where a non-periodic grid ends. On a periodic
  // grid with fewer than 3 ranks along a dimension, the same rank (this one included) can be
  // the neighbour in several directions.
  int neighbour(int j) const;
  // Whether the grid continues on side `side` (-1 or +1) of dimension d.
  bool has_side(int d, int side) const;
};

}  // namespace faces
