// Two-sided stream messages captured into a graph (doc/guide/two-sided.md, Graph capture): a
// block of calls captured once replays as the next messages of its channels, every time, with
// eager blocks before, between and after the replays; both spellings. Each rank sends to its right
// neighbour and receives from its left one, per block: tags 0, 1 and 9 (9 shares tag 1's channel
// and order), a zero-byte message, and 6 messages of tag 2 and one of tag 10 (7 of a channel's 8
// mailboxes, each at a different mailbox every block). Before each block the senders write a pattern
// that names the block; after it every receive buffer must hold its sender's pattern byte for byte.
// A start and its wait captured back to back are one kernel node (src/backend/list_merge.h): the
// stream operations of a block are counted (HPE: 1, MPICH: one per send, the last joined by the
// receives; one more each with MPIX_ST_GRAPH_MERGE=0).
// Ping-pong replayed: rank 0 sends and waits for the echo in one node per round trip, rank 1 waits
// and echoes (its echo joins the next receive), 12 round trips a graph through each mailbox of the
// channel and round again, byte-exact per round trip.
// One-way beyond a channel's mailboxes: rank 0 captures 16 blocking zero-byte receives of one tag
// (16 nodes: a receive's "free" never waits behind a later receive), rank 1 captures the sends,
// its 9th send waiting for rank 0's stream to take the first.
// A captured MPIX_Recv_enqueue's status: each replay writes its count (GPU backends: a host node).
// Misuse: operations called before a capture and started inside it, or called inside and waited
// for after it, are refused (MPI_ERR_OTHER) and can still be completed where they belong. A graph
// replayed after MPI_Comm_free of its communicator moves nothing and reports MPI_ERR_WIN.
#include <cstring>

#include "test_common.h"

using namespace mt;

namespace {

struct Message {
  int tag;
  size_t bytes;
};

std::vector<Message> block_messages() {
  std::vector<Message> m = {{0, 1000}, {1, 8}, {9, 24}, {3, 0}};
  for (int i = 0; i < 6; ++i) m.push_back({2, 64 + 8 * static_cast<size_t>(i)});
  m.push_back({10, 40});
  return m;
}

// The buffers of one block: a send and a receive buffer per message.
struct Block {
  std::vector<Message> msgs = block_messages();
  std::vector<DevBuf> send, recv;
  int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Block() {
    for (const Message &m : msgs) send.emplace_back(m.bytes + 8), recv.emplace_back(m.bytes + 8);
  }
  // Writes block b's patterns (the stream must be idle: the caller synchronised it).
  void prepare(uint64_t b) {
    for (size_t i = 0; i < msgs.size(); ++i) {
      send[i].upload(pattern(msgs[i].bytes + 8, key(b, g_rank, i, 1)));
      recv[i].upload(pattern(msgs[i].bytes + 8, 0xdead));
    }
  }
  // After the block ran: each receive holds the left neighbour's bytes of block b, the rest untouched.
  void check(uint64_t b, const char *what) {
    for (size_t i = 0; i < msgs.size(); ++i) {
      const std::vector<uint8_t> got = recv[i].download();
      std::vector<uint8_t> want = pattern(msgs[i].bytes + 8, key(b, left, i, 1));
      const std::vector<uint8_t> untouched = pattern(msgs[i].bytes + 8, 0xdead);
      std::copy(untouched.begin() + static_cast<long>(msgs[i].bytes), untouched.end(),
                want.begin() + static_cast<long>(msgs[i].bytes));
      MT_CHECKF(got == want, "%s, block %llu: message %zu (tag %d, %zu bytes) from rank %d differs", what,
                static_cast<unsigned long long>(b), i, msgs[i].tag, msgs[i].bytes, left);
    }
  }
};

// HPE's spelling: one block on a queue.
void hpe_block(Block &k, MPIX_Queue q, MPI_Comm comm) {
  std::vector<MPI_Request> req(2 * k.msgs.size());
  size_t r = 0;
  for (size_t i = 0; i < k.msgs.size(); ++i)
    MT_OK(MPIX_Enqueue_recv(k.recv[i].p, static_cast<int>(k.msgs[i].bytes), MPI_BYTE, k.left, k.msgs[i].tag, comm, q,
                            &req[r++]));
  for (size_t i = 0; i < k.msgs.size(); ++i)
    MT_OK(MPIX_Enqueue_send(k.send[i].p, static_cast<int>(k.msgs[i].bytes), MPI_BYTE, k.right, k.msgs[i].tag, comm, q,
                            &req[r++]));
  MT_OK(MPIX_Enqueue_start(q));
  MT_OK(MPIX_Enqueue_wait(q));
  // Captured, the requests are complete once the block is in the graph: the host does not wait.
  MT_OK(MPI_Waitall(static_cast<int>(r), req.data(), MPI_STATUSES_IGNORE));
}

// MPICH's spelling: one block on a stream communicator.
void mpich_block(Block &k, MPI_Comm comm) {
  std::vector<MPI_Request> req(2 * k.msgs.size());
  size_t r = 0;
  for (size_t i = 0; i < k.msgs.size(); ++i)
    MT_OK(MPIX_Irecv_enqueue(k.recv[i].p, static_cast<int>(k.msgs[i].bytes), MPI_BYTE, k.left, k.msgs[i].tag, comm,
                             &req[r++]));
  for (size_t i = 0; i < k.msgs.size(); ++i)
    MT_OK(MPIX_Isend_enqueue(k.send[i].p, static_cast<int>(k.msgs[i].bytes), MPI_BYTE, k.right, k.msgs[i].tag, comm,
                             &req[r++]));
  MT_OK(MPIX_Waitall_enqueue(static_cast<int>(r), req.data(), MPI_STATUSES_IGNORE));
}

// Eager, captured and replayed blocks in the order `plan` gives ('e' eager, 'r' replay), after one
// eager block that makes the communicator's mailboxes and the capture, which must take
// `merged_ops` stream operations (`unmerged_ops` where merging is off).
template <class Enqueue>
void blocks(const char *spelling, void *s, Enqueue &&enqueue, const char *plan, unsigned long long merged_ops,
            unsigned long long unmerged_ops) {
  Block k;
  uint64_t b = 0;
  auto run = [&](bool replay, void *graph) {
    g_context = fmt("%s: block %llu (%s)", spelling, static_cast<unsigned long long>(b), replay ? "replay" : "eager");
    MT_SYNC(s);
    MPI_Barrier(MPI_COMM_WORLD);  // every rank's buffers are written before any block starts
    k.prepare(b);
    MPI_Barrier(MPI_COMM_WORLD);
    if (replay) xdev::graph_launch(graph, s);
    else enqueue(k);
    MT_SYNC(s);
    k.check(b, spelling);
    ++b;
  };
  run(false, nullptr);
  g_context = fmt("%s: capture", spelling);
  MT_SYNC(s);
  const unsigned long long before = MPIX_St_stream_ops_enqueued();
  xdev::stream_begin_capture(s);
  enqueue(k);
  void *graph = xdev::stream_end_capture(s);
  MT_CHECKF(graph != nullptr, "%s: the capture made a graph", spelling);
  const unsigned long long ops = MPIX_St_stream_ops_enqueued() - before;
  note("%s: a block of %zu sends and %zu receives captured as %llu stream operations", spelling, k.msgs.size(),
       k.msgs.size(), ops);
  const unsigned long long want = graph_merging() ? merged_ops : unmerged_ops;
  MT_CHECKF(ops == want, "%s: the captured block took %llu stream operations, not %llu (merging %s)", spelling, ops,
            want, graph_merging() ? "on" : "off");
  for (const char *p = plan; *p && !g_failures; ++p) run(*p == 'r', graph);
  xdev::graph_destroy(graph);
}

// Operations called on one side of a capture's edge and put in lists on the other are refused,
// and complete where they belong afterwards (self-messages: no peer takes part).
void misuse_hpe(void *s, MPI_Comm comm) {
  g_context = "HPE: started inside a capture, called before it";
  MPIX_Queue q;
  MT_OK(MPIX_Create_queue(s, &q));
  DevBuf out(64), in(64);
  out.upload(pattern(64, key(77, g_rank)));
  MPI_Request req[2];
  MT_OK(MPIX_Enqueue_recv(in.p, 64, MPI_BYTE, g_rank, 5, comm, q, &req[0]));
  MT_OK(MPIX_Enqueue_send(out.p, 64, MPI_BYTE, g_rank, 5, comm, q, &req[1]));
  xdev::stream_begin_capture(s);
  const std::string m = MT_EXPECT_ERROR(MPIX_Enqueue_start(q), MPI_ERR_OTHER);
  MT_CHECKF(contains(m, "before the stream's capture began"), "the refusal says why: \"%s\"", m.c_str());
  xdev::graph_destroy(xdev::stream_end_capture(s));
  MT_OK(MPIX_Enqueue_start(q));  // outside the capture, where they were called
  MT_OK(MPIX_Enqueue_wait(q));
  MT_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
  MT_CHECK(in.download() == pattern(64, key(77, g_rank)));
  MT_OK(MPIX_Free_queue(q));
}

void misuse_mpich(void *s, MPI_Comm comm) {
  g_context = "MPICH: called inside a capture, waited for after it";
  DevBuf out(64), in(64);
  out.upload(pattern(64, key(78, g_rank)));
  MPI_Request req[2];
  xdev::stream_begin_capture(s);
  MT_OK(MPIX_Irecv_enqueue(in.p, 64, MPI_BYTE, g_rank, 6, comm, &req[0]));
  MT_OK(MPIX_Isend_enqueue(out.p, 64, MPI_BYTE, g_rank, 6, comm, &req[1]));
  void *graph = xdev::stream_end_capture(s);
  const std::string m = MT_EXPECT_ERROR(MPIX_Wait_enqueue(&req[0], MPI_STATUS_IGNORE), MPI_ERR_OTHER);
  MT_CHECKF(contains(m, "within the capture"), "the refusal says why: \"%s\"", m.c_str());
  // The graph holds the send; replayed, the receive is waited for inside a capture of its own.
  MT_OK(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
  xdev::graph_launch(graph, s);
  xdev::stream_begin_capture(s);
  MT_OK(MPIX_Wait_enqueue(&req[0], MPI_STATUS_IGNORE));
  void *wait_graph = xdev::stream_end_capture(s);
  xdev::graph_launch(wait_graph, s);
  MT_SYNC(s);
  MT_CHECK(in.download() == pattern(64, key(78, g_rank)));
  xdev::graph_destroy(graph);
  xdev::graph_destroy(wait_graph);
}

// Rank 0 sends a message and waits for its echo, rank 1 waits for it and echoes it, 12 times a
// graph, each round trip with buffers of its own; both capture once and replay. HPE's spelling.
void ping_pong_replayed(void *s, MPI_Comm comm) {
  g_context = "ping-pong replayed";
  constexpr int kTrips = 12, kBytes = 40, kReplays = 3;
  if (g_rank > 1) return;
  const int peer = 1 - g_rank;
  MPIX_Queue q;
  MT_OK(MPIX_Create_queue(s, &q));
  std::vector<DevBuf> out, back;
  for (int i = 0; i < kTrips; ++i) out.emplace_back(kBytes), back.emplace_back(kBytes);
  auto trip = [&](int i) {
    MPI_Request req;
    if (g_rank == 0) {
      MT_OK(MPIX_Enqueue_send(out[i].p, kBytes, MPI_BYTE, peer, 3, comm, q, &req));
      MT_OK(MPI_Request_free(&req));
      MT_OK(MPIX_Enqueue_recv(back[i].p, kBytes, MPI_BYTE, peer, 3, comm, q, &req));
      MT_OK(MPI_Request_free(&req));
      MT_OK(MPIX_Enqueue_start(q));
      MT_OK(MPIX_Enqueue_wait(q));
    } else {
      MT_OK(MPIX_Enqueue_recv(back[i].p, kBytes, MPI_BYTE, peer, 3, comm, q, &req));
      MT_OK(MPI_Request_free(&req));
      MT_OK(MPIX_Enqueue_start(q));
      MT_OK(MPIX_Enqueue_wait(q));
      MT_OK(MPIX_Enqueue_send(back[i].p, kBytes, MPI_BYTE, peer, 3, comm, q, &req));
      MT_OK(MPI_Request_free(&req));
      MT_OK(MPIX_Enqueue_start(q));
    }
  };
  trip(0);  // eagerly first: the communicator's mailboxes
  MT_OK(MPIX_Enqueue_wait(q));
  MT_SYNC(s);
  xdev::stream_begin_capture(s);
  for (int i = 0; i < kTrips; ++i) trip(i);
  MT_OK(MPIX_Enqueue_wait(q));
  void *graph = xdev::stream_end_capture(s);
  for (int r = 0; r < kReplays && !g_failures; ++r) {
    for (int i = 0; i < kTrips; ++i) {
      if (g_rank == 0) out[i].upload(pattern(kBytes, key(90, r, i)));
      back[i].upload(pattern(kBytes, 0xdead));
    }
    xdev::graph_launch(graph, s);
    MT_SYNC(s);
    for (int i = 0; i < kTrips; ++i)
      MT_CHECKF(back[i].download() == pattern(kBytes, key(90, r, i)), "replay %d, round trip %d: the echo differs", r, i);
    // Buffers rewritten only once both ranks' streams are idle (rank 2 and up take no part).
    MPI_Sendrecv(nullptr, 0, MPI_BYTE, peer, 99, nullptr, 0, MPI_BYTE, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  xdev::graph_destroy(graph);
  MT_OK(MPIX_Free_queue(q));
}

// Rank 1 sends 16 zero-byte messages of one tag to rank 0, one blocking send each; rank 0 receives
// them, one blocking receive each; both capture that block and replay it (16: each replay starts at
// the channel's first mailbox, as the eager block before it did). The 9th send waits for rank 0's
// stream to free the first mailbox, so no receive's node may wait for a later message first; the
// sends share nodes of 8 (merging on: one node holds at most 8 consecutive messages of a channel).
void one_way_beyond_mailboxes(void *s, MPI_Comm comm) {
  g_context = "one way, more messages than a channel's mailboxes";
  constexpr int kMessages = 16, kReplays = 3;
  if (g_rank > 1) return;
  auto block = [&] {
    for (int i = 0; i < kMessages; ++i) {
      if (g_rank == 0) MT_OK(MPIX_Recv_enqueue(nullptr, 0, MPI_BYTE, 1, 4, comm, MPI_STATUS_IGNORE));
      else MT_OK(MPIX_Send_enqueue(nullptr, 0, MPI_BYTE, 0, 4, comm));
    }
  };
  block();  // eagerly first
  MT_SYNC(s);
  const unsigned long long before = MPIX_St_stream_ops_enqueued();
  xdev::stream_begin_capture(s);
  block();
  void *graph = xdev::stream_end_capture(s);
  const unsigned long long ops = MPIX_St_stream_ops_enqueued() - before;
  const unsigned long long want = g_rank == 1 && graph_merging() ? kMessages / 8 : kMessages;
  MT_CHECKF(ops == want, "%llu stream operations for %d captured calls, %llu expected", ops, kMessages, want);
  for (int r = 0; r < kReplays; ++r) xdev::graph_launch(graph, s);
  MT_SYNC(s);
  xdev::graph_destroy(graph);
}

// A graph replayed after its communicator was freed moves nothing and reports MPI_ERR_WIN.
void replay_after_free(void *s) {
  g_context = "a replay after MPI_Comm_free";
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPIX_Queue q;
  MT_OK(MPIX_Create_queue(s, &q));
  DevBuf out(64), in(64);
  out.upload(pattern(64, key(79, g_rank)));
  auto self_message = [&] {
    MPI_Request req[2];
    MT_OK(MPIX_Enqueue_recv(in.p, 64, MPI_BYTE, g_rank, 7, comm, q, &req[0]));
    MT_OK(MPIX_Enqueue_send(out.p, 64, MPI_BYTE, g_rank, 7, comm, q, &req[1]));
    MT_OK(MPIX_Enqueue_start(q));
    MT_OK(MPIX_Enqueue_wait(q));
    MT_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
  };
  self_message();  // makes the communicator's memory
  MT_SYNC(s);
  xdev::stream_begin_capture(s);
  self_message();
  void *graph = xdev::stream_end_capture(s);
  in.upload(pattern(64, 0xdead));
  xdev::graph_launch(graph, s);
  MT_SYNC(s);
  MT_CHECK(in.download() == pattern(64, key(79, g_rank)));
  MT_OK(MPIX_Free_queue(q));
  MPI_Comm_free(&comm);
  in.upload(pattern(64, 0xdead));
  xdev::graph_launch(graph, s);
#ifdef MPIX_TEST_CUDA
  xdev::stream_sync(s);
  const int rc = MPIX_St_check(MPI_WIN_NULL);
#else
  const int rc = stream_sync_rc(s);
#endif
  const std::string m = MT_EXPECT_ERROR(rc, MPI_ERR_WIN);
  MT_CHECKF(contains(m, "MPI_Comm_free"), "the report says what happened: \"%s\"", m.c_str());
  MT_CHECKF(in.download() == pattern(64, 0xdead), "the replay after MPI_Comm_free wrote the receive buffer");
  xdev::graph_destroy(graph);
}

}  // namespace

// --across-nodes (every neighbour on another virtual node): a call toward another node made while
// its stream is captured is refused, saying so, and takes no message number: the same exchange
// made eagerly afterwards is byte-exact.
void across_nodes(void *s) {
  g_context = "across nodes: a captured call is refused";
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  MPIX_Queue q;
  MT_OK(MPIX_Create_queue(s, &q));
  DevBuf out(64), in(64);
  out.upload(pattern(64, key(78, g_rank)));
  MPI_Request req[2];
  // A self message first makes the communicator's two-sided state (not possible under capture).
  MT_OK(MPIX_Enqueue_recv(in.p, 0, MPI_BYTE, g_rank, 5, MPI_COMM_WORLD, q, &req[1]));
  MT_OK(MPIX_Enqueue_send(out.p, 0, MPI_BYTE, g_rank, 5, MPI_COMM_WORLD, q, &req[0]));
  MT_OK(MPIX_Enqueue_start(q));
  MT_OK(MPIX_Enqueue_wait(q));
  MT_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
  xdev::stream_begin_capture(s);
  std::string m = MT_EXPECT_ERROR(MPIX_Enqueue_send(out.p, 64, MPI_BYTE, right, 5, MPI_COMM_WORLD, q, &req[0]),
                                  MPI_ERR_UNSUPPORTED_OPERATION);
  MT_CHECKF(contains(m, "cannot be captured"), "the refusal says why: \"%s\"", m.c_str());
  m = MT_EXPECT_ERROR(MPIX_Enqueue_recv(in.p, 64, MPI_BYTE, left, 5, MPI_COMM_WORLD, q, &req[1]),
                      MPI_ERR_UNSUPPORTED_OPERATION);
  xdev::graph_destroy(xdev::stream_end_capture(s));
  g_context = "across nodes: eager after the refusal";
  MT_OK(MPIX_Enqueue_recv(in.p, 64, MPI_BYTE, left, 5, MPI_COMM_WORLD, q, &req[1]));
  MT_OK(MPIX_Enqueue_send(out.p, 64, MPI_BYTE, right, 5, MPI_COMM_WORLD, q, &req[0]));
  MT_OK(MPIX_Enqueue_start(q));
  MT_OK(MPIX_Enqueue_wait(q));
  MT_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
  MT_SYNC(s);
  MT_CHECK(in.download() == pattern(64, key(78, left)));
  MT_OK(MPIX_Free_queue(q));
}

// MPICH's blocking receive with a status, captured with the send before it: every replay writes
// the received count (set to 0 on the host before each replay): on the host backend from the list,
// on GPU backends from a host node of the graph after it.
void captured_status(void *s, MPI_Comm comm) {
  g_context = "a captured receive's status";
  constexpr int kReplays = 3, kRoom = 128;
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  const int sent = 40 + right, expected = 40 + g_rank;
  DevBuf out(sent), in(kRoom);
  MPI_Status st;
  xdev::stream_begin_capture(s);
  MT_OK(MPIX_Send_enqueue(out.p, sent, MPI_BYTE, right, 21, comm));
  MT_OK(MPIX_Recv_enqueue(in.p, kRoom, MPI_BYTE, left, 21, comm, &st));
  void *graph = xdev::stream_end_capture(s);
  for (int r = 0; r < kReplays && !g_failures; ++r) {
    out.upload(pattern(sent, key(91, g_rank, r)));
    MPI_Status_set_elements(&st, MPI_BYTE, 0);
    MPI_Barrier(MPI_COMM_WORLD);  // every rank's buffers ready before any replay moves them
    xdev::graph_launch(graph, s);
    MT_SYNC(s);
    int n = -1;
    MPI_Get_count(&st, MPI_BYTE, &n);
    MT_CHECKF(n == expected, "replay %d: MPI_Get_count %d, want %d", r, n, expected);
    const auto got = in.download();
    MT_SAME_BYTES(got.data(), pattern(expected, key(91, left, r)).data(), static_cast<size_t>(expected), "the message");
    MPI_Barrier(MPI_COMM_WORLD);
  }
  xdev::graph_destroy(graph);
}

int main(int argc, char **argv) {
  init(&argc, &argv, "queue_graph");
  void *s = stream_create();
  if (argc > 1 && std::strcmp(argv[1], "--across-nodes") == 0) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    across_nodes(s);
    stream_destroy(s);
    return finish();
  }
  {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPIX_Queue q;
    MT_OK(MPIX_Create_queue(s, &q));
    blocks("HPE", s, [&](Block &k) { hpe_block(k, q, comm); }, "rrererrr", 1, 2);
    MT_OK(MPIX_Free_queue(q));
    ping_pong_replayed(s, comm);
    misuse_hpe(s, comm);
    MT_SYNC(s);
    MPI_Comm_free(&comm);
  }
  {
    MPIX_Stream ms = wrap_stream(s);
    MPI_Comm comm;
    MT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &comm));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    blocks("MPICH", s, [&](Block &k) { mpich_block(k, comm); }, "rrererrr", 1, block_messages().size() + 1);
    one_way_beyond_mailboxes(s, comm);
    captured_status(s, comm);
    misuse_mpich(s, comm);
    MT_SYNC(s);
    MPI_Comm_free(&comm);
    MT_OK(MPIX_Stream_free(&ms));
  }
  replay_after_free(s);
  stream_destroy(s);
  return finish();
}
