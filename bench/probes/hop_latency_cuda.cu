// hop_latency: the one-way latency of a store into a peer GPU's memory until a thread polling
// that memory sees it, for the access flavours the kernels use (no MPI, no library): two
// resident kernels on devices 0 and 1 ping-pong `iters` times; hop = round trip / 2.
//   flag8-release   st.release.sys.u64 / ld.acquire.sys.u64   (epoch signals, examples/bench/raw_link)
//   flag8-relaxed   st.relaxed.sys.u64 / ld.acquire.sys.u64   (signals without data)
//   flag8-volatile  st.volatile.u64    / ld.acquire.sys.u64   (collective freed signals)
//   line16-volatile st.volatile.v2.u64 / ld.volatile.v2.u64   (collective kLL lines)
// Then the issue cost: one thread stores `iters` times in a row into a peer's memory (to 64
// lines in turn) and times the loop: a few ns a store if stores are posted, about a round trip if
// the thread waits for each; the same with the stores spread over every other visible device, and
// into its own memory for comparison.
// Usage: hop_latency_cuda [iters] [--json FILE]
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

enum Flavour { kRelease, kRelaxed, kVolatile, kLine, kFlavours };
const char *const kNames[kFlavours] = {"flag8-release", "flag8-relaxed", "flag8-volatile", "line16-volatile"};

__device__ inline uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <int F>
__device__ inline void put(uint64_t *p, uint64_t v) {
  if (F == kRelease) asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  if (F == kRelaxed) asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  if (F == kVolatile) asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  if (F == kLine) asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(v), "l"(v) : "memory");
}
template <int F>
__device__ inline void await(const uint64_t *p, uint64_t v) {
  uint64_t a, b;
  do {
    if (F == kLine) {
      asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
    } else {
      asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(a) : "l"(p) : "memory");
      b = a;
    }
  } while (a < v || b < v);
}

// Device 0 starts each round trip; device 1 answers. Values grow from `base` so runs never reset.
template <int F>
__global__ void ping(uint64_t *peer, const uint64_t *mine, uint64_t base, int iters, uint64_t *elapsed) {
  const uint64_t t0 = now_ns();
  for (int i = 1; i <= iters; ++i) {
    put<F>(peer, base + i);
    await<F>(mine, base + i);
  }
  *elapsed = now_ns() - t0;
}
template <int F>
__global__ void pong(uint64_t *peer, const uint64_t *mine, uint64_t base, int iters) {
  for (int i = 1; i <= iters; ++i) {
    await<F>(mine, base + i);
    put<F>(peer, base + i);
  }
}

// One thread's `iters` stores of flavour F, into targets[i % ntargets] + 2 * (i % 64) words.
template <int F>
__global__ void issue(uint64_t *const *targets, int ntargets, int iters, uint64_t *elapsed) {
  const uint64_t t0 = now_ns();
  for (int i = 0; i < iters; ++i) put<F>(targets[i % ntargets] + 2 * (i % 64), uint64_t(i) + 1);
  *elapsed = now_ns() - t0;
}

void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "hop_latency: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct Side {
  uint64_t *words = nullptr;  // 2 words (a 16-byte line) this device polls
  cudaStream_t stream = nullptr;
};

template <int F>
double round_trip_us(Side (&s)[2], uint64_t base, int iters, uint64_t *elapsed) {
  check(cudaSetDevice(1), "device 1");
  pong<F><<<1, 1, 0, s[1].stream>>>(s[0].words, s[1].words, base, iters);
  check(cudaGetLastError(), "pong launch");
  check(cudaSetDevice(0), "device 0");
  ping<F><<<1, 1, 0, s[0].stream>>>(s[1].words, s[0].words, base, iters, elapsed);
  check(cudaGetLastError(), "ping launch");
  check(cudaStreamSynchronize(s[0].stream), "ping");
  check(cudaSetDevice(1), "device 1");
  check(cudaStreamSynchronize(s[1].stream), "pong");
  uint64_t ns = 0;
  check(cudaSetDevice(0), "device 0");
  check(cudaMemcpy(&ns, elapsed, sizeof ns, cudaMemcpyDeviceToHost), "elapsed");
  return double(ns) / 1e3 / iters;
}

}  // namespace

int main(int argc, char **argv) {
  int iters = 10000;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else iters = std::max(1, std::atoi(argv[i]));
  }
  int count = 0;
  check(cudaGetDeviceCount(&count), "device count");
  if (count < 2) {
    std::printf("hop_latency: needs two devices (found %d)\n", count);
    return 0;
  }
  Side s[2];
  for (int d = 0; d < 2; ++d) {
    check(cudaSetDevice(d), "set device");
    const cudaError_t e = cudaDeviceEnablePeerAccess(1 - d, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) check(e, "peer access");
    (void)cudaGetLastError();
    check(cudaMalloc(&s[d].words, 2 * sizeof(uint64_t)), "words");
    check(cudaMemset(s[d].words, 0, 2 * sizeof(uint64_t)), "clear");
    check(cudaStreamCreateWithFlags(&s[d].stream, cudaStreamNonBlocking), "stream");
  }
  check(cudaSetDevice(0), "device 0");
  uint64_t *elapsed = nullptr;
  check(cudaMalloc(&elapsed, sizeof(uint64_t)), "elapsed");
  check(cudaDeviceSynchronize(), "setup");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  std::printf("# hop_latency: devices 0 and 1 (%s), %d round trips per flavour, two runs each\n", prop.name, iters);
  std::printf("%-16s %10s %10s\n", "flavour", "hop_us", "hop_us_2");
  std::vector<std::pair<std::string, double>> rows;
  uint64_t base = 0;
  for (int f = 0; f < kFlavours; ++f) {
    double h[2];
    for (int r = 0; r < 2; ++r) {
      double rt = 0;
      switch (f) {
        case kRelease: rt = round_trip_us<kRelease>(s, base, iters, elapsed); break;
        case kRelaxed: rt = round_trip_us<kRelaxed>(s, base, iters, elapsed); break;
        case kVolatile: rt = round_trip_us<kVolatile>(s, base, iters, elapsed); break;
        default: rt = round_trip_us<kLine>(s, base, iters, elapsed); break;
      }
      base += iters;
      h[r] = rt / 2;
    }
    std::printf("%-16s %10.3f %10.3f\n", kNames[f], h[0], h[1]);
    rows.emplace_back(std::string("hop_us ") + kNames[f], h[1]);
  }
  // Issue cost: 128 words (64 lines) on every device, written from device 0.
  std::vector<uint64_t *> area(count);
  for (int d = 0; d < count; ++d) {
    check(cudaSetDevice(d), "set device");
    if (d) {
      const cudaError_t e = cudaDeviceEnablePeerAccess(0, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) check(e, "peer access");
      (void)cudaGetLastError();
    }
    check(cudaMalloc(&area[d], 128 * sizeof(uint64_t)), "area");
  }
  check(cudaSetDevice(0), "device 0");
  for (int d = 2; d < count; ++d) {
    const cudaError_t e = cudaDeviceEnablePeerAccess(d, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) check(e, "peer access");
    (void)cudaGetLastError();
  }
  uint64_t **targets = nullptr;
  check(cudaMalloc(&targets, count * sizeof(uint64_t *)), "targets");
  struct Case {
    const char *name;
    std::vector<uint64_t *> to;
  };
  std::vector<uint64_t *> others(area.begin() + 1, area.end());
  const Case cases[] = {{"own memory", {area[0]}}, {"one peer", {area[1]}}, {"every peer in turn", others}};
  std::printf("# issue cost: ns per store, one thread, %d stores in a row (%d devices)\n", iters, count);
  std::printf("%-20s", "targets");
  for (int f = 0; f < kFlavours; ++f) std::printf(" %16s", kNames[f]);
  std::printf("\n");
  for (const Case &c : cases) {
    check(cudaMemcpy(targets, c.to.data(), c.to.size() * sizeof(uint64_t *), cudaMemcpyHostToDevice), "targets");
    std::printf("%-20s", c.name);
    for (int f = 0; f < kFlavours; ++f) {
      double per = 0;
      for (int r = 0; r < 2; ++r) {  // the second run counts (the first warms up)
        const int n = static_cast<int>(c.to.size());
        if (f == kRelease) issue<kRelease><<<1, 1, 0, s[0].stream>>>(targets, n, iters, elapsed);
        if (f == kRelaxed) issue<kRelaxed><<<1, 1, 0, s[0].stream>>>(targets, n, iters, elapsed);
        if (f == kVolatile) issue<kVolatile><<<1, 1, 0, s[0].stream>>>(targets, n, iters, elapsed);
        if (f == kLine) issue<kLine><<<1, 1, 0, s[0].stream>>>(targets, n, iters, elapsed);
        check(cudaStreamSynchronize(s[0].stream), "issue");
        uint64_t ns = 0;
        check(cudaMemcpy(&ns, elapsed, sizeof ns, cudaMemcpyDeviceToHost), "elapsed");
        per = double(ns) / iters;
      }
      std::printf(" %16.1f", per);
      rows.emplace_back(std::string("issue_ns ") + c.name + " " + kNames[f], per);
    }
    std::printf("\n");
  }
  if (!json.empty()) {
    if (FILE *out = std::fopen(json.c_str(), "w")) {
      std::fprintf(out, "{\"device\": \"%s\", \"iters\": %d, \"results\": {", prop.name, iters);
      for (size_t i = 0; i < rows.size(); ++i)
        std::fprintf(out, "%s\"%s\": %.4f", i ? ", " : "", rows[i].first.c_str(), rows[i].second);
      std::fprintf(out, "}}\n");
      std::fclose(out);
    }
  }
  return 0;
}
