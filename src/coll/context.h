// A communicator's collective state (doc/design.md, Collectives): scratch and flags every
// node-local peer maps, made collectively at the communicator's first stream collective and kept on
// the communicator as an attribute, so MPI_Comm_free (or MPI_Finalize) releases it.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "call_board.h"
#include "core/result.h"
#include "net.h"

namespace mpix::coll {

struct Context {
  MPI_Comm comm = MPI_COMM_NULL;  // the user's communicator (the attribute's holder)
  uint32_t id = 0;                // named in watchdog reports
  int rank = 0, size = 0;
  void *scratch = nullptr;   // two halves of half_bytes, then the line areas
  uint64_t half_bytes = 0;   // the smallest any rank offered: every rank cuts rounds alike
  // Channels (kernels/coll/args.h), alike on every rank: the scratch is cut into `regions` (at most the
  // fewest any rank offered, and few enough that each holds a slot per step), and a call uses one
  // channel per channel_bytes (the most any rank asked for) of what a rank pushes.
  uint32_t regions = 1;
  uint64_t channel_bytes = 0;
  // The kLL protocol's line areas (kernels/coll/args.h), after the two halves: line_regions channels of
  // line_region_bytes per half (the smallest any rank offered); a kLL call takes a channel per
  // line_channel_bytes pushed (the most any rank asked for).
  uint32_t line_regions = 1;
  uint64_t line_channel_bytes = 0;
  uint64_t line_region_bytes = 0;
  uint64_t *flags = nullptr; // FlagLayout::words(size) per channel, peers store to it
  void *table = nullptr;     // PeerTable[size], in memory the backend's streams read
  std::vector<gpu::MappedRegion> peer_scratch, peer_flags;
  // Calls enqueued outside graph captures: FlagLayout::eager_calls reaches this once they have all
  // run (replays of captured calls advance the cursor, not this count).
  uint64_t eager_calls_enqueued = 0;
  // Communicators that span nodes: the node communicator and the window across nodes (and none
  // of the node-local memory above).
  std::unique_ptr<Net> net;
  uint64_t created = 0;  // creation order: contexts are released newest first
  // Hardware multicast (MPIX_ST_MULTICAST=1 only; multicast_choice.h): the group over the node-local
  // ranks, covering a buffer of the scratch's size, and the driver that made it (null: none).
  // multicast_reason says, once per communicator, why bcast uses it or not (empty while
  // MPIX_ST_MULTICAST is unset: nothing multicast-related ran).
  gpu::MulticastGroup multicast;
  const gpu::MulticastDriver *multicast_driver = nullptr;
  std::string multicast_reason;
  // After an error (doc/guide/collectives.md): the call board of a node-local communicator of more
  // than one rank, in host shared memory that rank 0 made and every rank maps; across nodes, the
  // failure of this rank that every later call reports (and every rank then refuses, as they agree
  // on each call). calls_mu orders the calls of threads that share the communicator.
  std::unique_ptr<CallBoard> board;
  void *board_memory = nullptr;
  bool board_owner = false;
  core::Result failed;
  std::mutex calls_mu;
};

// The communicator's context, made now if it has none (collective over comm: every rank takes part,
// whatever it thinks of the call). `capturing`: the caller's stream is being captured, where making
// one is not possible (allocations, copies): the set-up then fails on every rank.
core::Result context_of(MPI_Comm comm, bool capturing, Context **out);

// Releases every context still alive (before MPI_Finalize: the MPI need not delete attributes of
// MPI_COMM_WORLD).
void release_all_contexts();

// Why the communicator's bcast uses hardware multicast or not ("" while MPIX_ST_MULTICAST is
// unset, or before its first stream collective).
std::string multicast_reason(MPI_Comm comm);

}  // namespace mpix::coll
