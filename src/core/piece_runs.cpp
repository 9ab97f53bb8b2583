#include "piece_runs.h"

#include <cstdint>
#include <limits>

namespace mpix::core {
namespace {

bool fits_i32(int64_t v) { return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(); }

// Appends piece p to `runs`: it extends the last run where it is that run's next piece.
void add(std::vector<work::Run> &runs, const work::Pair &p, bool join) {
  if (join && !runs.empty()) {
    work::Run &r = runs.back();
    const bool room = r.count < work::kRunMaxPieces && (uint64_t(r.count) + 1) * r.bytes <= work::kRunMaxBytes;
    if (room && p.bytes == r.bytes) {
      const int64_t last_dst = r.dst + int64_t(r.count - 1) * r.dst_stride;
      const int64_t last_src = r.src + int64_t(r.count - 1) * r.src_stride;
      const int64_t dd = p.dst - last_dst, ds = p.src - last_src;
      if (r.count == 1 && fits_i32(dd) && fits_i32(ds)) {
        r.dst_stride = static_cast<int32_t>(dd);
        r.src_stride = static_cast<int32_t>(ds);
        r.count = 2;
        return;
      }
      if (r.count > 1 && dd == r.dst_stride && ds == r.src_stride) {
        ++r.count;
        return;
      }
    }
  }
  runs.push_back({p.dst, p.src, static_cast<uint32_t>(p.bytes), 1, 0, 0});
}

}  // namespace

std::vector<work::Run> to_runs(const work::Pair *pieces, size_t n, bool join) {
  std::vector<work::Run> runs;
  for (size_t i = 0; i < n; ++i) {
    work::Pair p = pieces[i];
    // A piece too long for a run's 32-bit length goes as several runs of one piece each.
    constexpr uint64_t kCut = work::kRunPieceCut;
    while (p.bytes >= 2 * kCut) {
      add(runs, {p.dst, p.src, kCut}, false);
      p.dst += static_cast<int64_t>(kCut), p.src += static_cast<int64_t>(kCut), p.bytes -= kCut;
    }
    add(runs, p, join);
  }
  return runs;
}

}  // namespace mpix::core
