// Carving one chunk of memory in order into pieces that each start on a 64-byte line, never
// given back (the pair lists' host-mapped and device arenas).
#pragma once
#include <cstdint>

namespace mpix::core {

struct LineCarver {
  static constexpr uint64_t kLine = 64;
  uint64_t used = 0, capacity = 0;

  static uint64_t lines(uint64_t bytes) { return (bytes + kLine - 1) / kLine * kLine; }
  // A fresh chunk of `chunk_bytes`.
  void restart(uint64_t chunk_bytes) { used = 0, capacity = chunk_bytes; }
  bool fits(uint64_t bytes) const { return used <= capacity && capacity - used >= bytes; }
  // Takes `bytes` (fits(bytes) holds); returns their offset in the chunk. The next piece starts
  // on the next line, or nowhere if that is past the chunk's end: a chunk whose size is no
  // multiple of a line must not leave `used` past `capacity`.
  uint64_t take(uint64_t bytes) {
    const uint64_t at = used;
    const uint64_t next = used + lines(bytes);
    used = next < capacity ? next : capacity;
    return at;
  }
};

}  // namespace mpix::core
