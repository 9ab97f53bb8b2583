// CUDA kernels of the benchmark: one thread per copy touched, launched on the caller's stream.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

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

// --launch-overlap (set once, before the first launch): every launch lets the kernel be scheduled
// while the kernel before it on the stream still runs (programmatic dependent launch).
bool g_overlap = false;

// Every kernel's first statement. Launched with overlap, the kernel's blocks may start while the
// previous kernel on the stream runs: this waits on the device for that kernel's completion and
// memory (what a kernel boundary gives) before anything is read or stored, and only then lets the
// next launch be scheduled, so at most two grids of the stream are resident. Launched plainly, or
// built for a device before sm_90, both are no-ops: the stream already ordered the launch.
__device__ inline void follow_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__global__ void init_kernel(Shape s, Placement p, double scale, double *u) {
  follow_previous_kernel();
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
  follow_previous_kernel();
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
  follow_previous_kernel();
  int j;
  int64_t k;
  if (!locate(regions, blockIdx.x * int64_t(blockDim.x) + threadIdx.x, &j, &k)) return;
  const Region &r = regions.r[j];
  buf[r.offset + k] = u[region_point(s, r, k)];
}

// Edge and corner copies belong to several regions: atomic adds keep them race-free (every sum
// is exact, so their order does not change the result).
__global__ void unpack_kernel(Shape s, RegionList regions, double *u, const double *buf) {
  follow_previous_kernel();
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

// Launches `kernel` with a thread per item on `stream`, with overlap when --launch-overlap is on.
template <typename... Params, typename... Args>
void launch(const char *what, void (*kernel)(Params...), int64_t threads, void *stream, Args... args) {
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks_for(threads));
  config.blockDim = dim3(kThreads);
  config.stream = static_cast<cudaStream_t>(stream);
  config.attrs = attr;
  config.numAttrs = g_overlap ? 1 : 0;
  (void)cudaLaunchKernelEx(&config, kernel, args...);
  launch_check(what);
}

// Whether `kernel` was built with the dependency wait: a kernel without it must never be launched
// with overlap (it could read what the kernel before it has not yet written).
bool built_to_follow(const void *kernel) {
  cudaFuncAttributes f{};
  if (cudaFuncGetAttributes(&f, kernel) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return f.ptxVersion >= 90 && f.binaryVersion >= 90;
}

}  // namespace

std::string launch_overlap_unavailable() {
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "the device's compute capability is unknown";
  }
  if (major < 9) return "the device's compute capability is below 9.0";
  const void *kernels[] = {reinterpret_cast<const void *>(init_kernel), reinterpret_cast<const void *>(interior_kernel),
                           reinterpret_cast<const void *>(pack_kernel), reinterpret_cast<const void *>(unpack_kernel)};
  for (const void *k : kernels)
    if (!built_to_follow(k)) return "the kernels were not built for sm_90 or later";
  return "";
}

void set_launch_overlap(bool on) { g_overlap = on; }

unsigned long long launches() { return g_launches.load(); }

void init_field(const Shape &s, const Placement &p, double scale, double *u, void *stream) {
  if (s.points() == 0) return;
  launch("init", init_kernel, s.points(), stream, s, p, scale, u);
}

void interior_sum(const Shape &s, double *u, void *stream) {
  for (int d = 0; d < 3; ++d) {
    const int64_t pairs = int64_t(s.m[d] - 1) * (s.points() / (int64_t(s.m[d]) * s.n));
    if (pairs <= 0) continue;
    launch("interior sum", interior_kernel, pairs, stream, s, d, pairs, u);
  }
}

void pack(const Shape &s, const RegionList &regions, const double *u, double *buf, void *stream) {
  const int64_t n = total_copies(regions);
  if (n == 0) return;
  launch("pack", pack_kernel, n, stream, s, regions, u, buf);
}

void unpack_add(const Shape &s, const RegionList &regions, double *u, const double *buf, void *stream) {
  const int64_t n = total_copies(regions);
  if (n == 0) return;
  launch("unpack", unpack_kernel, n, stream, s, regions, u, buf);
}

}  // namespace faces::kernels
