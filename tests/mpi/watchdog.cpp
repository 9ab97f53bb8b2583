// MPIX_ST_WATCHDOG_MS (300 in ctest): a wait for a signal that never comes reports an error within
// a few seconds instead of hanging, names what it waited for, and the program can still finish.
// Ranks 0 and 1 take part (other ranks only join the collective calls).
//  A. host-driven MPI_Win_complete toward a target that has not posted: MPI_ERR_OTHER; after the
//     target posts, MPI_Win_complete again succeeds and the data arrives;
//  B. host-driven MPI_Win_wait for an origin that has not completed: the same, the other way;
//  C. stream-triggered: rank 0 starts and completes toward rank 1, which never posts: rank 0's
//     stream synchronisation fails, naming window rank 1 and the post; rank 1's window is untouched;
//  D. stream-triggered: rank 1 posts and waits for rank 0, which never starts: rank 1's
//     synchronisation fails, naming window rank 0 and the complete;
//  E. a report belongs to the window whose epoch timed out: calls on another window (on another
//     stream) go on unharmed; MPIX_St_check(window) raises it once; the window's next epoch call
//     raises it (and does nothing else); a report of a window freed meanwhile comes out of
//     MPIX_St_check(MPI_WIN_NULL);
//  F: an epoch the watchdog skipped is not run by a later epoch of its window that passes (across
//     nodes no ring of the window is forwarded after the skipped one);
//  then the stream works again, and the windows of C and D can be freed (nothing of theirs is still
//  queued: the timed-out operations were dropped). C's put is never run, not even by MPI_Win_free
//  (its source buffer is freed by then): rank 1's window memory is still untouched after the free.
#include <atomic>
#include <chrono>
#include <thread>

#include "test_common.h"

using namespace mt;

namespace {

constexpr double kMaxReport = 10.0;  // seconds: generous for a 300 ms watchdog on a loaded machine

// The error a stream-triggered wait reported: host backend, at synchronisation; CUDA, at the
// library call after it (the kernel gives up and the stream completes).
int stream_error_rc(void *s, MPI_Win win) {
#ifdef MPIX_TEST_CUDA
  xdev::stream_sync(s);
  return MPIX_Win_wait_stream(win, s);  // no exposure epoch: only the pending watchdog error can come out
#else
  (void)win;
  return stream_sync_rc(s);
#endif
}

void host_complete_without_post(WinKind kind) {
  g_context = fmt("%s: host-driven MPI_Win_complete, target not posted", kind_name(kind));
  TestWin w = make_window(kind, 64);
  Group zero({0}), one({1});
  DevBuf src(64);
  src.upload(pattern(64, key(0xa, 0)));
  if (g_rank == 0) {
    MT_OK(MPI_Win_start(one, 0, w.win));
    MT_OK(MPI_Put(src.p, 64, MPI_BYTE, 1, 0, 64, MPI_BYTE, w.win));
    const double t0 = now_s();
    const int rc = MPI_Win_complete(w.win);
    const double took = now_s() - t0;
    std::string m = MT_EXPECT_ERROR(rc, MPI_ERR_OTHER);
    MT_CHECKF(contains(m, "watchdog") && contains(m, "MPI_Win_post"), "message: \"%s\"", m.c_str());
    MT_CHECKF(took < kMaxReport, "MPI_Win_complete took %.1f s to report", took);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // The retry must not race the 300 ms watchdog itself: the post is sent before rank 0 completes
  // (on a loaded machine the post could otherwise come later than 300 ms after the complete).
  if (g_rank == 1) MT_OK(MPI_Win_post(zero, 0, w.win));
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) MT_OK(MPI_Win_complete(w.win));  // the epoch is still open: complete it now
  if (g_rank == 1) {
    MT_OK(MPI_Win_wait(w.win));
    auto got = read_device(w.base, 64);
    auto want = pattern(64, key(0xa, 0));
    MT_SAME_BYTES(got.data(), want.data(), 64, "data of the retried epoch");
  }
  free_window(w);
}

void host_wait_without_complete(WinKind kind) {
  g_context = fmt("%s: host-driven MPI_Win_wait, origin not completed", kind_name(kind));
  TestWin w = make_window(kind, 64);
  Group zero({0}), one({1});
  DevBuf src(64);
  src.upload(pattern(64, key(0xb, 0)));
  if (g_rank == 1) {
    MT_OK(MPI_Win_post(zero, 0, w.win));
    const double t0 = now_s();
    const int rc = MPI_Win_wait(w.win);
    const double took = now_s() - t0;
    std::string m = MT_EXPECT_ERROR(rc, MPI_ERR_OTHER);
    MT_CHECKF(contains(m, "watchdog") && contains(m, "MPI_Win_complete"), "message: \"%s\"", m.c_str());
    MT_CHECKF(took < kMaxReport, "MPI_Win_wait took %.1f s to report", took);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    MT_OK(MPI_Win_start(one, 0, w.win));
    MT_OK(MPI_Put(src.p, 64, MPI_BYTE, 1, 0, 64, MPI_BYTE, w.win));
    MT_OK(MPI_Win_complete(w.win));
  }
  if (g_rank == 1) {
    MT_OK(MPI_Win_wait(w.win));
    auto got = read_device(w.base, 64);
    auto want = pattern(64, key(0xb, 0));
    MT_SAME_BYTES(got.data(), want.data(), 64, "data of the epoch after the retried wait");
  }
  free_window(w);
}

// C: returns the window, to be freed at the end.
TestWin stream_complete_without_post(WinKind kind, void *s) {
  g_context = fmt("%s: stream-triggered complete, target never posts", kind_name(kind));
  TestWin w = make_window(kind, 64);
  Group one({1});
  DevBuf src(64);
  xdev::fill(src.p, 0x77, 64);
  if (g_rank == 0) {
    MT_OK(MPI_Win_start(one, MPIX_MODE_STREAM, w.win));
    MT_OK(MPI_Put(src.p, 64, MPI_BYTE, 1, 0, 64, MPI_BYTE, w.win));
    MT_OK(MPIX_Win_complete_stream(w.win, s));  // only enqueues
    const double t0 = now_s();
    const int rc = stream_error_rc(s, w.win);
    const double took = now_s() - t0;
    std::string m = MT_EXPECT_ERROR(rc, MPI_ERR_OTHER);
    MT_CHECKF(contains(m, "watchdog") && contains(m, "window rank 1") && contains(m, "post"),
              "message does not name the post of window rank 1: \"%s\"", m.c_str());
    MT_CHECKF(took < kMaxReport, "the watchdog error took %.1f s to come", took);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 1) {
    auto got = read_device(w.base, 64);
    std::vector<uint8_t> zeros(64, 0);
    MT_SAME_BYTES(got.data(), zeros.data(), 64, "window of the rank that never posted (untouched)");
  }
  return w;
}

// D: returns the window, to be freed at the end.
TestWin stream_wait_without_complete(WinKind kind, void *s) {
  g_context = fmt("%s: stream-triggered wait, origin never starts", kind_name(kind));
  TestWin w = make_window(kind, 64);
  Group zero({0});
  if (g_rank == 1) {
    MT_OK(MPIX_Win_post_stream(zero, w.win, s));
    MT_OK(MPIX_Win_wait_stream(w.win, s));
    const double t0 = now_s();
    const int rc = stream_error_rc(s, w.win);
    const double took = now_s() - t0;
    std::string m = MT_EXPECT_ERROR(rc, MPI_ERR_OTHER);
    MT_CHECKF(contains(m, "watchdog") && contains(m, "window rank 0") && contains(m, "complete"),
              "message does not name the complete of window rank 0: \"%s\"", m.c_str());
    MT_CHECKF(took < kMaxReport, "the watchdog error took %.1f s to come", took);
    // Across nodes the report adds this rank's side of the network path: its one post rang.
    const char *vnode = std::getenv("MPIX_ST_VNODE_SIZE");
    if (vnode && std::strcmp(vnode, "1") == 0)
      MT_CHECKF(contains(m, "on this rank: post doorbell 1 of 1 rung"),
                "message lacks this rank's network side: \"%s\"", m.c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return w;
}

// The stream and the library work after the errors: a stream-triggered ring epoch.
void still_works(WinKind kind, void *s) {
  g_context = fmt("%s: a ring epoch after the watchdog errors", kind_name(kind));
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  TestWin w = make_window(kind, 64);
  Group to_right({right}), from_left({left});
  DevBuf src(64);
  src.upload(pattern(64, key(0xd, static_cast<uint64_t>(g_rank))));
  MT_OK(MPIX_Win_post_stream(from_left, w.win, s));
  MT_OK(MPI_Win_start(to_right, MPIX_MODE_STREAM, w.win));
  MT_OK(MPI_Put(src.p, 64, MPI_BYTE, right, 0, 64, MPI_BYTE, w.win));
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
  MT_SYNC(s);
  auto got = read_device(w.base, 64);
  auto want = pattern(64, key(0xd, static_cast<uint64_t>(left)));
  MT_SAME_BYTES(got.data(), want.data(), 64, "ring epoch data");
  free_window(w);
}

// F: an epoch the watchdog skipped never runs, not even when a later epoch of the window passes.
// Rank 0's first epoch toward rank 1 times out (rank 1 has not posted yet); rank 1 then posts, and
// its wait times out too (the skipped epoch never completes); it posts again, and rank 0's second
// epoch finds both posts. Node-local, that epoch runs and its put lands. Across nodes the window's
// trigger counter is cumulative: the second epoch's doorbell would fire the first epoch's put with
// its own, so no ring of the window is forwarded after a skipped one, and the second epoch reports
// the watchdog as well. Either way the skipped put never lands.
void later_epoch_after_skip(WinKind kind, void *s) {
  g_context = fmt("%s: a later epoch after one the watchdog skipped", kind_name(kind));
  const char *vnode = std::getenv("MPIX_ST_VNODE_SIZE");
  const bool remote = vnode && std::strcmp(vnode, "1") == 0;
  TestWin w = make_window(kind, 128);
  Group zero({0}), one({1});
  DevBuf first(64), second(64);
  xdev::fill(first.p, 0xa1, 64);
  xdev::fill(second.p, 0xb2, 64);
  if (g_rank == 0) {
    MT_OK(MPI_Win_start(one, MPIX_MODE_STREAM, w.win));
    MT_OK(MPI_Put(first.p, 64, MPI_BYTE, 1, 0, 64, MPI_BYTE, w.win));
    MT_OK(MPIX_Win_complete_stream(w.win, s));
    std::string m = MT_EXPECT_ERROR(stream_error_rc(s, w.win), MPI_ERR_OTHER);
    MT_CHECKF(contains(m, "watchdog") && contains(m, "post"), "first epoch: \"%s\"", m.c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0's first epoch was skipped
  if (g_rank == 1) {
    MT_OK(MPIX_Win_post_stream(zero, w.win, s));
    MT_OK(MPIX_Win_wait_stream(w.win, s));
    std::string m = MT_EXPECT_ERROR(stream_error_rc(s, w.win), MPI_ERR_OTHER);
    MT_CHECKF(contains(m, "watchdog") && contains(m, "complete"), "first exposure: \"%s\"", m.c_str());
    MT_OK(MPIX_Win_post_stream(zero, w.win, s));
    MT_SYNC(s);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // both of rank 1's posts are out
  if (g_rank == 0) {
    MT_OK(MPI_Win_start(one, MPIX_MODE_STREAM, w.win));
    MT_OK(MPI_Put(second.p, 64, MPI_BYTE, 1, 64, 64, MPI_BYTE, w.win));
    MT_OK(MPIX_Win_complete_stream(w.win, s));
    if (remote) {
      std::string m = MT_EXPECT_ERROR(stream_error_rc(s, w.win), MPI_ERR_OTHER);
      MT_CHECKF(contains(m, "later rings are not forwarded"), "second epoch across nodes: \"%s\"", m.c_str());
    } else {
      MT_OK(stream_report_rc(s));  // (not stream_error_rc: on CUDA it asks a call that only has an error to give)
    }
  }
  if (g_rank == 1) {
    // Node-local, the second epoch's complete stores its count (2) and ends this exposure; across
    // nodes a complete adds 1 when its operations are done, and that never comes.
    MT_OK(MPIX_Win_wait_stream(w.win, s));
    if (remote) MT_EXPECT_ERROR(stream_error_rc(s, w.win), MPI_ERR_OTHER);
    else MT_OK(stream_report_rc(s));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 1) {
    auto got = read_device(w.base, 128);
    std::vector<uint8_t> zeros(64, 0), second_bytes(64, 0xb2);
    MT_SAME_BYTES(got.data(), zeros.data(), 64, "where only the skipped epoch put");
    MT_SAME_BYTES(got.data() + 64, remote ? zeros.data() : second_bytes.data(), 64,
                  remote ? "where the second epoch put (its ring not forwarded)" : "where the second epoch put");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free_window(w);
}

// E, on each rank alone: windows over MPI_COMM_SELF, self epochs whose post never comes.
void attribution(void *s) {
  g_context = "watchdog reports belong to their window";
  Group self({0}, MPI_COMM_SELF);
  DevBuf src(64);
  xdev::fill(src.p, 0x5a, 64);
  void *stuck_stream = stream_create();
  // Enqueues on `a` an access epoch whose post never comes, and waits until its watchdog fired.
  auto time_out = [&](TestWin &a) {
    MT_OK(MPI_Win_start(self, MPIX_MODE_STREAM, a.win));
    MT_OK(MPI_Put(src.p, 64, MPI_BYTE, 0, 0, 64, MPI_BYTE, a.win));
    MT_OK(MPIX_Win_complete_stream(a.win, stuck_stream));
#ifdef MPIX_TEST_CUDA
    xdev::stream_sync(stuck_stream);
#else
    // Wait for the timeout without synchronising the stream (that would take the report).
    std::atomic<bool> ran{false};
    stream_call(stuck_stream, [&ran] { ran = true; });
    while (!ran) std::this_thread::sleep_for(std::chrono::milliseconds(20));
#endif
  };
  TestWin a = make_window(WinKind::create, 64, 1, MPI_COMM_SELF);
  TestWin b = make_window(WinKind::create, 64, 1, MPI_COMM_SELF);
  time_out(a);
  // Window b, on another stream: its calls do not see a's report.
  MT_OK(MPIX_Win_post_stream(self, b.win, s));
  MT_OK(MPI_Win_start(self, MPIX_MODE_STREAM, b.win));
  MT_OK(MPI_Put(src.p, 64, MPI_BYTE, 0, 0, 64, MPI_BYTE, b.win));
  MT_OK(MPIX_Win_complete_stream(b.win, s));
  MT_OK(MPIX_Win_wait_stream(b.win, s));
  MT_SYNC(s);
  MT_OK(MPIX_St_check(b.win));
  auto got = read_device(b.base, 64);
  MT_CHECKF(got[0] == 0x5a && got[63] == 0x5a, "window b's epoch did not run");
  // MPIX_St_check(a) raises a's report, once.
  std::string m = MT_EXPECT_ERROR(MPIX_St_check(a.win), MPI_ERR_OTHER);
  MT_CHECKF(contains(m, "watchdog") && contains(m, "post"), "MPIX_St_check(a): \"%s\"", m.c_str());
  MT_OK(MPIX_St_check(a.win));
  MT_OK(MPIX_St_check(MPI_WIN_NULL));
  // Again: now a's next epoch call raises it, and opens nothing.
  time_out(a);
  m = MT_EXPECT_ERROR(MPIX_Win_post_stream(self, a.win, s), MPI_ERR_OTHER);
  MT_CHECKF(contains(m, "watchdog"), "a's next epoch call: \"%s\"", m.c_str());
  MT_EXPECT_ERROR(MPIX_Win_wait_stream(a.win, s), MPI_ERR_RMA_SYNC);
  // Again, and a is freed before anyone asked: MPIX_St_check(MPI_WIN_NULL) gives the report.
  time_out(a);
  free_window(a);
  m = MT_EXPECT_ERROR(MPIX_St_check(MPI_WIN_NULL), MPI_ERR_OTHER);
  MT_CHECKF(contains(m, "watchdog"), "MPIX_St_check(MPI_WIN_NULL): \"%s\"", m.c_str());
  MT_OK(MPIX_St_check(MPI_WIN_NULL));
  (void)stream_sync_rc(stuck_stream);  // the stream's own status (its reports were taken)
  free_window(b);
  stream_destroy(stuck_stream);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "watchdog");
  {
    void *s = stream_create();
    std::vector<TestWin> stuck;
    std::vector<bool> never_posted;  // C's windows: rank 1 never posted, its memory stays zero
    for (WinKind kind : kAllKinds) {
      host_complete_without_post(kind);
      host_wait_without_complete(kind);
      stuck.push_back(stream_complete_without_post(kind, s));
      never_posted.push_back(true);
      stuck.push_back(stream_wait_without_complete(kind, s));
      never_posted.push_back(false);
      still_works(kind, s);
      later_epoch_after_skip(kind, s);
    }
    attribution(s);
    MPI_Barrier(MPI_COMM_WORLD);
    // The timed-out operations were dropped and the streams are idle: the windows must free.
    std::vector<int> freed(stuck.size());
    for (size_t i = 0; i < stuck.size(); ++i) {
      TestWin &w = stuck[i];
      g_context = fmt("%s: MPI_Win_free after a watchdog error", kind_name(w.kind));
      const double t0 = now_s();
      const int rc = MPI_Win_free(&w.win);
      MT_CHECKF(rc == MPI_SUCCESS,
                "MPI_Win_free of a window whose stream operation timed out failed after %.1f s: %s (%s); the "
                "window cannot be freed (MPI_Finalize may then fail too)",
                now_s() - t0, class_name(error_class(rc)), error_string(rc).c_str());
      freed[i] = rc == MPI_SUCCESS;
    }
    // Every rank's MPI_Win_free is over (any operation it ran has landed): memory the test owns
    // is still readable.
    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t i = 0; i < stuck.size(); ++i) {
      TestWin &w = stuck[i];
      if (!freed[i] || !w.own_memory) continue;
      if (never_posted[i] && g_rank == 1) {
        g_context = fmt("%s: window memory after MPI_Win_free", kind_name(w.kind));
        auto got = read_device(w.base, 64);
        std::vector<uint8_t> zeros(64, 0);
        MT_SAME_BYTES(got.data(), zeros.data(), 64, "window of the rank that never posted, after MPI_Win_free");
      }
      xdev::free(w.base);
    }
    stream_destroy(s);
  }
  return finish();
}
