// CUDA sweep: one thread per interior point, launched on the caller's stream.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "kernels.h"

namespace stencil::kernels {
namespace {

constexpr int kThreads = 256;

__global__ void sweep_kernel(Box b, const double *in, double *out) {
  const int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (t >= b.interior()) return;
  const int x = static_cast<int>(t % b.n[0]) + 1;
  const int y = static_cast<int>(t / b.n[0] % b.n[1]) + 1;
  const int z = static_cast<int>(t / (int64_t(b.n[0]) * b.n[1])) + 1;
  const int64_t i = b.index(x, y, z);
  out[i] = jacobi_point(b, in, i);
}

}  // namespace

void sweep(const Box &b, const double *in, double *out, void *stream) {
  const int64_t n = b.interior();
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  sweep_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(b, in, out);
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "stencil: sweep launch: %s\n", cudaGetErrorString(e));
  std::abort();
}

}  // namespace stencil::kernels
