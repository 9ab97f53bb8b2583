// coll_bench: the stream collectives against the vendor library (NCCL, where built) and the
// underlying MPI's own collective, on the same buffers, in one run (like nccl-tests / OSU).
//
// For each collective and size: every mpix-st algorithm (MPIX_ST_<COLL>_ALGO), the vendor, and
// MPI (on device buffers with --mpi-device, which GPU backends accept only with
// MPIX_ST_MPI_GPU_AWARE=1, the library's word for an MPI that takes device pointers; otherwise
// host-staged: device-to-host copy, MPI call, host-to-device copy, as a program on an MPI without
// GPU support does). Each is run `iters` times back to back on the stream and synchronised once;
// the time per call is the slowest rank's. That is repeated `reps` times and the row takes the
// median (the JSON keeps the fastest and slowest too): in single timings a run now and then took
// up to 3.7x the time of its neighbours, on both sides, in every run on the device machines.
// Sizes follow nccl-tests: the vector for allreduce, reduce and bcast, the whole receive buffer
// for allgather and alltoall; bus bandwidth uses nccl-tests' factors.
// Float data, MPI_SUM, root 0. Each implementation's result is checked once per size.
//
//   coll_bench [--colls allreduce,reduce,bcast,allgather,alltoall] [--min-bytes 8]
//              [--max-bytes 268435456] [--step 4] [--iters 100] [--warmup 5] [--reps 3]
//              [--impls mpixst,vendor,mpi] [--mpi-device] [--graph] [--auto-only] [--json FILE]
// --auto-only: mpix-st's automatic choice only (alltoall: its one algorithm), not every algorithm.
// --graph: mpix-st's calls are captured into one graph of `iters` calls and the graph is replayed
// (rows mpixst-graph), and so are the vendor's where it supports capture (vendor-graph: NCCL);
// the eager figures are measured as well. Compare replayed with replayed, eager with eager.
// The exit status is 1 when any implementation's result was wrong (its rows say `NO`).
#include <mpi.h>
#include <mpix/mpix_st.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.h"
#include "coll_vendor.h"
#include "xdev.h"

namespace {

using bench::Timing;
using bench::timed_eager;
using bench::timed_graph;
using coll_bench::Coll;

struct Options {
  std::vector<Coll> colls{Coll::allreduce, Coll::reduce, Coll::bcast, Coll::allgather, Coll::alltoall};
  size_t min_bytes = 8, max_bytes = size_t(256) << 20;
  size_t step = 4;
  int iters = 100, warmup = 5, reps = 3;
  bool mpixst = true, vendor = true, mpi = true, mpi_device = false, graph = false, auto_only = false;
  std::string json;
};

const char *coll_name(Coll c) {
  const char *n[] = {"allreduce", "reduce", "bcast", "allgather", "alltoall"};
  return n[static_cast<int>(c)];
}
const char *algo_env(Coll c) {
  const char *n[] = {"MPIX_ST_ALLREDUCE_ALGO", "MPIX_ST_REDUCE_ALGO", "MPIX_ST_BCAST_ALGO", "MPIX_ST_ALLGATHER_ALGO",
                     "MPIX_ST_ALLTOALL_ALGO"};
  return n[static_cast<int>(c)];
}
std::vector<const char *> algorithms(Coll c) {
  if (c == Coll::allreduce) return {"auto", "oneshot", "twoshot", "ring", "gsb", "btb"};
  if (c == Coll::bcast) return {"auto", "direct", "chain", "binomial"};
  if (c == Coll::reduce) return {"auto", "direct", "twoshot", "chain"};
  if (c == Coll::allgather) return {"auto", "direct", "ring"};
  return {"direct"};
}
// nccl-tests' bus bandwidth factors.
double bus_factor(Coll c, int n) {
  if (c == Coll::allreduce) return 2.0 * (n - 1) / n;
  if (c == Coll::allgather || c == Coll::alltoall) return double(n - 1) / n;
  return 1.0;
}

[[noreturn]] void usage(const char *why) {
  std::fprintf(stderr, "coll_bench: %s\n", why);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::exit(2);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--colls") {
      o.colls.clear();
      std::stringstream ss(value());
      for (std::string item; std::getline(ss, item, ',');) {
        bool found = false;
        for (int c = 0; c < 5; ++c)
          if (item == coll_name(static_cast<Coll>(c))) o.colls.push_back(static_cast<Coll>(c)), found = true;
        if (!found) usage(("unknown collective " + item).c_str());
      }
    } else if (a == "--min-bytes") o.min_bytes = std::stoull(value());
    else if (a == "--max-bytes") o.max_bytes = std::stoull(value());
    else if (a == "--step") o.step = std::max<size_t>(2, std::stoull(value()));
    else if (a == "--iters") o.iters = std::max(1, std::stoi(value()));
    else if (a == "--warmup") o.warmup = std::max(0, std::stoi(value()));
    else if (a == "--reps") o.reps = std::max(1, std::stoi(value()));
    else if (a == "--impls") {
      o.mpixst = o.vendor = o.mpi = false;
      std::stringstream ss(value());
      for (std::string item; std::getline(ss, item, ',');) {
        if (item == "mpixst") o.mpixst = true;
        else if (item == "vendor") o.vendor = true;
        else if (item == "mpi") o.mpi = true;
        else usage(("unknown implementation " + item).c_str());
      }
    } else if (a == "--mpi-device") o.mpi_device = true;
    else if (a == "--graph") o.graph = true;
    else if (a == "--auto-only") o.auto_only = true;
    else if (a == "--json") o.json = value();
    else usage(("unknown option " + a).c_str());
  }
  return o;
}

struct Buffers {
  float *send = nullptr, *recv = nullptr;
  std::vector<float> host_send, host_recv;  // staging of the host-staged MPI
};

struct Sizes {
  size_t count;        // elements: of the vector, or of one rank's block
  size_t send_elems, recv_elems;
};

Sizes sizes_of(Coll c, size_t bytes, int n) {
  Sizes s{};
  if (c == Coll::allgather || c == Coll::alltoall) {
    s.count = bytes / sizeof(float) / n;
    s.recv_elems = s.count * n;
    s.send_elems = c == Coll::alltoall ? s.count * n : s.count;
  } else {
    s.count = bytes / sizeof(float);
    s.send_elems = s.recv_elems = s.count;
  }
  return s;
}

// Inputs: rank r sends r + 1 (alltoall: block j holds (r + 1) * 1000 + j).
void fill_inputs(Coll c, const Sizes &s, int rank, Buffers &b) {
  std::vector<float> v(s.send_elems);
  for (size_t i = 0; i < s.send_elems; ++i)
    v[i] = c == Coll::alltoall ? float((rank + 1) * 1000 + int(i / s.count)) : float(rank + 1);
  if (!v.empty()) xdev::copy_to_device(b.send, v.data(), v.size() * sizeof(float));
  if (c == Coll::bcast && !v.empty()) xdev::copy_to_device(b.recv, v.data(), v.size() * sizeof(float));
  else xdev::fill(b.recv, 0, s.recv_elems * sizeof(float));
}

// Checks the first and last element of every block of the result; true when right.
bool check(Coll c, const Sizes &s, int rank, int n, const Buffers &b) {
  auto at = [&](size_t i) {
    float v = 0;
    xdev::copy_to_host(&v, b.recv + i, sizeof v);
    return v;
  };
  if (s.count == 0) return true;
  if (c == Coll::reduce && rank != 0) return true;
  const size_t blocks = (c == Coll::allgather || c == Coll::alltoall) ? n : 1;
  for (size_t q = 0; q < blocks; ++q)
    for (size_t i : {q * s.count, q * s.count + s.count - 1}) {
      float want = 0;
      switch (c) {
        case Coll::allreduce:
        case Coll::reduce: want = float(n * (n + 1) / 2); break;
        case Coll::bcast: want = 1.0f; break;
        case Coll::allgather: want = float(q + 1); break;
        case Coll::alltoall: want = float((q + 1) * 1000 + rank); break;
      }
      if (at(i) != want) {
        std::fprintf(stderr, "coll_bench: rank %d: %s element %zu is %g, expected %g\n", rank, coll_name(c), i,
                     double(at(i)), double(want));
        return false;
      }
    }
  return true;
}

void mpix_call(Coll c, const Sizes &s, const Buffers &b, void *stream) {
  int rc = MPI_SUCCESS;
  const int count = static_cast<int>(s.count);
  switch (c) {
    case Coll::allreduce: rc = MPIX_Allreduce_stream(b.send, b.recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, stream); break;
    case Coll::reduce: rc = MPIX_Reduce_stream(b.send, b.recv, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD, stream); break;
    case Coll::bcast: rc = MPIX_Bcast_stream(b.recv, count, MPI_FLOAT, 0, MPI_COMM_WORLD, stream); break;
    case Coll::allgather:
      rc = MPIX_Allgather_stream(b.send, count, MPI_FLOAT, b.recv, count, MPI_FLOAT, MPI_COMM_WORLD, stream);
      break;
    case Coll::alltoall:
      rc = MPIX_Alltoall_stream(b.send, count, MPI_FLOAT, b.recv, count, MPI_FLOAT, MPI_COMM_WORLD, stream);
      break;
  }
  if (rc != MPI_SUCCESS) usage("an MPIX collective failed");
}

void mpi_call(Coll c, const Sizes &s, Buffers &b, bool device, void *stream) {
  const int count = static_cast<int>(s.count);
  const void *send = b.send;
  void *recv = b.recv;
  if (!device) {  // host-staged
    if (c != Coll::bcast) xdev::copy_to_host(b.host_send.data(), b.send, s.send_elems * sizeof(float));
    else xdev::copy_to_host(b.host_recv.data(), b.recv, s.recv_elems * sizeof(float));
    send = b.host_send.data();
    recv = b.host_recv.data();
  } else {
    xdev::stream_sync(stream);  // the MPI reads device memory the stream may still write
  }
  switch (c) {
    case Coll::allreduce: MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case Coll::reduce: MPI_Reduce(send, recv, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case Coll::bcast: MPI_Bcast(recv, count, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
    case Coll::allgather: MPI_Allgather(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, MPI_COMM_WORLD); break;
    case Coll::alltoall: MPI_Alltoall(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, MPI_COMM_WORLD); break;
  }
  if (!device) xdev::copy_to_device(b.recv, b.host_recv.data(), s.recv_elems * sizeof(float));
}

struct Result {
  std::string coll, impl, algo;
  size_t bytes;
  int iters;
  double us, min_us, max_us, algbw, busbw;  // us: the median of the repetitions
  bool correct;
};

}  // namespace

// The collectives' protocol setting of the run (auto unless MPIX_ST_COLL_PROTOCOL names one).
const char *protocol_setting() {
  const char *v = std::getenv("MPIX_ST_COLL_PROTOCOL");
  return v && *v ? v : "auto";
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  bench::init_device();
  const Options o = parse(argc, argv);
  // A device pointer handed to an MPI that cannot read one crashes inside it (Open MPI 4.1.6's
  // allreduce did, in a host memcpy): ask to be told the MPI takes them, as Faces' p2p does.
  if (o.mpi && o.mpi_device && !xdev::mpi_reads_device_memory())
    usage("--mpi-device passes device buffers to the MPI's own collectives; set MPIX_ST_MPI_GPU_AWARE=1 if this "
          "MPI takes device pointers (else leave the option out: the MPI is then measured host-staged)");
  void *stream = xdev::stream_create();
  std::unique_ptr<coll_bench::Vendor> vendor(o.vendor ? coll_bench::make_vendor(MPI_COMM_WORLD) : nullptr);

  const size_t max_elems = o.max_bytes / sizeof(float) + 1;
  Buffers b;
  b.send = static_cast<float *>(xdev::alloc(max_elems * sizeof(float)));
  b.recv = static_cast<float *>(xdev::alloc(max_elems * sizeof(float)));
  if (!o.mpi_device) {
    b.host_send.resize(max_elems);
    b.host_recv.resize(max_elems);
  }
  // The communicator's first stream collective sets it up (outside any capture).
  MPIX_Allreduce_stream(b.send, b.recv, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, stream);
  if (rank == 0) {
    std::printf("# coll_bench: %d ranks, backend %s, device %s, float, MPI_SUM, root 0\n", n, xdev::kind(),
                xdev::device_name());
    std::printf("# MPIX_ST_COLL_PROTOCOL %s\n", protocol_setting());
    std::printf("# vendor: %s; MPI: %s; iters %d (fewer above 1 MiB), warm-up %d%s; time: median of %d timings "
                "(spread: slowest / fastest)\n",
                vendor ? vendor->name().c_str() : "none", o.mpi_device ? "device buffers" : "host-staged", o.iters,
                o.warmup, o.graph ? "; graph replays too" : "", o.reps);
    std::printf("%-10s %-12s %-8s %12s %12s %10s %10s %7s %s\n", "coll", "impl", "algo", "bytes", "time_us",
                "algbw_GBs", "busbw_GBs", "spread", "ok");
  }
  std::vector<Result> results;
  for (Coll c : o.colls) {
    for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= o.step) {
      const Sizes s = sizes_of(c, bytes, n);
      if (s.count == 0) continue;
      const size_t real_bytes = (c == Coll::allgather || c == Coll::alltoall ? s.count * n : s.count) * sizeof(float);
      const int iters = bench::iters_for(real_bytes, o.iters);
      auto record = [&](const std::string &impl, const std::string &algo, Timing t, bool ok) {
        const double sec = t.median;
        Result r{coll_name(c), impl, algo, real_bytes, iters, sec * 1e6, t.min * 1e6, t.max * 1e6,
                 real_bytes / sec / 1e9, 0, ok};
        r.busbw = r.algbw * bus_factor(c, n);
        results.push_back(r);
        if (rank == 0)
          std::printf("%-10s %-12s %-8s %12zu %12.2f %10.2f %10.2f %7.2f %s\n", r.coll.c_str(), impl.c_str(),
                      algo.c_str(), real_bytes, r.us, r.algbw, r.busbw, t.max / t.min, ok ? "yes" : "NO");
      };
      auto verified = [&](auto &&enqueue) {
        fill_inputs(c, s, rank, b);
        enqueue();
        xdev::stream_sync(stream);
        int mine = check(c, s, rank, n, b), all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        for (int w = 0; w < o.warmup; ++w) enqueue();
        xdev::stream_sync(stream);
        return all != 0;
      };
      if (o.mpixst) {
        std::vector<const char *> algos = algorithms(c);
        if (o.auto_only) algos.resize(1);  // the first is the automatic choice (or the only one)
        for (const char *algo : algos) {
          setenv(algo_env(c), algo, 1);
          auto call = [&] { mpix_call(c, s, b, stream); };
          const bool ok = verified(call);
          record("mpixst", algo, timed_eager(iters, o.reps, stream, call), ok);
          if (o.graph) record("mpixst-graph", algo, timed_graph(iters, o.reps, stream, call), ok);
          unsetenv(algo_env(c));
        }
      }
      if (vendor) {
        auto call = [&] { vendor->enqueue(c, b.send, b.recv, s.count, 0, stream); };
        const bool ok = verified(call);
        record("vendor", vendor->name().substr(0, 8), timed_eager(iters, o.reps, stream, call), ok);
        if (o.graph && vendor->capturable())
          record("vendor-graph", vendor->name().substr(0, 8), timed_graph(iters, o.reps, stream, call), ok);
      }
      if (o.mpi) {
        auto call = [&] { mpi_call(c, s, b, o.mpi_device, stream); };
        const bool ok = verified(call);
        record("mpi", o.mpi_device ? "device" : "staged", timed_eager(iters, o.reps, stream, call), ok);
      }
    }
  }
  if (rank == 0 && !o.json.empty()) {
    if (FILE *f = std::fopen(o.json.c_str(), "w")) {
      std::fprintf(f, "{\n  \"benchmark\": \"coll_bench\",\n  \"ranks\": %d,\n  \"backend\": \"%s\",\n", n, xdev::kind());
      std::fprintf(f, "  \"device\": \"%s\",\n  \"vendor\": \"%s\",\n  \"mpi_buffers\": \"%s\",\n", xdev::device_name(),
                   vendor ? vendor->name().c_str() : "none", o.mpi_device ? "device" : "host-staged");
      std::fprintf(f, "  \"protocol\": \"%s\",\n  \"reps\": %d,\n", protocol_setting(), o.reps);
      std::fprintf(f, "  \"results\": [\n");
      for (size_t i = 0; i < results.size(); ++i) {
        const Result &r = results[i];
        std::fprintf(f,
                     "    {\"coll\": \"%s\", \"impl\": \"%s\", \"algo\": \"%s\", \"bytes\": %zu, \"iters\": %d, "
                     "\"time_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, \"algbw_GBs\": %.3f, "
                     "\"busbw_GBs\": %.3f, \"correct\": %s}%s\n",
                     r.coll.c_str(), r.impl.c_str(), r.algo.c_str(), r.bytes, r.iters, r.us, r.min_us, r.max_us,
                     r.algbw, r.busbw, r.correct ? "true" : "false", i + 1 < results.size() ? "," : "");
      }
      std::fprintf(f, "  ]\n}\n");
      std::fclose(f);
    }
  }
  // Every rank saw the same verdicts (each was reduced over the ranks).
  const long wrong = std::count_if(results.begin(), results.end(), [](const Result &r) { return !r.correct; });
  if (wrong && rank == 0) std::fprintf(stderr, "coll_bench: %ld rows gave wrong results (ok: NO)\n", wrong);
  vendor.reset();
  xdev::free(b.send);
  xdev::free(b.recv);
  xdev::stream_destroy(stream);
  MPI_Finalize();
  return wrong ? 1 : 0;
}
