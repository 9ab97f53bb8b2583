// Host cost of one launch, by launch flavour (plain <<<>>>, cudaLaunchKernelEx, with the programmatic
// serialization attribute), by kernel shape (params size, static shared memory, launch bounds) and
// stream state (queue running / idle). Median of 5 reps; per call in us.
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include <functional>
template <int B> struct P { char b[B]; };
template <int B> __global__ void plain(P<B> p) { if (p.b[0] == 123 && threadIdx.x == 9999) printf("x"); }
template <int B> __global__ void __launch_bounds__(512, 2) pdl(P<B> p) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (p.b[0] == 123 && threadIdx.x == 9999) printf("x");
}
template <int B> __global__ void __launch_bounds__(512, 2) shared_big(P<B> p) {
  __shared__ unsigned long long s[3000];
  s[threadIdx.x] = p.b[0];
  __syncthreads();
  if (s[(threadIdx.x + 1) % 512] == 123 && threadIdx.x == 9999) printf("x");
}
__global__ void k0() {}
using clk = std::chrono::steady_clock;
cudaStream_t s;
template <class F> double busy(F f, int n = 400) {  // back to back, stream never drains
  for (int i = 0; i < 50; ++i) f();
  cudaStreamSynchronize(s);
  auto t = clk::now();
  for (int i = 0; i < n; ++i) f();
  double us = std::chrono::duration<double, std::micro>(clk::now() - t).count() / n;
  cudaStreamSynchronize(s);
  return us;
}
template <class F> double idle(F f, int n = 300) {  // each launch into an idle stream
  double total = 0;
  for (int i = 0; i < n; ++i) {
    cudaStreamSynchronize(s);
    auto t = clk::now();
    f();
    total += std::chrono::duration<double, std::micro>(clk::now() - t).count();
  }
  cudaStreamSynchronize(s);
  return total / n;
}
template <typename K, typename... A> cudaError_t ex(K k, int blocks, bool attr, A... a) {
  cudaLaunchAttribute at[1] = {};
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(blocks);
  c.blockDim = dim3(512);
  c.stream = s;
  c.attrs = attr ? at : nullptr;
  c.numAttrs = attr ? 1 : 0;
  return cudaLaunchKernelEx(&c, k, a...);
}
double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
int main() {
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  P<256> p{};
  struct Row { const char *name; std::vector<double> b, i; };
  std::vector<Row> rows = {{"k0<<<1,32>>> empty", {}, {}},
                           {"plain<<<1,512>>> 256 B params", {}, {}},
                           {"plain<<<8,512>>> 256 B params", {}, {}},
                           {"cudaLaunchKernelEx plain, no attr", {}, {}},
                           {"cudaLaunchKernelEx pdl kernel, no attr", {}, {}},
                           {"cudaLaunchKernelEx pdl kernel, PDL attr", {}, {}},
                           {"cudaLaunchKernelEx pdl kernel, PDL attr, 8 blocks", {}, {}},
                           {"shared_big<<<1,512>>> 24 KB static smem", {}, {}},
                           {"cudaLaunchKernelEx shared_big, PDL attr", {}, {}},
                           {"cudaGetLastError", {}, {}},
                           {"cudaStreamIsCapturing", {}, {}}};
  cudaStreamCaptureStatus cs;
  for (int rep = 0; rep < 5; ++rep) {
    auto f = std::vector<std::function<void()>>{};
    int r = 0;
    auto go = [&](auto fn) { rows[r].b.push_back(busy(fn)); rows[r].i.push_back(idle(fn)); ++r; };
    go([&] { k0<<<1, 32, 0, s>>>(); });
    go([&] { plain<256><<<1, 512, 0, s>>>(p); });
    go([&] { plain<256><<<8, 512, 0, s>>>(p); });
    go([&] { ex(plain<256>, 1, false, p); });
    go([&] { ex(pdl<256>, 1, false, p); });
    go([&] { ex(pdl<256>, 1, true, p); });
    go([&] { ex(pdl<256>, 8, true, p); });
    go([&] { shared_big<256><<<1, 512, 0, s>>>(p); });
    go([&] { ex(shared_big<256>, 1, true, p); });
    go([&] { (void)cudaGetLastError(); });
    go([&] { cudaStreamIsCapturing(s, &cs); });
  }
  std::printf("%-52s %12s %12s\n", "launch (median of 5 reps)", "busy us", "idle us");
  for (auto &r : rows) std::printf("%-52s %12.3f %12.3f\n", r.name, med(r.b), med(r.i));
  std::printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
}
