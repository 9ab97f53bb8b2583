// What the two-sided modes (queue, enqueue) share: the limits of the library's stream messages and
// the order in which a rank must post its receives.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <string>

#include "plan.h"

namespace faces {

// The largest message one mailbox takes by default (doc/guide/two-sided.md, "What they take":
// Sizes); the library refuses a larger one at the send, so the modes are skipped for such inputs.
constexpr size_t kMailboxBytesHost = size_t(16) << 10;  // host backend
constexpr size_t kMailboxBytesGpu = size_t(1) << 20;    // CUDA and HIP backends
// Of the backend in use, or as MPIX_ST_P2P_SLOT_KIB sets it (doc/guide/environment.md).
size_t mailbox_bytes();

// Why the two-sided modes cannot run this input here; empty when they can. Collective over
// `comm` (every rank reaches the same verdict): a link message larger than a mailbox on any rank;
// with `graph`, a neighbour on another node or virtual node (such messages are not captured yet).
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
