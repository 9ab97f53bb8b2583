// What the two-sided modes (queue, enqueue) share: the limits of the library's stream messages and
// the order in which a rank must post its receives.
#pragma once
#include <mpi.h>

#include <string>

#include "plan.h"

namespace faces {

// Why the two-sided modes cannot run this input here; empty when they can. Collective over
// `comm` (every rank reaches the same verdict): a message to a neighbour on another node (or
// virtual node) larger than a mailbox on any rank; with `graph`, any neighbour on another node
// (such messages are not captured yet). Node-local messages of any length travel.
std::string two_sided_unavailable(const Plan &plan, MPI_Comm comm, bool graph);
// How a mode's block runs, for its detail line: eagerly, or (--graph) captured and replayed.
inline std::string block_text(bool graph) {
  return graph ? ", captured into one graph per block, replayed" : ", one synchronisation per block";
}

// Calls recv(link) for every link in the order the peers send. A rank sends its links in
// ascending direction, tagged with that direction, and tags equal modulo 8 share one channel
// whose messages must be received in the order they were sent (doc/guide/two-sided.md, "How
// matching works"). So messages from one peer are taken in ascending tag: the receive from the
// neighbour in direction d has tag opposite(d) = 25 - d, which ascends over the links from last to
// first. (Per channel at most 4 messages a peer per exchange, within the 8 the mailboxes allow.)
template <typename Recv>
void for_each_receive(const Plan &plan, Recv &&recv) {
  for (auto l = plan.links.rbegin(); l != plan.links.rend(); ++l) recv(*l);
}

}  // namespace faces
