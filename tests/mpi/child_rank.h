// For tests in which a rank dies (kill_peer, queue_kill_peer): MPICH's hydra ends every rank as
// soon as one leaves without MPI_Finalize (the killed one, or a survivor that is done first), even
// with -disable-auto-cleanup. So each rank runs in a child of the process mpiexec started, and
// these parents leave together, once both survivors (ranks 0 and 2) have written their results
// (files done<rank> in pid_dir), each with its child's status (the killed rank's parent: 0).
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "test_common.h"

namespace mt {

// Returns in the child; the parent waits and leaves with _exit.
inline void run_in_child(const std::string &pid_dir) {
  const pid_t child = fork();
  if (child == 0) return;
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  if (!pid_dir.empty()) {
    const double t0 = now_s();
    for (int r : {0, 2})
      while (access((pid_dir + "/done" + std::to_string(r)).c_str(), F_OK) != 0 && now_s() - t0 < 60) usleep(10000);
  }
  _exit(killed ? 0 : WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

}  // namespace mt
