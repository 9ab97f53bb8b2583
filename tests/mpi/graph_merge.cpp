// Epoch calls merged under capture (src/backend/list_merge.h): a call whose stream captured nothing
// since the previous epoch call of the same window joins that call's kernel node or task.
//
// 1. Counted: `stamp | post start put complete wait | append` is one stream operation of the
//    library, and `post start stamp put complete wait` two (the stamp parts the post from the
//    complete); with MPIX_ST_GRAPH_MERGE=0, three each.
// 2. Random scripts: ring epochs (post from the left, start to the right, one put) on two windows,
//    drawn the same on every rank: one window's epoch alone, or both windows' epochs interleaved
//    (posts, then completes, then waits, each in a drawn order); the put source stamped before
//    the post or between post and complete; the received slot appended to a history after the
//    wait or not. Merges happen where calls of one window follow each other and are refused where
//    windows alternate or other work comes between. The script is captured once and replayed,
//    interleaved with eager runs of it; every appended slot must hold the left neighbour's
//    generation of that epoch.
// 3. Post ahead: two windows in turn, each epoch posting the next one's window before its own
//    complete (the double-buffered exchange of examples/faces): the post joins the other window's
//    complete and wait, one stream operation per epoch; captured blocks replayed and interleaved
//    with eager runs, checked like 2.
// 4. A replay after MPI_Win_free of the window whose post leads another window's merged epoch:
//    MPI_ERR_WIN, and neither window is written (with MPIX_ST_GRAPH_MERGE=0 the freed window only).
// --scripts=N: random scripts (default 6).
#include <cstdlib>
#include <random>
#include <string>

#include "test_common.h"

using namespace mt;

namespace {

constexpr size_t kSlot = 256;

uint64_t src_key(int rank, int w) { return key(0x6e1, static_cast<uint64_t>(rank), static_cast<uint64_t>(w)); }

// One ring window of a rank and everything its epochs use: put source, counters, history.
struct Ring {
  TestWin w;
  DevBuf src{kSlot};
  uint64_t *gen = device_counter(), *count = device_counter();
  void *history;
  size_t capacity;
  uint64_t my_key, left_key;
  uint64_t epochs = 0;                 // run so far (eager and replayed), as the host counts them
  std::vector<uint64_t> appended;      // the epoch number of each appended slot, in order
  Ring(int index, size_t cap) : capacity(cap) {
    w = make_window(WinKind::allocate, kSlot);
    history = xdev::alloc(cap * kSlot);
    my_key = src_key(g_rank, index);
    left_key = src_key((g_rank + g_size - 1) % g_size, index);
  }
  ~Ring() {
    xdev::free(history);
    xdev::free(gen);
    xdev::free(count);
    free_window(w);
  }
};

void check_ring(const Ring &r, int index, const std::string &what) {
  MT_CHECKF(r.appended.size() <= r.capacity, "%s: %zu appends exceed the history's %zu", what.c_str(),
            r.appended.size(), r.capacity);
  MT_CHECKF(read_counter(r.count) == r.appended.size(), "%s, window %d: %llu slots appended, the host counted %zu",
            what.c_str(), index, static_cast<unsigned long long>(read_counter(r.count)), r.appended.size());
  MT_CHECKF(read_counter(r.gen) == r.epochs, "%s, window %d: %llu stamps for %llu epochs", what.c_str(), index,
            static_cast<unsigned long long>(read_counter(r.gen)), static_cast<unsigned long long>(r.epochs));
  const auto got = read_device(r.history, r.appended.size() * kSlot);
  std::vector<uint8_t> want(kSlot);
  for (size_t a = 0; a < r.appended.size(); ++a) {
    for (size_t i = 0; i < kSlot; ++i) want[i] = xdev::stamp_byte(r.left_key, r.appended[a], i);
    if (!MT_SAME_BYTES(got.data() + a * kSlot, want.data(), kSlot,
                       fmt("%s, window %d: append %zu (epoch %llu)", what.c_str(), index, a,
                           static_cast<unsigned long long>(r.appended[a]))))
      return;
  }
}

// 1. The library's stream operations per captured epoch, and the data of 50 replays.
void counted(void *s, int replays) {
  g_context = "epoch calls merged under capture: counted";
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group from_left({left}), to_right({right});
  Ring r(9, 2 * static_cast<size_t>(replays));
  auto epoch = [&](bool stamp_inside) {
    MT_OK(MPIX_Win_post_stream(from_left, r.w.win, s));
    MT_OK(MPI_Win_start(to_right, MPIX_MODE_STREAM, r.w.win));
    if (stamp_inside) xdev::stamp(s, r.src.p, kSlot, r.gen, r.my_key);
    MT_OK(MPI_Put(r.src.p, kSlot, MPI_BYTE, right, 0, kSlot, MPI_BYTE, r.w.win));
    MT_OK(MPIX_Win_complete_stream(r.w.win, s));
    MT_OK(MPIX_Win_wait_stream(r.w.win, s));
    xdev::append(s, r.history, r.w.base, kSlot, r.count);
  };
  xdev::stream_begin_capture(s);
  xdev::stamp(s, r.src.p, kSlot, r.gen, r.my_key);
  const unsigned long long ops0 = MPIX_St_stream_ops_enqueued();
  epoch(false);
  const unsigned long long ops1 = MPIX_St_stream_ops_enqueued();
  epoch(true);
  const unsigned long long ops2 = MPIX_St_stream_ops_enqueued();
  void *graph = xdev::stream_end_capture(s);
  // Counts the library's operations only (not the test's stamp and append work).
  MT_CHECKF(ops1 - ops0 == (graph_merging() ? 1u : 3u), "the first epoch took %llu stream operations (merging %s)",
            ops1 - ops0, graph_merging() ? "on" : "off");
  MT_CHECKF(ops2 - ops1 == (graph_merging() ? 2u : 3u), "the second epoch took %llu stream operations (merging %s)",
            ops2 - ops1, graph_merging() ? "on" : "off");
  for (int k = 0; k < replays; ++k) {
    xdev::graph_launch(graph, s);
    for (int e = 0; e < 2; ++e) r.appended.push_back(++r.epochs);  // both epochs appended
  }
  MT_SYNC(s);
  MPI_Barrier(MPI_COMM_WORLD);
  check_ring(r, 9, "merged epochs");
  xdev::graph_destroy(graph);
}

// 2. Random scripts.
// One window's part of a group of epochs.
struct Part {
  int window;
  bool stamp_after_post;  // else before the post
  bool append;            // the received slot goes to the history after the wait
};
// Epochs of one or two windows: every post, then every start-put-complete, then every wait, each
// in its own drawn order.
struct EpochGroup {
  std::vector<Part> parts;
  std::vector<int> post_order, complete_order, wait_order;  // indices into parts
};

std::vector<EpochGroup> draw_script(std::mt19937_64 &rng) {
  std::vector<EpochGroup> script(3 + rng() % 5);
  for (EpochGroup &g : script) {
    const int n = 1 + static_cast<int>(rng() % 2);
    const int first = static_cast<int>(rng() % 2);
    for (int k = 0; k < n; ++k) g.parts.push_back({(first + k) % 2, rng() % 2 == 0, rng() % 3 != 0});
    for (auto *order : {&g.post_order, &g.complete_order, &g.wait_order}) {
      for (int k = 0; k < n; ++k) order->push_back(k);
      if (n == 2 && rng() % 2) std::swap((*order)[0], (*order)[1]);
    }
  }
  return script;
}

// Enqueues (or records) the script.
void enqueue_script(void *s, const std::vector<EpochGroup> &script, Ring *rings[2]) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group from_left({left}), to_right({right});
  for (const EpochGroup &g : script) {
    for (int k : g.post_order) {
      const Part &p = g.parts[k];
      Ring &r = *rings[p.window];
      if (!p.stamp_after_post) xdev::stamp(s, r.src.p, kSlot, r.gen, r.my_key);
      MT_OK(MPIX_Win_post_stream(from_left, r.w.win, s));
    }
    for (int k : g.complete_order) {
      const Part &p = g.parts[k];
      Ring &r = *rings[p.window];
      MT_OK(MPI_Win_start(to_right, MPIX_MODE_STREAM, r.w.win));
      if (p.stamp_after_post) xdev::stamp(s, r.src.p, kSlot, r.gen, r.my_key);
      MT_OK(MPI_Put(r.src.p, kSlot, MPI_BYTE, right, 0, kSlot, MPI_BYTE, r.w.win));
      MT_OK(MPIX_Win_complete_stream(r.w.win, s));
    }
    for (int k : g.wait_order) {
      const Part &p = g.parts[k];
      Ring &r = *rings[p.window];
      MT_OK(MPIX_Win_wait_stream(r.w.win, s));
      if (p.append) xdev::append(s, r.history, r.w.base, kSlot, r.count);
    }
  }
}

// The host's tally of one run of the script (eager or replayed): epochs, and which were appended.
void tally(const std::vector<EpochGroup> &script, Ring *rings[2]) {
  for (const EpochGroup &g : script)
    for (int k : g.wait_order) {
      Ring &r = *rings[g.parts[k].window];
      ++r.epochs;
      if (g.parts[k].append) r.appended.push_back(r.epochs);
    }
}

void random_scripts(void *s, int scripts, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int n = 0; n < scripts; ++n) {
    const std::vector<EpochGroup> script = draw_script(rng);
    size_t appends = 0, groups_of_two = 0;
    for (const EpochGroup &g : script) {
      for (const Part &p : g.parts) appends += p.append;
      groups_of_two += g.parts.size() == 2;
    }
    const int runs = 20;  // replays and eager runs together
    Ring a(0, appends * runs + 1), b(1, appends * runs + 1);
    Ring *rings[2] = {&a, &b};
    const std::string what = fmt("script %d (%zu groups, %zu of two windows)", n, script.size(), groups_of_two);
    g_context = what;
    xdev::stream_begin_capture(s);
    const unsigned long long ops0 = MPIX_St_stream_ops_enqueued();
    enqueue_script(s, script, rings);
    const unsigned long long ops = MPIX_St_stream_ops_enqueued() - ops0;
    void *graph = xdev::stream_end_capture(s);
    // Each epoch is three calls: merging can only lower the count, never below one a group part.
    size_t parts = 0;
    for (const EpochGroup &g : script) parts += g.parts.size();
    MT_CHECKF(ops <= 3 * parts && ops >= (graph_merging() ? parts : 3 * parts),
              "%s: %llu stream operations for %zu epochs (merging %s)", what.c_str(), ops, parts,
              graph_merging() ? "on" : "off");
    for (int run = 0; run < runs; ++run) {
      if (rng() % 4 == 0) enqueue_script(s, script, rings);
      else xdev::graph_launch(graph, s);
      tally(script, rings);
      if (rng() % 5 == 0) MT_SYNC(s);
    }
    MT_SYNC(s);
    MPI_Barrier(MPI_COMM_WORLD);
    check_ring(a, 0, what);
    check_ring(b, 1, what);
    xdev::graph_destroy(graph);
    note("%s: %llu stream operations for %zu epochs captured; %d runs checked", what.c_str(), ops, parts, runs);
  }
}

// 3. Post ahead.
void post_ahead(void *s, int runs) {
  g_context = "post ahead: two windows in turn";
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group from_left({left}), to_right({right});
  constexpr int kEpochs = 6;  // a block; each run appends every epoch's slot
  Ring a(0, kEpochs / 2 * static_cast<size_t>(runs) + 1), b(1, kEpochs / 2 * static_cast<size_t>(runs) + 1);
  Ring *rings[2] = {&a, &b};
  auto block = [&] {
    MT_OK(MPIX_Win_post_stream(from_left, a.w.win, s));
    for (int e = 0; e < kEpochs; ++e) {
      Ring &now = *rings[e % 2], &next = *rings[(e + 1) % 2];
      xdev::stamp(s, now.src.p, kSlot, now.gen, now.my_key);
      if (e + 1 < kEpochs) MT_OK(MPIX_Win_post_stream(from_left, next.w.win, s));
      MT_OK(MPI_Win_start(to_right, MPIX_MODE_STREAM, now.w.win));
      MT_OK(MPI_Put(now.src.p, kSlot, MPI_BYTE, right, 0, kSlot, MPI_BYTE, now.w.win));
      MT_OK(MPIX_Win_complete_stream(now.w.win, s));
      MT_OK(MPIX_Win_wait_stream(now.w.win, s));
      xdev::append(s, now.history, now.w.base, kSlot, now.count);
    }
  };
  auto tally_block = [&] {
    for (int e = 0; e < kEpochs; ++e) {
      Ring &now = *rings[e % 2];
      now.appended.push_back(++now.epochs);
    }
  };
  xdev::stream_begin_capture(s);
  const unsigned long long ops0 = MPIX_St_stream_ops_enqueued();
  block();
  const unsigned long long ops = MPIX_St_stream_ops_enqueued() - ops0;
  void *graph = xdev::stream_end_capture(s);
  // Merged: the first post alone, then one operation per epoch (the next window's post, this
  // one's complete and wait). Apart: three calls per epoch, less the last epoch's post.
  const unsigned long long want = graph_merging() ? kEpochs + 1 : 3 * kEpochs;
  MT_CHECKF(ops == want, "post ahead: %llu stream operations for %d epochs, want %llu (merging %s)", ops, kEpochs,
            want, graph_merging() ? "on" : "off");
  std::mt19937_64 rng(20261127);
  for (int run = 0; run < runs; ++run) {
    if (rng() % 4 == 0) block();
    else xdev::graph_launch(graph, s);
    tally_block();
    if (rng() % 5 == 0) MT_SYNC(s);
  }
  MT_SYNC(s);
  MPI_Barrier(MPI_COMM_WORLD);
  check_ring(a, 0, "post ahead");
  check_ring(b, 1, "post ahead");
  xdev::graph_destroy(graph);
}

// 4. A self epoch on each of two windows, B's post first: with merging, B's post leads A's epoch
// in one kernel node or task, and B's complete and wait make a second.
void freed_lead_window(void *s) {
  g_context = "replay after MPI_Win_free of a merged post's window";
  TestWin a = make_window(WinKind::create, 64), b = make_window(WinKind::create, 64);
  uint8_t *memory_b = b.base;
  b.own_memory = false;  // freed below, after the replay
  DevBuf src(64);
  uint64_t *gen = device_counter();
  Group self({g_rank});
  auto epochs = [&] {
    xdev::stamp(s, src.p, 64, gen, 0x1ead);
    MT_OK(MPIX_Win_post_stream(self, b.win, s));
    MT_OK(MPIX_Win_post_stream(self, a.win, s));
    for (MPI_Win win : {a.win, b.win}) {
      MT_OK(MPI_Win_start(self, MPIX_MODE_STREAM, win));
      MT_OK(MPI_Put(src.p, 64, MPI_BYTE, g_rank, 0, 64, MPI_BYTE, win));
      MT_OK(MPIX_Win_complete_stream(win, s));
      MT_OK(MPIX_Win_wait_stream(win, s));
    }
  };
  xdev::stream_begin_capture(s);
  const unsigned long long ops0 = MPIX_St_stream_ops_enqueued();
  epochs();
  const unsigned long long ops = MPIX_St_stream_ops_enqueued() - ops0;
  void *graph = xdev::stream_end_capture(s);
  if (graph_merging()) MT_CHECKF(ops == 2, "two self epochs, B's post first: %llu stream operations, want 2", ops);
  xdev::graph_launch(graph, s);
  MT_SYNC(s);
  std::vector<uint8_t> want(64);
  for (size_t i = 0; i < 64; ++i) want[i] = xdev::stamp_byte(0x1ead, 1, i);
  for (uint8_t *memory : {a.base, memory_b}) {
    const auto got = read_device(memory, 64);
    MT_SAME_BYTES(got.data(), want.data(), 64, "the one replay before MPI_Win_free");
  }
  xdev::fill(a.base, 0x77, 64);
  xdev::fill(memory_b, 0x77, 64);
  MT_OK(MPI_Win_free(&b.win));
  MT_SYNC(s);
  xdev::graph_launch(graph, s);
  const int rc = stream_report_rc(s);
  const std::string msg = MT_EXPECT_ERROR(rc, MPI_ERR_WIN);
  MT_CHECKF(contains(msg, "MPI_Win_free"), "the report names MPI_Win_free: \"%s\"", msg.c_str());
  // B is never written. A neither where B's post leads A's epoch in one node (skipped whole);
  // apart (MPIX_ST_GRAPH_MERGE=0), A's own nodes may run (GPU backends go on past a skipped node).
  const std::vector<uint8_t> untouched(64, 0x77);
  for (uint8_t *memory : {a.base, memory_b}) {
    if (memory == a.base && !graph_merging()) continue;
    const auto got = read_device(memory, 64);
    MT_SAME_BYTES(got.data(), untouched.data(), 64, "window memory after a replay whose merged post's window was freed");
  }
  // A's epochs still run: the skipped node advanced none of its counts, or all of them.
  g_context = "an epoch on the window that stayed";
  xdev::stamp(s, src.p, 64, gen, 0x2ead);
  MT_OK(MPIX_Win_post_stream(self, a.win, s));
  MT_OK(MPI_Win_start(self, MPIX_MODE_STREAM, a.win));
  MT_OK(MPI_Put(src.p, 64, MPI_BYTE, g_rank, 0, 64, MPI_BYTE, a.win));
  MT_OK(MPIX_Win_complete_stream(a.win, s));
  MT_OK(MPIX_Win_wait_stream(a.win, s));
  MT_SYNC(s);
  const uint64_t generation = read_counter(gen);  // the stale replay's stamp kernel ran too
  for (size_t i = 0; i < 64; ++i) want[i] = xdev::stamp_byte(0x2ead, generation, i);
  const auto got = read_device(a.base, 64);
  MT_SAME_BYTES(got.data(), want.data(), 64, "an epoch on the window that stayed");
  xdev::graph_destroy(graph);
  xdev::free(memory_b);
  xdev::free(gen);
  free_window(a);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "graph_merge");
  int scripts = 6;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--scripts=", 10) == 0) scripts = std::atoi(argv[i] + 10);
  const uint64_t seed = 20261126;
  note("graph_merge: merging %s, %d random scripts, seed %llu", graph_merging() ? "on" : "off", scripts,
       static_cast<unsigned long long>(seed));
  void *s = stream_create();
  counted(s, 50);
  random_scripts(s, scripts, seed);
  post_ahead(s, 30);
  freed_lead_window(s);
  stream_destroy(s);
  return finish();
}
