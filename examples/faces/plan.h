// What one rank exchanges with whom: the regions of its present neighbours and where each one's
// copies lie in the send buffer and in the receive buffer (the RMA window).
#pragma once
#include <cstdint>
#include <vector>

#include "grid.h"
#include "layout.h"

namespace faces {

// Both buffers have one slot per direction, at the same offsets on every rank: slot j of the
// send buffer holds this rank's region j, slot j of the receive buffer the copies that the
// neighbour in direction j sent (its region opposite(j)).
struct Link {
  int direction;
  int peer;             // neighbour rank
  int64_t offset;       // of slot `direction`, in doubles
  int64_t count;        // copies in the region
  int64_t peer_offset;  // of slot opposite(direction): where this rank's copies land at the peer
};

struct Plan {
  Shape shape{};
  Placement placement{};
  int64_t buffer_doubles = 0;  // one buffer, all 26 slots
  std::vector<Link> links;     // present neighbours, by direction
  RegionList regions{};        // the links' regions, in the same order
  std::vector<int> peers;      // distinct neighbour ranks, ascending (the RMA group)

  Plan(const Shape &shape, const Grid &grid);
  const Link *link(int direction) const;  // nullptr when that neighbour is absent
};

}  // namespace faces
