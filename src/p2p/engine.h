// Two-sided messages on streams (doc/design.md, Two-sided messages): both spellings (HPE's
// MPIX_Queue calls, MPICH's *_enqueue calls on a stream communicator) are operations recorded on a
// Queue (a stream and what it still has to enqueue) and enqueued as work lists:
//   - a send list: per send, wait until the mailbox is free (its previous round was taken), copy the
//     data and store the header into it, then store the mailbox's "full" word;
//   - a receive list: per receive, wait for "full", copy the header to the request's record and
//     exactly the sender's length into the receive buffer where it fits (a kCopyCounted item, which
//     reads the length from the mailbox), and add 1 to the sender's "free" word;
// each list ends by adding 1 to the queue's count of lists that ran, which is how the host sees
// requests complete. Sends are enqueued when they start; receives when something waits for them
// (MPIX_Enqueue_wait, the *_enqueue waits, a blocking receive, or MPI_Wait / MPI_Test on the host).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "backend/backend.h"
#include "channel_numbers.h"
#include "context.h"
#include "core/pair_lists.h"
#include "core/result.h"

namespace mpix::p2p {

struct Queue;
namespace net {
struct Bell;
}

struct Op {
  bool send = true;
  const char *call = "";                 // the call that made it (messages name it)
  std::shared_ptr<Context> ctx;          // null for MPI_PROC_NULL
  MPI_Comm comm = MPI_COMM_NULL;
  int peer = MPI_PROC_NULL;              // rank in comm
  int tag = 0;
  void *buf = nullptr;
  uint64_t bytes = 0;                    // send: the length; receive: the buffer's size
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  // A derived datatype's pieces between the buffer and the mailbox, packed there in type-map order
  // (dst: the mailbox for a send, the buffer for a receive); count 0 for a contiguous buffer.
  core::PairList pairs;
  // A send longer than a mailbox (kernels/message_chunks.h): its list stores the header; its data
  // moves in chunks from a later list (a wait point's), where the receiver's chunks also move.
  bool chunked = false;
  // A chunked send's source for a direct pull (direct.h): the key of its buffer's allocation as
  // published to the receiver (0: none) and the buffer's offset in it.
  uint64_t source_key = 0, source_offset = 0;
  // The doorbell of its chunks where its peer is on another node (network.h, post_chunks).
  std::shared_ptr<net::Bell> chunk_bell;
  bool round_known = false;              // receive: its list carried its round as a number (cursors counted)
  int channel = 0;
  uint64_t use = 0;                      // its number among the messages of its channel
  uint64_t ident = 0;                    // layout.h, identity
  uint64_t *record = nullptr;            // receive: the header as delivered; chunked send: its end (device view)
  uint64_t *record_host = nullptr;       // the same, for the host
  MPI_Status *user_status = nullptr;     // MPICH's stream waits: the stream writes its count (host backend)
  uint64_t *length_word = nullptr;       // captured with a status on a GPU backend: each replay's length
  std::shared_ptr<Queue> queue;
  uint64_t list = 0;                     // which of its queue's lists holds it; 0: none yet
  bool started = false;                  // HPE: MPIX_Enqueue_start passed it (MPICH ops start at once)
  bool captured = false;                 // called while its stream was captured: it moves at each replay
  bool finished = false;                 // its list ran, and the checks below were made
  int error_class = MPI_SUCCESS;         // of the finished operation
  std::string error;
  MPI_Request greq = MPI_REQUEST_NULL;   // the request the program holds (a generalized request)
  bool greq_completed = false;
  bool stream_waited = false;            // a stream wait took it, or its request was freed: errors go to the queue
  ~Op();                                 // gives the record back to its queue
};

struct Queue : std::enable_shared_from_this<Queue> {
  void *stream = nullptr;
  bool user_queue = false;               // made by MPIX_Create_queue (else MPICH's, one per stream)
  bool freed = false;                    // MPIX_Free_queue passed
  // Lists of this queue that ran: each list counts itself last, in pinned host memory the stream
  // writes, so the host reads it with a load (a flag in device memory cost a copy and a stream
  // synchronisation, ~10 us, at every call that looked).
  gpu::HostMapped done;
  uint64_t lists = 0;                    // lists enqueued
  std::vector<std::shared_ptr<Op>> unstarted;   // HPE: enqueued, not started
  std::vector<std::shared_ptr<Op>> waiting;     // started, in no list yet
  std::deque<std::shared_ptr<Op>> in_lists;     // in lists that have not finished, in list order
  std::vector<std::shared_ptr<Op>> chunking;    // chunked sends whose header is in a list, their chunks in none
  // Status records (32 bytes each) in memory the stream writes and the host reads.
  std::vector<gpu::HostMapped> record_chunks;
  std::vector<std::pair<uint64_t *, uint64_t *>> free_records;  // (device view, host view)
  std::vector<core::Result> errors;  // of operations a stream wait completed, raised by the next call
  std::shared_ptr<net::Bell> bell;   // its doorbell toward peers on other nodes (network.h), made at first use
  // Captured send lists that may share one kernel node (gpu::WorkList::send_group): the group of
  // the last one (0: none open) and, per (context, peer, channel), its first message in the group.
  uint64_t send_group = 0;
  ChannelNumbers send_group_first;
  ~Queue();
};

// The global lock of the two-sided state: every entry point takes it.
std::recursive_mutex &lock();

core::Result make_queue(void *stream, bool user_queue, std::shared_ptr<Queue> *out);
// MPICH's spelling: the queue of a stream (made at its first use).
core::Result queue_of_stream(void *stream, std::shared_ptr<Queue> *out);

// Fills op's matching fields (context, channel, message numbers) and, for a derived datatype, its
// pieces, for a message with `peer` on `comm`; checks the peer can be reached. Program order of
// these calls is the matching order.
core::Result match(Op &op, bool capturing);

// The queue records `op`, started or not (HPE: not until MPIX_Enqueue_start).
core::Result add(Queue &q, const std::shared_ptr<Op> &op, bool started);
// MPIX_Enqueue_start: sends recorded since the last start go in lists (one; one per kMailboxes
// messages of a channel where more of its messages wait), receives become started.
core::Result start(Queue &q);
// Started operations not in a list yet go in lists: receive lists, one per kMailboxes messages of
// the channel with the most waiting (one where no channel has more than kMailboxes waiting). `only`: just these
// receives and those before them on their channels (MPI's order); null: every waiting one.
core::Result flush(Queue &q, const std::vector<Op *> *only = nullptr);
// Sends started on a queue at once (MPICH's spelling): in a list now.
core::Result send_now(Queue &q);
// The chunks of q's chunked sends whose header went out: in a list of their own now (a blocking
// send, a freed request, a later send through the same mailbox). Wait points take them otherwise.
core::Result send_chunks(Queue &q);

// A receive already in a list: a list after it writes its count into op.user_status (host backend).
core::Result status_after(const std::shared_ptr<Op> &op);

// How many of q's lists have run.
uint64_t lists_ran(const Queue &q);
// Whether op's list has run (its checks then made); progresses the queue's finished operations.
bool finished(Op &op);
// Checks of finished operations of every queue (generalized requests completed, errors of stream
// waits kept on their queue). Called by every entry point.
void reap_all();
// Waits on the host until op's list ran (enqueuing it, and the receives before it on its channel,
// where no list holds it yet).
core::Result wait_host(Op &op, const char *caller);
// MPIX_Free_queue: refuses queues with operations not started or not waited.
core::Result free_queue(const std::shared_ptr<Queue> &q);
// Errors that stream waits left on the queue, raised once.
core::Result take_queue_error(Queue &q);
// The errors one queue's stream waits left, of any queue (MPIX_St_check(MPI_WIN_NULL)), raised once.
core::Result take_any_error();

// Generalized request for op; the program's handle.
core::Result make_request(const std::shared_ptr<Op> &op, MPI_Request *out);
// The op behind a program's request, or null.
std::shared_ptr<Op> op_of(MPI_Request r);
// The program no longer holds the request (MPI_Wait / MPI_Request_free / a stream wait took it).
void forget_request(MPI_Request r);
// MPI_Request_free of op's request: nobody holds it to learn op's error, so the error (found when
// its list ran, or already) is raised by the queue's next call, as a stream wait's is.
void request_freed(Op &op);
// Count of live two-sided requests (the interposed MPI calls pass straight through at 0).
uint64_t live_requests();

// Where MPI_Status keeps its count (bytes) for MPI_BYTE: the offset of a 4-byte word.
int status_count_offset();

}  // namespace mpix::p2p
