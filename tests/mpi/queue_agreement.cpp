// Two-sided state needs every rank of a communicator to lay out its mailboxes alike: ranks that
// disagree on the mailbox size (MPIX_ST_P2P_SLOT_KIB) or on the lanes of long messages
// (MPIX_ST_P2P_LANES) get MPI_ERR_OTHER from the first two-sided call, naming what differs, on
// every rank and without a hang; the call made again fails again alike (nothing was kept), and the
// program ends normally. --differ=slot|lanes says which setting the odd ranks change before
// MPI_Init (each rank finds its number in the launcher's environment).
#include "test_common.h"

#include <cstdlib>
#include <cstring>
#include <string>

using namespace mt;

namespace {

// This process's rank, before MPI_Init: MPICH's and Open MPI's launchers say it; -1 where neither does.
int launcher_rank() {
  for (const char *name : {"PMI_RANK", "OMPI_COMM_WORLD_RANK"})
    if (const char *v = std::getenv(name)) return std::atoi(v);
  return -1;
}

}  // namespace

int main(int argc, char **argv) {
  std::string differ = "lanes";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--differ=", 9) == 0) differ = argv[i] + 9;
  const int rank = launcher_rank();
  // Host backend: 16 KiB mailboxes (2 lanes); GPUs: 1 MiB (64 lanes). Odd ranks change one.
  if (rank % 2 == 1) {
    if (differ == "slot") setenv("MPIX_ST_P2P_SLOT_KIB", "32", 1);
    else setenv("MPIX_ST_P2P_LANES", "1", 1);
  }
  init(&argc, &argv, "queue_agreement");
  MT_CHECKF(rank >= 0, "the launcher's environment names no rank (PMI_RANK, OMPI_COMM_WORLD_RANK)");
  MT_CHECKF(rank < 0 || rank == g_rank, "the launcher's rank %d is not the MPI rank %d", rank, g_rank);
  MT_CHECKF(differ == "slot" || differ == "lanes", "--differ=%s: slot or lanes expected", differ.c_str());
  const char *named = differ == "slot" ? "mailboxes hold" : "MPIX_ST_P2P_LANES";
  void *s = stream_create();
  DevBuf buf(64);
  MPIX_Queue q;
  MT_OK(MPIX_Create_queue(s, &q));
  const int peer = (g_rank ^ 1) < g_size ? (g_rank ^ 1) : g_rank;
  for (int attempt = 0; attempt < 2 && !g_failures; ++attempt) {
    g_context = fmt("first two-sided call, attempt %d, %s differing", attempt + 1, differ.c_str());
    MPI_Request r = MPI_REQUEST_NULL;
    const std::string m = MT_EXPECT_ERROR(MPIX_Enqueue_recv(buf.p, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, q, &r),
                                          MPI_ERR_OTHER);
    MT_CHECKF(contains(m, named), "the message names what differs (%s): %s", named, m.c_str());
    MT_CHECKF(r == MPI_REQUEST_NULL, "a refused call leaves no request");
  }
  MT_OK(MPIX_Free_queue(q));
  stream_destroy(s);
  return finish();
}
