// Replay identity (the live-window table, kernels/work_items.h): a graph captured on a window that
// stays alive replays correctly however many windows are created and freed beside it, and a graph
// of a freed window stays refused even when a new window holds the freed one's table entry.
//
// Window K lives throughout; a graph of one ring epoch on it (stamp the put source with the next
// generation, post to the left neighbour, start to the right one, put, complete, wait) is captured
// once and replayed before, during and after --cycles windows (default 66,000: more than the
// 65,536 entries of the table, which identity modulo the table's size could not tell apart) are
// created and freed, by MPI_Win_allocate and MPI_Win_create in turn, most over MPI_COMM_SELF (see
// churn); each replay's data is checked byte for byte. Window F's graph, captured and replayed once, is replayed again after F was freed
// and a new window took its place: MPI_ERR_WIN naming MPI_Win_free, and neither F's memory nor
// the new window's is touched.
//   --cycles=N        windows created and freed (all ranks the same; default 66,000)
//   --max-seconds=S   stop creating windows after about S seconds (the ranks agree; a note says
//                     how many were made): bounds the run on slow MPIs and sanitizer builds
#include <algorithm>
#include <cstdlib>
#include <memory>

#include "test_common.h"

using namespace mt;

namespace {

constexpr size_t kBytes = 64;

uint64_t src_key(int rank, int w) { return key(0x1de, static_cast<uint64_t>(rank), static_cast<uint64_t>(w)); }

// A window with a captured ring epoch.
struct RingGraph {
  int index;
  TestWin w;
  DevBuf src{kBytes};
  uint64_t *gen = device_counter();
  void *graph = nullptr;
  uint64_t runs = 0;  // generations stamped (replays)

  RingGraph(int i, WinKind kind, void *s) : index(i) {
    w = make_window(kind, kBytes);
    const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
    Group from_left({left}), to_right({right});
    xdev::stream_begin_capture(s);
    xdev::stamp(s, src.p, kBytes, gen, src_key(g_rank, index));
    MT_OK(MPIX_Win_post_stream(from_left, w.win, s));
    MT_OK(MPI_Win_start(to_right, MPIX_MODE_STREAM, w.win));
    MT_OK(MPI_Put(src.p, kBytes, MPI_BYTE, right, 0, kBytes, MPI_BYTE, w.win));
    MT_OK(MPIX_Win_complete_stream(w.win, s));
    MT_OK(MPIX_Win_wait_stream(w.win, s));
    graph = xdev::stream_end_capture(s);
  }
  ~RingGraph() {
    xdev::graph_destroy(graph);
    xdev::free(gen);
    if (w.win != MPI_WIN_NULL) free_window(w);
  }

  // One replay on every rank; this rank's window then holds its left neighbour's latest stamp.
  void replay_and_check(void *s, const std::string &what) {
    xdev::graph_launch(graph, s);
    ++runs;
    MT_SYNC(s);
    MPI_Barrier(MPI_COMM_WORLD);
    const int left = (g_rank + g_size - 1) % g_size;
    std::vector<uint8_t> want(kBytes);
    for (size_t i = 0; i < kBytes; ++i) want[i] = xdev::stamp_byte(src_key(left, index), runs, i);
    auto got = read_device(w.base, kBytes);
    MT_SAME_BYTES(got.data(), want.data(), kBytes, what);
    MPI_Barrier(MPI_COMM_WORLD);
  }
};

// Creates and frees up to `n` windows, allocate and create in turn; over MPI_COMM_SELF but every
// 64th over MPI_COMM_WORLD (the table is per process; a window of one rank costs about 0.25 ms on
// 2 busy cores, a collective one on 2 ranks 5 ms). Stops early, on every rank, once any rank is
// past `deadline` (0: none). Returns how many it made.
uint64_t churn(uint64_t n, void *memory, double deadline) {
  for (uint64_t c = 0; c < n; ++c) {
    if (c % 64 == 0 && deadline > 0) {
      int late = now_s() > deadline, any = 0;
      MPI_Allreduce(&late, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
      if (any) return c;
    }
    const MPI_Comm comm = c % 64 == 63 ? MPI_COMM_WORLD : MPI_COMM_SELF;
    MPI_Win win = MPI_WIN_NULL;
    void *base = nullptr;
    if (c % 2 == 0) MT_OK(MPI_Win_allocate(kBytes, 1, MPI_INFO_NULL, comm, &base, &win));
    else MT_OK(MPI_Win_create(memory, kBytes, 1, MPI_INFO_NULL, comm, &win));
    MT_OK(MPI_Win_free(&win));
    if (g_failures) return c + 1;
  }
  return n;
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "window_identity");
  uint64_t cycles = 66000;
  double max_seconds = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--cycles=", 9) == 0) cycles = std::strtoull(argv[i] + 9, nullptr, 10);
    if (std::strncmp(argv[i], "--max-seconds=", 14) == 0) max_seconds = std::strtod(argv[i] + 14, nullptr);
  }
  {
    void *s = stream_create();
    DevBuf churn_memory(kBytes);
    RingGraph kept(0, WinKind::allocate, s);
    g_context = "the kept window's graph, first replay";
    kept.replay_and_check(s, "first replay of the kept window's graph");

    // F: a graph that works once, then outlives its window.
    auto stale = std::make_unique<RingGraph>(1, WinKind::create, s);
    g_context = "window F's graph before MPI_Win_free";
    stale->replay_and_check(s, "F's graph before MPI_Win_free");
    uint8_t *f_memory = stale->w.base;
    stale->w.own_memory = false;  // read below, after the free
    xdev::fill(f_memory, 0x77, kBytes);
    MT_OK(MPI_Win_free(&stale->w.win));

    const double t0 = now_s();
    const double deadline = max_seconds > 0 ? t0 + max_seconds : 0;
    const uint64_t quarter = cycles / 4 ? cycles / 4 : 1;
    uint64_t done = 0;
    while (done < cycles && !g_failures) {
      const uint64_t n = std::min(quarter, cycles - done);
      g_context = fmt("windows %llu .. %llu created and freed", static_cast<unsigned long long>(done),
                      static_cast<unsigned long long>(done + n));
      const uint64_t made = churn(n, churn_memory.p, deadline);
      done += made;
      kept.replay_and_check(s, fmt("the kept window's graph after %llu windows", static_cast<unsigned long long>(done)));
      if (made < n) break;
    }
    const double dt = now_s() - t0;
    note("window_identity: %llu windows created and freed beside a live one in %.1f s (%.0f us each)%s",
         static_cast<unsigned long long>(done), dt, done ? dt * 1e6 / static_cast<double>(done) : 0.0,
         done < cycles ? fmt(", stopped at --max-seconds=%g of %llu asked", max_seconds,
                             static_cast<unsigned long long>(cycles)).c_str()
                       : "");

    // A new window takes the entry the last freed one held; F's graph still finds F freed.
    g_context = "F's graph replayed after MPI_Win_free, a new window made since";
    TestWin fresh = make_window(WinKind::create, kBytes);
    xdev::fill(fresh.base, 0x33, kBytes);
    xdev::graph_launch(stale->graph, s);
    const std::string msg = MT_EXPECT_ERROR(stream_report_rc(s), MPI_ERR_WIN);
    MT_CHECKF(contains(msg, "MPI_Win_free"), "the report names MPI_Win_free: \"%s\"", msg.c_str());
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<uint8_t> untouched(kBytes, 0x77), fresh_untouched(kBytes, 0x33);
    auto got = read_device(f_memory, kBytes);
    MT_SAME_BYTES(got.data(), untouched.data(), kBytes, "F's memory after a replay of its freed window");
    got = read_device(fresh.base, kBytes);
    MT_SAME_BYTES(got.data(), fresh_untouched.data(), kBytes, "the new window's memory after F's stale replay");
    g_context = "the kept window's graph at the end";
    kept.replay_and_check(s, "the kept window's graph at the end");
    free_window(fresh);
    xdev::free(f_memory);
    stale.reset();
    MPI_Barrier(MPI_COMM_WORLD);
    stream_destroy(s);
  }
  return finish();
}
