#include "check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "xdev.h"

namespace stencil {
namespace {

// The largest relative difference allowed between the L2 norms: the sums of squares run in a
// different order across ranks than in the serial loop. Every other number compares exactly.
constexpr double kL2Tolerance = 1e-12;

std::vector<double> to_host(const Box &b, const double *device) {
  std::vector<double> v(static_cast<size_t>(b.points()));
  xdev::copy_to_host(v.data(), device, v.size() * sizeof(double));
  return v;
}

// Max and sum of squares of new - old over the interior of b.
void accumulate(const Box &b, const std::vector<double> &now, const std::vector<double> &before, double *max_abs,
                double *sum_sq) {
  for (int z = 1; z <= b.n[2]; ++z)
    for (int y = 1; y <= b.n[1]; ++y)
      for (int x = 1; x <= b.n[0]; ++x) {
        const int64_t i = b.index(x, y, z);
        const double diff = now[i] - before[i];
        *max_abs = std::max(*max_abs, std::fabs(diff));
        *sum_sq += diff * diff;
      }
}

// The serial Jacobi over the global grid; returns iteration `iterations`'s field and fills
// *previous with the one before.
std::vector<double> serial_jacobi(const Box &g, int iterations, std::vector<double> *previous) {
  std::vector<double> a(static_cast<size_t>(g.points())), b;
  for (int z = 0; z <= g.n[2] + 1; ++z)
    for (int y = 0; y <= g.n[1] + 1; ++y)
      for (int x = 0; x <= g.n[0] + 1; ++x) a[g.index(x, y, z)] = initial_value(g.n, x, y, z);
  b = a;
  for (int t = 0; t < iterations; ++t) {
    for (int z = 1; z <= g.n[2]; ++z)
      for (int y = 1; y <= g.n[1]; ++y)
        for (int x = 1; x <= g.n[0]; ++x) {
          const int64_t i = g.index(x, y, z);
          b[i] = jacobi_point(g, a.data(), i);
        }
    std::swap(a, b);
  }
  *previous = std::move(b);
  return a;
}

// Rank 0: compares every rank's interior (gathered, rank after rank of d.cart) with the serial run.
void compare(const Decomposition &d, const std::vector<double> &gathered, int iterations, CheckResult *r) {
  Box g;
  for (int k = 0; k < 3; ++k) g.n[k] = d.global[k];
  std::vector<double> before;
  const std::vector<double> now = serial_jacobi(g, iterations, &before);
  double sum_sq = 0;
  accumulate(g, now, before, &r->reference.max_abs, &sum_sq);
  r->reference.l2 = std::sqrt(sum_sq);
  const Box &b = d.box;
  int size = 1;
  MPI_Comm_size(d.cart, &size);
  size_t at = 0;
  for (int rank = 0; rank < size; ++rank) {
    int c[3];
    MPI_Cart_coords(d.cart, rank, 3, c);
    for (int z = 1; z <= b.n[2]; ++z)
      for (int y = 1; y <= b.n[1]; ++y)
        for (int x = 1; x <= b.n[0]; ++x, ++at) {
          const double want = now[g.index(c[0] * b.n[0] + x, c[1] * b.n[1] + y, c[2] * b.n[2] + z)];
          if (std::memcmp(&want, &gathered[at], sizeof want) == 0) continue;
          if (r->mismatches++ < 5)
            std::fprintf(stderr, "stencil: rank %d point (%d,%d,%d): %.17g, the reference has %.17g\n", rank, x, y, z,
                         gathered[at], want);
        }
  }
  r->points = static_cast<long long>(at);
  r->checked = true;
  const double scale = std::max(r->reference.l2, 1e-300);
  r->passed = r->mismatches == 0 && r->residual.max_abs == r->reference.max_abs &&
              std::fabs(r->residual.l2 - r->reference.l2) <= kL2Tolerance * scale;
}

}  // namespace

CheckResult check(const Decomposition &d, const Solver &solver, int iterations, bool reference) {
  CheckResult r;
  const Box &b = d.box;
  const std::vector<double> now = to_host(b, solver.field(iterations));
  const std::vector<double> before = to_host(b, solver.field(iterations - 1));
  double max_abs = 0, sum_sq = 0;
  accumulate(b, now, before, &max_abs, &sum_sq);
  MPI_Allreduce(&max_abs, &r.residual.max_abs, 1, MPI_DOUBLE, MPI_MAX, d.cart);
  MPI_Allreduce(&sum_sq, &r.residual.l2, 1, MPI_DOUBLE, MPI_SUM, d.cart);
  r.residual.l2 = std::sqrt(r.residual.l2);
  if (!reference) return r;

  // Every block has the same size, so a plain gather of the interiors serves.
  std::vector<double> mine;
  mine.reserve(static_cast<size_t>(b.interior()));
  for (int z = 1; z <= b.n[2]; ++z)
    for (int y = 1; y <= b.n[1]; ++y)
      for (int x = 1; x <= b.n[0]; ++x) mine.push_back(now[b.index(x, y, z)]);
  int rank = 0, size = 1;
  MPI_Comm_rank(d.cart, &rank);
  MPI_Comm_size(d.cart, &size);
  std::vector<double> gathered(rank == 0 ? mine.size() * size : 0);
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, gathered.data(), static_cast<int>(mine.size()),
             MPI_DOUBLE, 0, d.cart);
  if (rank == 0) compare(d, gathered, iterations, &r);
  int passed = r.passed ? 1 : 0;
  MPI_Bcast(&passed, 1, MPI_INT, 0, d.cart);
  r.passed = passed != 0;
  return r;
}

}  // namespace stencil
