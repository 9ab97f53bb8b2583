// Two-sided messages' C entry points (src/p2p): HPE's MPIX_Queue calls and MPICH's *_enqueue
// sends and receives. Argument checks and errors here (naming the call); the engine is src/p2p.
#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/datatype_flatten.h"
#include "errors.h"
#include "host_streams.h"
#include "mpich_streams.h"
#include "mpix/mpix_st.h"
#include "p2p/engine.h"
#include "window_lookup.h"

using mpix::core::fail;
using mpix::core::ok;
using mpix::core::Result;
namespace p2p = mpix::p2p;

// A handle is a shell kept for the process's life (a few bytes), so that no later queue is given
// the address of a freed one: a freed handle stays refused.
struct mpix_st_queue {
  std::shared_ptr<p2p::Queue> q;  // null once freed
};

namespace {

std::set<MPIX_Queue> &g_queues = *new std::set<MPIX_Queue>;    // live, so stale handles are refused
std::vector<MPIX_Queue> &g_freed = *new std::vector<MPIX_Queue>;  // freed shells, never reused

Result usable_queue(MPIX_Queue queue) {
  if (queue == MPIX_QUEUE_NULL) return fail(MPI_ERR_ARG, "the queue is MPIX_QUEUE_NULL");
  if (!g_queues.count(queue))
    return fail(MPI_ERR_ARG, "not a queue of MPIX_Create_queue (freed already, or never created)");
  return ok();
}

// Runs `body` under the engine's lock, after the shared checks, and raises its error on `comm`
// (MPI_COMM_SELF when there is none, or the error is MPI_ERR_COMM).
template <typename Body>
int run(const char *name, MPI_Comm comm, Body &&body) {
  Result r = mpix::api::mpi_state(name);
  if (!r) r = mpix::api::backend_error();
  if (!r) {
    std::lock_guard<std::recursive_mutex> guard(p2p::lock());
    p2p::reap_all();
    r = body();
  }
  if (!r) return MPI_SUCCESS;
  r.message = std::string(name) + ": " + r.message;
  if (comm == MPI_COMM_NULL || r.mpi_class == MPI_ERR_COMM) return mpix::api::raise_no_object(r);
  return mpix::api::raise_comm(comm, r);
}

// An error a stream wait on the queue left (raised by the next call on it).
Result queue_error(p2p::Queue &q) {
  Result r = p2p::take_queue_error(q);
  if (r) r.message = "an earlier operation completed by a stream wait failed: " + r.message;
  return r;
}

Result check_comm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return fail(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return fail(MPI_ERR_COMM, "invalid communicator");
  if (inter) return fail(MPI_ERR_COMM, "two-sided stream messages take intra-communicators only");
  return ok();
}

// *size: the bytes of one element. Derived datatypes travel packed (engine.cpp, pieces_of).
Result check_type(MPI_Datatype t, uint64_t *size) {
  mpix::core::TypeFacts f;
  if (Result r = mpix::core::type_facts(t, &f)) return fail(r.mpi_class, "the datatype " + r.message);
  *size = f.size;
  return ok();
}

int tag_ub() {
  void *v = nullptr;
  int flag = 0;
  PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
  return flag ? *static_cast<int *>(v) : 32767;
}

// The checks of a send or receive, then its message numbers (the matching order): fills `op`.
Result make_op(bool send, const char *call, const void *buf, int count, MPI_Datatype type, int peer, int tag,
               MPI_Comm comm, void *stream, std::shared_ptr<p2p::Op> *out) {
  if (Result r = check_comm(comm)) return r;
  if (count < 0) return fail(MPI_ERR_COUNT, "negative count " + std::to_string(count));
  uint64_t size = 0;
  if (Result r = check_type(type, &size)) return r;
  int n = 0;
  PMPI_Comm_size(comm, &n);
  if (!send && peer == MPI_ANY_SOURCE)
    return fail(MPI_ERR_UNSUPPORTED_OPERATION,
                "MPI_ANY_SOURCE is not supported: name the source rank (matching is decided when the call is "
                "made)");
  if (peer != MPI_PROC_NULL && (peer < 0 || peer >= n))
    return fail(MPI_ERR_RANK, std::string(send ? "destination" : "source") + " rank " + std::to_string(peer) +
                                  " is not a rank of the communicator (size " + std::to_string(n) + ")");
  if (!send && tag == MPI_ANY_TAG)
    return fail(MPI_ERR_UNSUPPORTED_OPERATION,
                "MPI_ANY_TAG is not supported: name the tag (matching is decided when the call is made)");
  if (tag < 0 || tag > tag_ub())
    return fail(MPI_ERR_TAG, "tag " + std::to_string(tag) + " is outside 0.." + std::to_string(tag_ub()));
  if (count > 0 && size > UINT64_MAX / static_cast<uint64_t>(count))
    return fail(MPI_ERR_COUNT, std::to_string(count) + " elements of " + std::to_string(size) + " bytes overflow");
  const uint64_t bytes = size * static_cast<uint64_t>(count);
  if (bytes > 0 && peer != MPI_PROC_NULL) {
    if (!buf) return fail(MPI_ERR_BUFFER, "the buffer is NULL with " + std::to_string(bytes) + " bytes");
    if (!mpix::gpu::backend().manages_memory(buf))
      return fail(MPI_ERR_BUFFER, std::string("the buffer is not memory of the ") + mpix::gpu::backend().name() +
                                      " backend (two-sided stream messages take device memory)");
  }
  bool capturing = false;
  mpix::gpu::backend().capture_status(stream, &capturing);
  auto op = std::make_shared<p2p::Op>();
  op->send = send;
  op->call = call;
  op->comm = comm;
  op->peer = peer;
  op->tag = tag;
  op->buf = const_cast<void *>(buf);
  op->bytes = bytes;
  op->count = count;
  op->type = type;
  if (Result r = p2p::match(*op, capturing)) return r;
  op->captured = capturing;
  *out = op;
  return ok();
}

void empty_status(MPI_Status *status) {
  if (status == MPI_STATUS_IGNORE) return;
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
}

// MPICH's stream waits: the status a receive completed on the stream gets (its count written by the
// stream where the backend's streams reach host memory: the host backend; 0 elsewhere).
void stream_status(p2p::Op &op, MPI_Status *status) {
  if (status == MPI_STATUS_IGNORE) return;
  empty_status(status);
  if (op.send) return;
  status->MPI_SOURCE = op.ctx ? op.peer : MPI_PROC_NULL;
  status->MPI_TAG = op.ctx ? op.tag : MPI_ANY_TAG;
  if (op.ctx) op.user_status = status;
}

Result request_arg(MPI_Request *request) {
  if (!request) return fail(MPI_ERR_ARG, "request is NULL");
  return ok();
}

}  // namespace

extern "C" {

// ---- HPE's MPIX_Queue ------------------------------------------------------------------------------

int MPIX_Create_queue(void *stream, MPIX_Queue *queue) {
  return run("MPIX_Create_queue", MPI_COMM_NULL, [&]() -> Result {
    if (!queue) return fail(MPI_ERR_ARG, "queue is NULL");
    if (Result r = mpix::api::check_stream(stream)) return r;
    std::shared_ptr<p2p::Queue> q;
    if (Result r = p2p::make_queue(stream, true, &q)) return r;
    auto *h = new mpix_st_queue{q};
    g_queues.insert(h);
    *queue = h;
    return ok();
  });
}

int MPIX_Free_queue(MPIX_Queue queue) {
  return run("MPIX_Free_queue", MPI_COMM_NULL, [&]() -> Result {
    if (Result r = usable_queue(queue)) return r;
    if (Result r = p2p::free_queue(queue->q)) return r;
    g_queues.erase(queue);
    queue->q.reset();
    g_freed.push_back(queue);
    return ok();
  });
}

int MPIX_Enqueue_send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPIX_Queue queue, MPI_Request *request) {
  return run("MPIX_Enqueue_send", comm, [&]() -> Result {
    if (Result r = usable_queue(queue)) return r;
    if (Result r = request_arg(request)) return r;
    if (Result r = queue_error(*queue->q)) return r;
    std::shared_ptr<p2p::Op> op;
    if (Result r = make_op(true, "MPIX_Enqueue_send", buf, count, datatype, dest, tag, comm, queue->q->stream, &op))
      return r;
    if (Result r = p2p::add(*queue->q, op, false)) return r;
    return p2p::make_request(op, request);
  });
}

int MPIX_Enqueue_recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                      MPIX_Queue queue, MPI_Request *request) {
  return run("MPIX_Enqueue_recv", comm, [&]() -> Result {
    if (Result r = usable_queue(queue)) return r;
    if (Result r = request_arg(request)) return r;
    if (Result r = queue_error(*queue->q)) return r;
    std::shared_ptr<p2p::Op> op;
    if (Result r =
            make_op(false, "MPIX_Enqueue_recv", buf, count, datatype, source, tag, comm, queue->q->stream, &op))
      return r;
    if (Result r = p2p::add(*queue->q, op, false)) return r;
    return p2p::make_request(op, request);
  });
}

int MPIX_Enqueue_start(MPIX_Queue queue) {
  return run("MPIX_Enqueue_start", MPI_COMM_NULL, [&]() -> Result {
    if (Result r = usable_queue(queue)) return r;
    if (Result r = queue_error(*queue->q)) return r;
    return p2p::start(*queue->q);
  });
}

int MPIX_Enqueue_wait(MPIX_Queue queue) {
  return run("MPIX_Enqueue_wait", MPI_COMM_NULL, [&]() -> Result {
    if (Result r = usable_queue(queue)) return r;
    if (Result r = queue_error(*queue->q)) return r;
    return p2p::flush(*queue->q);
  });
}

// ---- MPICH's enqueue spelling ----------------------------------------------------------------------
#ifdef MPIX_ST_DEFINES_MPIX_STREAM

}  // extern "C"

namespace {

// The queue of the stream bound to comm (MPIX_Stream_comm_create).
Result bound_queue(MPI_Comm comm, std::shared_ptr<p2p::Queue> *q) {
  if (Result r = check_comm(comm)) return r;
  void *stream = nullptr;
  if (Result r = mpix::api::bound_stream(comm, &stream)) return r;
  if (Result r = mpix::api::check_stream(stream)) return r;
  if (Result r = p2p::queue_of_stream(stream, q)) return r;
  return queue_error(**q);
}

Result mpich_send(const char *call, const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request) {
  std::shared_ptr<p2p::Queue> q;
  if (Result r = bound_queue(comm, &q)) return r;
  std::shared_ptr<p2p::Op> op;
  if (Result r = make_op(true, call, buf, count, datatype, dest, tag, comm, q->stream, &op)) return r;
  op->stream_waited = !request;
  if (Result r = p2p::add(*q, op, true)) return r;
  if (request)
    if (Result r = p2p::make_request(op, request)) return r;
  if (Result r = p2p::send_now(*q)) return r;
  // A blocking send longer than a mailbox completes on the stream once its data went, as MPI_Send's
  // rendezvous does: its chunks follow at once.
  return request || !op->chunked ? ok() : p2p::send_chunks(*q);
}

Result mpich_recv(const char *call, void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request *request, MPI_Status *status) {
  std::shared_ptr<p2p::Queue> q;
  if (Result r = bound_queue(comm, &q)) return r;
  std::shared_ptr<p2p::Op> op;
  if (Result r = make_op(false, call, buf, count, datatype, source, tag, comm, q->stream, &op)) return r;
  if (request) {
    if (Result r = p2p::add(*q, op, true)) return r;
    return p2p::make_request(op, request);
  }
  op->stream_waited = true;
  stream_status(*op, status);
  if (Result r = p2p::add(*q, op, true)) return r;
  const std::vector<p2p::Op *> only{op.get()};
  return p2p::flush(*q, &only);
}

// The stream wait of requests (MPIX_Wait_enqueue / MPIX_Waitall_enqueue): checks every handle first.
Result stream_wait(int count, MPI_Request requests[], MPI_Status statuses[], bool all) {
  if (count < 0) return fail(MPI_ERR_COUNT, "negative count " + std::to_string(count));
  if (count > 0 && !requests) return fail(MPI_ERR_ARG, "requests is NULL");
  std::vector<std::shared_ptr<p2p::Op>> ops(count);
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    ops[i] = p2p::op_of(requests[i]);
    const std::string which = all ? "request " + std::to_string(i) : std::string("the request");
    if (!ops[i])
      return fail(MPI_ERR_REQUEST, which + " is not an active request of MPIX_Isend_enqueue or "
                                           "MPIX_Irecv_enqueue (completed or freed already?)");
    if (ops[i]->queue->user_queue)
      return fail(MPI_ERR_REQUEST, which + " belongs to an MPIX_Queue: complete it with MPIX_Enqueue_wait, "
                                           "MPI_Wait or MPI_Test");
  }
  std::map<p2p::Queue *, std::vector<p2p::Op *>> queues;
  for (int i = 0; i < count; ++i) {
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    if (!ops[i]) {
      empty_status(st);
      continue;
    }
    p2p::Op &op = *ops[i];
    stream_status(op, st);
    if (op.user_status && op.list != 0) {
      // Already in a list (a blocking receive or a host wait enqueued it): a list of its own, after
      // that one, writes the count.
      if (Result r = p2p::status_after(ops[i])) return r;
    }
    op.stream_waited = true;
    queues[op.queue.get()].push_back(&op);
  }
  for (auto &[q, some] : queues)
    if (Result r = p2p::flush(*q, &some)) return r;
  for (int i = 0; i < count; ++i) {
    if (!ops[i]) continue;
    p2p::forget_request(requests[i]);
    PMPI_Request_free(&requests[i]);  // the MPI frees it once the stream completed it
  }
  return ok();
}

}  // namespace

extern "C" {

int MPIX_Send_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return run("MPIX_Send_enqueue", comm,
             [&] { return mpich_send("MPIX_Send_enqueue", buf, count, datatype, dest, tag, comm, nullptr); });
}

int MPIX_Recv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                      MPI_Status *status) {
  return run("MPIX_Recv_enqueue", comm, [&] {
    return mpich_recv("MPIX_Recv_enqueue", buf, count, datatype, source, tag, comm, nullptr, status);
  });
}

int MPIX_Isend_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                       MPI_Request *request) {
  return run("MPIX_Isend_enqueue", comm, [&]() -> Result {
    if (Result r = request_arg(request)) return r;
    return mpich_send("MPIX_Isend_enqueue", buf, count, datatype, dest, tag, comm, request);
  });
}

int MPIX_Irecv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                       MPI_Request *request) {
  return run("MPIX_Irecv_enqueue", comm, [&]() -> Result {
    if (Result r = request_arg(request)) return r;
    return mpich_recv("MPIX_Irecv_enqueue", buf, count, datatype, source, tag, comm, request, MPI_STATUS_IGNORE);
  });
}

int MPIX_Wait_enqueue(MPI_Request *request, MPI_Status *status) {
  return run("MPIX_Wait_enqueue", MPI_COMM_NULL, [&]() -> Result {
    if (Result r = request_arg(request)) return r;
    return stream_wait(1, request, status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status, false);
  });
}

int MPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  return run("MPIX_Waitall_enqueue", MPI_COMM_NULL,
             [&] { return stream_wait(count, array_of_requests, array_of_statuses, true); });
}

#endif  // MPIX_ST_DEFINES_MPIX_STREAM

}  // extern "C"
