#include "grid.h"

namespace faces {

Vec3 direction_vector(int j) {
  const int code = j < 13 ? j : j + 1;  // skip the centre, code 13
  return {code % 3 - 1, code / 3 % 3 - 1, code / 9 - 1};
}

Grid::Grid(Vec3 size_, bool periodic_, int rank_) : size(size_), periodic(periodic_), rank(rank_) {
  coord = {rank % size[0], rank / size[0] % size[1], rank / (size[0] * size[1])};
}

bool Grid::has_side(int d, int side) const {
  const int c = coord[d] + side;
  return periodic || (c >= 0 && c < size[d]);
}

int Grid::neighbour(int j) const {
  const Vec3 v = direction_vector(j);
  Vec3 c{};
  for (int d = 0; d < 3; ++d) {
    if (v[d] != 0 && !has_side(d, v[d])) return -1;
    c[d] = (coord[d] + v[d] + size[d]) % size[d];
  }
  return (c[2] * size[1] + c[1]) * size[0] + c[0];
}

}  // namespace faces
