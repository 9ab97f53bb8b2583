// Runs of equal pieces at constant strides (work::Run), from a derived-datatype operation's
// pieces in signature order. Header-only so the unit test checks it without MPI.
#pragma once
#include <vector>

#include "../../kernels/work_items.h"

namespace mpix::core {

// Consecutive pieces of one length whose offsets advance by the same amount on each side join
// one run (greedily: the first two pieces of a run fix its strides). The pieces come out of the
// runs in the order they went in.
inline std::vector<work::Run> runs_of(const std::vector<work::Piece> &pieces) {
  std::vector<work::Run> runs;
  for (const work::Piece &p : pieces) {
    if (!runs.empty()) {
      work::Run &r = runs.back();
      if (r.bytes == p.bytes && r.count == 1) {
        r.dst_stride = p.dst - r.dst;
        r.src_stride = p.src - r.src;
        r.count = 2;
        continue;
      }
      const work::Piece next = work::piece_of(r, r.count);
      if (r.bytes == p.bytes && next.dst == p.dst && next.src == p.src) {
        ++r.count;
        continue;
      }
    }
    runs.push_back({p.dst, p.src, p.bytes, 1, 0, 0});
  }
  return runs;
}

// Runs of small pieces (below work::kPairLarge) longer than `max_bytes` in all, cut into equal
// runs of at most that much (or of single pieces, where a piece is longer): a group of threads moves one run at a time, so one long run (a
// vector of 131,072 8-byte blocks) would otherwise leave the work to one group. Order is kept.
inline std::vector<work::Run> split_runs(const std::vector<work::Run> &runs, uint64_t max_bytes) {
  std::vector<work::Run> out;
  for (const work::Run &r : runs) {
    const uint64_t total = r.count * r.bytes;
    if (r.bytes >= work::kPairLarge || r.count < 2 || total <= max_bytes || max_bytes == 0) {
      out.push_back(r);
      continue;
    }
    const uint64_t most = max_bytes / r.bytes ? max_bytes / r.bytes : 1;  // pieces a run may hold
    const uint64_t parts = (r.count + most - 1) / most, per = (r.count + parts - 1) / parts;
    for (uint64_t first = 0; first < r.count; first += per) {
      const work::Piece p = work::piece_of(r, first);
      out.push_back({p.dst, p.src, r.bytes, per < r.count - first ? per : r.count - first, r.dst_stride, r.src_stride});
    }
  }
  return out;
}

}  // namespace mpix::core
