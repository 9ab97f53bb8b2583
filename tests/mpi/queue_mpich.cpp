// Two-sided stream messages, MPICH's spelling (a stream communicator of MPIX_Stream_comm_create):
// a halo exchange with MPIX_Isend_enqueue / MPIX_Irecv_enqueue / MPIX_Waitall_enqueue, many
// iterations in flight, counting stream operations (one per send, one receive list per wait);
// blocking MPIX_Send_enqueue / MPIX_Recv_enqueue with the status the stream fills (host backend);
// MPIX_Wait_enqueue freeing requests; MPI_Wait on the host for a receive no stream wait enqueued;
// a message longer than the buffer, completed by a stream wait, reported by the next call; a host
// wait that enqueues only its own receive.
#include "test_common.h"

using namespace mt;

namespace {

struct StreamComm {
  void *stream = nullptr;
  MPIX_Stream mstream = MPIX_STREAM_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  StreamComm() {
    stream = stream_create();
    mstream = wrap_stream(stream);
    MT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, mstream, &comm));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  ~StreamComm() {
    MT_SYNC(stream);
    MPI_Comm_free(&comm);
    MT_OK(MPIX_Stream_free(&mstream));
    stream_destroy(stream);
  }
};

void halo(StreamComm &S, int iters) {
  g_context = fmt("halo, %d iterations", iters);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  const int n = 777;  // doubles
  const size_t bytes = n * sizeof(double);
  std::vector<DevBuf> to_l, to_r, from_l, from_r;
  const unsigned long long before = MPIX_St_stream_ops_enqueued();
  for (int i = 0; i < iters; ++i) {
    to_l.emplace_back(bytes), to_r.emplace_back(bytes), from_l.emplace_back(bytes), from_r.emplace_back(bytes);
    to_l.back().upload(pattern(bytes, key(i, g_rank, 0, 7)));
    to_r.back().upload(pattern(bytes, key(i, g_rank, 1, 7)));
  }
  const unsigned long long uploads = MPIX_St_stream_ops_enqueued() - before;
  // The stream writes each status's count when it runs: the statuses outlive the loop.
  std::vector<MPI_Status> statuses(4 * static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    MPI_Request r[4];
    MT_OK(MPIX_Irecv_enqueue(from_l[i].p, n, MPI_DOUBLE, left, 1, S.comm, &r[0]));
    MT_OK(MPIX_Irecv_enqueue(from_r[i].p, n, MPI_DOUBLE, right, 0, S.comm, &r[1]));
    MT_OK(MPIX_Isend_enqueue(to_l[i].p, n, MPI_DOUBLE, left, 0, S.comm, &r[2]));
    MT_OK(MPIX_Isend_enqueue(to_r[i].p, n, MPI_DOUBLE, right, 1, S.comm, &r[3]));
    MPI_Status *st = &statuses[4 * static_cast<size_t>(i)];
    MT_OK(MPIX_Waitall_enqueue(4, r, st));
    for (int k = 0; k < 4; ++k) MT_CHECKF(r[k] == MPI_REQUEST_NULL, "request %d not freed", k);
    MT_CHECKF(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 1, "status 0: source %d tag %d", st[0].MPI_SOURCE,
              st[0].MPI_TAG);
  }
  const unsigned long long ops = MPIX_St_stream_ops_enqueued() - before - uploads;
  MT_SYNC(S.stream);
  // Two send lists and one receive list per iteration; on GPUs a host call after the receive list
  // copies its statuses' counts.
  const unsigned long long want_ops = (kCuda ? 4ull : 3ull) * iters;
  MT_CHECKF(ops == want_ops, "%d iterations took %llu stream operations, want %llu", iters, ops, want_ops);
  for (int i = 0; i < iters; ++i) {
    const auto wl = pattern(bytes, key(i, left, 1, 7)), wr = pattern(bytes, key(i, right, 0, 7));
    MT_SAME_BYTES(from_l[i].download().data(), wl.data(), bytes, fmt("iteration %d from the left", i));
    MT_SAME_BYTES(from_r[i].download().data(), wr.data(), bytes, fmt("iteration %d from the right", i));
    for (int k = 0; k < 2; ++k) {  // the receives' statuses, written when the stream ran
      int count = -1;
      MPI_Get_count(&statuses[4 * static_cast<size_t>(i) + k], MPI_DOUBLE, &count);
      MT_CHECKF(count == n, "iteration %d status %d count %d, want %d", i, k, count, n);
    }
  }
}

// Blocking calls around a ring: every rank sends first (a send list never waits for the receiver
// while its mailboxes are free), then receives; statuses filled by the stream (host backend).
void blocking(StreamComm &S) {
  g_context = "blocking send and receive";
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  DevBuf out(4000), in(4000);
  out.upload(pattern(4000, key(g_rank, 8)));
  in.upload(std::vector<uint8_t>(4000, 0xCD));
  // Messages of 1000, 999 and 1001 bytes into buffers of 1000: the last one does not fit.
  const int len[3] = {1000, 999, 1001};
  MPI_Status st[3];
  for (int k = 0; k < 3; ++k) MT_OK(MPIX_Send_enqueue(out.p + 1000 * k, len[k], MPI_BYTE, right, 3, S.comm));
  for (int k = 0; k < 3; ++k) MT_OK(MPIX_Recv_enqueue(in.p + 1000 * k, 1000, MPI_BYTE, left, 3, S.comm, &st[k]));
  MT_SYNC(S.stream);
  const auto want = pattern(4000, key(left, 8));
  auto got = in.download();
  MT_SAME_BYTES(got.data(), want.data(), 1999, "blocking receives 0 and 1");
  MT_CHECKF(got[1999] == 0xCD, "byte after the short message written: 0x%02x", got[1999]);
  const std::vector<uint8_t> untouched(1000, 0xCD);
  MT_SAME_BYTES(got.data() + 2000, untouched.data(), 1000, "the truncated receive's buffer (untouched)");
  for (int k = 0; k < 3; ++k) {
    MT_CHECKF(st[k].MPI_SOURCE == left && st[k].MPI_TAG == 3, "status %d: source %d tag %d", k, st[k].MPI_SOURCE,
              st[k].MPI_TAG);
    int count = -1;
    MPI_Get_count(&st[k], MPI_BYTE, &count);
    MT_CHECKF(count == len[k], "status %d count %d, want %d", k, count, len[k]);
  }
  // The next call on the stream reports the truncated receive, once.
  DevBuf z(8);
  const std::string msg =
      MT_EXPECT_ERROR(MPIX_Send_enqueue(z.p, 0, MPI_BYTE, MPI_PROC_NULL, 0, S.comm), MPI_ERR_TRUNCATE);
  MT_CHECKF(contains(msg, "MPIX_Send_enqueue") && contains(msg, "MPIX_Recv_enqueue") && contains(msg, "1001 bytes"),
            "message: %s", msg.c_str());
  MT_OK(MPIX_Send_enqueue(z.p, 0, MPI_BYTE, MPI_PROC_NULL, 0, S.comm));
  // Again, and MPIX_St_check(MPI_WIN_NULL) reports it first, once; then the stream's calls pass.
  MT_OK(MPIX_Send_enqueue(out.p, 1001, MPI_BYTE, right, 3, S.comm));
  MT_OK(MPIX_Recv_enqueue(in.p, 1000, MPI_BYTE, left, 3, S.comm, MPI_STATUS_IGNORE));
  MT_SYNC(S.stream);
  const std::string checked = MT_EXPECT_ERROR(MPIX_St_check(MPI_WIN_NULL), MPI_ERR_TRUNCATE);
  MT_CHECKF(contains(checked, "1001 bytes"), "MPIX_St_check's message: %s", checked.c_str());
  MT_OK(MPIX_St_check(MPI_WIN_NULL));
  MT_OK(MPIX_Send_enqueue(z.p, 0, MPI_BYTE, MPI_PROC_NULL, 0, S.comm));
}

// MPIX_Wait_enqueue on each request; then a receive completed on the host by MPI_Wait alone.
void waits(StreamComm &S) {
  g_context = "MPIX_Wait_enqueue and MPI_Wait";
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  DevBuf out(64 * 4), in(64 * 4);
  out.upload(pattern(256, key(g_rank, 9)));
  MPI_Request rs, rr;
  MPI_Status st;
  MT_OK(MPIX_Irecv_enqueue(in.p, 64, MPI_INT, left, 4, S.comm, &rr));
  MT_OK(MPIX_Isend_enqueue(out.p, 64, MPI_INT, right, 4, S.comm, &rs));
  MT_OK(MPIX_Wait_enqueue(&rs, MPI_STATUS_IGNORE));
  MT_OK(MPIX_Wait_enqueue(&rr, &st));
  MT_CHECK(rs == MPI_REQUEST_NULL && rr == MPI_REQUEST_NULL);
  MT_OK(MPIX_Wait_enqueue(&rr, &st));  // MPI_REQUEST_NULL: an empty status
  MT_CHECKF(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "empty status: %d %d", st.MPI_SOURCE,
            st.MPI_TAG);
  MT_SYNC(S.stream);
  auto want = pattern(256, key(left, 9));
  MT_SAME_BYTES(in.download().data(), want.data(), 256, "MPIX_Wait_enqueue");

  MT_OK(MPIX_Irecv_enqueue(in.p, 64, MPI_INT, left, 5, S.comm, &rr));
  MT_OK(MPIX_Isend_enqueue(out.p + 4, 60, MPI_INT, right, 5, S.comm, &rs));
  MT_OK(MPI_Wait(&rr, &st));  // enqueues the receive list itself
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  MT_CHECKF(count == 60 && st.MPI_SOURCE == left && st.MPI_TAG == 5, "MPI_Wait status: count %d source %d tag %d",
            count, st.MPI_SOURCE, st.MPI_TAG);
  MT_OK(MPI_Wait(&rs, MPI_STATUS_IGNORE));
  want = pattern(256, key(left, 9));
  MT_SAME_BYTES(in.download(0, 240).data(), want.data() + 4, 240, "MPI_Wait on the host");
  // MPI_Testall / MPI_Waitany / MPI_Testany / MPI_Waitsome mixing requests.
  MPI_Request r[3];
  MT_OK(MPIX_Irecv_enqueue(in.p, 10, MPI_INT, left, 6, S.comm, &r[0]));
  MT_OK(MPIX_Isend_enqueue(out.p, 10, MPI_INT, right, 6, S.comm, &r[1]));
  char sink = 0;
  MT_OK(MPI_Irecv(&sink, 0, MPI_BYTE, 0, 77, MPI_COMM_SELF, &r[2]));  // an MPI request among them
  MT_OK(MPI_Send(&sink, 0, MPI_BYTE, 0, 77, MPI_COMM_SELF));
  int done = 0, index = -1;
  MT_OK(MPI_Waitany(3, r, &index, MPI_STATUS_IGNORE));
  MT_CHECK(index >= 0 && index < 3);
  int outcount = 0, indices[3];
  MT_OK(MPI_Waitsome(3, r, &outcount, indices, MPI_STATUSES_IGNORE));
  for (int spins = 0; !done && spins < 100000000; ++spins) MT_OK(MPI_Testall(3, r, &done, MPI_STATUSES_IGNORE));
  MT_CHECK(done);
  MT_SYNC(S.stream);
}

// A host wait enqueues only its own receive: rank 0 waits on the host for message x while message
// y, received on the same stream, comes only after rank 0's next send (which follows the wait).
void host_wait_takes_only_its_receive(StreamComm &S) {
  g_context = "host wait takes only its receive";
  DevBuf x(64), y(64), z(64);  // outlive the stream's use: synchronised below
  if (g_rank <= 1 && g_size >= 2) {
    const int peer = 1 - g_rank;
    x.upload(pattern(64, key(g_rank, 40)));
    y.upload(pattern(64, key(g_rank, 41)));
    MPI_Request r[2];
    if (g_rank == 0) {
      MT_OK(MPIX_Irecv_enqueue(x.p, 64, MPI_BYTE, peer, 20, S.comm, &r[0]));
      MT_OK(MPIX_Irecv_enqueue(y.p, 64, MPI_BYTE, peer, 21, S.comm, &r[1]));
      MT_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
      MT_OK(MPIX_Send_enqueue(z.p, 64, MPI_BYTE, peer, 22, S.comm));
      MT_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
      const auto wx = pattern(64, key(peer, 40)), wy = pattern(64, key(peer, 41));
      MT_SAME_BYTES(x.download().data(), wx.data(), 64, "x");
      MT_SAME_BYTES(y.download().data(), wy.data(), 64, "y");
    } else {
      MT_OK(MPIX_Isend_enqueue(x.p, 64, MPI_BYTE, peer, 20, S.comm, &r[0]));
      MT_OK(MPIX_Recv_enqueue(z.p, 64, MPI_BYTE, peer, 22, S.comm, MPI_STATUS_IGNORE));
      MT_OK(MPIX_Isend_enqueue(y.p, 64, MPI_BYTE, peer, 21, S.comm, &r[1]));
      MT_OK(MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE));
    }
  }
  MT_SYNC(S.stream);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "queue_mpich");
  {
    StreamComm S;
    halo(S, 1);
    halo(S, 40);
    blocking(S);
    waits(S);
    host_wait_takes_only_its_receive(S);
  }
  return finish();
}
