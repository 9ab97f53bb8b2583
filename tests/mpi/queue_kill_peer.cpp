// Two-sided stream messages with a rank killed (SIGKILL) before it sends: with MPIX_ST_WATCHDOG_MS
// the survivors' receive lists give up waiting, and MPI_Wait on the receive from the dead rank
// fails cleanly (MPI_ERR_OTHER naming the receive and the rank); across nodes MPIX_Enqueue_wait may
// fail first, where the transport refuses to post toward the dead rank (naming it). Three ranks: after a ring that
// works (the communicator's collective set-up), rank 1 kills itself; ranks 0 and 2 each wait for a
// message from it. Run by kill_peer.sh (as kill_peer is), which also checks that no process and no
// /dev/shm/mpixst.* segment of the run is left behind. Same protocol as kill_peer.cpp:
//   --pid-dir=D   each rank writes its pid to D/rank<N>, survivors their result to D/result<N>
#include <signal.h>
#include <unistd.h>

#include <fstream>

#include "child_rank.h"
#include "test_common.h"

using namespace mt;

int main(int argc, char **argv) {
  std::string pid_dir;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--pid-dir=", 10) == 0) pid_dir = argv[i] + 10;
  run_in_child(pid_dir);
  init(&argc, &argv, "queue_kill_peer");
  signal(SIGPIPE, SIG_IGN);
  if (!pid_dir.empty()) {
    std::ofstream(pid_dir + "/rank" + std::to_string(g_rank)) << getpid() << "\n";
    if (!std::freopen((pid_dir + "/stderr" + std::to_string(g_rank)).c_str(), "w", stderr)) return 1;
  }
  if (g_size < 3) {
    note("queue_kill_peer needs at least 3 ranks");
    return finish();
  }
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  void *s = stream_create();
  MPIX_Queue q;
  MT_OK(MPIX_Create_queue(s, &q));
  DevBuf out(256), in(256);
  MPI_Request r[2];
  MT_OK(MPIX_Enqueue_recv(in.p, 256, MPI_BYTE, left, 0, MPI_COMM_WORLD, q, &r[0]));
  MT_OK(MPIX_Enqueue_send(out.p, 256, MPI_BYTE, right, 0, MPI_COMM_WORLD, q, &r[1]));
  MT_OK(MPIX_Enqueue_start(q));
  MT_OK(MPIX_Enqueue_wait(q));
  MT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  MT_SYNC(s);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 1) {
    std::printf("rank 1 (pid %d): killing itself before it sends\n", static_cast<int>(getpid()));
    std::fflush(stdout);
    raise(SIGKILL);
  }
  if (!pid_dir.empty()) std::ofstream(pid_dir + "/result" + std::to_string(g_rank)) << "reached the receive\n";
  MT_OK(MPIX_Enqueue_recv(in.p, 256, MPI_BYTE, 1, 1, MPI_COMM_WORLD, q, &r[0]));
  MT_OK(MPIX_Enqueue_start(q));
  // Across nodes the transport may already know the rank is gone: the wait then fails posting the
  // receive's operation toward it, naming it.
  const int wait_rc = MPIX_Enqueue_wait(q);
  const int rc = wait_rc != MPI_SUCCESS ? wait_rc : MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  const std::string m = rc == MPI_SUCCESS ? "" : error_string(rc);
  const bool good = rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_OTHER &&
                    (wait_rc != MPI_SUCCESS
                         ? contains(m, "MPIX_Enqueue_wait") && contains(m, "a receive from rank 1")
                         : contains(m, "MPI_Wait") && contains(m, "MPIX_Enqueue_recv from rank 1") &&
                               contains(m, "did not arrive"));
  if (!pid_dir.empty())
    std::ofstream(pid_dir + "/result" + std::to_string(g_rank)) << (good ? "REPORT OK" : "REPORT WRONG") << ": " << m
                                                                << "\n";
  std::printf("survivor rank %d: %s: %s\n", g_rank, rc == MPI_SUCCESS ? "no error" : "error", m.c_str());
  std::printf("survivor rank %d: %s\n", g_rank, good ? "REPORT OK" : "REPORT WRONG");
  std::fflush(stdout);
  if (!pid_dir.empty()) std::ofstream(pid_dir + "/done" + std::to_string(g_rank)) << "\n";
  _exit(good ? 0 : 1);
}
