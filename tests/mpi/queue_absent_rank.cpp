// Two-sided stream messages, a rank that does not come to the first call on a communicator (that
// call is collective): with MPIX_ST_WATCHDOG_MS set, the ranks that made it get MPI_ERR_OTHER
// saying so within about the watchdog, not a hang; every later call on that communicator reports
// the same at once; the absent rank, making its first call after the others gave up, gets the
// error too instead of entering the set-up alone. Another communicator stays usable.
#include <chrono>

#include "test_common.h"

using namespace mt;

int main(int argc, char **argv) {
  init(&argc, &argv, "queue_absent_rank");
  const char *env = std::getenv("MPIX_ST_WATCHDOG_MS");
  const double watchdog_s = env ? std::atof(env) / 1000.0 : 0;
  MT_CHECKF(watchdog_s > 0, "run with MPIX_ST_WATCHDOG_MS set");
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const int absent = g_size - 1;
  {
    StreamQueue Q;
    DevBuf buf(8);
    MPI_Request req = MPI_REQUEST_NULL;
    if (g_rank != absent) {
      g_context = "first call without the absent rank";
      const auto t0 = std::chrono::steady_clock::now();
      const std::string msg =
          MT_EXPECT_ERROR(MPIX_Enqueue_send(buf.p, 8, MPI_BYTE, absent, 0, comm, Q.q, &req), MPI_ERR_OTHER);
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      MT_CHECKF(contains(msg, "first two-sided call"), "message: %s", msg.c_str());
      MT_CHECKF(waited >= 0.9 * watchdog_s && waited < watchdog_s + 10, "waited %.2f s, watchdog %.2f s", waited,
                watchdog_s);
      g_context = "a later call on the same communicator";
      const auto t1 = std::chrono::steady_clock::now();
      MT_EXPECT_ERROR(MPIX_Enqueue_recv(buf.p, 8, MPI_BYTE, absent, 0, comm, Q.q, &req), MPI_ERR_OTHER);
      MT_CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() < 0.5 * watchdog_s);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == absent) {
      g_context = "the absent rank's late first call";
      const std::string msg =
          MT_EXPECT_ERROR(MPIX_Enqueue_send(buf.p, 8, MPI_BYTE, 0, 0, comm, Q.q, &req), MPI_ERR_OTHER);
      MT_CHECKF(contains(msg, "first two-sided call"), "message: %s", msg.c_str());
    }
    MPI_Barrier(MPI_COMM_WORLD);
    // Every rank comes to MPI_COMM_WORLD's first call: it works.
    g_context = "another communicator";
    DevBuf in(8);
    const std::vector<uint8_t> want = pattern(8, key(g_rank, 7));
    buf.upload(want);
    MPI_Request reqs[2];
    MT_OK(MPIX_Enqueue_send(buf.p, 8, MPI_BYTE, g_rank, 3, MPI_COMM_WORLD, Q.q, &reqs[0]));
    MT_OK(MPIX_Enqueue_recv(in.p, 8, MPI_BYTE, g_rank, 3, MPI_COMM_WORLD, Q.q, &reqs[1]));
    MT_OK(MPIX_Enqueue_start(Q.q));
    MT_OK(MPIX_Enqueue_wait(Q.q));
    MT_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    MT_SYNC(Q.stream);
    MT_CHECK(in.download() == want);
  }
  // Barriers of the failed set-up are still pending on comm: MPI frees it once they complete.
  MPI_Comm_free(&comm);
  return finish();
}
