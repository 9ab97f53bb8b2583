// A rank killed (SIGKILL) inside collective set-up: MPI_Win_allocate (--phase=window), or the first
// stream collective on a communicator (--phase=coll), while the other ranks are inside the same
// call with their shared memory made. The program defines PMPI_Allgather and PMPI_Allreduce, which
// take the library's own calls of them (the executable's definitions come first in the dynamic
// lookup) and pass them on to the MPI's: armed around the call, rank 0 dies in the call's exchange
// of region handles (its first PMPI_Allgather, --at=exchange) or in its mapping barrier (the first
// PMPI_Allreduce after that, --at=barrier), half a second after entering, so that every other
// rank is waiting for it there. mpiexec then ends the job; setup_death.sh checks that no
// /dev/shm/mpixst.<pid>.* segment of any rank is left behind.
//   --pid-dir=D   each rank writes its pid to D/rank<N>
//   --phase=window|coll   --at=exchange|barrier
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>

#include "test_common.h"

using namespace mt;

namespace {
bool g_armed = false, g_at_barrier = false, g_exchanged = false;

void die_here(const char *where) {
  std::fprintf(stderr, "[rank 0] setup_death: dying in %s\n", where);
  usleep(500 * 1000);  // the other ranks reach the same exchange and wait for this one
  kill(getpid(), SIGKILL);
}

template <typename F>
F next_definition(const char *name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}
}  // namespace

extern "C" int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm) {
  if (g_armed && g_rank == 0) {
    if (!g_at_barrier) die_here("the exchange of region handles (PMPI_Allgather)");
    g_exchanged = true;
  }
  using Fn = int (*)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
  static Fn real = next_definition<Fn>("PMPI_Allgather");
  return real(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

extern "C" int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
  if (g_armed && g_rank == 0 && g_at_barrier && g_exchanged) die_here("the mapping barrier (PMPI_Allreduce)");
  using Fn = int (*)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
  static Fn real = next_definition<Fn>("PMPI_Allreduce");
  return real(sendbuf, recvbuf, count, datatype, op, comm);
}

int main(int argc, char **argv) {
  init(&argc, &argv, "setup_death");
  signal(SIGPIPE, SIG_IGN);
  std::string pid_dir, phase = "window";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--pid-dir=", 10) == 0) pid_dir = argv[i] + 10;
    if (std::strncmp(argv[i], "--phase=", 8) == 0) phase = argv[i] + 8;
    if (std::strcmp(argv[i], "--at=barrier") == 0) g_at_barrier = true;
  }
  if (!pid_dir.empty()) std::ofstream(pid_dir + "/rank" + std::to_string(g_rank)) << getpid() << "\n";
  void *s = stream_create();
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  DevBuf a(64), b(64);
  MPI_Barrier(MPI_COMM_WORLD);
  g_armed = true;
  if (phase == "window") {
    void *base = nullptr;
    MPI_Win win;
    MPI_Win_allocate(1 << 20, 1, MPI_INFO_NULL, comm, &base, &win);
  } else {
    MPIX_Allreduce_stream(a.p, b.p, 16, MPI_INT, MPI_SUM, comm, s);
    stream_sync_rc(s);
  }
  // Not reached: rank 0 dies in the call, the others wait for it there until mpiexec ends them.
  std::fprintf(stderr, "[rank %d] setup_death: left the call\n", g_rank);
  sleep(30);
  return 1;
}
