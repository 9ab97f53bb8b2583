#include "plan.h"

#include <algorithm>

namespace faces {
namespace {

// Region of this block's copies that the neighbour in direction v shares.
Region region_towards(const Shape &s, const Vec3 &v) {
  Region r{};
  r.count = 1;
  for (int d = 0; d < 3; ++d) {
    const bool spans = v[d] == 0;
    r.e0[d] = v[d] > 0 ? s.m[d] - 1 : 0;
    r.ne[d] = spans ? s.m[d] : 1;
    r.i0[d] = v[d] > 0 ? s.n - 1 : 0;
    r.ni[d] = spans ? s.n : 1;
    r.count *= int64_t(r.ne[d]) * r.ni[d];
  }
  return r;
}

}  // namespace

Plan::Plan(const Shape &s, const Grid &grid) : shape(s) {
  for (int d = 0; d < 3; ++d) {
    const int64_t span = int64_t(s.m[d]) * (s.n - 1);  // points one rank adds along d
    placement.origin[d] = grid.coord[d] * span;
    placement.period[d] = grid.periodic ? grid.size[d] * span : 0;
  }
  int64_t slot[kDirections];
  for (int j = 0; j < kDirections; ++j) {
    slot[j] = buffer_doubles;
    buffer_doubles += region_towards(s, direction_vector(j)).count;
  }
  for (int j = 0; j < kDirections; ++j) {
    const int peer = grid.neighbour(j);
    if (peer < 0) continue;
    Region r = region_towards(s, direction_vector(j));
    r.offset = slot[j];
    regions.r[regions.count++] = r;
    links.push_back({j, peer, slot[j], r.count, slot[opposite(j)]});
    peers.push_back(peer);
  }
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
}

const Link *Plan::link(int direction) const {
  for (const Link &l : links)
    if (l.direction == direction) return &l;
  return nullptr;
}

}  // namespace faces
