// The local block (nx*ny*nz interior points inside a one-point halo, x fastest) and the 7-point
// Jacobi update. The host loops, the CUDA kernel and the serial reference all call jacobi_point,
// so they do the same floating-point operations in the same order and compare bit for bit.
#pragma once
#include <cstdint>

#include "xdev.h"  // XDEV_HOST_DEVICE

namespace stencil {

struct Box {
  int n[3] = {0, 0, 0};  // interior points along x, y, z
  // Strides of the array with its halo; index 0 along each dimension is the low halo layer.
  XDEV_HOST_DEVICE int64_t sy() const { return n[0] + 2; }
  XDEV_HOST_DEVICE int64_t sz() const { return sy() * (n[1] + 2); }
  XDEV_HOST_DEVICE int64_t points() const { return sz() * (n[2] + 2); }  // halo included
  XDEV_HOST_DEVICE int64_t interior() const { return int64_t(n[0]) * n[1] * n[2]; }
  XDEV_HOST_DEVICE int64_t index(int x, int y, int z) const { return x + y * sy() + z * sz(); }
};

// The mean of the six neighbours of point i of u.
XDEV_HOST_DEVICE inline double jacobi_point(const Box &b, const double *u, int64_t i) {
  const double sum = u[i - 1] + u[i + 1] + u[i - b.sy()] + u[i + b.sy()] + u[i - b.sz()] + u[i + b.sz()];
  return sum * (1.0 / 6.0);
}

// The starting field at a point of the global array (halo coordinates: 0 and N+1 are the fixed
// boundary). Values differ from point to point, so a halo put in the wrong place shows.
inline double initial_value(const int global[3], int gx, int gy, int gz) {
  const bool boundary = gx == 0 || gy == 0 || gz == 0 || gx == global[0] + 1 || gy == global[1] + 1 ||
                        gz == global[2] + 1;
  if (boundary) return 1.0 + 0.25 * gx / (global[0] + 1) + 0.5 * gy / (global[1] + 1) + gz / double(global[2] + 1);
  uint64_t h = (uint64_t(gx) * 73856093u) ^ (uint64_t(gy) * 19349663u) ^ (uint64_t(gz) * 83492791u);
  h = (h ^ (h >> 13)) * 0x9e3779b97f4a7c15ull;
  return double(h >> 11) / double(1ull << 53);  // [0, 1)
}

}  // namespace stencil
