// copy_paths: how fast the GPUs of one host push data to each other by each copy path, the question
// behind the split of a collective's copies between two paths in [Faraji 2018]. Every GPU pushes
// `bytes` to every other GPU at once (an allgather's traffic), by
//   sm     one kernel per GPU, its blocks storing into the peers' memory (what mpix-st's
//          collective kernel does)
//   ce     copy-engine copies (cudaMemcpyPeerAsync), one stream per pair so they run together
//   split  a share s of every push by copy engine, the rest by the kernel, concurrently
// One process drives every GPU (peer access enabled), so this measures the links and engines,
// not the library. Prints one line per run and writes JSON.
//
//   copy_paths_cuda [--gpus N] [--sizes-mib 4,16,64] [--iters 20] [--blocks 64] [--json F]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "copy_paths: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

struct Push {
  const int4 *src;
  int4 *dst;
};

// Blocks are dealt to the pushes round-robin; each block strides over its push in 16-byte words.
__global__ void push_kernel(const Push *pushes, int npush, uint64_t words, uint64_t first_word) {
  const int p = blockIdx.x % npush;
  const int blocks_per_push = gridDim.x / npush;
  const int b = blockIdx.x / npush;
  const int4 *src = pushes[p].src + first_word;
  int4 *dst = pushes[p].dst + first_word;
  for (uint64_t i = static_cast<uint64_t>(b) * blockDim.x + threadIdx.x; i < words;
       i += static_cast<uint64_t>(blocks_per_push) * blockDim.x)
    dst[i] = src[i];
}

struct Gpu {
  cudaStream_t kernel_stream;
  std::vector<cudaStream_t> pair_streams;  // by destination
  char *send = nullptr;                    // `bytes`
  char *recv = nullptr;                    // gpus * bytes, slot j receives from GPU j
  Push *pushes = nullptr;                  // device copy of this GPU's push table
};

std::vector<int> parse_list(const char *s) {
  std::vector<int> v;
  for (const char *p = s; *p;) {
    v.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return v;
}

}  // namespace

int main(int argc, char **argv) {
  int gpus = 0, iters = 20, blocks = 64;
  std::vector<int> sizes_mib = {4, 16, 64};
  std::vector<double> shares = {0.0, 0.25, 0.5, 0.75, 1.0};
  const char *json_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--gpus") gpus = std::atoi(v), ++i;
    else if (a == "--sizes-mib") sizes_mib = parse_list(v), ++i;
    else if (a == "--iters") iters = std::atoi(v), ++i;
    else if (a == "--blocks") blocks = std::atoi(v), ++i;
    else if (a == "--json") json_path = v, ++i;
    else {
      std::fprintf(stderr, "usage: copy_paths_cuda [--gpus N] [--sizes-mib a,b] [--iters N] [--blocks N] [--json F]\n");
      return 2;
    }
  }
  int visible = 0;
  check(cudaGetDeviceCount(&visible), "cudaGetDeviceCount");
  if (gpus <= 0 || gpus > visible) gpus = visible;
  if (gpus < 2) {
    std::fprintf(stderr, "copy_paths: needs two GPUs, found %d\n", visible);
    return 1;
  }
  int max_mib = 0;
  for (int m : sizes_mib) max_mib = m > max_mib ? m : max_mib;
  const uint64_t max_bytes = static_cast<uint64_t>(max_mib) << 20;

  std::vector<Gpu> g(gpus);
  for (int d = 0; d < gpus; ++d) {
    check(cudaSetDevice(d), "cudaSetDevice");
    for (int e = 0; e < gpus; ++e) {
      if (e == d) continue;
      int can = 0;
      check(cudaDeviceCanAccessPeer(&can, d, e), "cudaDeviceCanAccessPeer");
      if (!can) {
        std::fprintf(stderr, "copy_paths: GPU %d cannot reach GPU %d directly\n", d, e);
        return 1;
      }
      check(cudaDeviceEnablePeerAccess(e, 0), "cudaDeviceEnablePeerAccess");
    }
    check(cudaStreamCreateWithFlags(&g[d].kernel_stream, cudaStreamNonBlocking), "cudaStreamCreate");
    g[d].pair_streams.resize(gpus);
    for (int e = 0; e < gpus; ++e) check(cudaStreamCreateWithFlags(&g[d].pair_streams[e], cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaMalloc(&g[d].send, max_bytes), "cudaMalloc");
    check(cudaMalloc(&g[d].recv, max_bytes * gpus), "cudaMalloc");
    check(cudaMemset(g[d].send, d + 1, max_bytes), "cudaMemset");
    check(cudaMalloc(&g[d].pushes, sizeof(Push) * gpus), "cudaMalloc");
  }
  // GPU d's pushes: its send buffer into slot d of every other GPU's receive buffer.
  for (int d = 0; d < gpus; ++d) {
    std::vector<Push> table;
    for (int k = 1; k < gpus; ++k) {
      const int e = (d + k) % gpus;  // rotated, so no GPU takes every push first
      table.push_back({reinterpret_cast<const int4 *>(g[d].send), reinterpret_cast<int4 *>(g[e].recv + d * max_bytes)});
    }
    check(cudaSetDevice(d), "cudaSetDevice");
    check(cudaMemcpy(g[d].pushes, table.data(), sizeof(Push) * table.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
  }

  std::printf("# copy_paths: %d GPUs, every GPU pushes to every other; %d iterations, %d blocks of 512 threads for sm\n",
              gpus, iters, blocks);
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("# device 0: %s\n", prop.name);
  std::printf("%-8s %6s %10s %12s %14s\n", "path", "share", "MiB/peer", "time_us", "GB/s_out/gpu");

  std::string json = "{\"gpus\": " + std::to_string(gpus) + ", \"device\": \"" + prop.name + "\", \"iters\": " +
                     std::to_string(iters) + ", \"blocks\": " + std::to_string(blocks) + ", \"runs\": [";
  bool first_run = true;
  for (int mib : sizes_mib) {
    const uint64_t bytes = static_cast<uint64_t>(mib) << 20;
    for (double share : shares) {
      // Copy-engine part: the first ce_bytes of each push (16-byte aligned); the kernel takes the rest.
      const uint64_t ce_bytes = static_cast<uint64_t>(bytes * share) / 16 * 16;
      const uint64_t sm_bytes = bytes - ce_bytes;
      auto one = [&] {
        for (int d = 0; d < gpus; ++d) {
          check(cudaSetDevice(d), "cudaSetDevice");
          if (ce_bytes)
            for (int k = 1; k < gpus; ++k) {
              const int e = (d + k) % gpus;
              check(cudaMemcpyPeerAsync(g[e].recv + d * max_bytes, e, g[d].send, d, ce_bytes, g[d].pair_streams[e]),
                    "cudaMemcpyPeerAsync");
            }
          if (sm_bytes)
            push_kernel<<<blocks, 512, 0, g[d].kernel_stream>>>(g[d].pushes, gpus - 1, sm_bytes / 16, ce_bytes / 16);
        }
        for (int d = 0; d < gpus; ++d) {
          check(cudaSetDevice(d), "cudaSetDevice");
          check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        }
      };
      one();  // warm-up
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) one();
      const auto t1 = std::chrono::steady_clock::now();
      const double us = std::chrono::duration<double, std::micro>(t1 - t0).count() / iters;
      const double gbs = static_cast<double>(bytes) * (gpus - 1) / (us * 1e3);
      const char *path = share == 0.0 ? "sm" : share == 1.0 ? "ce" : "split";
      std::printf("%-8s %6.2f %10d %12.1f %14.1f\n", path, share, mib, us, gbs);
      json += std::string(first_run ? "" : ", ") + "{\"path\": \"" + path + "\", \"ce_share\": " + std::to_string(share) +
              ", \"mib_per_peer\": " + std::to_string(mib) + ", \"time_us\": " + std::to_string(us) +
              ", \"gbs_out_per_gpu\": " + std::to_string(gbs) + "}";
      first_run = false;
    }
  }
  json += "]}\n";
  // Checks that every byte arrived once (the last run of the largest size wrote every slot).
  const uint64_t last = static_cast<uint64_t>(sizes_mib.back()) << 20;
  std::vector<char> host(last);
  for (int e = 0; e < gpus; ++e)
    for (int d = 0; d < gpus; ++d) {
      if (d == e) continue;
      check(cudaSetDevice(e), "cudaSetDevice");
      check(cudaMemcpy(host.data(), g[e].recv + d * max_bytes, last, cudaMemcpyDeviceToHost), "cudaMemcpy");
      for (uint64_t i = 0; i < last; ++i)
        if (host[i] != static_cast<char>(d + 1)) {
          std::fprintf(stderr, "copy_paths: GPU %d slot %d byte %llu holds %d, not %d\n", e, d,
                       static_cast<unsigned long long>(i), host[i], d + 1);
          return 1;
        }
    }
  std::printf("# every pushed byte checked\n");
  if (json_path) {
    FILE *f = std::fopen(json_path, "w");
    if (!f) {
      std::fprintf(stderr, "copy_paths: cannot write %s\n", json_path);
      return 1;
    }
    std::fputs(json.c_str(), f);
    std::fclose(f);
  }
  return 0;
}
