// Two-sided stream messages, HPE's spelling (MPIX_Queue): ping-pong over every message size class,
// a ring exchange with several iterations enqueued before one synchronisation, self messages,
// MPI_PROC_NULL, zero bytes, a message longer than the receive buffer (MPI_ERR_TRUNCATE through
// the request, nothing written, the channel still usable), and completion on the host (MPI_Wait,
// MPI_Test, MPI_Waitall, MPI_Get_count) without MPIX_Enqueue_wait. Byte-exact everywhere.
#include "test_common.h"

using namespace mt;

namespace {

// Pairs (0,1), (2,3), ...: the even rank sends, the odd one echoes it back. An odd rank out idles.
void ping_pong(StreamQueue &Q, const std::vector<size_t> &sizes) {
  const int partner = g_rank ^ 1;
  if (partner >= g_size) return;
  for (size_t n : sizes) {
    g_context = fmt("ping-pong %zu bytes", n);
    DevBuf a(n ? n : 1), b(n ? n : 1);
    const auto want = pattern(n, key(n, 1));
    if (g_rank % 2 == 0) a.upload(want);
    std::vector<MPI_Request> reqs(2);
    for (int iter = 0; iter < 3; ++iter) {
      if (g_rank % 2 == 0) {
        MT_OK(MPIX_Enqueue_send(a.p, static_cast<int>(n), MPI_BYTE, partner, 5, MPI_COMM_WORLD, Q.q, &reqs[0]));
        MT_OK(MPIX_Enqueue_start(Q.q));
        MT_OK(MPIX_Enqueue_recv(b.p, static_cast<int>(n), MPI_BYTE, partner, 6, MPI_COMM_WORLD, Q.q, &reqs[1]));
        MT_OK(MPIX_Enqueue_start(Q.q));
        MT_OK(MPIX_Enqueue_wait(Q.q));
      } else {
        MT_OK(MPIX_Enqueue_recv(b.p, static_cast<int>(n), MPI_BYTE, partner, 5, MPI_COMM_WORLD, Q.q, &reqs[1]));
        MT_OK(MPIX_Enqueue_start(Q.q));
        MT_OK(MPIX_Enqueue_wait(Q.q));
        MT_OK(MPIX_Enqueue_send(b.p, static_cast<int>(n), MPI_BYTE, partner, 6, MPI_COMM_WORLD, Q.q, &reqs[0]));
        MT_OK(MPIX_Enqueue_start(Q.q));
        MT_OK(MPIX_Enqueue_wait(Q.q));
      }
      MPI_Status st[2];
      MT_OK(MPI_Waitall(2, reqs.data(), st));
      int got = -1;
      MPI_Get_count(&st[1], MPI_BYTE, &got);
      MT_CHECKF(got == static_cast<int>(n), "MPI_Get_count %d, want %zu", got, n);
      MT_CHECKF(st[1].MPI_SOURCE == partner, "source %d", st[1].MPI_SOURCE);
    }
    MT_SYNC(Q.stream);
    MT_SAME_BYTES(b.download(0, n).data(), want.data(), n, "echoed data");
  }
}

// Each rank sends to rank + 1 and receives from rank - 1, `iters` times before one synchronisation;
// iteration i's data is a pattern of (i, sender). Ints, to check counts in elements.
void ring(StreamQueue &Q, int iters) {
  g_context = fmt("ring, %d iterations", iters);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  const int count = 300;
  const size_t bytes = count * sizeof(int);
  std::vector<DevBuf> out, in;
  std::vector<MPI_Request> reqs;
  for (int i = 0; i < iters; ++i) {
    out.emplace_back(bytes);
    in.emplace_back(bytes);
    out.back().upload(pattern(bytes, key(i, g_rank, 2)));
    reqs.emplace_back();
    MT_OK(MPIX_Enqueue_recv(in.back().p, count, MPI_INT, left, 11, MPI_COMM_WORLD, Q.q, &reqs.back()));
    reqs.emplace_back();
    MT_OK(MPIX_Enqueue_send(out.back().p, count, MPI_INT, right, 11, MPI_COMM_WORLD, Q.q, &reqs.back()));
    MT_OK(MPIX_Enqueue_start(Q.q));
    MT_OK(MPIX_Enqueue_wait(Q.q));
  }
  MT_SYNC(Q.stream);
  for (int i = 0; i < iters; ++i) {
    const auto want = pattern(bytes, key(i, left, 2));
    MT_SAME_BYTES(in[i].download().data(), want.data(), bytes, fmt("iteration %d from rank %d", i, left));
  }
  std::vector<MPI_Status> st(reqs.size());
  MT_OK(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data()));
  for (size_t i = 0; i < reqs.size(); i += 2) {
    int got = -1;
    MPI_Get_count(&st[i], MPI_INT, &got);
    MT_CHECKF(got == count, "MPI_Get_count(MPI_INT) %d, want %d", got, count);
    MT_CHECKF(st[i].MPI_SOURCE == left && st[i].MPI_TAG == 11, "status source %d tag %d", st[i].MPI_SOURCE,
              st[i].MPI_TAG);
  }
}

void self_and_null(StreamQueue &Q) {
  g_context = "self, MPI_PROC_NULL, zero bytes";
  const size_t n = 1000;
  DevBuf a(n), b(n);
  const auto want = pattern(n, key(g_rank, 3));
  a.upload(want);
  std::vector<MPI_Request> reqs(6);
  // A receive recorded before its send, both in one start: the stream orders them.
  MT_OK(MPIX_Enqueue_recv(b.p, static_cast<int>(n), MPI_BYTE, g_rank, 1, MPI_COMM_WORLD, Q.q, &reqs[0]));
  MT_OK(MPIX_Enqueue_send(a.p, static_cast<int>(n), MPI_BYTE, g_rank, 1, MPI_COMM_WORLD, Q.q, &reqs[1]));
  MT_OK(MPIX_Enqueue_send(a.p, 5, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, Q.q, &reqs[2]));
  MT_OK(MPIX_Enqueue_recv(b.p, 5, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, Q.q, &reqs[3]));
  MT_OK(MPIX_Enqueue_send(nullptr, 0, MPI_INT, g_rank, 2, MPI_COMM_WORLD, Q.q, &reqs[4]));
  MT_OK(MPIX_Enqueue_recv(nullptr, 0, MPI_INT, g_rank, 2, MPI_COMM_WORLD, Q.q, &reqs[5]));
  MT_OK(MPIX_Enqueue_start(Q.q));
  MT_OK(MPIX_Enqueue_wait(Q.q));
  MT_SYNC(Q.stream);
  MT_SAME_BYTES(b.download().data(), want.data(), n, "self message");
  MPI_Status st[6];
  MT_OK(MPI_Waitall(6, reqs.data(), st));
  int got = -1;
  MPI_Get_count(&st[3], MPI_BYTE, &got);
  MT_CHECKF(st[3].MPI_SOURCE == MPI_PROC_NULL && st[3].MPI_TAG == MPI_ANY_TAG && got == 0,
            "MPI_PROC_NULL status: source %d tag %d count %d", st[3].MPI_SOURCE, st[3].MPI_TAG, got);
  MPI_Get_count(&st[5], MPI_INT, &got);
  MT_CHECKF(got == 0 && st[5].MPI_SOURCE == g_rank && st[5].MPI_TAG == 2, "zero-byte status: count %d source %d",
            got, st[5].MPI_SOURCE);
}

// A message longer than the receive buffer: MPI_ERR_TRUNCATE from MPI_Wait, naming the call; the
// buffer untouched; the next message on the same channel arrives.
void truncation(StreamQueue &Q) {
  if (g_size < 2 || g_rank > 1) return;
  g_context = "truncation";
  const int peer = 1 - g_rank;
  DevBuf a(200), b(200);
  const auto want = pattern(200, key(4));
  const std::vector<uint8_t> guard(200, 0xAB);
  if (g_rank == 0) a.upload(want);
  else b.upload(guard);
  MPI_Request r[2];
  if (g_rank == 0) {
    MT_OK(MPIX_Enqueue_send(a.p, 100, MPI_BYTE, peer, 9, MPI_COMM_WORLD, Q.q, &r[0]));
    MT_OK(MPIX_Enqueue_send(a.p, 60, MPI_BYTE, peer, 9, MPI_COMM_WORLD, Q.q, &r[1]));
  } else {
    MT_OK(MPIX_Enqueue_recv(b.p, 40, MPI_BYTE, peer, 9, MPI_COMM_WORLD, Q.q, &r[0]));
    MT_OK(MPIX_Enqueue_recv(b.p + 100, 100, MPI_BYTE, peer, 9, MPI_COMM_WORLD, Q.q, &r[1]));
  }
  MT_OK(MPIX_Enqueue_start(Q.q));
  MT_OK(MPIX_Enqueue_wait(Q.q));
  MT_SYNC(Q.stream);
  if (g_rank == 0) {
    MT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    return;
  }
  MPI_Status st;
  const std::string msg = MT_EXPECT_ERROR(MPI_Wait(&r[0], &st), MPI_ERR_TRUNCATE);
  MT_CHECKF(contains(msg, "MPIX_Enqueue_recv") && contains(msg, "MPI_Wait"), "message: %s", msg.c_str());
  MT_CHECK(r[0] == MPI_REQUEST_NULL);
  const auto got = b.download();
  MT_SAME_BYTES(got.data(), guard.data(), 100, "truncated receive's buffer (untouched)");
  MT_OK(MPI_Wait(&r[1], &st));
  int count = -1;
  MPI_Get_count(&st, MPI_BYTE, &count);
  MT_CHECKF(count == 60, "count after truncation %d", count);
  MT_SAME_BYTES(got.data() + 100, want.data(), 60, "message after the truncated one");
}

// A truncated receive whose request the program freed (MPI_Request_free) right after enqueueing
// the wait: nobody holds the request, so the queue's next call raises MPI_ERR_TRUNCATE; freed before
// the list ran or after, alike. The queue works on.
void truncation_freed(StreamQueue &Q) {
  if (g_size < 2 || g_rank > 1) return;
  const int peer = 1 - g_rank;
  DevBuf a(100), b(100);
  a.upload(pattern(100, key(8)));
  for (bool after_sync : {false, true}) {
    g_context = after_sync ? "truncation, request freed after the list ran" : "truncation, request freed at once";
    MPI_Request r = MPI_REQUEST_NULL;
    if (g_rank == 0) MT_OK(MPIX_Enqueue_send(a.p, 80, MPI_BYTE, peer, 11, MPI_COMM_WORLD, Q.q, &r));
    else MT_OK(MPIX_Enqueue_recv(b.p, 40, MPI_BYTE, peer, 11, MPI_COMM_WORLD, Q.q, &r));
    MT_OK(MPIX_Enqueue_start(Q.q));
    MT_OK(MPIX_Enqueue_wait(Q.q));
    if (after_sync) MT_SYNC(Q.stream);
    MT_OK(MPI_Request_free(&r));
    MT_SYNC(Q.stream);
    if (g_rank == 1) MT_EXPECT_ERROR(MPIX_Enqueue_start(Q.q), MPI_ERR_TRUNCATE);
    MT_OK(MPIX_Enqueue_start(Q.q));  // raised once
  }
  ping_pong(Q, {64});
}

// Lists per call: a list per round of 8 messages of a channel (8r .. 8r + 7) that the start holds:
// 6 messages (0..5), one list; then 4 (6..9, across the first round's end), two; then 9 (10..18),
// two.
void lists_per_start(StreamQueue &Q) {
  if (g_size < 2 || g_rank > 1) return;
  const int peer = 1 - g_rank;
  DevBuf a(64), b(64 * 19);
  a.upload(pattern(64, key(9)));
  int first = 0;
  for (int n : {6, 4, 9}) {
    g_context = fmt("%d messages of one channel in one start", n);
    std::vector<MPI_Request> r(n);
    const unsigned long long before = MPIX_St_stream_ops_enqueued();
    for (int i = 0; i < n; ++i) {
      if (g_rank == 0) MT_OK(MPIX_Enqueue_send(a.p, 64, MPI_BYTE, peer, 12, MPI_COMM_WORLD, Q.q, &r[i]));
      else MT_OK(MPIX_Enqueue_recv(b.p + 64 * i, 64, MPI_BYTE, peer, 12, MPI_COMM_WORLD, Q.q, &r[i]));
    }
    MT_OK(MPIX_Enqueue_start(Q.q));
    const unsigned long long sends = MPIX_St_stream_ops_enqueued() - before;
    MT_OK(MPIX_Enqueue_wait(Q.q));
    const unsigned long long all = MPIX_St_stream_ops_enqueued() - before;
    const unsigned long long want = (first + n - 1) / 8 - first / 8 + 1;
    first += n;
    MT_CHECKF((g_rank == 0 ? sends : all) == want, "%llu lists, want %llu", g_rank == 0 ? sends : all, want);
    MT_OK(MPI_Waitall(n, r.data(), MPI_STATUSES_IGNORE));
  }
  MT_SYNC(Q.stream);
}

// The same through MPI_Waitall: MPI_ERR_IN_STATUS, each status's MPI_ERROR says how it ended.
void truncation_waitall(StreamQueue &Q) {
  if (g_size < 2 || g_rank > 1) return;
  g_context = "truncation, MPI_Waitall";
  const int peer = 1 - g_rank;
  DevBuf a(100), b(100);
  a.upload(pattern(100, key(6)));
  MPI_Request r[2];
  if (g_rank == 0) {
    MT_OK(MPIX_Enqueue_send(a.p, 50, MPI_BYTE, peer, 10, MPI_COMM_WORLD, Q.q, &r[0]));
    MT_OK(MPIX_Enqueue_send(a.p, 30, MPI_BYTE, peer, 10, MPI_COMM_WORLD, Q.q, &r[1]));
  } else {
    MT_OK(MPIX_Enqueue_recv(b.p, 40, MPI_BYTE, peer, 10, MPI_COMM_WORLD, Q.q, &r[0]));
    MT_OK(MPIX_Enqueue_recv(b.p + 50, 40, MPI_BYTE, peer, 10, MPI_COMM_WORLD, Q.q, &r[1]));
  }
  MT_OK(MPIX_Enqueue_start(Q.q));
  MT_OK(MPIX_Enqueue_wait(Q.q));
  MPI_Status st[2];
  if (g_rank == 0) {
    MT_OK(MPI_Waitall(2, r, st));
  } else {
    const std::string msg = MT_EXPECT_ERROR(MPI_Waitall(2, r, st), MPI_ERR_IN_STATUS);
    MT_CHECKF(contains(msg, "MPI_Waitall") && contains(msg, "MPIX_Enqueue_recv") && contains(msg, "50 bytes"), "%s",
              msg.c_str());
    MT_CHECKF(st[0].MPI_ERROR == MPI_ERR_TRUNCATE && st[1].MPI_ERROR == MPI_SUCCESS, "MPI_ERROR fields %d, %d",
              st[0].MPI_ERROR, st[1].MPI_ERROR);
    int count = -1;
    MPI_Get_count(&st[1], MPI_BYTE, &count);
    MT_CHECKF(count == 30, "count %d", count);
    MT_CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL);
  }
  MT_SYNC(Q.stream);
}

// Completion on the host: start only, then MPI_Test until done / MPI_Wait / MPI_Waitall enqueue the
// receive lists themselves.
void host_completion(StreamQueue &Q) {
  g_context = "host completion";
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  const size_t n = 512;
  DevBuf out(3 * n), in(3 * n);
  out.upload(pattern(3 * n, key(g_rank, 5)));
  MPI_Request r[6];
  for (int k = 0; k < 3; ++k) {
    MT_OK(MPIX_Enqueue_send(out.p + k * n, static_cast<int>(n), MPI_BYTE, right, 20 + k, MPI_COMM_WORLD, Q.q,
                            &r[2 * k]));
    MT_OK(MPIX_Enqueue_recv(in.p + k * n, static_cast<int>(n), MPI_BYTE, left, 20 + k, MPI_COMM_WORLD, Q.q,
                            &r[2 * k + 1]));
  }
  MT_OK(MPIX_Enqueue_start(Q.q));
  int flag = 0;
  MPI_Status st;
  for (long spins = 0; !flag; ++spins) {
    MT_OK(MPI_Test(&r[1], &flag, &st));
    if (spins > 100000000L) {
      MT_CHECKF(false, "MPI_Test never completed");
      break;
    }
  }
  int count = -1;
  MPI_Get_count(&st, MPI_BYTE, &count);
  MT_CHECKF(count == static_cast<int>(n) && st.MPI_TAG == 20, "MPI_Test status count %d tag %d", count, st.MPI_TAG);
  MT_OK(MPI_Wait(&r[3], &st));
  MT_OK(MPI_Waitall(6, r, MPI_STATUSES_IGNORE));
  const auto want = pattern(3 * n, key(left, 5));
  MT_SAME_BYTES(in.download().data(), want.data(), 3 * n, "data completed on the host");
  MT_SYNC(Q.stream);
}

// --slot-kib=N (run with MPIX_ST_P2P_SLOT_KIB=N): a message of N KiB travels whole in its
// mailbox, one byte more in chunks through it (tests/mpi/queue_large.cpp tests those further).
void slot_size(StreamQueue &Q, size_t kib) { ping_pong(Q, {kib * 1024, kib * 1024 + 1}); }

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "queue_basic");
  size_t slot_kib = 0;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--slot-kib=", 11) == 0) slot_kib = std::strtoul(argv[i] + 11, nullptr, 10);
  {
    StreamQueue Q;
    ping_pong(Q, {0, 1, 7, 8, 100, 255, 256, 4096, 16384});
    if (slot_kib) slot_size(Q, slot_kib);
    ring(Q, 1);
    ring(Q, 25);
    self_and_null(Q);
    truncation(Q);
    truncation_waitall(Q);
    truncation_freed(Q);
    lists_per_start(Q);
    host_completion(Q);
    const unsigned long long before = MPIX_St_stream_ops_enqueued();
    ring(Q, 10);
    const unsigned long long ops = MPIX_St_stream_ops_enqueued() - before;
    // Each iteration: one send list at MPIX_Enqueue_start, one receive list at MPIX_Enqueue_wait.
    MT_CHECKF(ops == 20, "ring of 10 iterations took %llu stream operations, want 20", ops);
  }
  return finish();
}
