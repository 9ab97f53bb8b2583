// Runs one mode through the three nested loops (niface, niel, nshare), checking every block
// against the host reference, and gathers its timings over the ranks.
#pragma once
#include <mpi.h>

#include <string>

#include "grid.h"
#include "options.h"
#include "plan.h"

namespace faces {

struct Stats {
  double avg = 0, min = 0, max = 0;  // over ranks
};

struct ModeResult {
  std::string mode;
  std::string detail;   // how the mode moved data in this run
  std::string skipped;  // why it did not run; empty when it ran
  int ranks = 0;
  int passed = 0;       // ranks whose every block matched the reference
  int timed_blocks = 0;
  int exchanges_per_block = 0;
  Stats total_s;          // time of all timed blocks of a rank
  Stats per_exchange_us;  // that time per exchange
  // Stream operations one exchange enqueues (the first block's, max over ranks; with --graph the
  // ones captured into the graph): the library's epoch launches and Faces' own kernels.
  double library_ops = 0, faces_ops = 0;
};

// `check_threads`: host threads of the reference check.
ModeResult run_mode(const std::string &mode, const Options &o, const Grid &grid, const Plan &plan, void *stream,
                    MPI_Comm comm, int check_threads);
// The result of a mode that cannot run here, saying why.
ModeResult skipped_mode(const std::string &mode, const std::string &why, MPI_Comm comm);

}  // namespace faces
