// Failing fast behind a watchdog report (kernels/work_items.h, fault_skips): with a peer stopped
// (SIGSTOP) while many stream epochs toward it are queued, the first wait gives up after
// MPIX_ST_WATCHDOG_MS and every epoch queued behind it fails at once with the same report, so the
// whole queue is over within a few watchdog periods instead of one period per epoch (--epochs=500:
// 1,000 waiting lists, which at one watchdog each would take 1,000 periods). Ranks 0 and 1 take
// part; rank 0 stops rank 1 and continues it afterwards, so the run ends normally.
//  A. rank 0 enqueues --epochs ring epochs (post, start, put, complete, wait) toward the stopped
//     rank 1 and synchronises: one error (MPI_ERR_OTHER, naming window rank 1 and the post), in
//     less than 3 watchdog periods plus 2 s; on the host backend the report counts every other
//     list as a later epoch of the window. An epoch enqueued after the program took that report
//     waits its own full watchdog (the report no longer cuts it short). Then rank 1 continues, the
//     window is freed, and a new window's ring epoch works.
//  B. (--collectives=N) rank 0 enqueues N stream allreduces on a communicator whose first one
//     both ranks ran, toward the stopped rank 1: the first gives up after the watchdog, the others
//     at once, behind the communicator's fault word.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

#include "test_common.h"

using namespace mt;

namespace {

double watchdog_s() {
  const char *ms = std::getenv("MPIX_ST_WATCHDOG_MS");
  return ms ? std::atof(ms) / 1000.0 : 0.0;
}

// The error the stream's earlier work left for window `win` (GPU backends: at the next library
// call that looks; the host backend: the stream's synchronisation).
int queue_error(void *s, MPI_Win win) {
#ifdef MPIX_TEST_CUDA
  xdev::stream_sync(s);
  return MPIX_St_check(win);
#else
  (void)win;
  return stream_sync_rc(s);
#endif
}

// Stops rank 1 (SIGSTOP) from rank 0 and continues it; ranks other than 0 do nothing.
struct PeerStop {
  pid_t pid1 = 0;
  PeerStop() {
    int mine = static_cast<int>(getpid());
    std::vector<int> pids(g_size);
    MPI_Allgather(&mine, 1, MPI_INT, pids.data(), 1, MPI_INT, MPI_COMM_WORLD);
    pid1 = pids[1];
  }
  void stop() {
    if (g_rank == 0) MT_CHECKF(kill(pid1, SIGSTOP) == 0, "SIGSTOP to rank 1 (pid %d)", static_cast<int>(pid1));
  }
  void resume() {
    if (g_rank == 0) MT_CHECKF(kill(pid1, SIGCONT) == 0, "SIGCONT to rank 1 (pid %d)", static_cast<int>(pid1));
  }
};

void queued_epochs(PeerStop &peer, void *s, int epochs, double wd) {
  g_context = fmt("%d stream epochs queued toward a stopped peer", epochs);
  TestWin w = make_window(WinKind::allocate, 4096);
  pscw_ring(Mode::stream, w, s, 0xfa51, 0);  // both ranks alive: an epoch that works
  MPI_Barrier(MPI_COMM_WORLD);
  peer.stop();
  if (g_rank == 0) {
    Group one({1});
    DevBuf src(64);
    xdev::fill(src.p, 0x5f, 64);
    const double t0 = now_s();
    // The report may come out of an epoch call while the host is still enqueuing (a GPU's launch
    // queue can hold the host back past the watchdog): then that call's error is the report, the
    // epoch it belonged to is left as it is, and the queue is not synchronised here.
    int rc = MPI_SUCCESS;
    int enqueued = 0;
    for (; enqueued < epochs && rc == MPI_SUCCESS && !g_failures; ++enqueued) {
      rc = MPIX_Win_post_stream(one, w.win, s);
      if (rc == MPI_SUCCESS) rc = MPI_Win_start(one, MPIX_MODE_STREAM, w.win);
      if (rc == MPI_SUCCESS) rc = MPI_Put(src.p, 64, MPI_BYTE, 1, 64, 64, MPI_BYTE, w.win);
      if (rc == MPI_SUCCESS) rc = MPIX_Win_complete_stream(w.win, s);
      if (rc == MPI_SUCCESS) rc = MPIX_Win_wait_stream(w.win, s);
    }
    const double queued = now_s() - t0;
    const bool reported_early = rc != MPI_SUCCESS;
    if (!reported_early) rc = queue_error(s, w.win);
    const double took = now_s() - t0;
    const std::string m = MT_EXPECT_ERROR(rc, MPI_ERR_OTHER);
    MT_CHECKF(contains(m, "watchdog") && contains(m, "window rank 1") && contains(m, "post"),
              "the report names the post of window rank 1: \"%s\"", m.c_str());
    MT_CHECKF(took < 3 * wd + 2, "%d queued epochs took %.1f s to fail (watchdog %.1f s; enqueued in %.2f s)", epochs,
              took, wd, queued);
    if (reported_early) {
      note("fail_fast: the report came out of an epoch call after %d of %d epochs were enqueued (%.2f s)", enqueued,
           epochs, queued);
      // Epochs left half open by the refused call: close what the library still counts as open.
      // A close may itself return a report left by a list that ended behind the first (a GPU
      // leaves one per list) instead of closing: it is called again until it closes the epoch
      // (success) or finds none open (MPI_ERR_RMA_SYNC).
      for (auto close : {MPIX_Win_complete_stream, MPIX_Win_wait_stream})
        for (int k = 0; k < 8; ++k) {
          const int rc_close = close(w.win, s);
          if (rc_close == MPI_SUCCESS || error_class(rc_close) == MPI_ERR_RMA_SYNC) break;
        }
      stream_sync_rc(s);  // the epochs queued before the report end at once behind it
      const double drained = now_s() - t0;
      // On a GPU the lists that ended behind the first report may leave reports of their own:
      // take them, so the next epoch starts with none pending.
      for (int k = 0; k < 4 && MPIX_St_check(w.win) != MPI_SUCCESS; ++k) {
      }
      MT_CHECKF(drained < 3 * wd + 2, "the %d queued epochs took %.1f s to end (watchdog %.1f s)", enqueued, drained,
                wd);
    }
#ifndef MPIX_TEST_CUDA
    if (!reported_early) {
    // One report for the window and stream: the first wait's, counting every later waiting list
    // (a complete and a wait per epoch) that ended at once behind it.
    const std::string later = fmt("(and %d later epochs of the window", 2 * epochs - 1);
    MT_CHECKF(contains(m, later), "the report counts the %d later lists: \"%s\"", 2 * epochs - 1, m.c_str());
    MT_OK(stream_sync_rc(s));  // nothing else was left
    }
#endif
    note("fail_fast: %d epochs (%d waiting lists) toward a stopped peer failed in %.2f s with a %.1f s watchdog "
         "(at one watchdog per list: %.0f s)",
         epochs, 2 * epochs, took, wd, 2 * epochs * wd);

    // The program has the report now: a new epoch waits its own full watchdog.
    g_context = "an epoch enqueued after the report was taken";
    const double t1 = now_s();
    MT_OK(MPI_Win_start(one, MPIX_MODE_STREAM, w.win));
    MT_OK(MPIX_Win_complete_stream(w.win, s));
    const std::string m2 = MT_EXPECT_ERROR(queue_error(s, w.win), MPI_ERR_OTHER);
    const double took2 = now_s() - t1;
    MT_CHECKF(contains(m2, "watchdog"), "the later epoch's report: \"%s\"", m2.c_str());
    MT_CHECKF(took2 > 0.8 * wd, "an epoch enqueued after the report was taken failed after %.2f s, before its own "
              "watchdog (%.1f s)", took2, wd);
  }
  peer.resume();
  MPI_Barrier(MPI_COMM_WORLD);
  g_context = "MPI_Win_free after the failed queue";
  free_window(w);
  g_context = "a new window's epoch after the failed queue";
  TestWin fresh = make_window(WinKind::allocate, 4096);
  pscw_ring(Mode::stream, fresh, s, 0xfa52, 128);
  free_window(fresh);
}

void queued_collectives(PeerStop &peer, void *s, int calls, double wd) {
  g_context = fmt("%d stream allreduces queued toward a stopped peer", calls);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  DevBuf in(64 * sizeof(int64_t)), out(64 * sizeof(int64_t));
  xdev::fill(in.p, 1, in.n);
  MT_OK(MPIX_Allreduce_stream(in.p, out.p, 64, MPI_INT64_T, MPI_SUM, comm, s));  // sets up the communicator
  MT_SYNC(s);
  MPI_Barrier(MPI_COMM_WORLD);
  peer.stop();
  if (g_rank == 0) {
    const double t0 = now_s();
    for (int c = 0; c < calls && !g_failures; ++c)
      MT_OK(MPIX_Allreduce_stream(in.p, out.p, 64, MPI_INT64_T, MPI_SUM, comm, s));
#ifdef MPIX_TEST_CUDA
    xdev::stream_sync(s);
    const int rc = MPIX_Allreduce_stream(in.p, out.p, 64, MPI_INT64_T, MPI_SUM, comm, s);  // raises the report
#else
    const int rc = stream_sync_rc(s);
#endif
    const double took = now_s() - t0;
    const std::string m = MT_EXPECT_ERROR(rc, MPI_ERR_OTHER);
    MT_CHECKF(contains(m, "watchdog") && contains(m, "collective"), "the report names the collective: \"%s\"",
              m.c_str());
    MT_CHECKF(took < 3 * wd + 2, "%d queued allreduces took %.1f s to fail (watchdog %.1f s)", calls, took, wd);
    note("fail_fast: %d allreduces toward a stopped peer failed in %.2f s with a %.1f s watchdog", calls, took, wd);
  }
  peer.resume();
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_free(&comm);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "fail_fast");
  int epochs = 500, collectives = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--epochs=", 9) == 0) epochs = std::atoi(argv[i] + 9);
    if (std::strncmp(argv[i], "--collectives=", 14) == 0) collectives = std::atoi(argv[i] + 14);
  }
  const double wd = watchdog_s();
  if (g_size < 2 || wd <= 0) {
    note("fail_fast needs 2 ranks and MPIX_ST_WATCHDOG_MS");
    return finish();
  }
  {
    PeerStop peer;
    void *s = stream_create();
    if (epochs > 0) queued_epochs(peer, s, epochs, wd);
    if (collectives > 0) queued_collectives(peer, s, collectives, wd);
    MPI_Barrier(MPI_COMM_WORLD);
    stream_destroy(s);
  }
  return finish();
}
