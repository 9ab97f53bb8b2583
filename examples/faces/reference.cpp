#include "reference.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "xdev.h"

namespace faces {
namespace {

// Per dimension and per (element, point) along it: the initial value's hash term, and whether
// one exchange doubles a copy there (log2 of its share of the copies it is summed with). A copy
// on an element boundary inside the block doubles through the interior sum; one on the block's
// boundary doubles where the grid continues, through the neighbours' copies. The dimensions
// multiply, so a copy is summed with 2^(bits_x + bits_y + bits_z) copies.
struct Axis {
  std::vector<uint32_t> hash;
  std::vector<uint8_t> bits;
};

Axis make_axis(const Plan &plan, const Grid &grid, bool interior, int d) {
  const Shape &s = plan.shape;
  Axis a;
  for (int e = 0; e < s.m[d]; ++e)
    for (int i = 0; i < s.n; ++i) {
      const bool low = i == 0, high = i == s.n - 1;
      const bool inner = interior && ((low && e > 0) || (high && e < s.m[d] - 1));
      const bool outer = (low && e == 0 && grid.has_side(d, -1)) || (high && e == s.m[d] - 1 && grid.has_side(d, +1));
      a.hash.push_back(coordinate_hash(d, global_coordinate(s, plan.placement, d, e, i)));
      a.bits.push_back(static_cast<uint8_t>(inner + outer));
    }
  return a;
}

}  // namespace

double initial_scale(int exchanges) {
  // Values stay below 2^1000: point values need 10 bits, each exchange at most 3.
  const int top = 10 + 3 * exchanges;
  return std::ldexp(1.0, std::max(-1060, std::min(0, 1000 - top)));
}

namespace {

struct Expectation {
  const Plan &plan;
  const Grid &grid;
  Axis axis[3];
  int exchanges;
  double scale;
  double growth[4];  // 2^(b * exchanges) for b doublings per exchange
  bool growth_finite;

  Expectation(const Plan &p, const Grid &g, bool interior, int exchanges_, double scale_)
      : plan(p), grid(g),
        axis{make_axis(p, g, interior, 0), make_axis(p, g, interior, 1), make_axis(p, g, interior, 2)},
        exchanges(exchanges_), scale(scale_) {
    for (int b = 0; b < 4; ++b) growth[b] = std::ldexp(1.0, b * exchanges);
    growth_finite = std::isfinite(growth[3]);  // else ldexp scales the (tiny) start instead
  }

  // Compares elements [first, last), whose copies start at `u`; reports the first difference
  // unless `reported` is already set.
  int64_t compare(const double *u, int64_t first, int64_t last, std::atomic<bool> &reported) const {
    const Shape &s = plan.shape;
    const int n = s.n;
    int64_t bad = 0;
    for (int64_t el = first; el < last; ++el) {
      const int e[3] = {int(el % s.m[0]), int(el / s.m[0] % s.m[1]), int(el / (int64_t(s.m[0]) * s.m[1]))};
      for (int k = 0; k < n; ++k)
        for (int j = 0; j < n; ++j) {
          const int z = e[2] * n + k, y = e[1] * n + j;
          const uint32_t hzy = axis[2].hash[z] ^ axis[1].hash[y];
          const int bzy = axis[2].bits[z] + axis[1].bits[y];
          for (int i = 0; i < n; ++i, ++u) {
            const int x = e[0] * n + i;
            const double start = hashed_value(hzy ^ axis[0].hash[x]) * scale;
            const int b = bzy + axis[0].bits[x];
            const double want = growth_finite ? start * growth[b] : std::ldexp(start, b * exchanges);
            if (*u == want) continue;
            if (bad++ == 0 && !reported.exchange(true))
              std::fprintf(stderr,
                           "faces: rank %d: element (%d,%d,%d) point (%d,%d,%d) holds %.17g, expected %.17g "
                           "(%d exchanges)\n",
                           grid.rank, e[0], e[1], e[2], i, j, k, *u, want, exchanges);
          }
        }
    }
    return bad;
  }
};

}  // namespace

int64_t check_field(const Plan &plan, const Grid &grid, bool interior, int exchanges, double scale,
                    const double *device_field, int threads) {
  const Expectation expect(plan, grid, interior, exchanges, scale);
  const Shape &s = plan.shape;
  const int64_t per_element = s.element_points();
  const int64_t elements = int64_t(s.m[0]) * s.m[1] * s.m[2];
  // Copied back a batch at a time (the large input holds gigabytes per rank) by this thread, the
  // one bound to the rank's device; compared by `threads` threads.
  const int64_t batch = std::max<int64_t>(1, (int64_t(64) << 20) / (per_element * int64_t(sizeof(double))));
  std::vector<double> host(static_cast<size_t>(std::min(batch, elements) * per_element));
  std::atomic<bool> reported{false};
  std::atomic<int64_t> bad{0};
  for (int64_t first = 0; first < elements; first += batch) {
    const int64_t count = std::min(batch, elements - first);
    xdev::copy_to_host(host.data(), device_field + first * per_element, count * per_element * sizeof(double));
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(threads, count));
    std::vector<std::thread> workers;
    for (int64_t t = 0; t < parts; ++t)
      workers.emplace_back([&, t] {
        const int64_t lo = count * t / parts, hi = count * (t + 1) / parts;
        bad += expect.compare(host.data() + lo * per_element, first + lo, first + hi, reported);
      });
    for (std::thread &w : workers) w.join();
  }
  return bad;
}

}  // namespace faces
