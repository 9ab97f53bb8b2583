// Host cost of the calls an eager MPIX_*_stream call makes besides its launch (H100).
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
template <int B> struct P { char b[B]; };
template <int B> __global__ void k(P<B> p) { if (p.b[0] == 123 && threadIdx.x == 9999) printf("x"); }
__global__ void k0() {}
using clk = std::chrono::steady_clock;
template <class F> double per_call(F f, int n = 20000) {
  for (int i = 0; i < 200; ++i) f();
  cudaDeviceSynchronize();
  auto t = clk::now();
  for (int i = 0; i < n; ++i) f();
  return std::chrono::duration<double, std::micro>(clk::now() - t).count() / n;
}
int main() {
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int rep = 0; rep < 3; ++rep) {
    double l0 = per_call([&] { k0<<<1, 32, 0, s>>>(); cudaStreamSynchronize(s); }, 5000);
    double la = per_call([&] { k0<<<1, 32, 0, s>>>(); }, 400); cudaStreamSynchronize(s);
    double l16 = per_call([&] { k<16><<<1, 512, 0, s>>>(P<16>{}); }, 400); cudaStreamSynchronize(s);
    double l160 = per_call([&] { k<160><<<1, 512, 0, s>>>(P<160>{}); }, 400); cudaStreamSynchronize(s);
    double l544 = per_call([&] { k<544><<<1, 512, 0, s>>>(P<544>{}); }, 400); cudaStreamSynchronize(s);
    double l1312 = per_call([&] { k<1312><<<1, 512, 0, s>>>(P<1312>{}); }, 400); cudaStreamSynchronize(s);
    double l3872 = per_call([&] { k<3872><<<1, 512, 0, s>>>(P<3872>{}); }, 400); cudaStreamSynchronize(s);
    cudaStreamCaptureStatus st;
    double cap = per_call([&] { cudaStreamIsCapturing(s, &st); });
    double cap2 = per_call([&] { cudaStreamCaptureStatus x; unsigned long long id; cudaStreamGetCaptureInfo(s, &x, &id); });
    double gle = per_call([&] { (void)cudaGetLastError(); });
    int dev; double gd = per_call([&] { cudaGetDevice(&dev); });
    std::printf("rep %d: launch+sync %.2f | async launch: 0 B %.2f, 16 B %.2f, 160 B %.2f, 544 B %.2f, 1312 B %.2f, 3872 B %.2f | IsCapturing %.3f GetCaptureInfo %.3f GetLastError %.3f GetDevice %.3f us\n",
                rep, l0, la, l16, l160, l544, l1312, l3872, cap, cap2, gle, gd);
  }
}
