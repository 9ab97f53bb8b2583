// dtype_bench: strided puts with a derived datatype against a contiguous put of the same bytes and
// against a pack kernel followed by a contiguous put, in one run; and the host time MPI_Put takes
// to record an operation with a predefined type and with a (cached) derived type.
//
// Two ranks exchange: each puts the whole `block`-byte blocks that fit `mib` MiB into the other's
// window in a stream-triggered epoch (post, start, put, complete, wait), `iters` epochs enqueued
// and synchronised once; the slowest rank's time per epoch. The strided source holds the blocks
// 2 x `block` apart (MPI_Type_vector of MPI_BYTE); the target is contiguous.
//   dtype_bench [--mib 64] [--block 1024] [--iters 20] [--puts 1000] [--json FILE]
#include <mpi.h>
#include <mpix/mpix_st.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.h"
#include "xdev.h"

namespace {

[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "dtype_bench: %s failed\n", what);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}
void ok(int rc, const char *what) {
  if (rc != MPI_SUCCESS) die(what);
}

struct Epoch {
  MPI_Win win;
  MPI_Group peer;
  int other;
  void *stream;
  // One exchange: `put` records this rank's operations between start and complete.
  template <typename Put>
  void run(Put &&put) {
    ok(MPIX_Win_post_stream(peer, win, stream), "MPIX_Win_post_stream");
    ok(MPI_Win_start(peer, MPIX_MODE_STREAM, win), "MPI_Win_start");
    put();
    ok(MPIX_Win_complete_stream(win, stream), "MPIX_Win_complete_stream");
    ok(MPIX_Win_wait_stream(win, stream), "MPIX_Win_wait_stream");
  }
};

// Seconds per call of `body` after one warm-up call (first-use costs: pair lists, mappings).
template <typename Body>
double timed(int iters, void *stream, Body &&body) {
  body();
  xdev::stream_sync(stream);
  return bench::timed(iters, stream, body);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "dtype_bench: run with 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  size_t mib = 64, block = 1024;
  int iters = 20, puts = 1000;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : (die("an option's value"), std::string()); };
    if (a == "--mib") mib = std::stoull(next());
    else if (a == "--block") block = std::stoull(next());
    else if (a == "--iters") iters = std::stoi(next());
    else if (a == "--puts") puts = std::stoi(next());
    else if (a == "--json") json = next();
    else die(("option " + a).c_str());
  }
  bench::init_device();
  void *stream = xdev::stream_create();

  // Whole blocks: a block that does not divide the size (96 bytes into 1 MiB) moves a little less.
  const size_t blocks = (mib << 20) / block, bytes = blocks * block;
  char *strided = static_cast<char *>(xdev::alloc(2 * bytes));
  char *packed = static_cast<char *>(xdev::alloc(bytes));
  {  // blocks hold rank + 1, the gaps between them 0x7f: a wrong stride shows in the check
    std::vector<char> pattern(2 * bytes, 0x7f);
    for (size_t b = 0; b < blocks; ++b) std::memset(pattern.data() + 2 * b * block, rank + 1, block);
    xdev::copy_to_device(strided, pattern.data(), pattern.size());
    xdev::fill(packed, 0, bytes);
  }
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpix_st_memory", "device");
  void *base = nullptr;
  Epoch e{};
  ok(MPI_Win_allocate(static_cast<MPI_Aint>(bytes), 1, info, MPI_COMM_WORLD, &base, &e.win), "MPI_Win_allocate");
  MPI_Info_free(&info);
  e.other = 1 - rank;
  e.stream = stream;
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &e.other, &e.peer);
  MPI_Group_free(&world);
  MPI_Datatype vec;
  MPI_Type_vector(static_cast<int>(blocks), static_cast<int>(block), static_cast<int>(2 * block), MPI_BYTE, &vec);
  MPI_Type_commit(&vec);

  const double t_contig = timed(iters, stream, [&] {
    e.run([&] { ok(MPI_Put(packed, static_cast<int>(bytes), MPI_BYTE, e.other, 0, static_cast<int>(bytes), MPI_BYTE, e.win), "MPI_Put"); });
  });
  const double t_dtype = timed(iters, stream, [&] {
    e.run([&] { ok(MPI_Put(strided, 1, vec, e.other, 0, static_cast<int>(bytes), MPI_BYTE, e.win), "MPI_Put (vector)"); });
  });
  // The strided blocks must have arrived, contiguous in the peer's window.
  std::vector<char> got(std::min<size_t>(bytes, 1 << 20));
  xdev::copy_to_host(got.data(), base, got.size());
  int right = std::all_of(got.begin(), got.end(), [&](char c) { return c == char(e.other + 1); }), all_right = 0;
  MPI_Allreduce(&right, &all_right, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  const double t_pack = timed(iters, stream, [&] {
    xdev::gather_blocks(stream, packed, strided, block, 2 * block, blocks);
    e.run([&] { ok(MPI_Put(packed, static_cast<int>(bytes), MPI_BYTE, e.other, 0, static_cast<int>(bytes), MPI_BYTE, e.win), "MPI_Put"); });
  });
  // Host time of recording: `puts` 16-byte puts per epoch, predefined vs derived (2 doubles,
  // stride 2) origin types; the epoch is enqueued but not timed.
  MPI_Datatype two;
  MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &two);
  MPI_Type_commit(&two);
  auto record_time = [&](bool derived) {
    double total = 0;
    for (int rep = 0; rep < 5; ++rep) {
      ok(MPIX_Win_post_stream(e.peer, e.win, stream), "post");
      ok(MPI_Win_start(e.peer, MPIX_MODE_STREAM, e.win), "start");
      const double t0 = bench::now();
      for (int p = 0; p < puts; ++p) {
        const MPI_Aint disp = static_cast<MPI_Aint>((p * 16) % bytes);
        if (derived) ok(MPI_Put(strided, 1, two, e.other, disp, 2, MPI_DOUBLE, e.win), "MPI_Put");
        else ok(MPI_Put(strided, 2, MPI_DOUBLE, e.other, disp, 2, MPI_DOUBLE, e.win), "MPI_Put");
      }
      if (rep > 0) total += bench::now() - t0;  // the first repetition builds the pair list
      ok(MPIX_Win_complete_stream(e.win, stream), "complete");
      ok(MPIX_Win_wait_stream(e.win, stream), "wait");
      xdev::stream_sync(stream);
    }
    double per = total / 4 / puts, worst = 0;
    MPI_Allreduce(&per, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
  };
  const double rec_pre = record_time(false), rec_derived = record_time(true);

  if (rank == 0) {
    auto gbs = [&](double t) { return bytes / t / 1e9; };
    std::printf("# dtype_bench: 2 ranks, backend %s, device %s; %zu bytes per put, %zu-byte blocks at stride %zu, %d "
                "epochs\n", xdev::kind(), xdev::device_name(), bytes, block, 2 * block, iters);
    std::printf("contiguous put        %10.1f us  %8.2f GB/s\n", t_contig * 1e6, gbs(t_contig));
    std::printf("vector-type put       %10.1f us  %8.2f GB/s  (%.2fx contiguous bandwidth)\n", t_dtype * 1e6,
                gbs(t_dtype), t_contig / t_dtype);
    std::printf("pack kernel + put     %10.1f us  %8.2f GB/s  (vector-type put: %.2fx its time)\n", t_pack * 1e6,
                gbs(t_pack), t_dtype / t_pack);
    std::printf("MPI_Put recording     predefined %.3f us, derived (cached) %.3f us: +%.3f us per operation\n",
                rec_pre * 1e6, rec_derived * 1e6, (rec_derived - rec_pre) * 1e6);
    std::printf("data check: %s\n", all_right ? "passed" : "FAILED");
    if (!json.empty())
      if (FILE *f = std::fopen(json.c_str(), "w")) {
        std::fprintf(f,
                     "{\"benchmark\": \"dtype_bench\", \"backend\": \"%s\", \"device\": \"%s\", \"mib\": %zu, "
                     "\"bytes\": %zu, \"block\": %zu, \"stride\": %zu, \"iters\": %d,\n \"contiguous_us\": %.3f, "
                     "\"vector_us\": %.3f, "
                     "\"pack_put_us\": %.3f, \"vector_over_contiguous_bw\": %.4f,\n \"record_predefined_us\": %.4f, "
                     "\"record_derived_us\": %.4f, \"correct\": %s}\n",
                     xdev::kind(), xdev::device_name(), mib, bytes, block, 2 * block, iters, t_contig * 1e6,
                     t_dtype * 1e6,
                     t_pack * 1e6, t_contig / t_dtype, rec_pre * 1e6, rec_derived * 1e6, all_right ? "true" : "false");
        std::fclose(f);
      }
  }
  MPI_Type_free(&vec);
  MPI_Type_free(&two);
  MPI_Group_free(&e.peer);
  MPI_Win_free(&e.win);
  xdev::free(strided);
  xdev::free(packed);
  xdev::stream_destroy(stream);
  MPI_Finalize();
  return all_right ? 0 : 1;
}
