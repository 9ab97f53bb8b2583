// The state of a stream collective's communicator that spans nodes (multinode.h): its nodes and
// their leaders, the node communicator, and the windows over the scratch that steps across nodes
// put into.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace mpix::core {
class Window;
}

namespace mpix::coll {

struct Context;

struct Net {
  MPI_Comm node_comm = MPI_COMM_NULL;  // ranks of this rank's node, in communicator order
  MPI_Comm agree_comm = MPI_COMM_NULL; // a duplicate of the communicator: the ranks agree on each call there
  Context *node = nullptr;             // node_comm's collective state (its attribute)
  int nodes = 0, node_index = 0;       // nodes numbered by their lowest rank
  std::vector<int> node_of, local_rank_of;  // by communicator rank
  std::vector<int> leader_of_node;          // lowest communicator rank of each node
  MPI_Win win = MPI_WIN_NULL;
  core::Window *window = nullptr;
  // A second window over the same scratch: schedules whose consecutive epochs expose to two
  // different groups (the rails allgather's rail and node steps, the leaders' tree up and down)
  // keep one group per window, so each window can post its next exposure ahead (an MPI window has
  // one exposure epoch at a time).
  MPI_Win win2 = MPI_WIN_NULL;
  core::Window *window2 = nullptr;
  void *scratch = nullptr;  // both windows' memory
  uint64_t scratch_bytes = 0;
  uint64_t *flags = nullptr;  // cursor of the local steps (a one-rank FlagLayout), then its PeerTable
  uint64_t local_steps = 0;   // enqueued, for draining
};

}  // namespace mpix::coll
