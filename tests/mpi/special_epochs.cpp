// Less common but valid epochs, both window kinds:
//  - stream-triggered self epochs (a rank both origin and target of itself), alone and together
//    with a neighbour, with puts, gets and accumulates;
//  - MPI_PROC_NULL targets (no effect, also with an empty group), empty groups, skipped epochs;
//  - two windows in interleaved epochs on one stream, and on two streams;
//  - windows on sub-communicators and on a communicator whose rank order is reversed (groups come
//    from MPI_COMM_WORLD and must be translated to window ranks);
//  - groups freed while their handle values come back for groups of other processes (a library
//    that remembered translations by handle would send data astray);
//  - zero-size windows on some ranks; a window over part of another window's memory;
//  - 700 puts, accumulates and gets in one epoch;
//  - MPI_Win_free right after enqueueing epochs (no stream synchronisation first);
//  - (host backend) with the streams blocked, a whole epoch's calls return at once, enqueue 3 stream
//    operations and move no data before the streams run.
// Host-driven self epochs are tested in host_self_epoch.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "test_common.h"

using namespace mt;

namespace {

void self_epochs(WinKind kind, void *s) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  g_context = fmt("stream-triggered self epochs, %s", kind_name(kind));
  const size_t n = 1 << 16;
  TestWin w = make_window(kind, 3 * n, 1, MPI_COMM_WORLD, 0x5e1f);
  std::vector<uint8_t> model = pattern(3 * n, key(0x5e1f, static_cast<uint64_t>(g_rank)));
  Group self({g_rank});
  std::vector<int> sr = {g_rank, right}, lr = {g_rank, left};
  std::sort(sr.begin(), sr.end());
  sr.erase(std::unique(sr.begin(), sr.end()), sr.end());
  std::sort(lr.begin(), lr.end());
  lr.erase(std::unique(lr.begin(), lr.end()), lr.end());
  Group self_right(sr), self_left(lr);
  DevBuf src(n), got(n + 16), acc(8 * 64);

  // 1. Alone: put into my own window, get from it (another region), accumulate into it.
  const auto data = pattern(n - 7, key(0x5e1, static_cast<uint64_t>(g_rank)));
  src.upload(data);
  std::vector<int64_t> inc(64);
  for (int i = 0; i < 64; ++i) inc[i] = i * 1000 + g_rank;
  acc.upload(inc.data(), 64 * 8);
  xdev::fill(got.p, 0xee, n + 16);
  MT_OK(MPIX_Win_post_stream(self, w.win, s));
  MT_OK(MPI_Win_start(self, MPIX_MODE_STREAM, w.win));
  MT_OK(MPI_Put(src.p, static_cast<int>(n - 7), MPI_BYTE, g_rank, 3, static_cast<int>(n - 7), MPI_BYTE, w.win));
  MT_OK(MPI_Get(got.p + 1, static_cast<int>(n), MPI_BYTE, g_rank, static_cast<MPI_Aint>(n), static_cast<int>(n),
                MPI_BYTE, w.win));
  MT_OK(MPI_Accumulate(acc.p, 64, MPI_INT64_T, g_rank, static_cast<MPI_Aint>(2 * n), 64, MPI_INT64_T, MPI_SUM, w.win));
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
  MT_SYNC(s);
  std::vector<uint8_t> want_get(n + 16, 0xee);
  std::copy(model.begin() + static_cast<ptrdiff_t>(n), model.begin() + static_cast<ptrdiff_t>(2 * n),
            want_get.begin() + 1);
  std::copy(data.begin(), data.end(), model.begin() + 3);
  for (int i = 0; i < 64; ++i) {
    int64_t v;
    std::memcpy(&v, model.data() + 2 * n + 8 * i, 8);
    v += inc[i];
    std::memcpy(model.data() + 2 * n + 8 * i, &v, 8);
  }
  auto g = got.download();
  MT_SAME_BYTES(g.data(), want_get.data(), n + 16, "self get (0xee: untouched)");
  auto win = read_device(w.base, w.bytes);
  MT_SAME_BYTES(win.data(), model.data(), w.bytes, "window after a self epoch");

  // 2. Self and a neighbour in the same epochs, 10 epochs enqueued, one synchronisation: each
  //    rank puts piece i of epoch e to itself at [e * 16, +8) and to its right neighbour at [n + e * 16 + 8, +8).
  std::vector<DevBuf> pieces;
  for (int e = 0; e < 10; ++e) {
    pieces.emplace_back(16);
    auto p = pattern(16, key(0x5e2, static_cast<uint64_t>(e), static_cast<uint64_t>(g_rank)));
    pieces.back().upload(p);
    MT_OK(MPIX_Win_post_stream(self_left, w.win, s));
    MT_OK(MPI_Win_start(self_right, MPIX_MODE_STREAM, w.win));
    MT_OK(MPI_Put(pieces.back().p, 8, MPI_BYTE, g_rank, e * 16, 8, MPI_BYTE, w.win));
    MT_OK(MPI_Put(pieces.back().p + 8, 8, MPI_BYTE, right, static_cast<MPI_Aint>(n) + e * 16 + 8, 8, MPI_BYTE, w.win));
    MT_OK(MPIX_Win_complete_stream(w.win, s));
    MT_OK(MPIX_Win_wait_stream(w.win, s));
  }
  MT_SYNC(s);
  for (int e = 0; e < 10; ++e) {
    auto mine = pattern(16, key(0x5e2, static_cast<uint64_t>(e), static_cast<uint64_t>(g_rank)));
    auto theirs = pattern(16, key(0x5e2, static_cast<uint64_t>(e), static_cast<uint64_t>(left)));
    std::copy(mine.begin(), mine.begin() + 8, model.begin() + e * 16);
    if (left == g_rank) {
      std::copy(mine.begin() + 8, mine.end(), model.begin() + static_cast<ptrdiff_t>(n) + e * 16 + 8);
    } else {
      std::copy(theirs.begin() + 8, theirs.end(), model.begin() + static_cast<ptrdiff_t>(n) + e * 16 + 8);
    }
  }
  win = read_device(w.base, w.bytes);
  MT_SAME_BYTES(win.data(), model.data(), w.bytes, "window after 10 self+neighbour epochs");
  free_window(w);
}

void proc_null_and_empty(Mode mode, WinKind kind, void *s) {
  g_context = fmt("%s, %s, MPI_PROC_NULL and empty groups", mode_name(mode), kind_name(kind));
  const size_t n = 4096;
  TestWin w = make_window(kind, n, 1, MPI_COMM_WORLD, 0x9011);
  const auto model = pattern(n, key(0x9011, static_cast<uint64_t>(g_rank)));
  DevBuf src(64), got(64);
  xdev::fill(src.p, 0x11, 64);
  xdev::fill(got.p, 0xee, 64);
  // Empty groups: an epoch with no target and no origin, holding only MPI_PROC_NULL operations.
  for (int e = 0; e < 3; ++e) {
    MT_OK(post_rc(mode, MPI_GROUP_EMPTY, w.win, s));
    MT_OK(start_rc(mode, MPI_GROUP_EMPTY, w.win));
    MT_OK(MPI_Put(src.p, 64, MPI_BYTE, MPI_PROC_NULL, 0, 64, MPI_BYTE, w.win));
    MT_OK(MPI_Get(got.p, 64, MPI_BYTE, MPI_PROC_NULL, 0, 64, MPI_BYTE, w.win));
    MT_OK(MPI_Accumulate(src.p, 16, MPI_INT, MPI_PROC_NULL, 0, 16, MPI_INT, MPI_SUM, w.win));
    MT_OK(complete_rc(mode, w.win, s));
    MT_OK(wait_rc(mode, w.win, s));
  }
  // MPI_PROC_NULL inside a real epoch with a neighbour.
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group to_right({right}), from_left({left});
  MT_POST(mode, from_left, w.win, s);
  MT_START(mode, to_right, w.win);
  MT_OK(MPI_Put(src.p, 64, MPI_BYTE, MPI_PROC_NULL, 0, 64, MPI_BYTE, w.win));
  MT_OK(MPI_Get(got.p, 64, MPI_BYTE, MPI_PROC_NULL, 0, 64, MPI_BYTE, w.win));
  MT_OK(MPI_Put(src.p, 0, MPI_BYTE, right, 0, 0, MPI_BYTE, w.win));  // zero bytes to a real target
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  auto win = read_device(w.base, n);
  MT_SAME_BYTES(win.data(), model.data(), n, "window after MPI_PROC_NULL and zero-byte operations (unchanged)");
  auto gg = got.download();
  std::vector<uint8_t> untouched(64, 0xee);
  MT_SAME_BYTES(gg.data(), untouched.data(), 64, "get from MPI_PROC_NULL (buffer unchanged)");
  free_window(w);
}

// Epochs alternate between the neighbours and this rank alone, each group made for its epoch and
// freed after it, so the MPI may hand the freed handle values to the next epoch's groups, which
// name other processes: a translation remembered for the old group would send the data astray
// (such a cache was tried and dropped: no measurable gain on H100s).
void reused_group_handles(Mode mode, WinKind kind, void *s) {
  g_context = fmt("%s, %s, group handles freed and reused", mode_name(mode), kind_name(kind));
  const size_t piece = 64;
  const int rounds = 6;
  TestWin w = make_window(kind, piece * rounds, 1, MPI_COMM_WORLD, 0x6a0b);
  auto model = pattern(piece * rounds, key(0x6a0b, static_cast<uint64_t>(g_rank)));
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  std::vector<DevBuf> src;  // alive until the stream ran the epochs
  src.reserve(rounds);
  MPI_Group seen[2] = {MPI_GROUP_NULL, MPI_GROUP_NULL};
  int reused = 0;
  for (int r = 0; r < rounds; ++r) {
    const bool alone = r % 2 == 1;
    const int target = alone ? g_rank : right, origin = alone ? g_rank : left;
    src.emplace_back(piece);
    src.back().upload(pattern(piece, key(0x6a0c, static_cast<uint64_t>(r), static_cast<uint64_t>(g_rank))));
    MPI_Group to = group_of({target}), from = group_of({origin});
    reused += (to == seen[0] || to == seen[1]) + (from == seen[0] || from == seen[1]);
    MT_POST(mode, from, w.win, s);
    MT_START(mode, to, w.win);
    MT_OK(MPI_Put(src.back().p, static_cast<int>(piece), MPI_BYTE, target, static_cast<MPI_Aint>(r * piece),
                  static_cast<int>(piece), MPI_BYTE, w.win));
    MT_COMPLETE(mode, w.win, s);
    MT_WAIT(mode, w.win, s);
    const auto got = pattern(piece, key(0x6a0c, static_cast<uint64_t>(r), static_cast<uint64_t>(origin)));
    std::copy(got.begin(), got.end(), model.begin() + static_cast<ptrdiff_t>(r * piece));
    seen[0] = to;
    seen[1] = from;
    MPI_Group_free(&to);
    MPI_Group_free(&from);
  }
  if (mode == Mode::stream) MT_SYNC(s);
  auto win = read_device(w.base, w.bytes);
  MT_SAME_BYTES(win.data(), model.data(), w.bytes, "window after epochs on freed and reused group handles");
  if (g_rank == 0) note("  group handle values reused: %d of %d", reused, 2 * (rounds - 1));
  free_window(w);
}

void two_windows(WinKind kind, bool two_streams, void *s1, void *s2) {
  g_context =
      fmt("two windows, %s, %s", kind_name(kind), two_streams ? "two streams" : "one stream, interleaved epochs");
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  const int right2 = (g_rank + 2) % g_size, left2 = (g_rank + g_size - 2) % g_size;
  const size_t n = 20 * 64;
  TestWin a = make_window(kind, n), b = make_window(kind, n);
  void *sb = two_streams ? s2 : s1;
  Group ar({right}), al({left}), br({right2}), bl({left2});
  std::vector<DevBuf> src;
  for (int e = 0; e < 20; ++e) {
    src.emplace_back(128);
    src.back().upload(pattern(128, key(0x2a, static_cast<uint64_t>(e), static_cast<uint64_t>(g_rank))));
    MT_OK(MPIX_Win_post_stream(al, a.win, s1));
    MT_OK(MPIX_Win_post_stream(bl, b.win, sb));
    MT_OK(MPI_Win_start(ar, MPIX_MODE_STREAM, a.win));
    MT_OK(MPI_Win_start(br, MPIX_MODE_STREAM, b.win));
    MT_OK(MPI_Put(src.back().p, 64, MPI_BYTE, right, e * 64, 64, MPI_BYTE, a.win));
    MT_OK(MPI_Put(src.back().p + 64, 64, MPI_BYTE, right2, e * 64, 64, MPI_BYTE, b.win));
    MT_OK(MPIX_Win_complete_stream(b.win, sb));
    MT_OK(MPIX_Win_complete_stream(a.win, s1));
    MT_OK(MPIX_Win_wait_stream(a.win, s1));
    MT_OK(MPIX_Win_wait_stream(b.win, sb));
  }
  MT_SYNC(s1);
  if (two_streams) MT_SYNC(s2);
  std::vector<uint8_t> wa(n), wb(n);
  for (int e = 0; e < 20; ++e) {
    auto pa = pattern(128, key(0x2a, static_cast<uint64_t>(e), static_cast<uint64_t>(left)));
    auto pb = pattern(128, key(0x2a, static_cast<uint64_t>(e), static_cast<uint64_t>(left2)));
    std::copy(pa.begin(), pa.begin() + 64, wa.begin() + e * 64);
    std::copy(pb.begin() + 64, pb.end(), wb.begin() + e * 64);
  }
  auto ga = read_device(a.base, n), gb = read_device(b.base, n);
  MT_SAME_BYTES(ga.data(), wa.data(), n, "window A");
  MT_SAME_BYTES(gb.data(), wb.data(), n, "window B");
  free_window(a);
  free_window(b);
}

// A window on a communicator whose rank order is reversed: groups built from MPI_COMM_WORLD
// name world ranks, MPI_Put names window ranks.
void reversed_comm(Mode mode, WinKind kind, void *s) {
  g_context = fmt("%s, %s, window on a reversed communicator", mode_name(mode), kind_name(kind));
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, g_size - 1 - g_rank, &rev);
  int wr;
  MPI_Comm_rank(rev, &wr);
  const size_t n = 256;
  TestWin w = make_window(kind, n * static_cast<size_t>(g_size), 1, rev);
  // World-rank ring: put to world rank right, whose window rank is g_size - 1 - right.
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group to_right({right}), from_left({left});  // world ranks, from MPI_COMM_WORLD's group
  DevBuf src(n);
  src.upload(pattern(n, key(0x4e7, static_cast<uint64_t>(g_rank))));
  MT_POST(mode, from_left, w.win, s);
  MT_START(mode, to_right, w.win);
  MT_OK(MPI_Put(src.p, static_cast<int>(n), MPI_BYTE, g_size - 1 - right, static_cast<MPI_Aint>(n) * g_rank,
                static_cast<int>(n), MPI_BYTE, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  std::vector<uint8_t> want(w.bytes, 0);
  auto p = pattern(n, key(0x4e7, static_cast<uint64_t>(left)));
  std::copy(p.begin(), p.end(), want.begin() + static_cast<ptrdiff_t>(n) * left);
  auto got = read_device(w.base, w.bytes);
  MT_SAME_BYTES(got.data(), want.data(), w.bytes, fmt("window (my window rank %d)", wr));
  free_window(w);
  MPI_Comm_free(&rev);
}

// Windows on the even and the odd ranks separately (both sub-communicators at once), and a window
// where odd ranks expose no memory.
void sub_comms(Mode mode, WinKind kind, void *s) {
  g_context = fmt("%s, %s, sub-communicators", mode_name(mode), kind_name(kind));
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
  int hr, hs;
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hs);
  const size_t n = 512;
  {
    TestWin w = make_window(kind, n, 1, half);
    const int right = (hr + 1) % hs, left = (hr + hs - 1) % hs;
    Group to_right({right}, half), from_left({left}, half);
    DevBuf src(n);
    src.upload(pattern(n, key(0x5b, static_cast<uint64_t>(g_rank))));
    if (hs > 1 || mode == Mode::stream) {  // a one-rank half would be a host-driven self epoch
      MT_POST(mode, from_left, w.win, s);
      MT_START(mode, to_right, w.win);
      MT_OK(MPI_Put(src.p, static_cast<int>(n), MPI_BYTE, right, 0, static_cast<int>(n), MPI_BYTE, w.win));
      MT_COMPLETE(mode, w.win, s);
      MT_WAIT(mode, w.win, s);
      if (mode == Mode::stream) MT_SYNC(s);
      // My left neighbour in the half has world rank g_rank - 2 (cyclically within the parity).
      int left_world;
      MPI_Group hg, wg;
      MPI_Comm_group(half, &hg);
      MPI_Comm_group(MPI_COMM_WORLD, &wg);
      MPI_Group_translate_ranks(hg, 1, &left, wg, &left_world);
      MPI_Group_free(&hg);
      MPI_Group_free(&wg);
      auto want = pattern(n, key(0x5b, static_cast<uint64_t>(left_world)));
      auto got = read_device(w.base, n);
      MT_SAME_BYTES(got.data(), want.data(), n, fmt("window on the %s ranks", g_rank % 2 ? "odd" : "even"));
    }
    free_window(w);
  }
  MPI_Comm_free(&half);

  // Zero-size windows on odd ranks: every rank puts to rank 0 (8 bytes each).
  g_context = fmt("%s, %s, zero-size windows on odd ranks", mode_name(mode), kind_name(kind));
  const size_t bytes = g_rank % 2 ? 0 : 8 * static_cast<size_t>(g_size);
  TestWin z = make_window(kind, bytes);
  if (g_rank != 0 || mode == Mode::stream) {
    std::vector<int> origins;
    for (int r = 0; r < g_size; ++r)
      if (r != 0 || mode == Mode::stream) origins.push_back(r);
    Group og(origins), zero({0});
    DevBuf src(8);
    const uint64_t v = key(0x2e0, static_cast<uint64_t>(g_rank));
    src.upload(&v, 8);
    if (g_rank == 0) MT_POST(mode, og, z.win, s);
    MT_START(mode, zero, z.win);
    MT_OK(MPI_Put(src.p, 8, MPI_BYTE, 0, 8 * g_rank, 8, MPI_BYTE, z.win));
    MT_COMPLETE(mode, z.win, s);
    if (g_rank == 0) MT_WAIT(mode, z.win, s);
    if (mode == Mode::stream) MT_SYNC(s);
    if (g_rank == 0) {
      auto got = read_device(z.base, bytes);
      std::vector<uint8_t> want(bytes, 0);
      for (int r : origins) {
        const uint64_t x = key(0x2e0, static_cast<uint64_t>(r));
        std::memcpy(want.data() + 8 * r, &x, 8);
      }
      MT_SAME_BYTES(got.data(), want.data(), bytes, "rank 0's window");
    }
  } else {
    // Host-driven, rank 0: exposure only, toward the other ranks.
    std::vector<int> origins;
    for (int r = 1; r < g_size; ++r) origins.push_back(r);
    Group og(origins);
    MT_POST(mode, og, z.win, s);
    MT_WAIT(mode, z.win, s);
    auto got = read_device(z.base, bytes);
    std::vector<uint8_t> want(bytes, 0);
    for (int r : origins) {
      const uint64_t x = key(0x2e0, static_cast<uint64_t>(r));
      std::memcpy(want.data() + 8 * r, &x, 8);
    }
    MT_SAME_BYTES(got.data(), want.data(), bytes, "rank 0's window");
  }
  free_window(z);
}

// One epoch with hundreds of operations (more than one kernel launch holds on the GPU backends:
// the waits, the data and the signals must keep their order across launches).
void many_ops(Mode mode, WinKind kind, void *s) {
  g_context = fmt("%s, %s, 700 operations in one epoch", mode_name(mode), kind_name(kind));
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  constexpr int kPuts = 400, kAccs = 200, kGets = 100;
  // Window: [puts: kPuts x 16][accumulate counters: kAccs x 8][get source: kGets x 8]
  const size_t acc_off = kPuts * 16, get_off = acc_off + kAccs * 8, bytes = get_off + kGets * 8;
  TestWin w = make_window(kind, bytes, 1, MPI_COMM_WORLD, 0x3a7);
  std::vector<uint8_t> model = pattern(bytes, key(0x3a7, static_cast<uint64_t>(g_rank)));
  DevBuf src(kPuts * 8), acc(8), got(kGets * 8);
  src.upload(pattern(kPuts * 8, key(0x3a8, static_cast<uint64_t>(g_rank))));
  const int64_t three = 3;
  acc.upload(&three, 8);
  Group to_right({right}), from_left({left});
  MT_POST(mode, from_left, w.win, s);
  MT_START(mode, to_right, w.win);
  for (int i = 0; i < kPuts; ++i)
    MT_OK(MPI_Put(src.p + 8 * i, 8, MPI_BYTE, right, 16 * i + (i % 8), 8, MPI_BYTE, w.win));
  for (int i = 0; i < kAccs; ++i)
    MT_OK(MPI_Accumulate(acc.p, 1, MPI_INT64_T, right, static_cast<MPI_Aint>(acc_off) + 8 * i, 1, MPI_INT64_T, MPI_SUM,
                         w.win));
  for (int i = 0; i < kGets; ++i)
    MT_OK(MPI_Get(got.p + 8 * i, 8, MPI_BYTE, right, static_cast<MPI_Aint>(get_off) + 8 * (kGets - 1 - i), 8, MPI_BYTE,
                  w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  auto theirs = pattern(kPuts * 8, key(0x3a8, static_cast<uint64_t>(left)));
  for (int i = 0; i < kPuts; ++i) std::copy_n(theirs.begin() + 8 * i, 8, model.begin() + 16 * i + (i % 8));
  for (int i = 0; i < kAccs; ++i) {
    int64_t v;
    std::memcpy(&v, model.data() + acc_off + 8 * i, 8);
    v += 3;
    std::memcpy(model.data() + acc_off + 8 * i, &v, 8);
  }
  auto win = read_device(w.base, bytes);
  MT_SAME_BYTES(win.data(), model.data(), bytes, "window after 700 operations");
  auto right_init = pattern(bytes, key(0x3a7, static_cast<uint64_t>(right)));
  std::vector<uint8_t> want_got(kGets * 8);
  for (int i = 0; i < kGets; ++i)
    std::copy_n(right_init.begin() + static_cast<ptrdiff_t>(get_off) + 8 * (kGets - 1 - i), 8,
                want_got.begin() + 8 * i);
  auto g = got.download();
  MT_SAME_BYTES(g.data(), want_got.data(), g.size(), "get buffers");
  free_window(w);
}

// A window created over part of another window's memory (at an odd offset): puts through the inner
// window land in the outer window's memory there, and nowhere else.
void window_in_window(Mode mode, WinKind kind, void *s) {
  g_context = fmt("%s, MPI_Win_create over part of a %s window's memory", mode_name(mode), kind_name(kind));
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  TestWin outer = make_window(kind, 4096, 1, MPI_COMM_WORLD, 0x0e7);
  MPI_Win inner;
  MT_OK(MPI_Win_create(outer.base + 1001, 1000, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &inner));
  MT_OK(MPI_Win_set_errhandler(inner, MPI_ERRORS_RETURN));
  Group to_right({right}), from_left({left});
  DevBuf src(1000);
  src.upload(pattern(1000, key(0x1e7, static_cast<uint64_t>(g_rank))));
  MT_POST(mode, from_left, inner, s);
  MT_START(mode, to_right, inner);
  MT_OK(MPI_Put(src.p, 1000, MPI_BYTE, right, 0, 1000, MPI_BYTE, inner));
  MT_EXPECT_ERROR(MPI_Put(src.p, 1, MPI_BYTE, right, 1000, 1, MPI_BYTE, inner), MPI_ERR_RMA_RANGE);
  MT_COMPLETE(mode, inner, s);
  MT_WAIT(mode, inner, s);
  if (mode == Mode::stream) MT_SYNC(s);
  auto want = pattern(4096, key(0x0e7, static_cast<uint64_t>(g_rank)));
  auto theirs = pattern(1000, key(0x1e7, static_cast<uint64_t>(left)));
  std::copy(theirs.begin(), theirs.end(), want.begin() + 1001);
  auto got = read_device(outer.base, 4096);
  MT_SAME_BYTES(got.data(), want.data(), 4096, "outer window memory");
  MT_OK(MPI_Win_free(&inner));
  free_window(outer);
}

// MPI_Win_free right after enqueueing epochs, without synchronising the stream: the free waits for
// the window's stream work, after which the data is complete (MPI_Win_create: the memory is ours).
void free_without_sync(void *s) {
  g_context = "MPI_Win_free with 50 stream-triggered epochs not yet synchronised";
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  const int epochs = 50;
  const size_t n = 64 * epochs;
  uint8_t *mem = static_cast<uint8_t *>(xdev::alloc(n));
  xdev::fill(mem, 0, n);
  MPI_Win win;
  MT_OK(MPI_Win_create(mem, static_cast<MPI_Aint>(n), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  MT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  Group to_right({right}), from_left({left});
  std::vector<DevBuf> src;
  for (int e = 0; e < epochs; ++e) {
    src.emplace_back(64);
    src.back().upload(pattern(64, key(0xf5, static_cast<uint64_t>(e), static_cast<uint64_t>(g_rank))));
    MT_OK(MPIX_Win_post_stream(from_left, win, s));
    MT_OK(MPI_Win_start(to_right, MPIX_MODE_STREAM, win));
    MT_OK(MPI_Put(src.back().p, 64, MPI_BYTE, right, 64 * e, 64, MPI_BYTE, win));
    MT_OK(MPIX_Win_complete_stream(win, s));
    MT_OK(MPIX_Win_wait_stream(win, s));
  }
  MT_OK(MPI_Win_free(&win));
  std::vector<uint8_t> want(n);
  for (int e = 0; e < epochs; ++e) {
    auto p = pattern(64, key(0xf5, static_cast<uint64_t>(e), static_cast<uint64_t>(left)));
    std::copy(p.begin(), p.end(), want.begin() + 64 * e);
  }
  auto got = read_device(mem, n);
  MT_SAME_BYTES(got.data(), want.data(), n, "window memory right after MPI_Win_free");
  MT_SYNC(s);
  xdev::free(mem);
}

#ifndef MPIX_TEST_CUDA
// Every *_stream call only enqueues: with each rank's stream blocked by a host function, a whole
// ring epoch (post, start, put, get, accumulate, complete, wait) returns, enqueues exactly 3 stream
// operations, and moves no data until the streams are released.
void enqueue_only(WinKind kind, void *s) {
  g_context = fmt("stream calls only enqueue, %s", kind_name(kind));
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  TestWin w = make_window(kind, 256, 1, MPI_COMM_WORLD, 0xe11);
  const auto before = read_device(w.base, 256);
  Group to_right({right}), from_left({left});
  DevBuf src(64), got(64);
  src.upload(pattern(64, key(0xe12, static_cast<uint64_t>(g_rank))));
  xdev::fill(got.p, 0xee, 64);
  std::vector<int64_t> one(4, 1);
  DevBuf acc(32);
  acc.upload(one.data(), 32);
  std::atomic<bool> release{false};
  stream_call(s, [&release] {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
  });
  // If a call blocked on the stream, this thread would never get past it: release after 10 s anyway
  // and report.
  std::atomic<bool> calls_done{false}, timed_out{false};
  std::thread guard([&] {
    const double t0 = now_s();
    while (!calls_done.load() && now_s() - t0 < 10) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!calls_done.load()) timed_out = true, release = true;
  });
  const unsigned long long ops0 = MPIX_St_stream_ops_enqueued();
  MT_OK(MPIX_Win_post_stream(from_left, w.win, s));
  MT_OK(MPI_Win_start(to_right, MPIX_MODE_STREAM, w.win));
  MT_OK(MPI_Put(src.p, 64, MPI_BYTE, right, 0, 64, MPI_BYTE, w.win));
  MT_OK(MPI_Get(got.p, 64, MPI_BYTE, right, 128, 64, MPI_BYTE, w.win));
  MT_OK(MPI_Accumulate(acc.p, 4, MPI_INT64_T, right, 64, 4, MPI_INT64_T, MPI_SUM, w.win));
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
  const unsigned long long ops = MPIX_St_stream_ops_enqueued() - ops0;
  calls_done = true;
  MT_CHECKF(!timed_out.load(), "an MPIX_*_stream or RMA call blocked while the stream was blocked");
  MT_CHECKF(ops == 3, "one stream-triggered epoch enqueued %llu stream operations, want 3", ops);
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has enqueued everything; no stream has run any of it
  auto now = read_device(w.base, 256);
  MT_SAME_BYTES(now.data(), before.data(), 256, "window while the streams are blocked (unchanged)");
  auto g0 = got.download();
  std::vector<uint8_t> untouched(64, 0xee);
  MT_SAME_BYTES(g0.data(), untouched.data(), 64, "get buffer while the streams are blocked (untouched)");
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has checked before any stream runs
  release = true;
  guard.join();
  MT_SYNC(s);
  std::vector<uint8_t> want = pattern(256, key(0xe11, static_cast<uint64_t>(g_rank)));
  auto theirs = pattern(64, key(0xe12, static_cast<uint64_t>(left)));
  std::copy(theirs.begin(), theirs.end(), want.begin());
  for (int i = 0; i < 4; ++i) {
    int64_t v;
    std::memcpy(&v, want.data() + 64 + 8 * i, 8);
    ++v;
    std::memcpy(want.data() + 64 + 8 * i, &v, 8);
  }
  auto after = read_device(w.base, 256);
  MT_SAME_BYTES(after.data(), want.data(), 256, "window after the streams ran");
  auto right_init = pattern(256, key(0xe11, static_cast<uint64_t>(right)));
  auto g1 = got.download();
  MT_SAME_BYTES(g1.data(), right_init.data() + 128, 64, "get buffer after the streams ran");
  free_window(w);
}
#endif

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "special_epochs");
  const double t0 = now_s();
  {
    void *s = stream_create(), *s2 = stream_create();
    double t = now_s();
    auto lap = [&](const char *what) {
      note("  %-40s %.3f s", what, now_s() - t);
      t = now_s();
    };
    for (WinKind kind : kAllKinds) {
#ifndef MPIX_TEST_CUDA
      enqueue_only(kind, s);
      lap("stream calls only enqueue");
#endif
      self_epochs(kind, s);
      lap("self epochs");
      two_windows(kind, false, s, s2);
      two_windows(kind, true, s, s2);
      lap("two windows");
      for (Mode mode : kAllModes) {
        proc_null_and_empty(mode, kind, s);
        lap("MPI_PROC_NULL, empty groups");
        reversed_comm(mode, kind, s);
        lap("reversed communicator");
        reused_group_handles(mode, kind, s);
        lap("group handles freed and reused");
        sub_comms(mode, kind, s);
        lap("sub-communicators, zero-size windows");
        window_in_window(mode, kind, s);
        lap("window over part of a window");
        many_ops(mode, kind, s);
        lap("700 operations in one epoch");
      }
    }
    free_without_sync(s);
    lap("MPI_Win_free without synchronising");
    stream_destroy(s);
    stream_destroy(s2);
  }
  note("special_epochs: %.2f s", now_s() - t0);
  return finish();
}
