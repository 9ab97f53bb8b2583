// CUDA kernels of the benchmark: one thread per copy touched, launched on the caller's stream.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "kernels.h"

namespace faces::kernels {
namespace {

constexpr int kThreads = 256;

std::atomic<unsigned long long> g_launches{0};

// Called after every launch: counts it and stops on a launch error.
void launch_check(const char *what) {
  ++g_launches;
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "faces: %s launch: %s\n", what, cudaGetErrorString(e));
  std::abort();
}

unsigned blocks_for(int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

cudaStream_t as_stream(void *stream) { return static_cast<cudaStream_t>(stream); }

__global__ void init_kernel(Shape s, Placement p, double scale, double *u) {
  const int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (t >= s.points()) return;
  int64_t rest = t;
  int e[3], i[3];
  for (int d = 0; d < 3; ++d) i[d] = static_cast<int>(rest % s.n), rest /= s.n;
  for (int d = 0; d < 3; ++d) e[d] = static_cast<int>(rest % s.m[d]), rest /= s.m[d];
  u[t] = initial_value(s, p, e, i, scale);
}

// One pass of the interior sum: thread t handles one pair of copies across an element boundary
// normal to dimension d.
__global__ void interior_kernel(Shape s, int d, int64_t pairs, double *u) {
  const int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (t >= pairs) return;
  int64_t rest = t;
  int e[3], i[3];
  for (int k = 0; k < 3; ++k) {
    if (k == d) continue;
    i[k] = static_cast<int>(rest % s.n), rest /= s.n;
    e[k] = static_cast<int>(rest % s.m[k]), rest /= s.m[k];
  }
  const int pair = static_cast<int>(rest);
  e[d] = pair, i[d] = s.n - 1;
  const int64_t lo = point_index(s, e, i);
  e[d] = pair + 1, i[d] = 0;
  const int64_t hi = point_index(s, e, i);
  const double sum = u[lo] + u[hi];
  u[lo] = sum;
  u[hi] = sum;
}

// Maps a flat thread number over all regions to (region, copy within it).
__device__ inline bool locate(const RegionList &regions, int64_t t, int *j, int64_t *k) {
  for (int r = 0; r < regions.count; ++r) {
    if (t < regions.r[r].count) {
      *j = r, *k = t;
      return true;
    }
    t -= regions.r[r].count;
  }
  return false;
}

__global__ void pack_kernel(Shape s, RegionList regions, const double *u, double *buf) {
  int j;
  int64_t k;
  if (!locate(regions, blockIdx.x * int64_t(blockDim.x) + threadIdx.x, &j, &k)) return;
  const Region &r = regions.r[j];
  buf[r.offset + k] = u[region_point(s, r, k)];
}

// Edge and corner copies belong to several regions: atomic adds keep them race-free (every sum
// is exact, so their order does not change the result).
__global__ void unpack_kernel(Shape s, RegionList regions, double *u, const double *buf) {
  int j;
  int64_t k;
  if (!locate(regions, blockIdx.x * int64_t(blockDim.x) + threadIdx.x, &j, &k)) return;
  const Region &r = regions.r[j];
  atomicAdd(&u[region_point(s, r, k)], buf[r.offset + k]);
}

int64_t total_copies(const RegionList &regions) {
  int64_t n = 0;
  for (int j = 0; j < regions.count; ++j) n += regions.r[j].count;
  return n;
}

}  // namespace

unsigned long long launches() { return g_launches.load(); }

void init_field(const Shape &s, const Placement &p, double scale, double *u, void *stream) {
  if (s.points() == 0) return;
  init_kernel<<<blocks_for(s.points()), kThreads, 0, as_stream(stream)>>>(s, p, scale, u);
  launch_check("init");
}

void interior_sum(const Shape &s, double *u, void *stream) {
  for (int d = 0; d < 3; ++d) {
    const int64_t pairs = int64_t(s.m[d] - 1) * (s.points() / (int64_t(s.m[d]) * s.n));
    if (pairs <= 0) continue;
    interior_kernel<<<blocks_for(pairs), kThreads, 0, as_stream(stream)>>>(s, d, pairs, u);
    launch_check("interior sum");
  }
}

void pack(const Shape &s, const RegionList &regions, const double *u, double *buf, void *stream) {
  const int64_t n = total_copies(regions);
  if (n == 0) return;
  pack_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(s, regions, u, buf);
  launch_check("pack");
}

void unpack_add(const Shape &s, const RegionList &regions, double *u, const double *buf, void *stream) {
  const int64_t n = total_copies(regions);
  if (n == 0) return;
  unpack_kernel<<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(s, regions, u, buf);
  launch_check("unpack");
}

}  // namespace faces::kernels
