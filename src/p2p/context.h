// A communicator's two-sided state (doc/design.md, Two-sided messages): the mailbox areas and flag
// words of layout.h, made collectively by the first two-sided call on the communicator and kept on
// it as an attribute, so MPI_Comm_free (or MPI_Finalize) releases it; and the per-channel message
// numbers both sides keep on the host, which is where matching happens.
#pragma once
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "core/result.h"
#include "direct.h"
#include "layout.h"

namespace mpix::p2p {

struct Queue;
namespace net {
struct Remote;
}

struct Context {
  MPI_Comm comm = MPI_COMM_NULL;
  uint32_t id = 0;  // named in watchdog reports
  int rank = 0, size = 0;
  uint64_t slot_bytes = 0;  // data bytes of a mailbox, alike on every node-local rank
  uint32_t chunk_lanes = 1; // lanes of a long message's chunks (kernels/message_chunks.h), alike too
  // local[q]: rank q's index among the node-local ranks of the communicator, -1 on another node.
  std::vector<int> local;
  int nlocal = 0;
  char *areas = nullptr;      // this rank's mailbox areas, one per node-local sender (by local index)
  uint64_t *flags = nullptr;  // this rank's flag words (layout.h)
  // Peers' memory as this rank reaches it, by local index (this rank's own: its pointers).
  std::vector<char *> peer_areas;
  std::vector<uint64_t *> peer_flags;
  std::vector<gpu::MappedRegion> mapped;  // to release
  // Peers on other nodes (network.h): their mailboxes and flags through the transport; null where
  // every rank is on this node, or where the transport is not up (remote_why says why).
  std::shared_ptr<net::Remote> remote;
  std::string remote_why;
  // Direct pulls of long node-local messages (direct.h).
  DirectState direct;

  // Matching state (under engine.h's lock()): messages of each channel so far, both ways, by peer
  // rank; and per (peer, tag) the count the identity words carry.
  std::vector<uint64_t> sent, received;  // [peer * kChannels + channel]
  std::map<std::pair<int, int>, uint64_t> sent_of_tag, received_of_tag;
  // Sends of this rank to itself put in lists so far, per channel: a receive from itself goes in a
  // list only after the one holding its send (a list waits for all its messages first).
  uint64_t listed_self[kChannels] = {};
  // Whether the host still knows every cursor (layout.h): until a list of this context is captured
  // into a graph, whose replays advance cursors the host cannot count, lists carry each message's
  // round as a number (a backend may then wait outside its kernels); from then on, relative to the
  // cursors.
  bool cursors_counted = true;
  // Queues that enqueued work touching this memory, and the count of lists each had enqueued then:
  // the memory is freed only once they ran.
  std::vector<std::pair<std::shared_ptr<Queue>, uint64_t>> users;

  // Addresses, for this rank as sender to `peer` or receiver from it (both node-local).
  char *mailbox_out(int peer, int box) const;  // in peer's area for this rank
  char *mailbox_in(int peer, int box) const;   // in this rank's area for peer
  uint64_t *full_out(int peer, int box) const; // peer's word this rank stores when a message landed
  uint64_t *full_in(int peer, int box) const;  // this rank's word that peer stores
  uint64_t *free_out(int peer, int box) const; // this rank's word that peer adds to
  uint64_t *free_in(int peer, int box) const;  // peer's word this rank adds to
  uint64_t *chunk_in(int peer, int box) const;  // this rank's word that peer stores per chunk in
  uint64_t *chunk_out(int peer, int box) const; // peer's word this rank stores per chunk in
  uint64_t *go_out(int peer, int box) const;    // this rank's word that peer stores to allow chunks
  uint64_t *go_in(int peer, int box) const;     // peer's word this rank stores to allow chunks
  uint64_t *sent_cursor(int peer, int box) const;      // rounds this rank's streams sent through the mailbox
  uint64_t *received_cursor(int peer, int box) const;  // rounds they received from it
};

// The communicator's context, made now (collectively) if it has none. `capturing`: the stream is
// being captured, where making one is not possible.
core::Result context_of(MPI_Comm comm, bool capturing, std::shared_ptr<Context> *out);

// Whether every rank of comm arrived at a nonblocking barrier within `limit` (false also where the
// barrier could not start). One left behind stays pending: MPI cannot cancel a collective.
bool barrier_within(MPI_Comm comm, std::chrono::nanoseconds limit);

// Records that `queue` enqueued work using ctx's memory, as its `lists`-th list.
void note_user(Context &ctx, const std::shared_ptr<Queue> &queue, uint64_t lists);

}  // namespace mpix::p2p
