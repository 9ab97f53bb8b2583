// Two-sided stream messages longer than a mailbox (doc/guide/two-sided.md, Long messages): their
// data moves through the mailbox in chunks, sends and receives of one wait point together.
//   - exchanges: every rank sends long messages right and left and receives them, every send
//     started before any receive is waited for (a list that moved sends before receives would
//     wait for itself), HPE's and MPICH's spellings, several messages and sizes in flight, long and
//     mailbox-sized messages mixed on one channel; byte-exact, with the bytes after each buffer
//     untouched;
//   - a shorter long message into a longer receive (MPI_Get_count says so, nothing past it written);
//   - longer than the receive (a receive of one mailbox, and a long one; a receive in a list that
//     moves no chunks): MPI_ERR_TRUNCATE with nothing written, the send completes, and the
//     channel's next message arrives intact;
//   - ping-pong of long messages; a long receive beside a short one whose sender waits, through a
//     third rank, for the long one to be taken (each message of a wait point moves on its own);
//   - a message to itself; MPIX_Send_enqueue of a long message (completes on the stream once its
//     data went) against a receive posted first; MPI_Wait on the host for a long send;
//   - an exchange of long messages captured into a graph and replayed, new data each replay;
//   - a derived datatype of several pieces longer than a mailbox is refused at the send.
// The mailbox size is MPIX_ST_P2P_SLOT_KIB where set (the second run: 1 KiB, chunks of 512 bytes).
// --across-nodes (peers on other virtual nodes: chunks through the network): all but the capture.
#include "queue_long.h"

#include <cstdlib>
#include <cstring>

using namespace mt;

namespace {

size_t g_slot = 0;
constexpr size_t kMargin = kLongMargin;

// `sizes` messages to the right and to the left (tags 1 and 2, channel 1 and 2), received from the
// left and the right, all started before the wait point.
void exchange(void *stream, MPIX_Queue q, MPI_Comm mpich_comm, const std::vector<size_t> &sizes) {
  const bool mpich = mpich_comm != MPI_COMM_NULL;
  g_context = fmt("exchange of %zu messages (first %zu bytes), %s spelling", sizes.size(), sizes[0],
                  mpich ? "MPICH's" : "HPE's");
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  const MPI_Comm comm = mpich ? mpich_comm : MPI_COMM_WORLD;
  std::vector<DevBuf> out, in;
  std::vector<MPI_Request> reqs(4 * sizes.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < sizes.size(); ++i) {
    for (int dir = 0; dir < 2; ++dir) {
      out.emplace_back(sizes[i]);
      out.back().upload(pattern(sizes[i], key(g_rank, i, dir, 1)));
      in.emplace_back(sizes[i] + kMargin);
      in.back().upload(pattern(sizes[i] + kMargin, key(g_rank, i, dir, 2)));
    }
  }
  for (size_t i = 0; i < sizes.size(); ++i)
    for (int dir = 0; dir < 2; ++dir) {
      const int to = dir ? left : right, tag = 1 + dir;
      MPI_Request *r = &reqs[4 * i + 2 * dir];
      const int n = static_cast<int>(sizes[i]);
      if (mpich) MT_OK(MPIX_Isend_enqueue(out[2 * i + dir].p, n, MPI_BYTE, to, tag, comm, r));
      else MT_OK(MPIX_Enqueue_send(out[2 * i + dir].p, n, MPI_BYTE, to, tag, comm, q, r));
    }
  if (!mpich) MT_OK(MPIX_Enqueue_start(q));
  for (size_t i = 0; i < sizes.size(); ++i)
    for (int dir = 0; dir < 2; ++dir) {
      const int from = dir ? right : left, tag = 1 + dir;
      MPI_Request *r = &reqs[4 * i + 2 * dir + 1];
      const int n = static_cast<int>(sizes[i] + kMargin);  // room to spare: the count says what came
      if (mpich) MT_OK(MPIX_Irecv_enqueue(in[2 * i + dir].p, n, MPI_BYTE, from, tag, comm, r));
      else MT_OK(MPIX_Enqueue_recv(in[2 * i + dir].p, n, MPI_BYTE, from, tag, comm, q, r));
    }
  if (!mpich) MT_OK(MPIX_Enqueue_start(q));
  std::vector<MPI_Status> st(reqs.size());
  if (mpich) {
    MT_OK(MPIX_Waitall_enqueue(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
  } else {
    MT_OK(MPIX_Enqueue_wait(q));
    MT_OK(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data()));
  }
  MT_SYNC(stream);
  for (size_t i = 0; i < sizes.size(); ++i)
    for (int dir = 0; dir < 2; ++dir) {
      const int from = dir ? right : left;
      auto want = pattern(sizes[i] + kMargin, key(g_rank, i, dir, 2));
      const auto sent = pattern(sizes[i], key(from, i, dir, 1));
      std::copy(sent.begin(), sent.end(), want.begin());
      MT_SAME_BYTES(in[2 * i + dir].download().data(), want.data(), want.size(),
                    fmt("message %zu (%zu bytes) from the %s, and the margin", i, sizes[i], dir ? "right" : "left"));
      if (!mpich) {
        int got = -1;
        MPI_Get_count(&st[4 * i + 2 * dir + 1], MPI_BYTE, &got);
        MT_CHECKF(got == static_cast<int>(sizes[i]), "message %zu: MPI_Get_count %d, want %zu", i, got, sizes[i]);
      }
    }
}

// Ping-pong of long messages (HPE's spelling): the even rank's wait point holds its send's chunks
// and the receive of the answer, which comes only after the odd rank took those chunks.
void ping_pong(StreamQueue &Q) {
  g_context = "ping-pong of long messages";
  const int partner = g_rank ^ 1;
  if (partner >= g_size) return;
  const size_t n = 5 * g_slot + 3;
  DevBuf a(n), b(n);
  if (g_rank % 2 == 0) a.upload(pattern(n, key(g_rank, 11)));
  for (int iter = 0; iter < 3; ++iter) {
    MPI_Request r[2];
    if (g_rank % 2 == 0) {
      MT_OK(MPIX_Enqueue_send(a.p, static_cast<int>(n), MPI_BYTE, partner, 11, MPI_COMM_WORLD, Q.q, &r[0]));
      MT_OK(MPIX_Enqueue_start(Q.q));
      MT_OK(MPIX_Enqueue_recv(b.p, static_cast<int>(n), MPI_BYTE, partner, 12, MPI_COMM_WORLD, Q.q, &r[1]));
      MT_OK(MPIX_Enqueue_start(Q.q));
      MT_OK(MPIX_Enqueue_wait(Q.q));
    } else {
      MT_OK(MPIX_Enqueue_recv(b.p, static_cast<int>(n), MPI_BYTE, partner, 11, MPI_COMM_WORLD, Q.q, &r[1]));
      MT_OK(MPIX_Enqueue_start(Q.q));
      MT_OK(MPIX_Enqueue_wait(Q.q));
      MT_OK(MPIX_Enqueue_send(b.p, static_cast<int>(n), MPI_BYTE, partner, 12, MPI_COMM_WORLD, Q.q, &r[0]));
      MT_OK(MPIX_Enqueue_start(Q.q));
      MT_OK(MPIX_Enqueue_wait(Q.q));
    }
    MT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  }
  MT_SYNC(Q.stream);
  const auto want = pattern(n, key(g_rank & ~1, 11));
  MT_SAME_BYTES(b.download().data(), want.data(), n, "echoed three times");
}

// Three ranks: 0 receives a long message from 1 and a short one from 2 at one wait point; 2 sends
// only after receiving from 1, which sends to 2 only once 0 took its long message (a blocking send).
// The long receive must move while the short one is still awaited.
void chain(MPI_Comm comm, void *stream) {
  g_context = "a long receive beside a short one that depends on it";
  if (g_size < 3 || g_rank > 2) return;
  const size_t n = 4 * g_slot + 1, m = 16;
  DevBuf big(n), small(m), token(m);
  if (g_rank == 0) {
    MPI_Request r[2];
    MT_OK(MPIX_Irecv_enqueue(big.p, static_cast<int>(n), MPI_BYTE, 1, 20, comm, &r[0]));
    MT_OK(MPIX_Irecv_enqueue(small.p, static_cast<int>(m), MPI_BYTE, 2, 21, comm, &r[1]));
    MT_OK(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE));
  } else if (g_rank == 1) {
    big.upload(pattern(n, key(1, 20)));
    token.upload(pattern(m, key(1, 22)));
    MT_OK(MPIX_Send_enqueue(big.p, static_cast<int>(n), MPI_BYTE, 0, 20, comm));
    MT_OK(MPIX_Send_enqueue(token.p, static_cast<int>(m), MPI_BYTE, 2, 22, comm));
  } else {
    MT_OK(MPIX_Recv_enqueue(token.p, static_cast<int>(m), MPI_BYTE, 1, 22, comm, MPI_STATUS_IGNORE));
    MT_OK(MPIX_Send_enqueue(token.p, static_cast<int>(m), MPI_BYTE, 0, 21, comm));
  }
  MT_SYNC(stream);
  if (g_rank == 0) {
    const auto want = pattern(n, key(1, 20)), want_small = pattern(m, key(1, 22));
    MT_SAME_BYTES(big.download().data(), want.data(), n, "the long message");
    MT_SAME_BYTES(small.download().data(), want_small.data(), m, "the short one, relayed");
  }
}

// A long message into a receive of one mailbox whose list moves no chunks (the receiving rank sends
// nothing long): it drops the message through its free word; the sender completes, the channel's
// next message arrives intact.
void dropped(StreamQueue &Q) {
  g_context = "a long message dropped by a receive whose list moves no chunks";
  const int partner = g_rank ^ 1;
  if (partner >= g_size) return;
  const size_t n = 3 * g_slot + 5, room = g_slot / 2, after = 40;
  DevBuf big(n), small(room), next(after);
  const auto fill = pattern(room, key(g_rank, 15));
  MPI_Request r[2];
  if (g_rank % 2 == 0) {
    big.upload(pattern(n, key(g_rank, 14)));
    next.upload(pattern(after, key(g_rank, 16)));
    MT_OK(MPIX_Enqueue_send(big.p, static_cast<int>(n), MPI_BYTE, partner, 15, MPI_COMM_WORLD, Q.q, &r[0]));
    MT_OK(MPIX_Enqueue_send(next.p, static_cast<int>(after), MPI_BYTE, partner, 23, MPI_COMM_WORLD, Q.q, &r[1]));
    MT_OK(MPIX_Enqueue_start(Q.q));
    MT_OK(MPIX_Enqueue_wait(Q.q));
    MT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  } else {
    small.upload(fill);
    MT_OK(MPIX_Enqueue_recv(small.p, static_cast<int>(room), MPI_BYTE, partner, 15, MPI_COMM_WORLD, Q.q, &r[0]));
    MT_OK(MPIX_Enqueue_recv(next.p, static_cast<int>(after), MPI_BYTE, partner, 23, MPI_COMM_WORLD, Q.q, &r[1]));
    MT_OK(MPIX_Enqueue_start(Q.q));
    MT_OK(MPIX_Enqueue_wait(Q.q));
    const int rc = MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MT_CHECKF(error_class(rc) == MPI_ERR_TRUNCATE, "MPI_Wait returned %s, want MPI_ERR_TRUNCATE",
              class_name(error_class(rc)));
    MT_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
  }
  MT_SYNC(Q.stream);
  if (g_rank % 2) {
    MT_SAME_BYTES(small.download().data(), fill.data(), room, "nothing written");
    const auto want = pattern(after, key(partner, 16));
    MT_SAME_BYTES(next.download().data(), want.data(), after, "the channel's next message");
  }
}

// MPICH's blocking spelling: even ranks send first, odd ranks receive first (a blocking long send
// completes on the stream only once its receiver took the data, as MPI_Send's rendezvous); then a
// long MPIX_Isend_enqueue completed by MPI_Wait on the host.
void blocking(MPI_Comm comm, void *stream) {
  g_context = "MPIX_Send_enqueue of a long message";
  if (g_size % 2) return;  // pairs of ranks
  const int peer = g_rank ^ 1;
  const size_t n = 2 * g_slot + 333;
  DevBuf out(n), in(n);
  out.upload(pattern(n, key(g_rank, 7)));
  if (g_rank % 2 == 0) {
    MT_OK(MPIX_Send_enqueue(out.p, static_cast<int>(n), MPI_BYTE, peer, 7, comm));
    MT_OK(MPIX_Recv_enqueue(in.p, static_cast<int>(n), MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE));
  } else {
    MT_OK(MPIX_Recv_enqueue(in.p, static_cast<int>(n), MPI_BYTE, peer, 7, comm, MPI_STATUS_IGNORE));
    MT_OK(MPIX_Send_enqueue(out.p, static_cast<int>(n), MPI_BYTE, peer, 7, comm));
  }
  MT_SYNC(stream);
  auto want = pattern(n, key(peer, 7));
  MT_SAME_BYTES(in.download().data(), want.data(), n, "blocking calls");

  g_context = "MPI_Wait on the host for a long MPIX_Isend_enqueue";
  out.upload(pattern(n, key(g_rank, 8)));
  MPI_Request s = MPI_REQUEST_NULL, r = MPI_REQUEST_NULL;
  MT_OK(MPIX_Isend_enqueue(out.p, static_cast<int>(n), MPI_BYTE, peer, 8, comm, &s));
  MT_OK(MPIX_Irecv_enqueue(in.p, static_cast<int>(n), MPI_BYTE, peer, 8, comm, &r));
  MT_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
  MT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  MT_SYNC(stream);
  want = pattern(n, key(peer, 8));
  MT_SAME_BYTES(in.download().data(), want.data(), n, "host waits");
}

// An exchange of long messages captured once and replayed, each replay the next messages of the
// channels (their rounds read from the mailboxes' cursors), with new data each time.
void captured(StreamQueue &Q) {
  g_context = "a captured exchange of long messages";
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  const size_t n = 3 * g_slot + 11;
  DevBuf out(n), in(n);
  MPI_Request r[2];
  xdev::stream_begin_capture(Q.stream);
  MT_OK(MPIX_Enqueue_send(out.p, static_cast<int>(n), MPI_BYTE, right, 10, MPI_COMM_WORLD, Q.q, &r[0]));
  MT_OK(MPIX_Enqueue_recv(in.p, static_cast<int>(n), MPI_BYTE, left, 10, MPI_COMM_WORLD, Q.q, &r[1]));
  MT_OK(MPIX_Enqueue_start(Q.q));
  MT_OK(MPIX_Enqueue_wait(Q.q));
  void *graph = xdev::stream_end_capture(Q.stream);
  MT_CHECKF(graph != nullptr, "the capture made a graph");
  MT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  for (int rep = 0; rep < 3 && graph && !g_failures; ++rep) {
    out.upload(pattern(n, key(g_rank, rep, 10)));
    xdev::graph_launch(graph, Q.stream);
    MT_SYNC(Q.stream);
    const auto want = pattern(n, key(left, rep, 10));
    MT_SAME_BYTES(in.download().data(), want.data(), n, fmt("replay %d", rep));
  }
  if (graph) xdev::graph_destroy(graph);
  exchange(Q.stream, Q.q, MPI_COMM_NULL, {2 * g_slot + 1});  // eager again after the replays
}

void refused_derived(StreamQueue &Q) {
  g_context = "a long message of a derived datatype";
  MPI_Datatype strided;
  const int blocks = static_cast<int>(g_slot / 8);  // 2 x slot bytes of data in `blocks` pieces
  MPI_Type_vector(blocks, 2, 3, MPI_DOUBLE, &strided);
  MPI_Type_commit(&strided);
  DevBuf a(static_cast<size_t>(blocks) * 3 * sizeof(double));
  MPI_Request r = MPI_REQUEST_NULL;
  const std::string m = MT_EXPECT_ERROR(
      MPIX_Enqueue_send(a.p, 1, strided, (g_rank + 1) % g_size, 9, MPI_COMM_WORLD, Q.q, &r),
      MPI_ERR_UNSUPPORTED_OPERATION);
  MT_CHECKF(contains(m, "derived datatype") && contains(m, "MPIX_ST_P2P_SLOT_KIB"), "the refusal says why: %s",
            m.c_str());
  MPI_Type_free(&strided);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "queue_large");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  g_slot = long_slot_bytes();
  const bool across_nodes = argc > 1 && std::strcmp(argv[1], "--across-nodes") == 0;
  note("mailbox %zu bytes, chunks of %zu", g_slot, g_slot / 2);
  {
    StreamQueue Q;
    const size_t s = g_slot;
    exchange(Q.stream, Q.q, MPI_COMM_NULL, {s + 1});
    // Long and mailbox-sized messages on one channel.
    exchange(Q.stream, Q.q, MPI_COMM_NULL, {9 * s + 4, s, 3 * s + 100, 7, 2 * s});
    for (int i = 0; i < 3 && !g_failures; ++i) exchange(Q.stream, Q.q, MPI_COMM_NULL, {4 * s + 17, 4 * s + 17});
    long_into(Q, 3 * s + 5, 5 * s, false);   // shorter than the receive
    long_into(Q, 3 * s + 5, s / 2, false);   // longer than a receive of one mailbox
    long_into(Q, 3 * s + 5, 2 * s, false);   // longer than a long receive
    long_into(Q, s / 2, 3 * s, false);       // a mailbox-sized message into a long receive
    ping_pong(Q);
    dropped(Q);
    long_self(Q, 3 * g_slot + 5);
    if (!across_nodes) captured(Q);  // calls toward other nodes are not captured (queue_graph)
    refused_derived(Q);
  }
  {
    void *stream = stream_create();
    MPIX_Stream ms = wrap_stream(stream);
    MPI_Comm comm = MPI_COMM_NULL;
    MT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &comm));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    exchange(stream, MPIX_QUEUE_NULL, comm, {5 * g_slot + 9, 3 * g_slot, g_slot + 1});
    blocking(comm, stream);
    chain(comm, stream);
    MT_SYNC(stream);
    MPI_Comm_free(&comm);
    MPIX_Stream_free(&ms);
    stream_destroy(stream);
  }
  return finish();
}
