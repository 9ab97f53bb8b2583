// Two-sided messages with peers on other nodes (doc/design.md, Two-sided messages between nodes).
// The mailboxes of layout.h, reached through the inter-node transport instead of IPC mappings:
//   - each rank has, per peer on another node (by its remote index), a receive area of mailboxes,
//     a send staging area laid out the same way, and flag words as layout.h numbers them (full,
//     free, cursors), all in host-mapped memory registered with the fabric;
//   - a send's list waits for its mailbox's previous round to be taken (free), copies the message
//     and its header into the staging mailbox and rings its queue's doorbell; the ring fires a
//     triggered put of header and data into the receiver's mailbox, and, chained to its
//     completion, a triggered add to the receiver's full word;
//   - a receive's list waits for full, copies out of its own area as a node-local receive does,
//     and rings: the ring fires a triggered add to the sender's free word.
// A message longer than a mailbox moves in chunks rung on a doorbell of its own (post_chunks,
// kernels/message_chunks.h, Between nodes).
// Doorbells belong to queues (one stream each), so rings reach the counter in the order the host
// numbered them; a list the watchdog cut short stops its queue's doorbell (the skip word), as an
// epoch's does. The staging copy lets every backend send without registering device memory.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "core/result.h"
#include "layout.h"
#include "topo/locality.h"
#include "transport/ofi/fabric.h"

namespace mpix::p2p {

struct Context;
struct Queue;
struct Op;

namespace net {

// A context's side of the network: its memory for peers on other nodes, and theirs as the fabric
// reaches it.
struct Remote {
  int nremote = 0;
  std::vector<int> index;     // by rank: its remote index here, -1 on this node
  std::vector<int> my_index;  // by rank: this rank's remote index there, -1 on this node
  std::vector<int> world;     // by rank: world rank, the fabric's peer id
  uint64_t area_bytes = 0;    // of one peer's mailboxes
  gpu::HostMapped areas, staging, flags;
  ofi::Region areas_reg, staging_reg, flags_reg;
  std::vector<ofi::RemoteRegion> peer_areas, peer_flags;  // by remote index
  ofi::RemoteRegion own_flags;  // this rank's, for operations toward itself (a long send's done words)
  // A duplicate of the communicator: its ranks meet on it before the registrations go (detach).
  MPI_Comm sync = MPI_COMM_NULL;

  // Stream views of this rank's mailbox for messages from `peer`, of its staging mailbox for
  // messages to `peer`, and of flag word `at` (layout.h, by remote index); the staging's host view,
  // which the fabric reads.
  char *mailbox_in(int peer, int box) const { return at(areas.device, peer, box); }
  char *staging_out(int peer, int box) const { return at(staging.device, peer, box); }
  char *staging_host(int peer, int box) const { return at(staging.host, peer, box); }
  uint64_t *word(uint64_t at) const { return static_cast<uint64_t *>(flags.device) + at; }
  char *at(void *base, int peer, int box) const { return static_cast<char *>(base) + offset(index[peer], box); }
  // Byte offset of mailbox `box` of the area of remote index `j` (in a peer's area: j is this
  // rank's index there).
  uint64_t offset(int j, int box) const {
    return static_cast<uint64_t>(j) * area_bytes + static_cast<uint64_t>(box) * (area_bytes / kBoxes);
  }
};

// Collective over the context's communicator, where some of its ranks are on other nodes: makes
// and registers the memory and exchanges its handles. `where`: every rank's place. Where the
// transport is not up (or not built), the context keeps no Remote and remote_why says why.
core::Result attach(Context &c, const std::vector<topo::Locality> &where);
// Releases the registrations and memory, once every rank of the communicator has settled the
// operations it posted toward this rank (MPI_Comm_free is collective): the ranks meet on a
// nonblocking barrier first. Where they do not all arrive within the watchdog (a peer gone), the
// memory stays registered and is leaked, with a word on stderr, rather than freed under a peer's
// operations. The queues that used the context settled their own operations before.
void detach(Context &c);

// A queue's doorbell: the stream stores ring counts into a host-mapped word that the transport's
// doorbell agent forwards to the trigger counter of the operations posted for them.
//
// A completion counter says how many of its operations completed, not which, and the provider
// completes them in any order; so a "full" signal chained on a counter that also counts puts of a
// later ring (or of another message of its own ring) could fire before its message landed. The
// puts of a ring therefore complete on a counter that no other ring's puts use while they run (one
// whose earlier puts all completed, else a new one, up to half the triggered-operation budget, else
// the host waits for the oldest; MPIX_ST_THROTTLE=app reports instead of waiting), and every signal
// of the ring is chained on the ring's last put: a receiver's "full" says that all of them landed.
struct Bell {
  gpu::HostMapped mem;  // word 0: rings; word 1: the skip word
  ofi::Counter trigger, signal_done;
  struct PutCounter {
    ofi::Counter done;
    uint64_t posted = 0;     // puts counted on it
    uint64_t last_ring = 0;  // the ring of the latest of them
  };
  std::vector<PutCounter> puts;
  int ring_puts = -1;  // the counter of the ring being posted (index in puts), -1: none chosen yet
  uint64_t rings = 0, signals_posted = 0;
  uint64_t watch_id = 0;
  // The signals of the ring being posted (post_send), chained on its puts by ring().
  struct Signal {
    int world;
    ofi::RemoteRegion flags;
    uint64_t offset;
  };
  std::vector<Signal> pending;
  ~Bell();
};

// Posts the triggered operations of a send to (a receive from) a peer on another node, fired by
// the queue's next ring, which `ring` adds to the list once after all its messages' items (and
// posts the sends' "full" signals, chained on the ring's puts). A send longer than a mailbox puts
// only its header there.
core::Result post_send(const Op &op, Queue &q);
core::Result post_receive(const Op &op, Queue &q);
core::Result ring(gpu::WorkList &list, Queue &q);
// The chunks of a message longer than a mailbox (a chunked send; a receive into a buffer longer
// than a mailbox) with a peer on another node: a doorbell of its own (op.chunk_bell; several move
// at once in one list, each ringing as its chunks go), and the operations each ring fires
// (kernels/message_chunks.h, Between nodes). *bell: the doorbell word as the stream writes it.
core::Result post_chunks(Op &op, uint64_t **bell);
// Triggered operations `op` takes in a send list (`in_send_list`) or in a wait point's list (0 for a
// node-local peer), and the most one list may take: half the budget, so that a list never waits
// for the completion of its own operations, which only its rings fire.
uint64_t operations(const Op &op, bool in_send_list);
uint64_t list_budget();
// Refuses a message with a peer on another node whose chunks would take more than a list may.
core::Result check_chunk_budget(const Op &op);
// The list holding this ring could not be enqueued: the doorbell stops, since its operations would
// fire with the next ring.
void ring_lost(Queue &q);
// Waits until the operations q's rings fired have completed (before memory they read goes).
void settle(Queue &q);
// The same for every queue (MPI_Finalize, before the transport closes: a peer's operations toward
// this rank complete only while its endpoint is open).
void settle_all();

}  // namespace net
}  // namespace mpix::p2p
