// A rank killed during an epoch (SIGKILL; see child_rank.h for how the others live on): with MPIX_ST_WATCHDOG_MS the survivors' streams give up waiting for it, and
// the error they get names the dead peer (window rank, world rank, pid, "no longer running").
// Each survivor prints what it got and leaves with _exit (MPI_Finalize cannot complete with a
// dead peer): status 0 when the report named the dead rank, 1 otherwise. Three or more ranks:
// rank 1 dies in its access epoch, before posting; its left neighbour (rank 0) waits for its post,
// its right neighbour (rank 2) for its complete. Once they took that report, a post and a start
// naming rank 1 (on that window and on another) fail at once with the same news; an epoch rank 0
// queued on the other window toward rank 1, behind the first on the same stream, ends at once
// (the fault monitor found rank 1 dead while the program was synchronising). kill_peer.sh
// runs it and checks that no process and no /dev/shm/mpixst.* segment of the run is left behind.
//   --pid-dir=D   each rank writes its pid to D/rank<N> (for the script's checks)
#include <signal.h>
#include <unistd.h>

#include <fstream>

#include "child_rank.h"
#include "test_common.h"

using namespace mt;

int main(int argc, char **argv) {
  {
    std::string dir;
    for (int i = 1; i < argc; ++i)
      if (std::strncmp(argv[i], "--pid-dir=", 10) == 0) dir = argv[i] + 10;
    run_in_child(dir);
  }
  init(&argc, &argv, "kill_peer");
  // mpiexec may stop reading the ranks' output: a write must not end them (SIGPIPE).
  signal(SIGPIPE, SIG_IGN);
  std::string pid_dir;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--pid-dir=", 10) == 0) pid_dir = argv[i] + 10;
  if (!pid_dir.empty()) {
    std::ofstream(pid_dir + "/rank" + std::to_string(g_rank)) << getpid() << "\n";
    // Also stderr: what a rank says after mpiexec stopped forwarding output.
    if (!std::freopen((pid_dir + "/stderr" + std::to_string(g_rank)).c_str(), "w", stderr)) return 1;
  }
  if (g_size < 3) {
    note("kill_peer needs at least 3 ranks");
    return finish();
  }
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  void *s = stream_create();
  TestWin w = make_window(WinKind::allocate, 4096);
  TestWin other = make_window(WinKind::allocate, 4096);  // never used before the death
  for (int it = 0; it < 3; ++it) pscw_ring(Mode::stream, w, s, 0x700 + it, 64 * it);  // epochs that work
  MPI_Barrier(MPI_COMM_WORLD);
  Group to_right({right}), from_left({left});
  DevBuf src(64);
  if (g_rank == 1) {
    MT_START(Mode::stream, to_right, w.win);
    MT_OK(MPI_Put(src.p, 64, MPI_BYTE, right, 0, 64, MPI_BYTE, w.win));
    std::printf("rank 1 (pid %d): killing itself inside its access epoch\n", static_cast<int>(getpid()));
    std::fflush(stdout);
    raise(SIGKILL);
  }
  if (!pid_dir.empty()) std::ofstream(pid_dir + "/result" + std::to_string(g_rank)) << "reached the epoch\n";
  MT_OK(MPIX_Win_post_stream(from_left, w.win, s));
  MT_OK(MPI_Win_start(to_right, MPIX_MODE_STREAM, w.win));
  MT_OK(MPI_Put(src.p, 64, MPI_BYTE, right, 0, 64, MPI_BYTE, w.win));
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
  const bool waits_on_1 = g_rank == 0 || g_rank == 2;
  const double wd = std::atof(std::getenv("MPIX_ST_WATCHDOG_MS") ? std::getenv("MPIX_ST_WATCHDOG_MS") : "0") / 1000;
  // Rank 0 also queues, behind that epoch on the same stream, an epoch on the other window toward
  // rank 1, and synchronises once: the fault monitor finds rank 1 dead from the first report while
  // the program waits, so the second epoch ends at once instead of waiting out its own watchdog.
  const bool queues_other = g_rank == 0 && wd > 0;
  Group only_1({1});
  if (queues_other) {
    MT_OK(MPI_Win_start(only_1, MPIX_MODE_STREAM, other.win));
    MT_OK(MPIX_Win_complete_stream(other.win, s));
  }
  const double t0 = MPI_Wtime();
  const int rc = stream_sync_rc(s);
  const double synced = MPI_Wtime() - t0;
  const std::string m = rc == MPI_SUCCESS ? "" : error_string(rc);
  const bool named = m.find("window rank 1") != std::string::npos && m.find("no longer running") != std::string::npos;
  bool good = waits_on_1 ? rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_OTHER && named : true;
  std::string refusals;
  if (queues_other && good) {
    const int rc2 = MPIX_St_check(other.win);  // the other window's report, still kept
    const std::string t = rc2 == MPI_SUCCESS ? "success" : error_string(rc2);
    refusals += " | both windows' epochs ended " + std::to_string(synced) + " s after the synchronisation began; " +
                "the other window's report: " + t;
    good = good && rc2 != MPI_SUCCESS && error_class(rc2) == MPI_ERR_OTHER && t.find("ended at once") != std::string::npos &&
           t.find("no longer running") != std::string::npos && synced < 1.5 * wd;
  }
  if (waits_on_1 && good) {
    // The report taken, epochs naming rank 1 fail at once, on this window and on the other one.
    const double t1 = MPI_Wtime();
    const int post_rc = MPIX_Win_post_stream(only_1, w.win, s);
    const int start_rc = MPI_Win_start(only_1, MPIX_MODE_STREAM, other.win);
    const double took = MPI_Wtime() - t1;
    for (int r : {post_rc, start_rc}) {
      const std::string t = r == MPI_SUCCESS ? "success" : error_string(r);
      refusals += " | " + t;
      good = good && r != MPI_SUCCESS && error_class(r) == MPI_ERR_OTHER &&
             t.find("window rank 1") != std::string::npos && t.find("no longer running") != std::string::npos;
    }
    good = good && took < 0.5;
    refusals += " | both in " + std::to_string(took) + " s";
  }
  // mpiexec may stop forwarding output once a rank died: the result goes to a file first.
  if (!pid_dir.empty())
    std::ofstream(pid_dir + "/result" + std::to_string(g_rank)) << (good ? "REPORT OK" : "REPORT WRONG") << ": " << m
                                                                << refusals << "\n";
  std::printf("survivor rank %d: %s: %s\n", g_rank, rc == MPI_SUCCESS ? "no error" : "error", m.c_str());
  std::printf("survivor rank %d: %s\n", g_rank, good ? "REPORT OK" : "REPORT WRONG");
  std::fflush(stdout);
  if (!pid_dir.empty()) std::ofstream(pid_dir + "/done" + std::to_string(g_rank)) << "\n";
  _exit(good ? 0 : 1);
}
