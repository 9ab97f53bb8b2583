// Two-sided stream messages, misuse of every call: null and freed queues, a queue freed with work
// pending, requests reused or of the wrong kind, negative counts, bad datatypes, ranks and tags out
// of range, the refused wildcards, buffers, communicators without a stream. Each error has its
// class and a message naming the call; refused calls take no message number (an exchange after
// them still matches).
#include "test_common.h"

using namespace mt;

namespace {

// The call's error: class `cls`, a message that names `name`.
#define EXPECT_NAMED(call, cls, name)                                                            \
  do {                                                                                           \
    const std::string m_ = MT_EXPECT_ERROR(call, cls);                                           \
    MT_CHECKF(contains(m_, name), "%s: the message does not name %s: %s", #call, name, m_.c_str()); \
  } while (0)

void hpe_calls(void *s) {
  g_context = "MPIX_Queue calls";
  DevBuf a(256);
  MPIX_Queue q, dead;
  MPI_Request r = MPI_REQUEST_NULL;
  EXPECT_NAMED(MPIX_Create_queue(s, nullptr), MPI_ERR_ARG, "MPIX_Create_queue");
  if (!kCuda) {
    int bogus = 0;
    EXPECT_NAMED(MPIX_Create_queue(&bogus, &q), MPI_ERR_ARG, "MPIX_Create_queue");
  }
  MT_OK(MPIX_Create_queue(s, &dead));
  MT_OK(MPIX_Free_queue(dead));
  MT_OK(MPIX_Create_queue(s, &q));
  for (MPIX_Queue bad : {MPIX_QUEUE_NULL, dead}) {
    EXPECT_NAMED(MPIX_Free_queue(bad), MPI_ERR_ARG, "MPIX_Free_queue");
    EXPECT_NAMED(MPIX_Enqueue_start(bad), MPI_ERR_ARG, "MPIX_Enqueue_start");
    EXPECT_NAMED(MPIX_Enqueue_wait(bad), MPI_ERR_ARG, "MPIX_Enqueue_wait");
    EXPECT_NAMED(MPIX_Enqueue_send(a.p, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, bad, &r), MPI_ERR_ARG, "MPIX_Enqueue_send");
    EXPECT_NAMED(MPIX_Enqueue_recv(a.p, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, bad, &r), MPI_ERR_ARG, "MPIX_Enqueue_recv");
  }
  MPI_Datatype vec;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);  // never committed
  struct Case {
    const char *what;
    int count;
    MPI_Datatype type;
    int peer, tag;
    MPI_Comm comm;
    void *buf;
    int cls;
    bool recv_only;
  };
  const Case cases[] = {
      {"count < 0", -1, MPI_INT, 0, 0, MPI_COMM_WORLD, a.p, MPI_ERR_COUNT, false},
      {"MPI_DATATYPE_NULL", 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, a.p, MPI_ERR_TYPE, false},
      {"uncommitted type", 1, vec, 0, 0, MPI_COMM_WORLD, a.p, MPI_ERR_TYPE, false},
      {"rank = size", 1, MPI_INT, g_size, 0, MPI_COMM_WORLD, a.p, MPI_ERR_RANK, false},
      {"rank = -5", 1, MPI_INT, -5, 0, MPI_COMM_WORLD, a.p, MPI_ERR_RANK, false},
      {"tag < 0", 1, MPI_INT, 0, -3, MPI_COMM_WORLD, a.p, MPI_ERR_TAG, false},
      {"MPI_COMM_NULL", 1, MPI_INT, 0, 0, MPI_COMM_NULL, a.p, MPI_ERR_COMM, false},
      {"NULL buffer", 4, MPI_INT, 0, 0, MPI_COMM_WORLD, nullptr, MPI_ERR_BUFFER, false},
      {"MPI_ANY_SOURCE", 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, a.p, MPI_ERR_UNSUPPORTED_OPERATION, true},
      {"MPI_ANY_TAG", 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, a.p, MPI_ERR_UNSUPPORTED_OPERATION, true},
  };
  for (const Case &c : cases) {
    g_context = std::string("MPIX_Queue calls: ") + c.what;
    if (!c.recv_only)
      EXPECT_NAMED(MPIX_Enqueue_send(c.buf, c.count, c.type, c.peer, c.tag, c.comm, q, &r), c.cls,
                   "MPIX_Enqueue_send");
    const std::string m = MT_EXPECT_ERROR(MPIX_Enqueue_recv(c.buf, c.count, c.type, c.peer, c.tag, c.comm, q, &r), c.cls);
    MT_CHECKF(contains(m, "MPIX_Enqueue_recv"), "%s: %s", c.what, m.c_str());
    if (c.peer == MPI_ANY_SOURCE) MT_CHECKF(contains(m, "MPI_ANY_SOURCE"), "%s", m.c_str());
    if (c.tag == MPI_ANY_TAG) MT_CHECKF(contains(m, "MPI_ANY_TAG"), "%s", m.c_str());
  }
  g_context = "MPIX_Queue calls: NULL request";
  EXPECT_NAMED(MPIX_Enqueue_send(a.p, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, q, nullptr), MPI_ERR_ARG, "MPIX_Enqueue_send");
  EXPECT_NAMED(MPIX_Enqueue_recv(a.p, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, q, nullptr), MPI_ERR_ARG, "MPIX_Enqueue_recv");
  MPI_Type_free(&vec);

  // Work pending: a send recorded and not started; then a receive started and not waited for.
  g_context = "MPIX_Queue calls: freed with work pending";
  MPI_Request rs, rr;
  MT_OK(MPIX_Enqueue_send(a.p, 4, MPI_INT, g_rank, 1, MPI_COMM_WORLD, q, &rs));
  EXPECT_NAMED(MPI_Wait(&rs, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPIX_Enqueue_start");  // not started
  EXPECT_NAMED(MPIX_Free_queue(q), MPI_ERR_PENDING, "MPIX_Free_queue");
  MT_OK(MPIX_Enqueue_recv(a.p + 64, 4, MPI_INT, g_rank, 1, MPI_COMM_WORLD, q, &rr));
  MT_OK(MPIX_Enqueue_start(q));
  const std::string m = MT_EXPECT_ERROR(MPIX_Free_queue(q), MPI_ERR_PENDING);
  MT_CHECKF(contains(m, "MPIX_Free_queue") && contains(m, "MPIX_Enqueue_wait"), "%s", m.c_str());
  MT_OK(MPIX_Enqueue_wait(q));
  MT_OK(MPI_Wait(&rs, MPI_STATUS_IGNORE));
  // Request reused: a copy of a completed handle; MPIX_Wait_enqueue on a queue's request.
  MPI_Request copy = rr;
  EXPECT_NAMED(MPIX_Wait_enqueue(&copy, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPIX_Wait_enqueue");
  MT_OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
  copy = rr;
  MT_CHECK(rr == MPI_REQUEST_NULL);
  MT_OK(MPIX_Free_queue(q));
  MT_SYNC(s);
}

void mpich_calls(void *s) {
  g_context = "MPICH spelling";
  DevBuf a(256);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", kCuda ? "cudaStream_t" : "MPIX_Host_stream");
  MT_OK(MPIX_Info_set_hex(info, "value", &s, sizeof s));
  MPIX_Stream ms, empty;
  MT_OK(MPIX_Stream_create(info, &ms));
  MT_OK(MPIX_Stream_create(MPI_INFO_NULL, &empty));
  MPI_Info_free(&info);
  MPI_Comm comm, no_stream;
  MT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &comm));
  MT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, empty, &no_stream));
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(no_stream, MPI_ERRORS_RETURN);
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Status st;
  for (MPI_Comm bad : {MPI_COMM_WORLD, no_stream, MPI_COMM_NULL}) {
    EXPECT_NAMED(MPIX_Send_enqueue(a.p, 1, MPI_INT, 0, 0, bad), MPI_ERR_COMM, "MPIX_Send_enqueue");
    EXPECT_NAMED(MPIX_Recv_enqueue(a.p, 1, MPI_INT, 0, 0, bad, &st), MPI_ERR_COMM, "MPIX_Recv_enqueue");
    EXPECT_NAMED(MPIX_Isend_enqueue(a.p, 1, MPI_INT, 0, 0, bad, &r), MPI_ERR_COMM, "MPIX_Isend_enqueue");
    EXPECT_NAMED(MPIX_Irecv_enqueue(a.p, 1, MPI_INT, 0, 0, bad, &r), MPI_ERR_COMM, "MPIX_Irecv_enqueue");
  }
  EXPECT_NAMED(MPIX_Isend_enqueue(a.p, 1, MPI_INT, 0, 0, comm, nullptr), MPI_ERR_ARG, "MPIX_Isend_enqueue");
  EXPECT_NAMED(MPIX_Irecv_enqueue(a.p, 1, MPI_INT, 0, 0, comm, nullptr), MPI_ERR_ARG, "MPIX_Irecv_enqueue");
  EXPECT_NAMED(MPIX_Send_enqueue(a.p, -2, MPI_INT, 0, 0, comm), MPI_ERR_COUNT, "MPIX_Send_enqueue");
  EXPECT_NAMED(MPIX_Recv_enqueue(a.p, 1, MPI_DATATYPE_NULL, 0, 0, comm, &st), MPI_ERR_TYPE, "MPIX_Recv_enqueue");
  EXPECT_NAMED(MPIX_Isend_enqueue(a.p, 1, MPI_INT, g_size + 1, 0, comm, &r), MPI_ERR_RANK, "MPIX_Isend_enqueue");
  EXPECT_NAMED(MPIX_Recv_enqueue(a.p, 1, MPI_INT, MPI_ANY_SOURCE, 0, comm, &st), MPI_ERR_UNSUPPORTED_OPERATION,
               "MPIX_Recv_enqueue");
  EXPECT_NAMED(MPIX_Irecv_enqueue(a.p, 1, MPI_INT, 0, MPI_ANY_TAG, comm, &r), MPI_ERR_UNSUPPORTED_OPERATION,
               "MPIX_Irecv_enqueue");
  EXPECT_NAMED(MPIX_Wait_enqueue(nullptr, &st), MPI_ERR_ARG, "MPIX_Wait_enqueue");
  EXPECT_NAMED(MPIX_Waitall_enqueue(-1, &r, MPI_STATUSES_IGNORE), MPI_ERR_COUNT, "MPIX_Waitall_enqueue");
  EXPECT_NAMED(MPIX_Waitall_enqueue(2, nullptr, MPI_STATUSES_IGNORE), MPI_ERR_ARG, "MPIX_Waitall_enqueue");
  // A request of the MPI itself; a request reused after MPIX_Wait_enqueue freed it.
  int sink = 0;
  MPI_Request plain;
  MPI_Irecv(&sink, 1, MPI_INT, 0, 99, MPI_COMM_SELF, &plain);
  EXPECT_NAMED(MPIX_Wait_enqueue(&plain, &st), MPI_ERR_REQUEST, "MPIX_Wait_enqueue");
  MPI_Request reqs[2] = {MPI_REQUEST_NULL, plain};
  const std::string m = MT_EXPECT_ERROR(MPIX_Waitall_enqueue(2, reqs, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
  MT_CHECKF(contains(m, "MPIX_Waitall_enqueue") && contains(m, "request 1"), "%s", m.c_str());
  MPI_Cancel(&plain);
  MPI_Wait(&plain, MPI_STATUS_IGNORE);
  MPI_Request rs, rr;
  MT_OK(MPIX_Irecv_enqueue(a.p, 4, MPI_INT, g_rank, 2, comm, &rr));
  MT_OK(MPIX_Isend_enqueue(a.p + 64, 4, MPI_INT, g_rank, 2, comm, &rs));
  MPI_Request copy = rs;
  MT_OK(MPIX_Wait_enqueue(&rs, MPI_STATUS_IGNORE));
  EXPECT_NAMED(MPIX_Wait_enqueue(&copy, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPIX_Wait_enqueue");
  MT_OK(MPIX_Wait_enqueue(&rr, MPI_STATUS_IGNORE));
  MT_SYNC(s);
  MPI_Comm_free(&comm);
  MPI_Comm_free(&no_stream);
  MT_OK(MPIX_Stream_free(&ms));
  MT_OK(MPIX_Stream_free(&empty));
}

// After all the refused calls, a ring still matches (they took no message numbers).
void ring_after(void *s) {
  g_context = "ring after the refused calls";
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  DevBuf out(400), in(400);
  out.upload(pattern(400, key(g_rank, 31)));
  MPIX_Queue q;
  MT_OK(MPIX_Create_queue(s, &q));
  MPI_Request r[2];
  MT_OK(MPIX_Enqueue_recv(in.p, 100, MPI_INT, left, 0, MPI_COMM_WORLD, q, &r[0]));
  MT_OK(MPIX_Enqueue_send(out.p, 100, MPI_INT, right, 0, MPI_COMM_WORLD, q, &r[1]));
  MT_OK(MPIX_Enqueue_start(q));
  MT_OK(MPIX_Enqueue_wait(q));
  MT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  MT_SYNC(s);
  const auto want = pattern(400, key(left, 31));
  MT_SAME_BYTES(in.download().data(), want.data(), 400, "ring");
  MT_OK(MPIX_Free_queue(q));
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "queue_misuse");
  void *s = stream_create();
  hpe_calls(s);
  mpich_calls(s);
  ring_after(s);
  stream_destroy(s);
  return finish();
}
