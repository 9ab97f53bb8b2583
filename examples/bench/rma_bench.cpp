// rma_bench: the ST path against its floors, all figures from one run on two ranks.
//   floor      raw cross-process stream-signal ping-pong (one kernel per hop, no MPI, no library)
//   st         ST epoch round trip: post/start/put (--put-bytes, 8 B)/complete/wait on both ranks, all enqueued
//   host       host-driven active RMA round trip on the same window (MPI_Win_post/start/...)
//   enqueue    host time per call while enqueueing ST epochs, and stream operations per MPIX call
//   idle       host time per call made into an idle stream, beside a raw launch made so (no launch
//              waits for room in the launch queue: the gap is the library's own host work)
//   bandwidth  one-way ST put of >= 64 MiB against a copy-engine copy into the peer's buffer
//   graph      (--graph) floor, raw epoch and st again, each as a graph of --block iterations
//              captured once and replayed: launch cost out of the way, what the stream itself costs
// Usage: mpiexec -n 2 rma_bench [--iters N] [--host-iters N] [--sizes-mib 64,256] [--graph] [--block N]
//                               [--put-bytes N] [--json FILE]
#include <mpix/mpix_st.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "raw_link.h"
#include "xdev.h"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Options {
  int iters = 2000;
  int host_iters = 500;
  std::vector<size_t> sizes_mib = {64, 256};
  int reps = 10;
  bool graph = false;
  int block = 100;  // iterations per captured graph
  int put_bytes = 8;  // the put of each round-trip epoch (at least 8: the data check reads 8 bytes)
  std::string json;
};

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--iters") o.iters = std::atoi(next().c_str());
    else if (a == "--host-iters") o.host_iters = std::atoi(next().c_str());
    else if (a == "--reps") o.reps = std::atoi(next().c_str());
    else if (a == "--json") o.json = next();
    else if (a == "--graph") o.graph = true;
    else if (a == "--block") o.block = std::max(1, std::atoi(next().c_str()));
    else if (a == "--put-bytes") o.put_bytes = std::min(1 << 20, std::max(8, std::atoi(next().c_str())));
    else if (a == "--sizes-mib") {
      o.sizes_mib.clear();
      std::string list = next();
      for (size_t p = 0; p < list.size();) {
        size_t q = list.find(',', p);
        if (q == std::string::npos) q = list.size();
        if (q > p) o.sizes_mib.push_back(std::strtoull(list.substr(p, q - p).c_str(), nullptr, 10));
        p = q + 1;
      }
    } else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  return o;
}

struct Pair {
  int rank = 0, peer = 1;
  MPI_Group peer_group = MPI_GROUP_NULL;
  void *stream = nullptr;
};

// Raw floor: rank 0 signals i and waits for the answer i; rank 1 answers. One kernel per hop.
// *launch_us: host time of one raw launch.
double floor_round_trip_us(const Pair &p, raw::Link &link, int iters, uint64_t base, double *launch_us) {
  MPI_Barrier(MPI_COMM_WORLD);
  auto t0 = Clock::now();
  double launch = 0;
  for (int i = 1; i <= iters; ++i) {
    uint64_t v = base + i;
    auto a = Clock::now();
    if (p.rank == 0) raw::enqueue_hop(p.stream, link, 0, v - 1 > base ? v - 1 : 0, 0, v);
    else raw::enqueue_hop(p.stream, link, 0, v, 0, v);
    launch += seconds_since(a);
  }
  if (p.rank == 0) raw::enqueue_hop(p.stream, link, 0, base + iters, 0, 0);
  xdev::stream_sync(p.stream);
  double t = seconds_since(t0);
  if (launch_us) *launch_us = launch / iters * 1e6;
  MPI_Barrier(MPI_COMM_WORLD);
  return t / iters * 1e6;
}

// The floor again with stream memory operations (wait-value + write-value per hop); -1 if none.
double memop_round_trip_us(const Pair &p, raw::Link &link, int iters, uint64_t base, double *enqueue_us) {
  constexpr int kSlot = 3;
  MPI_Barrier(MPI_COMM_WORLD);
  auto t0 = Clock::now();
  double enqueue = 0;
  int ok = 1;
  for (int i = 1; i <= iters && ok; ++i) {
    uint64_t v = base + i;
    auto a = Clock::now();
    if (p.rank == 0) ok = raw::enqueue_memop_hop(p.stream, link, kSlot, v - 1 > base ? v - 1 : 0, kSlot, v);
    else ok = raw::enqueue_memop_hop(p.stream, link, kSlot, v, kSlot, v);
    enqueue += seconds_since(a);
  }
  if (ok && p.rank == 0) ok = raw::enqueue_memop_hop(p.stream, link, kSlot, base + iters, kSlot, 0);
  xdev::stream_sync(p.stream);
  double t = seconds_since(t0);
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (enqueue_us) *enqueue_us = enqueue / iters * 1e6 / 2;  // two memops per hop
  return all_ok ? t / iters * 1e6 : -1;
}

// The ST protocol's shape with raw kernels and no library: per iteration each rank enqueues
// signal(post), wait(post)+signal(complete), wait(complete) — three launches, as ST does.
double raw_epoch_round_trip_us(const Pair &p, raw::Link &link, int iters, uint64_t base) {
  constexpr int kPost = 1, kComplete = 2;
  MPI_Barrier(MPI_COMM_WORLD);
  auto t0 = Clock::now();
  for (int i = 1; i <= iters; ++i) {
    uint64_t v = base + i;
    raw::enqueue_hop(p.stream, link, kPost, 0, kPost, v);
    raw::enqueue_hop(p.stream, link, kPost, v, kComplete, v);
    raw::enqueue_hop(p.stream, link, kComplete, v, kComplete, 0);
  }
  xdev::stream_sync(p.stream);
  double t = seconds_since(t0);
  MPI_Barrier(MPI_COMM_WORLD);
  return t / iters * 1e6;
}

struct EnqueueCost {
  double post = 0, start = 0, put = 0, complete = 0, wait = 0;
  unsigned long long stream_ops = 0;
};

// Symmetric ST epochs: each rank puts `n` bytes into the peer's window every iteration.
double st_round_trip_us(const Pair &p, MPI_Win win, const void *src, int n, int iters, EnqueueCost *cost) {
  MPI_Barrier(MPI_COMM_WORLD);
  const unsigned long long ops0 = MPIX_St_stream_ops_enqueued();
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    auto a = Clock::now();
    MPIX_Win_post_stream(p.peer_group, win, p.stream);
    auto b = Clock::now();
    MPI_Win_start(p.peer_group, MPIX_MODE_STREAM, win);
    auto c = Clock::now();
    MPI_Put(src, n, MPI_BYTE, p.peer, 0, n, MPI_BYTE, win);
    auto d = Clock::now();
    MPIX_Win_complete_stream(win, p.stream);
    auto e = Clock::now();
    MPIX_Win_wait_stream(win, p.stream);
    auto f = Clock::now();
    if (cost) {
      cost->post += std::chrono::duration<double>(b - a).count();
      cost->start += std::chrono::duration<double>(c - b).count();
      cost->put += std::chrono::duration<double>(d - c).count();
      cost->complete += std::chrono::duration<double>(e - d).count();
      cost->wait += std::chrono::duration<double>(f - e).count();
    }
  }
  xdev::stream_sync(p.stream);
  double t = seconds_since(t0);
  if (cost) {
    cost->stream_ops = MPIX_St_stream_ops_enqueued() - ops0;
    for (double *x : {&cost->post, &cost->start, &cost->put, &cost->complete, &cost->wait}) *x = *x / iters * 1e6;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return t / iters * 1e6;
}

// Each call made after the stream is synchronised, so its launch finds the launch queue empty, and
// a raw kernel launched the same way. In st_round_trip_us the GPU may run epochs slower than the
// host enqueues them; once the queue is full every launch waits for the GPU, which the per-call
// times there include.
struct IdleCost {
  double raw_launch = 0;
  EnqueueCost calls;
};
IdleCost idle_call_cost(const Pair &p, raw::Link &link, MPI_Win win, const void *src, int n, int iters) {
  IdleCost c;
  auto timed = [&](auto &&call) {
    xdev::stream_sync(p.stream);
    auto a = Clock::now();
    call();
    return seconds_since(a);
  };
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < iters; ++i) {
    c.raw_launch += timed([&] { raw::enqueue_hop(p.stream, link, 0, 0, 0, 0); });  // no wait, no store
    c.calls.post += timed([&] { MPIX_Win_post_stream(p.peer_group, win, p.stream); });
    c.calls.start += timed([&] { MPI_Win_start(p.peer_group, MPIX_MODE_STREAM, win); });
    c.calls.put += timed([&] { MPI_Put(src, n, MPI_BYTE, p.peer, 0, n, MPI_BYTE, win); });
    c.calls.complete += timed([&] { MPIX_Win_complete_stream(win, p.stream); });
    c.calls.wait += timed([&] { MPIX_Win_wait_stream(win, p.stream); });
  }
  xdev::stream_sync(p.stream);
  for (double *x : {&c.raw_launch, &c.calls.post, &c.calls.start, &c.calls.put, &c.calls.complete, &c.calls.wait})
    *x = *x / iters * 1e6;
  MPI_Barrier(MPI_COMM_WORLD);
  return c;
}

double host_round_trip_us(const Pair &p, MPI_Win win, const void *src, int n, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    MPI_Win_post(p.peer_group, 0, win);
    MPI_Win_start(p.peer_group, 0, win);
    MPI_Put(src, n, MPI_BYTE, p.peer, 0, n, MPI_BYTE, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
  }
  double t = seconds_since(t0);
  MPI_Barrier(MPI_COMM_WORLD);
  return t / iters * 1e6;
}

// ---- graphs: each loop above captured once as `block` iterations, replayed ----------------------

struct GraphTiming {
  double round_trip_us = 0;   // per iteration
  double host_us_per_launch = 0;
};

// Captures `body` (block iterations) on the stream, replays it `replays` times after a warm-up
// replay, and ends with `tail` (eager work that waits for the last iteration).
template <typename Body, typename Tail>
GraphTiming replay(const Pair &p, int block, int replays, Body body, Tail tail) {
  xdev::stream_begin_capture(p.stream);
  body();
  void *graph = xdev::stream_end_capture(p.stream);
  xdev::graph_launch(graph, p.stream);  // warm-up: uploads the graph
  tail();
  xdev::stream_sync(p.stream);
  MPI_Barrier(MPI_COMM_WORLD);
  GraphTiming g;
  double launch = 0;
  auto t0 = Clock::now();
  for (int r = 0; r < replays; ++r) {
    auto a = Clock::now();
    xdev::graph_launch(graph, p.stream);
    launch += seconds_since(a);
  }
  tail();
  xdev::stream_sync(p.stream);
  g.round_trip_us = seconds_since(t0) / (double(replays) * block) * 1e6;
  g.host_us_per_launch = launch / replays * 1e6;
  MPI_Barrier(MPI_COMM_WORLD);
  xdev::graph_destroy(graph);
  return g;
}

// The raw floor with relative hops (slot 4): rank 0 signals c + 1 after the answer c arrived.
GraphTiming floor_graph(const Pair &p, raw::Link &link, int block, int replays) {
  constexpr int kSlot = 4;
  return replay(
      p, block, replays,
      [&] {
        for (int i = 0; i < block; ++i)
          raw::enqueue_relative_hop(p.stream, link, kSlot, kSlot, p.rank == 0 ? 0 : 1, kSlot, 1, 1);
      },
      [&] {
        if (p.rank == 0) raw::enqueue_relative_hop(p.stream, link, kSlot, kSlot, 0, kSlot, -1, 0);
      });
}

// The raw 3-kernel epoch with relative hops (slots 5 and 6, one counter).
GraphTiming raw_epoch_graph(const Pair &p, raw::Link &link, int block, int replays) {
  constexpr int kPost = 5, kComplete = 6;
  return replay(
      p, block, replays,
      [&] {
        for (int i = 0; i < block; ++i) {
          raw::enqueue_relative_hop(p.stream, link, kPost, kPost, -1, kPost, 1, 0);
          raw::enqueue_relative_hop(p.stream, link, kPost, kPost, 1, kComplete, 1, 0);
          raw::enqueue_relative_hop(p.stream, link, kPost, kComplete, 1, kComplete, -1, 1);
        }
      },
      [] {});
}

// with_put false: the same epochs without data, which separates the protocol from the put and
// its system-scope fence.
GraphTiming st_graph(const Pair &p, MPI_Win win, const void *src, int n, int block, int replays, bool with_put) {
  return replay(
      p, block, replays,
      [&] {
        for (int i = 0; i < block; ++i) {
          MPIX_Win_post_stream(p.peer_group, win, p.stream);
          MPI_Win_start(p.peer_group, MPIX_MODE_STREAM, win);
          if (with_put) MPI_Put(src, n, MPI_BYTE, p.peer, 0, n, MPI_BYTE, win);
          MPIX_Win_complete_stream(win, p.stream);
          MPIX_Win_wait_stream(win, p.stream);
        }
      },
      [] {});
}

// One-way ST put of `bytes` from rank 0 into rank 1, `reps` epochs; returns GB/s seen by rank 0.
double st_put_gbps(const Pair &p, MPI_Win win, const void *src, size_t bytes, int reps) {
  MPI_Barrier(MPI_COMM_WORLD);
  auto t0 = Clock::now();
  for (int r = 0; r < reps; ++r) {
    if (p.rank == 1) {
      MPIX_Win_post_stream(p.peer_group, win, p.stream);
      MPIX_Win_wait_stream(win, p.stream);
    } else {
      MPI_Win_start(p.peer_group, MPIX_MODE_STREAM, win);
      MPI_Put(src, static_cast<int>(bytes), MPI_BYTE, 1, 0, static_cast<int>(bytes), MPI_BYTE, win);
      MPIX_Win_complete_stream(win, p.stream);
    }
  }
  xdev::stream_sync(p.stream);
  double t = seconds_since(t0);
  MPI_Barrier(MPI_COMM_WORLD);
  return double(bytes) * reps / t / 1e9;
}

double copy_engine_gbps(const Pair &p, const raw::Link &link, const void *src, size_t bytes, int reps, bool *ok) {
  MPI_Barrier(MPI_COMM_WORLD);
  auto t0 = Clock::now();
  *ok = true;
  if (p.rank == 0)
    for (int r = 0; r < reps && *ok; ++r) *ok = raw::enqueue_peer_copy(p.stream, link, src, bytes);
  xdev::stream_sync(p.stream);
  double t = seconds_since(t0);
  MPI_Bcast(ok, 1, MPI_C_BOOL, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  return double(bytes) * reps / t / 1e9;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  Pair p;
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (p.rank == 0) std::fprintf(stderr, "rma_bench runs on exactly 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  Options o = parse(argc, argv);
  p.peer = 1 - p.rank;
  xdev::init(p.rank);
  p.stream = xdev::stream_create();
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &p.peer, &p.peer_group);

  size_t max_bytes = std::max<size_t>(64, static_cast<size_t>(o.put_bytes));
  for (size_t m : o.sizes_mib) max_bytes = std::max(max_bytes, m << 20);
  void *src = xdev::alloc(max_bytes);
  void *dst = xdev::alloc(max_bytes);
  xdev::fill(src, p.rank + 1, max_bytes);
  xdev::fill(dst, 0, max_bytes);

  raw::Link link = raw::connect(MPI_COMM_WORLD, dst, max_bytes);
  MPI_Win win;
  MPI_Win_create(dst, static_cast<MPI_Aint>(max_bytes), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  // Warm-up passes, then the measured ones.
  floor_round_trip_us(p, link, 100, 0, nullptr);
  double launch_us = 0;
  double floor_us = floor_round_trip_us(p, link, o.iters, 100, &launch_us);
  double memop_us = -1, memop_enqueue_us = 0;
  if (memop_round_trip_us(p, link, 100, 0, nullptr) > 0)
    memop_us = memop_round_trip_us(p, link, o.iters, 100, &memop_enqueue_us);
  raw_epoch_round_trip_us(p, link, 100, 0);
  double raw_epoch_us = raw_epoch_round_trip_us(p, link, o.iters, 100);
  const int n = o.put_bytes;
  st_round_trip_us(p, win, src, n, 100, nullptr);
  EnqueueCost cost;
  double st_us = st_round_trip_us(p, win, src, n, o.iters, &cost);
  idle_call_cost(p, link, win, src, n, 20);
  const IdleCost idle = idle_call_cost(p, link, win, src, n, o.host_iters);
  host_round_trip_us(p, win, src, n, 20);
  double host_us = host_round_trip_us(p, win, src, n, o.host_iters);
  GraphTiming g_floor, g_raw, g_st, g_st_empty;
  if (o.graph) {
    const int replays = std::max(1, o.iters / o.block);
    // The last put of the graph phase carries another pattern, checked below like the eager one.
    xdev::fill(src, p.rank + 101, static_cast<size_t>(n));
    g_floor = floor_graph(p, link, o.block, replays);
    g_raw = raw_epoch_graph(p, link, o.block, replays);
    g_st_empty = st_graph(p, win, src, n, o.block, replays, false);
    g_st = st_graph(p, win, src, n, o.block, replays, true);
  }

  // The first 8 bytes of the last put each rank received must be its peer's pattern.
  unsigned char got[8];
  xdev::copy_to_host(got, dst, 8);
  int bad = 0;
  const int expect = o.graph ? p.peer + 101 : p.peer + 1;
  for (unsigned char c : got) bad |= c != static_cast<unsigned char>(expect);

  struct Bw {
    size_t mib;
    double st, ce;
    bool ce_ok;
  };
  std::vector<Bw> bw;
  for (size_t mib : o.sizes_mib) {
    size_t bytes = mib << 20;
    st_put_gbps(p, win, src, bytes, 2);
    double st = st_put_gbps(p, win, src, bytes, o.reps);
    bool ok = false;
    copy_engine_gbps(p, link, src, bytes, 2, &ok);
    double ce = copy_engine_gbps(p, link, src, bytes, o.reps, &ok);
    bw.push_back({mib, st, ce, ok});
  }
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);

  if (p.rank == 0) {
    const double per_call = (cost.post + cost.complete + cost.wait) / 3;
    std::printf(
        "rma_bench backend=%s ranks=2 iters=%d host_iters=%d reps=%d graph=%s block=%d put_bytes=%d data_check=%s\n",
        MPIX_St_backend_name(), o.iters, o.host_iters, o.reps, o.graph ? "yes" : "no", o.block, n,
        any_bad ? "FAILED" : "passed");
    char st_label[64], graph_label[64];
    std::snprintf(st_label, sizeof st_label, "st: epoch round trip (%d B put)", n);
    std::snprintf(graph_label, sizeof graph_label, "graph st: epoch round trip (%d B put)", n);
    std::printf("%-44s %10s\n", "measure", "value");
    std::printf("%-44s %10.2f us\n", "floor: raw stream-signal round trip", floor_us);
    std::printf("%-44s %10.2f us\n", "raw epoch: 3 raw kernels per iteration", raw_epoch_us);
    std::printf("%-44s %10.2f us\n", "host time of one raw kernel launch", launch_us);
    if (memop_us > 0) {
      std::printf("%-44s %10.2f us\n", "floor with stream memops (wait+write)", memop_us);
      std::printf("%-44s %10.2f us\n", "host time of one stream memop", memop_enqueue_us);
    }
    std::printf("%-44s %10.2f us\n", st_label, st_us);
    std::printf("%-44s %10.2f us\n", "host: host-driven active RMA round trip", host_us);
    std::printf("%-44s %10.2f   (target <= 2)\n", "ratio st / floor", st_us / floor_us);
    std::printf("%-44s %10.2f   (target <= 0.5)\n", "ratio st / host", st_us / host_us);
    std::printf("%-44s %10.2f   (target <= 1.25)\n", "ratio st / raw epoch (library overhead)", st_us / raw_epoch_us);
    std::printf("%-44s %10.2f   (target <= 1.2)\n", "ratio host time per MPIX call / raw launch",
                per_call / launch_us);
    std::printf("%-44s %10.2f   (target == 3: one per MPIX call)\n", "stream ops per epoch iteration",
                double(cost.stream_ops) / o.iters);
    std::printf("%-44s %10.2f us (post %.2f, complete %.2f, wait %.2f; start %.2f, put %.2f)\n",
                "host time per MPIX_*_stream call", per_call, cost.post, cost.complete, cost.wait, cost.start,
                cost.put);
    const double idle_per_call = (idle.calls.post + idle.calls.complete + idle.calls.wait) / 3;
    std::printf("%-44s %10.2f us (post %.2f, complete %.2f, wait %.2f; start %.2f, put %.2f)\n",
                "idle stream: host time per MPIX_*_stream call", idle_per_call, idle.calls.post, idle.calls.complete,
                idle.calls.wait, idle.calls.start, idle.calls.put);
    std::printf("%-44s %10.2f us\n", "idle stream: host time of one raw launch", idle.raw_launch);
    std::printf("%-44s %10.2f\n", "ratio idle: per MPIX call / raw launch", idle_per_call / idle.raw_launch);
    if (o.graph) {
      std::printf("graphs: %d iterations per graph, replayed %d times\n", o.block, std::max(1, o.iters / o.block));
      std::printf("%-44s %10.2f us\n", "graph floor: raw stream-signal round trip", g_floor.round_trip_us);
      std::printf("%-44s %10.2f us\n", "graph raw epoch: 3 raw kernels", g_raw.round_trip_us);
      std::printf("%-44s %10.2f us\n", graph_label, g_st.round_trip_us);
      std::printf("%-44s %10.2f us\n", "graph st: epoch round trip without data", g_st_empty.round_trip_us);
      std::printf("%-44s %10.2f us per graph of %d epochs\n", "graph st: host time of one replay",
                  g_st.host_us_per_launch, o.block);
      std::printf("%-44s %10.2f   (target <= 2, stretch <= 1.3)\n", "ratio graph st / graph floor",
                  g_st.round_trip_us / g_floor.round_trip_us);
      std::printf("%-44s %10.2f   (target <= 0.5)\n", "ratio graph st / host", g_st.round_trip_us / host_us);
      std::printf("%-44s %10.2f\n", "ratio graph st / graph raw epoch", g_st.round_trip_us / g_raw.round_trip_us);
      std::printf("%-44s %10.2f\n", "ratio graph st / eager st", g_st.round_trip_us / st_us);
    }
    for (const Bw &b : bw) {
      if (b.ce_ok)
        std::printf("put %4zu MiB: st %8.1f GB/s, copy engine %8.1f GB/s, ratio %.3f (target >= 0.9)\n", b.mib, b.st,
                    b.ce, b.st / b.ce);
      else
        std::printf("put %4zu MiB: st %8.1f GB/s (no copy-engine reference on this backend)\n", b.mib, b.st);
    }
    if (!o.json.empty()) {
      FILE *f = std::fopen(o.json.c_str(), "w");
      if (f) {
        std::fprintf(f, "{\n  \"benchmark\": \"rma_bench\",\n  \"backend\": \"%s\",\n", MPIX_St_backend_name());
        std::fprintf(f,
                     "  \"config\": {\"ranks\": 2, \"iters\": %d, \"host_iters\": %d, \"reps\": %d, \"graph\": %s, "
                     "\"block\": %d, \"put_bytes\": %d},\n",
                     o.iters, o.host_iters, o.reps, o.graph ? "true" : "false", o.block, n);
        std::fprintf(f, "  \"data_check\": \"%s\",\n", any_bad ? "failed" : "passed");
        std::fprintf(f, "  \"floor_round_trip_us\": %.3f,\n  \"st_round_trip_us\": %.3f,\n", floor_us, st_us);
        std::fprintf(f, "  \"host_round_trip_us\": %.3f,\n", host_us);
        std::fprintf(f, "  \"raw_epoch_round_trip_us\": %.3f,\n  \"raw_launch_host_us\": %.3f,\n", raw_epoch_us,
                     launch_us);
        std::fprintf(f, "  \"memop_round_trip_us\": %.3f,\n  \"memop_host_us\": %.3f,\n", memop_us,
                     memop_enqueue_us);
        std::fprintf(f, "  \"stream_ops_per_iteration\": %.3f,\n", double(cost.stream_ops) / o.iters);
        std::fprintf(f,
                     "  \"host_us_per_call\": {\"post_stream\": %.3f, \"start\": %.3f, \"put\": %.3f, "
                     "\"complete_stream\": %.3f, \"wait_stream\": %.3f},\n",
                     cost.post, cost.start, cost.put, cost.complete, cost.wait);
        std::fprintf(f,
                     "  \"idle_stream\": {\"raw_launch_host_us\": %.3f, \"post_stream\": %.3f, \"start\": %.3f, "
                     "\"put\": %.3f, \"complete_stream\": %.3f, \"wait_stream\": %.3f},\n",
                     idle.raw_launch, idle.calls.post, idle.calls.start, idle.calls.put, idle.calls.complete,
                     idle.calls.wait);
        if (o.graph)
          std::fprintf(f,
                       "  \"graph\": {\"block\": %d, \"replays\": %d, \"floor_round_trip_us\": %.3f, "
                       "\"raw_epoch_round_trip_us\": %.3f, \"st_round_trip_us\": %.3f, \"st_no_data_round_trip_us\": %.3f, "
                       "\"st_host_us_per_replay\": %.3f},\n",
                       o.block, std::max(1, o.iters / o.block), g_floor.round_trip_us, g_raw.round_trip_us,
                       g_st.round_trip_us, g_st_empty.round_trip_us, g_st.host_us_per_launch);
        std::fprintf(f, "  \"bandwidth\": [");
        for (size_t i = 0; i < bw.size(); ++i)
          std::fprintf(f, "%s\n    {\"mib\": %zu, \"st_gbps\": %.2f, \"copy_engine_gbps\": %s}", i ? "," : "",
                       bw[i].mib, bw[i].st, bw[i].ce_ok ? std::to_string(bw[i].ce).c_str() : "null");
        std::fprintf(f, "\n  ]\n}\n");
        std::fclose(f);
      }
    }
  }
  MPI_Win_free(&win);
  raw::disconnect(link);
  xdev::free(src);
  xdev::free(dst);
  xdev::stream_destroy(p.stream);
  MPI_Group_free(&p.peer_group);
  MPI_Group_free(&world);
  MPI_Finalize();
  return any_bad ? 1 : 0;
}
