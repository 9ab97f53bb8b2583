// call_chain: the period of a chain of small one-shot reduces across kernel boundaries, without MPI
// or the library, to tell what a replayed collective's waits are made of. Devices 0..n-1 (n <= 8)
// in one process; each call is one block per device: the pushers wait for the root's freed flag
// of two calls back (the library's double-buffered line slots), store one 16-byte line into the
// root's memory; the root waits for every line; then every rank stores its freed flag into every
// peer, as coll_kernel's kLL rounds do. Round numbers come from a cursor in device memory, so a
// captured graph replays them. Modes, each timed over the same number of calls:
//   loop      one kernel per device runs every call (the protocol without kernel boundaries)
//   graph     one kernel per call, captured (G calls per graph) and replayed
//   graph-pdl the same launched with programmatic dependent launch (the library's launch overlap)
//   empty     one kernel per call that only advances the cursor (no cross-device wait)
// Prints the period per call and, from globaltimer stamps, the median wait after entry of the
// root and of a pusher and the gap between a kernel's exit and the next one's entry.
// Built with CALL_CHAIN_MPI (call_chain_mpi_cuda), each MPI rank drives one device and maps the
// others' areas through CUDA IPC, as the library's processes do; without, one process drives every
// visible device with peer access. The same kernels and graphs either way.
// --stack K: each call also takes its peers' addresses through K arrays of 64 in local memory.
// Usage: call_chain_cuda [calls] [--threads T] [--stack K] [--json FILE]
//        mpiexec -n N call_chain_mpi_cuda [calls] [--threads T] [--stack K] [--json FILE]
#include <cuda_runtime.h>
#ifdef CALL_CHAIN_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// The library's own device accesses and launch (no library code runs): the probe measures them.
#include "kernels/device_atomics.h"
#include "kernels/launch_overlap.h"

namespace {

constexpr int kMaxDevices = 8;
int threads = 64;        // of each call's block
int stack_arrays = 0;    // --stack
constexpr int kGraphCalls = 100;
// Word offsets in each device's area.
constexpr int kLines = 0;    // [2][kMaxDevices] lines of two words
constexpr int kFreed = 64;   // [kMaxDevices]: freed[src] = r + 2 once src has read round r
constexpr int kCursor = 96;  // rounds this device ran
constexpr int kWords = 128;

struct Args {
  uint64_t *mem[kMaxDevices];  // every device's area, as this device sees it
  uint64_t *stamps;            // [call][3]: enter, waited, exit (this device's)
  int me, root, n;
  int stack_arrays;            // --stack: arrays of 64 addresses in local memory each thread fills
};

// A line carrying v in both words (the kLL lines carry a payload and its round's tag).
__device__ inline bool line_is(const uint64_t *p, uint64_t v) {
  uint64_t a, b;
  mpix_load_line(p, &a, &b);
  return a == v && b == v;
}
// A freed flag or the cursor, stored as the collective kernel stores them.
__device__ inline void store_volatile(uint64_t *p, uint64_t v) { *reinterpret_cast<volatile uint64_t *>(p) = v; }

// The peer addresses through `arrays` arrays of 64 entries in local memory (a thread stack, as
// the library's schedules keep their per-peer address arrays), filled for n peers and read back.
__device__ __noinline__ uint64_t *through_stack(const Args &a, int which) {
  constexpr int kEntries = 64, kMost = 8;
  uint64_t *volatile local[kMost][kEntries];  // volatile: kept in memory, as indexed arrays are
  const int arrays = a.stack_arrays < kMost ? a.stack_arrays : kMost;
  for (int k = 0; k < arrays; ++k)
    for (int q = 0; q < a.n; ++q) local[k][q] = a.mem[(q + k) % a.n];
  uint64_t *p = a.mem[which];
  for (int k = 0; k < arrays; ++k) p = local[k][(which + a.n - k % a.n) % a.n];
  return p;
}

// Call r (1-based) on this device, by the block's threads.
__device__ void one_call(const Args &a, uint64_t r, bool stamp) {
  __shared__ uint64_t waited;
  uint64_t *mine = a.stack_arrays ? through_stack(a, a.me) : a.mem[a.me];
  const uint64_t t0 = stamp ? mpix_clock_ns() : 0;
  if (threadIdx.x == 0) waited = t0;
  __syncthreads();
  const int slot = static_cast<int>(r & 1);
  if (a.me != a.root) {
    if (threadIdx.x == 0) {
      while (mpix_load_acquire_sys(mine + kFreed + a.root) < r) {
      }
      waited = stamp ? mpix_clock_ns() : 0;
      uint64_t *root = a.stack_arrays ? through_stack(a, a.root) : a.mem[a.root];
      mpix_store_line(root + kLines + 2 * (slot * kMaxDevices + a.me), r, r);
    }
  } else {
    const int q = threadIdx.x;
    if (q < a.n && q != a.me) {
      while (!line_is(mine + kLines + 2 * (slot * kMaxDevices + q), r)) {
      }
      if (stamp) atomicMax(reinterpret_cast<unsigned long long *>(&waited), mpix_clock_ns());
    }
  }
  __syncthreads();
  const int q = threadIdx.x;
  if (q < a.n && q != a.me) store_volatile(a.mem[q] + kFreed + a.me, r + 2);
  if (threadIdx.x == 0) {
    store_volatile(mine + kCursor, r);
    if (stamp) {
      uint64_t *s = a.stamps + 3 * (r - 1);
      s[0] = t0;
      s[1] = waited;
      s[2] = mpix_clock_ns();
    }
  }
}

__global__ void call_kernel(Args a) {
  mpix_grid_dependency_wait();
  mpix_grid_launch_dependents();
  const uint64_t r = *reinterpret_cast<volatile uint64_t *>(a.mem[a.me] + kCursor) + 1;
  one_call(a, r, true);
}
__global__ void loop_kernel(Args a, int calls) {
  const uint64_t base = *reinterpret_cast<volatile uint64_t *>(a.mem[a.me] + kCursor);
  for (int i = 1; i <= calls; ++i) {
    one_call(a, base + i, true);
    __syncthreads();
  }
}
__global__ void empty_kernel(Args a) {
  mpix_grid_dependency_wait();
  mpix_grid_launch_dependents();
  if (threadIdx.x) return;
  const uint64_t t0 = mpix_clock_ns();
  uint64_t *cursor = a.mem[a.me] + kCursor;
  const uint64_t r = *reinterpret_cast<volatile uint64_t *>(cursor) + 1;
  *reinterpret_cast<volatile uint64_t *>(cursor) = r;
  uint64_t *s = a.stamps + 3 * (r - 1);
  s[0] = s[1] = t0;
  s[2] = mpix_clock_ns();
}

void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "call_chain: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

enum Mode { kLoop, kGraph, kGraphPdl, kEmpty, kModes };
const char *const kModeNames[kModes] = {"loop", "graph", "graph-pdl", "empty"};

struct Device {
  int id = 0;  // CUDA device
  uint64_t *area = nullptr;
  uint64_t *stamps = nullptr;
  cudaStream_t stream = nullptr;
  Args args{};
};

// The devices this process drives: every one without MPI, its rank's with.
struct Team {
  std::vector<Device> devs;
  int n = 0;  // devices in the chain, over all processes
  bool root_here() const { return devs.front().args.me == 0; }
  void barrier() const {
#ifdef CALL_CHAIN_MPI
    MPI_Barrier(MPI_COMM_WORLD);
#endif
  }
  double max_over_processes(double v) const {
#ifdef CALL_CHAIN_MPI
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
    return v;
  }
};

void reset(Team &t, int calls) {
  for (Device &d : t.devs) {
    check(cudaSetDevice(d.id), "set device");
    std::vector<uint64_t> init(kWords, 0);
    for (int q = 0; q < kMaxDevices; ++q) init[kFreed + q] = 2;  // rounds 1 and 2 need no permission
    check(cudaMemcpy(d.area, init.data(), kWords * sizeof(uint64_t), cudaMemcpyHostToDevice), "reset");
    check(cudaMemset(d.stamps, 0, 3 * sizeof(uint64_t) * calls), "stamps");
    check(cudaDeviceSynchronize(), "reset sync");
  }
  t.barrier();
}

// One call's kernel: with programmatic dependent launch in graph-pdl and empty, as the library
// launches with launch overlap on.
void launch_call(Mode m, const Device &dev) {
  const bool overlap = m != kGraph;
  const int e = mpix_launch_kernel(m == kEmpty ? empty_kernel : call_kernel, 1, threads, dev.stream, overlap, dev.args);
  check(static_cast<cudaError_t>(e), "launch");
}

struct Result {
  double period_us, root_wait_us, pusher_wait_us, gap_us;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

Result run(Mode m, Team &t, int calls) {
  reset(t, calls);
  std::vector<cudaGraphExec_t> exec(t.devs.size(), nullptr);
  if (m != kLoop) {
    for (size_t k = 0; k < t.devs.size(); ++k) {
      Device &d = t.devs[k];
      check(cudaSetDevice(d.id), "set device");
      cudaGraph_t g = nullptr;
      check(cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeThreadLocal), "begin capture");
      for (int i = 0; i < kGraphCalls; ++i) launch_call(m, d);
      check(cudaStreamEndCapture(d.stream, &g), "end capture");
      check(cudaGraphInstantiate(&exec[k], g, 0), "instantiate");
      check(cudaGraphDestroy(g), "graph destroy");
      check(cudaGraphUpload(exec[k], d.stream), "upload");
      check(cudaStreamSynchronize(d.stream), "upload sync");
    }
  }
  t.barrier();
  const auto t0 = std::chrono::steady_clock::now();
  if (m == kLoop) {
    for (Device &d : t.devs) {
      check(cudaSetDevice(d.id), "set device");
      loop_kernel<<<1, threads, 0, d.stream>>>(d.args, calls);
      check(cudaGetLastError(), "loop launch");
    }
  } else {
    for (int rep = 0; rep < calls / kGraphCalls; ++rep)
      for (size_t k = 0; k < t.devs.size(); ++k) check(cudaGraphLaunch(exec[k], t.devs[k].stream), "graph launch");
  }
  for (Device &d : t.devs) {
    check(cudaSetDevice(d.id), "set device");
    check(cudaStreamSynchronize(d.stream), "run");
  }
  const double total_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  for (cudaGraphExec_t e : exec)
    if (e) check(cudaGraphExecDestroy(e), "exec destroy");
  // Stamps of the second half of the calls (the first warm up).
  std::vector<double> root_wait, pusher_wait, gap;
  std::vector<uint64_t> s(3 * static_cast<size_t>(calls));
  for (Device &d : t.devs) {
    check(cudaSetDevice(d.id), "set device");
    check(cudaMemcpy(s.data(), d.stamps, s.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost), "stamps");
    for (int i = calls / 2; i < calls; ++i) {
      (d.args.me == 0 ? root_wait : pusher_wait).push_back(double(s[3 * i + 1] - s[3 * i]) / 1e3);
      gap.push_back((double(s[3 * i]) - double(s[3 * (i - 1) + 2])) / 1e3);
    }
  }
  // Without MPI every figure is this process's; with, the root's wait is rank 0's, the pusher's
  // and the gap the largest rank's median.
  return Result{t.max_over_processes(total_us / calls), t.max_over_processes(median(root_wait)),
                t.max_over_processes(median(pusher_wait)), t.max_over_processes(median(gap))};
}

void setup(Team &t, int calls) {
  int count = 0;
  check(cudaGetDeviceCount(&count), "device count");
#ifdef CALL_CHAIN_MPI
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  t.n = std::min(size, kMaxDevices);
  if (rank >= t.n || count < 1) {
    std::fprintf(stderr, "call_chain: rank %d of %d has no part (at most %d ranks, one device each)\n", rank, size,
                 kMaxDevices);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  t.devs.resize(1);
  t.devs[0].id = rank % count;
  t.devs[0].args.me = rank;
#else
  t.n = std::min(count, kMaxDevices);
  t.devs.resize(t.n);
  for (int d = 0; d < t.n; ++d) t.devs[d].id = t.devs[d].args.me = d;
#endif
  for (Device &d : t.devs) {
    check(cudaSetDevice(d.id), "set device");
#ifndef CALL_CHAIN_MPI
    for (int q = 0; q < t.n; ++q) {
      if (q == d.id) continue;
      const cudaError_t e = cudaDeviceEnablePeerAccess(q, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) check(e, "peer access");
      (void)cudaGetLastError();
    }
#endif
    check(cudaMalloc(&d.area, kWords * sizeof(uint64_t)), "area");
    check(cudaMalloc(&d.stamps, 3 * sizeof(uint64_t) * calls), "stamps");
    check(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), "stream");
    d.args.root = 0;
    d.args.n = t.n;
    d.args.stamps = d.stamps;
    d.args.stack_arrays = stack_arrays;
  }
#ifdef CALL_CHAIN_MPI
  Device &d = t.devs[0];
  cudaIpcMemHandle_t mine{};
  check(cudaIpcGetMemHandle(&mine, d.area), "IPC handle");
  std::vector<cudaIpcMemHandle_t> all(t.n);
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  for (int q = 0; q < t.n; ++q) {
    if (q == d.args.me) {
      d.args.mem[q] = d.area;
      continue;
    }
    void *p = nullptr;
    check(cudaIpcOpenMemHandle(&p, all[q], cudaIpcMemLazyEnablePeerAccess), "IPC open");
    d.args.mem[q] = static_cast<uint64_t *>(p);
  }
#else
  for (Device &d : t.devs)
    for (int q = 0; q < t.n; ++q) d.args.mem[q] = t.devs[q].area;
#endif
}

}  // namespace

int main(int argc, char **argv) {
#ifdef CALL_CHAIN_MPI
  MPI_Init(&argc, &argv);
  const char *how = "one process per device, CUDA IPC";
#else
  const char *how = "one process, peer access";
#endif
  int calls = 20000;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::clamp(std::atoi(argv[++i]), 32, 1024);
    else if (!std::strcmp(argv[i], "--stack") && i + 1 < argc) stack_arrays = std::clamp(std::atoi(argv[++i]), 0, 8);
    else calls = std::max(2 * kGraphCalls, std::atoi(argv[i]) / kGraphCalls * kGraphCalls);
  }
  Team t;
  setup(t, calls);
  if (t.n < 2) {
    std::printf("call_chain: needs two devices (found %d)\n", t.n);
    return 0;
  }
  const bool print = t.root_here();
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, t.devs[0].id), "properties");
  if (print) {
    std::printf("# call_chain: %d devices (%s), %s, one-shot 8-byte reduce pattern to device 0, %d calls per mode, "
                "%d per graph, %d threads, %d local arrays; two runs per mode\n",
                t.n, prop.name, how, calls, kGraphCalls, threads, stack_arrays);
    std::printf("%-10s %9s %9s %9s %9s %9s\n", "mode", "period_us", "period_2", "root_wait", "push_wait", "gap_us");
  }
  std::vector<std::pair<std::string, double>> rows;
  for (int m = 0; m < kModes; ++m) {
    const Result a = run(static_cast<Mode>(m), t, calls);
    const Result b = run(static_cast<Mode>(m), t, calls);
    if (print)
      std::printf("%-10s %9.3f %9.3f %9.3f %9.3f %9.3f\n", kModeNames[m], a.period_us, b.period_us, b.root_wait_us,
                  b.pusher_wait_us, b.gap_us);
    const std::string k = kModeNames[m];
    rows.emplace_back(k + " period_us", b.period_us);
    rows.emplace_back(k + " root_wait_us", b.root_wait_us);
    rows.emplace_back(k + " pusher_wait_us", b.pusher_wait_us);
    rows.emplace_back(k + " gap_us", b.gap_us);
  }
  if (print && !json.empty()) {
    if (FILE *out = std::fopen(json.c_str(), "w")) {
      std::fprintf(out, "{\"device\": \"%s\", \"devices\": %d, \"how\": \"%s\", \"threads\": %d, \"calls\": %d, \"results\": {",
                   prop.name, t.n, how, threads, calls);
      for (size_t i = 0; i < rows.size(); ++i)
        std::fprintf(out, "%s\"%s\": %.4f", i ? ", " : "", rows[i].first.c_str(), rows[i].second);
      std::fprintf(out, "}}\n");
      std::fclose(out);
    }
  }
#ifdef CALL_CHAIN_MPI
  MPI_Finalize();
#endif
  return 0;
}
