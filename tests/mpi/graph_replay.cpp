// Stream-triggered epochs captured into a graph (CUDA graph; MPIX_Host_graph on the host backend)
// and replayed, interleaved with the same epochs enqueued eagerly.
//
// One "step" on a window is a ring epoch: each rank stamps new data into its put source and into
// its window's get region (stream work driven by device counters, so every run of a step writes
// the next generation), then posts to its left neighbour, starts to its right one, puts its source
// into the right's slot, gets the right's region, adds 1 to the right's counter, completes and
// waits, and appends what arrived (its slot, its get buffer) to history buffers. A graph holds
// three steps on two windows (A, B, A). The main loop picks, the same on every rank, either a
// replay or the three steps eagerly; after one synchronisation every generation of every step is
// checked byte for byte in the histories, so each replay moved exactly the data of its epochs, in
// order. Also: a capture that is never launched leaves the windows in step; a graph replayed after
// MPI_Win_free of its window reports MPI_ERR_WIN and touches nothing. (Epoch calls merged under
// capture: graph_merge.cpp.)
//
// --refused: every peer is on another node (MPIX_ST_VNODE_SIZE=1): capturing the post or the
// complete is refused with MPI_ERR_UNSUPPORTED_OPERATION, the epoch stays as it was, and finishing
// it outside the capture works.
// --iterations=N: main-loop iterations (default 200).
#include <random>

#include "test_common.h"

using namespace mt;

namespace {

constexpr size_t kSlot = 256;    // [0, kSlot): written by the left neighbour's put
constexpr size_t kRegion = 192;  // [kSlot, +kRegion): read by the right neighbour's get
constexpr size_t kCounter = kSlot + kRegion;  // int64 the left neighbour adds 1 to
constexpr size_t kBytes = kCounter + 8;

uint64_t src_key(int rank, int w) { return key(0x9a1, static_cast<uint64_t>(rank), static_cast<uint64_t>(w)); }
uint64_t region_key(int rank, int w) { return key(0x9a2, static_cast<uint64_t>(rank), static_cast<uint64_t>(w)); }

// One window and everything its steps use on this rank.
struct RingWindow {
  int index;
  TestWin w;
  size_t capacity;  // steps the histories hold
  DevBuf src{kSlot}, got{kRegion}, one{8};
  uint64_t *src_gen, *region_gen, *slot_count, *got_count;
  void *slot_history, *got_history;
  uint64_t steps = 0;  // steps run (eager and replayed), as the host counts them

  RingWindow(int i, size_t cap) : index(i), capacity(cap) {
    w = make_window(WinKind::allocate, kBytes);
    const int64_t v = 1;
    one.upload(&v, 8);
    src_gen = device_counter();
    region_gen = device_counter();
    slot_count = device_counter();
    got_count = device_counter();
    slot_history = xdev::alloc(cap * kSlot);
    got_history = xdev::alloc(cap * kRegion);
  }
  ~RingWindow() {
    for (void *p : {static_cast<void *>(src_gen), static_cast<void *>(region_gen), static_cast<void *>(slot_count),
                    static_cast<void *>(got_count), slot_history, got_history})
      xdev::free(p);
    if (w.win != MPI_WIN_NULL) free_window(w);
  }

  // Enqueues one step (or records it, while the stream is being captured).
  void step(void *s) {
    const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
    Group from_left({left}), to_right({right});
    xdev::stamp(s, src.p, kSlot, src_gen, src_key(g_rank, index));
    xdev::stamp(s, w.base + kSlot, kRegion, region_gen, region_key(g_rank, index));
    MT_OK(MPIX_Win_post_stream(from_left, w.win, s));
    MT_OK(MPI_Win_start(to_right, MPIX_MODE_STREAM, w.win));
    MT_OK(MPI_Put(src.p, kSlot, MPI_BYTE, right, 0, kSlot, MPI_BYTE, w.win));
    MT_OK(MPI_Get(got.p, kRegion, MPI_BYTE, right, kSlot, kRegion, MPI_BYTE, w.win));
    MT_OK(MPI_Accumulate(one.p, 1, MPI_INT64_T, right, kCounter, 1, MPI_INT64_T, MPI_SUM, w.win));
    MT_OK(MPIX_Win_complete_stream(w.win, s));
    MT_OK(MPIX_Win_wait_stream(w.win, s));
    xdev::append(s, slot_history, w.base, kSlot, slot_count);
    xdev::append(s, got_history, got.p, kRegion, got_count);
  }

  // After synchronisation: generation g of every step arrived, in order.
  void check(const std::string &what) {
    const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
    MT_CHECKF(steps <= capacity, "%s: %llu steps exceed the histories' %zu", what.c_str(),
              static_cast<unsigned long long>(steps), capacity);
    for (const uint64_t *c : {src_gen, region_gen, slot_count, got_count})
      MT_CHECKF(read_counter(c) == steps, "%s: a step counter reads %llu after %llu steps", what.c_str(),
                static_cast<unsigned long long>(read_counter(c)), static_cast<unsigned long long>(steps));
    std::vector<uint8_t> slots(steps * kSlot), gots(steps * kRegion), want(kSlot);
    xdev::copy_to_host(slots.data(), slot_history, slots.size());
    xdev::copy_to_host(gots.data(), got_history, gots.size());
    for (uint64_t g = 0; g < steps; ++g) {
      for (size_t i = 0; i < kSlot; ++i) want[i] = xdev::stamp_byte(src_key(left, index), g + 1, i);
      if (!MT_SAME_BYTES(slots.data() + g * kSlot, want.data(), kSlot, fmt("%s: put of step %llu", what.c_str(), static_cast<unsigned long long>(g))))
        return;
      for (size_t i = 0; i < kRegion; ++i) want[i] = xdev::stamp_byte(region_key(right, index), g + 1, i);
      if (!MT_SAME_BYTES(gots.data() + g * kRegion, want.data(), kRegion, fmt("%s: get of step %llu", what.c_str(), static_cast<unsigned long long>(g))))
        return;
    }
    int64_t count = 0;
    xdev::copy_to_host(&count, w.base + kCounter, 8);
    MT_CHECKF(count == static_cast<int64_t>(steps), "%s: the accumulated counter is %lld after %llu steps",
              what.c_str(), static_cast<long long>(count), static_cast<unsigned long long>(steps));
  }
};

void replay_and_interleave(void *s, int iterations, uint64_t seed) {
  const size_t capacity = 2 * static_cast<size_t>(iterations) + 8;
  RingWindow a(0, capacity), b(1, capacity);
  auto three_steps = [&] {
    a.step(s);
    b.step(s);
    a.step(s);
  };

  // A capture that is never launched: nothing runs, and the windows stay in step.
  g_context = "a capture never launched";
  xdev::stream_begin_capture(s);
  three_steps();
  xdev::graph_destroy(xdev::stream_end_capture(s));

  g_context = "capture";
  xdev::stream_begin_capture(s);
  three_steps();
  void *graph = xdev::stream_end_capture(s);

  std::mt19937_64 rng(seed);
  int replays = 0, eager = 0;
  const double t0 = now_s();
  for (int it = 0; it < iterations; ++it) {
    g_context = fmt("iteration %d", it);
    const uint64_t draw = rng() % 10;
    if (draw < 7) {
      xdev::graph_launch(graph, s);
      ++replays;
    } else {
      three_steps();
      ++eager;
    }
    a.steps += 2;
    b.steps += 1;
    if (draw == 9) MT_SYNC(s);  // sometimes the host catches up in between
  }
  MT_SYNC(s);
  const double dt = now_s() - t0;
  MPI_Barrier(MPI_COMM_WORLD);
  a.check("window A");
  b.check("window B");
  note("graph_replay: %d replays and %d eager runs of 3 epochs on 2 windows, %.3f s", replays, eager, dt);
  xdev::graph_destroy(graph);
}

// Stamps 64 bytes of src (generation ++*gen, `key`), then one ST epoch of this rank with itself
// puts them at offset 0 of win.
void stamped_self_epoch(void *s, MPI_Win win, const Group &self, void *src, uint64_t *gen, uint64_t key) {
  xdev::stamp(s, src, 64, gen, key);
  MT_OK(MPIX_Win_post_stream(self, win, s));
  MT_OK(MPI_Win_start(self, MPIX_MODE_STREAM, win));
  MT_OK(MPI_Put(src, 64, MPI_BYTE, g_rank, 0, 64, MPI_BYTE, win));
  MT_OK(MPIX_Win_complete_stream(win, s));
  MT_OK(MPIX_Win_wait_stream(win, s));
}

// A graph of self epochs replayed after its window was freed: the replay reports MPI_ERR_WIN
// and writes nothing.
void replay_after_free(void *s) {
  g_context = "replay after MPI_Win_free";
  TestWin w = make_window(WinKind::create, 64);
  uint8_t *memory = w.base;
  w.own_memory = false;  // freed below, after the replay
  DevBuf src(64);
  uint64_t *gen = device_counter();
  Group self({g_rank});
  xdev::stream_begin_capture(s);
  stamped_self_epoch(s, w.win, self, src.p, gen, 0x5e1f);
  void *graph = xdev::stream_end_capture(s);
  xdev::graph_launch(graph, s);
  MT_SYNC(s);
  std::vector<uint8_t> want(64);
  for (size_t i = 0; i < 64; ++i) want[i] = xdev::stamp_byte(0x5e1f, 1, i);
  auto got = read_device(memory, 64);
  MT_SAME_BYTES(got.data(), want.data(), 64, "the one replay before MPI_Win_free");

  xdev::fill(memory, 0x77, 64);
  MT_OK(MPI_Win_free(&w.win));
  // A window made now may take the freed one's flag memory (GPU backends reuse it): the stale
  // replay below must leave it alone too.
  TestWin fresh = make_window(WinKind::create, 64);
  xdev::fill(fresh.base, 0x33, 64);
  MT_SYNC(s);
  xdev::graph_launch(graph, s);
  const int rc = stream_report_rc(s);
  const std::string msg = MT_EXPECT_ERROR(rc, MPI_ERR_WIN);
  MT_CHECKF(contains(msg, "MPI_Win_free"), "the report names MPI_Win_free: \"%s\"", msg.c_str());
  got = read_device(memory, 64);
  std::vector<uint8_t> untouched(64, 0x77);
  MT_SAME_BYTES(got.data(), untouched.data(), 64, "window memory after a replay of its freed window");
  got = read_device(fresh.base, 64);
  std::vector<uint8_t> fresh_untouched(64, 0x33);
  MT_SAME_BYTES(got.data(), fresh_untouched.data(), 64, "a new window's memory after the stale replay");
  // The new window's own epochs still run.
  g_context = "an epoch on the window made after the free";
  stamped_self_epoch(s, fresh.win, self, src.p, gen, 0x5e2f);
  MT_SYNC(s);
  const uint64_t generation = read_counter(gen);  // the stale replay's stamp kernel ran too
  for (size_t i = 0; i < 64; ++i) want[i] = xdev::stamp_byte(0x5e2f, generation, i);
  got = read_device(fresh.base, 64);
  MT_SAME_BYTES(got.data(), want.data(), 64, "the new window's epoch");
  free_window(fresh);
  xdev::graph_destroy(graph);
  xdev::free(gen);
  xdev::free(memory);
}

// Every peer is on another node: capture is refused, and the epoch finishes outside the capture.
void refused(void *s) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  g_context = "capture refused";
  TestWin w = make_window(WinKind::allocate, 64);
  Group from_left({left}), to_right({right});
  DevBuf src(64);
  src.upload(pattern(64, key(0x7ef, static_cast<uint64_t>(g_rank))));

  xdev::stream_begin_capture(s);
  std::string msg = MT_EXPECT_ERROR(MPIX_Win_post_stream(from_left, w.win, s), MPI_ERR_UNSUPPORTED_OPERATION);
  xdev::graph_destroy(xdev::stream_end_capture(s));
  MT_CHECKF(contains(msg, "captured") && contains(msg, fmt("window rank %d", left)),
            "the refusal names capture and the peer: \"%s\"", msg.c_str());
  MT_OK(MPIX_Win_post_stream(from_left, w.win, s));  // nothing was opened: post again, eagerly
  MT_OK(MPI_Win_start(to_right, MPIX_MODE_STREAM, w.win));
  MT_OK(MPI_Put(src.p, 64, MPI_BYTE, right, 0, 64, MPI_BYTE, w.win));
  xdev::stream_begin_capture(s);
  msg = MT_EXPECT_ERROR(MPIX_Win_complete_stream(w.win, s), MPI_ERR_UNSUPPORTED_OPERATION);
  xdev::graph_destroy(xdev::stream_end_capture(s));
  MT_CHECKF(contains(msg, "captured") && contains(msg, fmt("window rank %d", right)),
            "the refusal names capture and the peer: \"%s\"", msg.c_str());
  MT_OK(MPIX_Win_complete_stream(w.win, s));  // the access epoch is still open
  xdev::stream_begin_capture(s);
  MT_EXPECT_ERROR(MPIX_Win_wait_stream(w.win, s), MPI_ERR_UNSUPPORTED_OPERATION);
  xdev::graph_destroy(xdev::stream_end_capture(s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
  MT_SYNC(s);
  auto want = pattern(64, key(0x7ef, static_cast<uint64_t>(left)));
  auto got = read_device(w.base, 64);
  MT_SAME_BYTES(got.data(), want.data(), 64, "the epoch finished outside the refused capture");
  free_window(w);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "graph_replay");
  int iterations = 200;
  bool expect_refusal = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--iterations=", 13) == 0) iterations = std::atoi(argv[i] + 13);
    if (std::strcmp(argv[i], "--refused") == 0) expect_refusal = true;
  }
  const uint64_t seed = 20261123;
  note("graph_replay: %d iterations, seed %llu%s", iterations, static_cast<unsigned long long>(seed),
       expect_refusal ? ", every peer remote: capture refused" : "");
  void *s = stream_create();
  if (expect_refusal) {
    refused(s);
  } else {
    replay_and_interleave(s, iterations, seed);
    replay_after_free(s);
  }
  stream_destroy(s);
  return finish();
}
