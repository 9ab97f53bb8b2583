// Two-sided stream messages with derived datatypes, both spellings: vector, indexed, struct
// (resized, mixed element types) and single-block types with a displacement, sent to the right
// and received from the left with several messages in flight, each side's type derived or
// contiguous. What lands is compared byte for byte with what MPI_Pack/MPI_Unpack make of the
// sender's data on the host, gaps of the receive buffer included (they must keep their fill).
// A message shorter than the receive fills the type's first pieces, in type-map order, up to its
// length (MPI_Get_count says so): one block's prefix, whole blocks of several, and a block cut in
// the middle; the rest of the buffer is untouched. Longer is MPI_ERR_TRUNCATE with nothing written;
// an uncommitted type is refused at the call.
#include "test_common.h"

using namespace mt;

namespace {

struct Case {
  const char *name;
  MPI_Datatype type;
  int count;
};

// Bytes of the buffer (count, type) spans from its address (the cases' lower bounds are >= 0).
size_t span(const Case &c) {
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  MPI_Type_get_extent(c.type, &lb, &extent);
  MPI_Type_get_true_extent(c.type, &tlb, &textent);
  return c.count ? static_cast<size_t>(tlb + (c.count - 1) * extent + textent) : 0;
}

std::vector<uint8_t> pack(const std::vector<uint8_t> &buf, const Case &c) {
  int bytes = 0, at = 0;
  MPI_Pack_size(c.count, c.type, MPI_COMM_WORLD, &bytes);
  std::vector<uint8_t> out(static_cast<size_t>(bytes));
  MPI_Pack(buf.data(), c.count, c.type, out.data(), bytes, &at, MPI_COMM_WORLD);
  out.resize(static_cast<size_t>(at));
  return out;
}

std::vector<uint8_t> unpack(std::vector<uint8_t> buf, const std::vector<uint8_t> &packed, const Case &c) {
  int at = 0;
  MPI_Unpack(packed.data(), static_cast<int>(packed.size()), &at, buf.data(), c.count, c.type, MPI_COMM_WORLD);
  return buf;
}

constexpr size_t kMargin = 64;  // bytes after the span that nothing may write

// How a ring sends: HPE's spelling on a queue, or MPICH's on a stream communicator (comm set).
struct Way {
  void *stream;
  MPIX_Queue q;
  MPI_Comm comm;
};

// `iters` messages to the right, received from the left, before one synchronisation.
void ring(const Way &W, const Case &s, const Case &r, int iters) {
  const MPI_Comm comm = W.comm;
  const MPIX_Queue q = W.q;
  const bool mpich = comm != MPI_COMM_NULL;
  g_context = fmt("%s -> %s, %d in flight, %s", s.name, r.name, iters, mpich ? "MPICH spelling" : "HPE spelling");
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  const size_t sspan = span(s), rspan = span(r);
  std::vector<DevBuf> out, in;
  std::vector<MPI_Request> reqs;
  for (int i = 0; i < iters; ++i) {
    out.emplace_back(sspan + kMargin);
    in.emplace_back(rspan + kMargin);
    out.back().upload(pattern(sspan + kMargin, key(g_rank, i, 1)));
    in.back().upload(pattern(rspan + kMargin, key(g_rank, i, 2)));
    reqs.emplace_back();
    reqs.emplace_back();
    if (mpich) {
      MT_OK(MPIX_Irecv_enqueue(in.back().p, r.count, r.type, left, 3, comm, &reqs[reqs.size() - 2]));
      MT_OK(MPIX_Isend_enqueue(out.back().p, s.count, s.type, right, 3, comm, &reqs.back()));
    } else {
      MT_OK(MPIX_Enqueue_recv(in.back().p, r.count, r.type, left, 3, MPI_COMM_WORLD, q, &reqs[reqs.size() - 2]));
      MT_OK(MPIX_Enqueue_send(out.back().p, s.count, s.type, right, 3, MPI_COMM_WORLD, q, &reqs.back()));
      MT_OK(MPIX_Enqueue_start(q));
    }
  }
  std::vector<MPI_Status> st(reqs.size());
  if (mpich) MT_OK(MPIX_Waitall_enqueue(static_cast<int>(reqs.size()), reqs.data(), st.data()));
  else MT_OK(MPIX_Enqueue_wait(q));
  if (!mpich) MT_OK(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data()));
  MT_SYNC(W.stream);
  for (int i = 0; i < iters; ++i) {
    const std::vector<uint8_t> sent = pack(pattern(sspan + kMargin, key(left, i, 1)), s);
    const std::vector<uint8_t> want = unpack(pattern(rspan + kMargin, key(g_rank, i, 2)), sent, r);
    MT_SAME_BYTES(in[i].download().data(), want.data(), rspan + kMargin, fmt("message %d, gaps and margin", i));
    if (!mpich) {
      int got = -1;
      MPI_Get_count(&st[2 * i], r.type, &got);
      MT_CHECKF(got == r.count, "MPI_Get_count %d elements, want %d", got, r.count);
    }
  }
}

// A message of `send_count` ints into a receive of r (ints), on its own tag; returns what MPI_Wait
// said, and checks the buffer: `written` whether the message's bytes landed (at r's displacement).
void short_or_long(StreamQueue &Q, const Case &r, int send_count, int want_class, bool written) {
  g_context = fmt("%d ints into %s", send_count, r.name);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  const size_t rspan = span(r), sbytes = send_count * sizeof(int);
  DevBuf out(sbytes), in(rspan + kMargin);
  out.upload(pattern(sbytes, key(g_rank, 7)));
  const auto fill = pattern(rspan + kMargin, key(g_rank, 8));
  in.upload(fill);
  MPI_Request rr, sr;
  MT_OK(MPIX_Enqueue_recv(in.p, r.count, r.type, left, 9, MPI_COMM_WORLD, Q.q, &rr));
  MT_OK(MPIX_Enqueue_send(out.p, send_count, MPI_INT, right, 9, MPI_COMM_WORLD, Q.q, &sr));
  MT_OK(MPIX_Enqueue_start(Q.q));
  MT_OK(MPIX_Enqueue_wait(Q.q));
  MT_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
  MPI_Status st;
  const int rc = MPI_Wait(&rr, &st);
  if (want_class == MPI_SUCCESS) {
    MT_OK(rc);
    int got = -1;
    MPI_Get_count(&st, MPI_INT, &got);
    MT_CHECKF(got == send_count, "MPI_Get_count %d, want %d", got, send_count);
  } else {
    MT_CHECKF(error_class(rc) == want_class, "MPI_Wait returned class %s, want %s (%s)", class_name(error_class(rc)),
              class_name(want_class), error_string(rc).c_str());
  }
  MT_SYNC(Q.stream);
  // What MPI_Unpack makes of the type's packed bytes with the message in front: the pieces the
  // message reaches take its bytes, the others keep theirs.
  auto want = fill;
  if (written) {
    const auto sent = pattern(sbytes, key(left, 7));
    std::vector<uint8_t> packed = pack(fill, r);
    std::copy(sent.begin(), sent.end(), packed.begin());
    int at = 0;
    MPI_Unpack(packed.data(), static_cast<int>(packed.size()), &at, want.data(), r.count, r.type, MPI_COMM_WORLD);
  }
  MT_SAME_BYTES(in.download().data(), want.data(), want.size(), written ? "the prefix landed" : "nothing written");
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "queue_datatypes");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  // A face of a 3-D block: 16 blocks of 3 doubles, 5 apart; and the same doubles packed.
  MPI_Datatype face;
  MPI_Type_vector(16, 3, 5, MPI_DOUBLE, &face);
  MPI_Type_commit(&face);
  // Irregular blocks of ints, out of order in memory.
  MPI_Datatype irregular;
  const int lens[] = {1, 4, 2, 7, 3}, disps[] = {30, 2, 11, 40, 20};
  MPI_Type_indexed(5, lens, disps, MPI_INT, &irregular);
  MPI_Type_commit(&irregular);
  // A struct of mixed elements with a hole, resized to 32 bytes; four of them.
  MPI_Datatype rec, rec32;
  const int rl[] = {1, 1, 3};
  const MPI_Aint rd[] = {0, 8, 24};
  const MPI_Datatype rt[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Type_create_struct(3, rl, rd, rt, &rec);
  MPI_Type_create_resized(rec, 0, 32, &rec32);
  MPI_Type_commit(&rec32);
  // One block of 8 ints 24 bytes into the buffer: a single piece with a displacement.
  MPI_Datatype one_block;
  const int ol[] = {8};
  const MPI_Aint od[] = {24};
  MPI_Type_create_hindexed(1, ol, od, MPI_INT, &one_block);
  MPI_Type_commit(&one_block);

  const Case faces{"vector(16,3,5) of MPI_DOUBLE", face, 1}, doubles{"48 MPI_DOUBLE", MPI_DOUBLE, 48};
  const Case two_faces{"2 x vector(16,3,5)", face, 2}, doubles96{"96 MPI_DOUBLE", MPI_DOUBLE, 96};
  const Case blocks{"indexed(5 blocks) of MPI_INT", irregular, 1}, ints17{"17 MPI_INT", MPI_INT, 17};
  const Case recs{"4 x struct{int, double, 3 char} resized to 32", rec32, 4};
  const Case shifted{"hindexed(1 block of 8 MPI_INT at 24)", one_block, 1}, ints8{"8 MPI_INT", MPI_INT, 8};
  {
    StreamQueue Q;
    const Way hpe{Q.stream, Q.q, MPI_COMM_NULL};
    for (int iters : {1, 8}) {  // 8: a channel's mailboxes (more would wait for receives enqueued after them)
      ring(hpe, faces, faces, iters);
      ring(hpe, faces, doubles, iters);
      ring(hpe, doubles, faces, iters);
      ring(hpe, two_faces, doubles96, iters);
      ring(hpe, blocks, blocks, iters);
      ring(hpe, ints17, blocks, iters);
      ring(hpe, recs, recs, iters);
      ring(hpe, shifted, ints8, iters);
      ring(hpe, ints8, shifted, iters);
    }
    // Shorter into one block: the prefix, at the block's displacement.
    short_or_long(Q, shifted, 5, MPI_SUCCESS, true);
    // Shorter into several blocks (1, 4, 2, 7, 3 ints): the first two blocks whole; three blocks
    // and one int of the fourth; one int.
    short_or_long(Q, blocks, 5, MPI_SUCCESS, true);
    short_or_long(Q, blocks, 8, MPI_SUCCESS, true);
    short_or_long(Q, blocks, 1, MPI_SUCCESS, true);
    ring(hpe, blocks, blocks, 2);
    // Longer than a receive of several blocks: truncation, nothing written.
    short_or_long(Q, blocks, 18, MPI_ERR_TRUNCATE, false);

    g_context = "an uncommitted datatype";
    MPI_Datatype raw;
    MPI_Type_vector(2, 1, 2, MPI_INT, &raw);
    DevBuf b(64);
    MPI_Request r;
    const std::string msg = MT_EXPECT_ERROR(
        MPIX_Enqueue_send(b.p, 1, raw, (g_rank + 1) % g_size, 1, MPI_COMM_WORLD, Q.q, &r), MPI_ERR_TYPE);
    MT_CHECKF(contains(msg, "not committed"), "message: %s", msg.c_str());
    MPI_Type_free(&raw);
  }
  {
    void *stream = stream_create();
    MPIX_Stream ms = wrap_stream(stream);
    MPI_Comm comm;
    MT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &comm));
    const Way mpich{stream, MPIX_QUEUE_NULL, comm};
    for (int iters : {1, 8}) {
      ring(mpich, faces, doubles, iters);
      ring(mpich, recs, recs, iters);
      ring(mpich, ints17, blocks, iters);
    }
    MT_SYNC(stream);
    MPI_Comm_free(&comm);
    MT_OK(MPIX_Stream_free(&ms));
    stream_destroy(stream);
  }
  MPI_Type_free(&face);
  MPI_Type_free(&irregular);
  MPI_Type_free(&rec);
  MPI_Type_free(&rec32);
  MPI_Type_free(&one_block);
  return finish();
}
