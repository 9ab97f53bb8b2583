// Host completion of two-sided stream requests (src/p2p): the requests the *_enqueue sends and
// receives return are generalized requests that the library completes once the stream ran their
// list. MPI_Wait, MPI_Test and the other completion calls are interposed: for such a request they
// first enqueue its queue's waiting operations where none of the program's stream waits did, poll
// the stream's progress, complete the request, then let the MPI finish the call. Other requests
// pass straight through (and every call does, while no such request exists).
#include <mpi.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "errors.h"
#include "p2p/engine.h"

using mpix::core::fail;
using mpix::core::Result;
namespace p2p = mpix::p2p;

namespace {

bool none_live() { return p2p::live_requests() == 0; }

const p2p::Op *first(const std::vector<std::shared_ptr<p2p::Op>> &ops) {
  for (const auto &op : ops)
    if (op) return op.get();
  return nullptr;
}

MPI_Comm comm_of(const p2p::Op &op) {
  const MPI_Comm c = op.ctx ? op.ctx->comm : op.comm;
  return c == MPI_COMM_NULL ? MPI_COMM_SELF : c;
}

int raise(const p2p::Op &op, int cls, const std::string &message) {
  Result r = fail(cls, message);
  return cls == MPI_ERR_COMM ? mpix::api::raise_no_object(r) : mpix::api::raise_comm(comm_of(op), r);
}

// The two-sided requests among `n` handles (null where a handle is not one).
std::vector<std::shared_ptr<p2p::Op>> ours(int n, const MPI_Request reqs[]) {
  std::vector<std::shared_ptr<p2p::Op>> v(n > 0 ? n : 0);
  for (int i = 0; i < n; ++i) v[i] = p2p::op_of(reqs[i]);
  return v;
}

// Moves the operations forward without blocking: receives started but in no list yet go in lists
// now (with those before them on their channels), as the program completes them on the host;
// finished ones complete their requests.
Result progress(const std::vector<std::shared_ptr<p2p::Op>> &ops, const char *caller) {
  std::map<p2p::Queue *, std::vector<p2p::Op *>> waiting;
  for (const auto &op : ops) {
    if (!op || op->finished || op->list != 0) continue;
    if (!op->started)
      return fail(MPI_ERR_REQUEST, std::string(caller) + ": the request's operation (" + op->call +
                                       ") was not started: call MPIX_Enqueue_start on its queue first");
    waiting[op->queue.get()].push_back(op.get());
  }
  for (auto &[q, some] : waiting)
    if (Result r = p2p::flush(*q, &some)) return r;
  for (const auto &op : ops)
    if (op) p2p::finished(*op);
  p2p::reap_all();
  return Result{};
}

// After the MPI's call: handles it completed and freed are forgotten; errors of finished receives
// make the call's error (MPI_ERR_IN_STATUS for the calls of several statuses, whose MPI_ERROR fields
// then all say how their request ended). `slot`: where request i's status went (null: nowhere, or a
// call of one status). Returns the call's code.
int settle(const char *caller, int n, const MPI_Request before[], const MPI_Request after[],
           const std::vector<std::shared_ptr<p2p::Op>> &ops, const std::vector<MPI_Status *> &slot, bool multiple,
           int rc) {
  const p2p::Op *failed = nullptr;
  int failures = 0;
  for (int i = 0; i < n; ++i) {
    if (!ops[i] || before[i] == after[i]) continue;
    p2p::forget_request(before[i]);
    if (ops[i]->error_class == MPI_SUCCESS) continue;
    ++failures;
    if (!failed) failed = ops[i].get();
  }
  if (!failed) return rc;
  if (multiple)
    for (int i = 0; i < n; ++i)
      if (slot[i] && before[i] != after[i])
        slot[i]->MPI_ERROR = ops[i] ? ops[i]->error_class : rc == MPI_SUCCESS ? MPI_SUCCESS : slot[i]->MPI_ERROR;
  std::string message = std::string(caller) + ": " + failed->error;
  if (failures > 1) message += " (and " + std::to_string(failures - 1) + " more)";
  return raise(*failed, multiple ? MPI_ERR_IN_STATUS : failed->error_class, message);
}

// Status slots of the calls of several statuses: by request (all) or by completion (some).
std::vector<MPI_Status *> all_slots(int n, MPI_Status statuses[]) {
  std::vector<MPI_Status *> v(n, nullptr);
  if (statuses != MPI_STATUSES_IGNORE)
    for (int i = 0; i < n; ++i) v[i] = &statuses[i];
  return v;
}
std::vector<MPI_Status *> some_slots(int n, int outcount, const int indices[], MPI_Status statuses[]) {
  std::vector<MPI_Status *> v(n, nullptr);
  if (statuses != MPI_STATUSES_IGNORE && outcount != MPI_UNDEFINED)
    for (int k = 0; k < outcount; ++k) v[indices[k]] = &statuses[k];
  return v;
}

void pause(unsigned spin) {
  if (spin > 256) sched_yield();
}

}  // namespace

extern "C" {

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
  if (none_live() || !request) return PMPI_Wait(request, status);
  std::lock_guard<std::recursive_mutex> guard(p2p::lock());
  auto ops = ours(1, request);
  if (!ops[0]) return PMPI_Wait(request, status);
  if (Result r = p2p::wait_host(*ops[0], "MPI_Wait")) return raise(*ops[0], r.mpi_class, r.message);
  const MPI_Request before = *request;
  const int rc = PMPI_Wait(request, status);
  return settle("MPI_Wait", 1, &before, request, ops, {nullptr}, false, rc);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
  if (none_live() || !request) return PMPI_Test(request, flag, status);
  std::lock_guard<std::recursive_mutex> guard(p2p::lock());
  auto ops = ours(1, request);
  if (!ops[0]) return PMPI_Test(request, flag, status);
  if (Result r = progress(ops, "MPI_Test")) return raise(*ops[0], r.mpi_class, r.message);
  const MPI_Request before = *request;
  const int rc = PMPI_Test(request, flag, status);
  return settle("MPI_Test", 1, &before, request, ops, {nullptr}, false, rc);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (none_live() || count <= 0 || !requests) return PMPI_Waitall(count, requests, statuses);
  std::lock_guard<std::recursive_mutex> guard(p2p::lock());
  auto ops = ours(count, requests);
  if (!first(ops)) return PMPI_Waitall(count, requests, statuses);
  for (const auto &op : ops)
    if (op)
      if (Result r = p2p::wait_host(*op, "MPI_Waitall")) return raise(*op, r.mpi_class, r.message);
  std::vector<MPI_Request> before(requests, requests + count);
  const int rc = PMPI_Waitall(count, requests, statuses);
  return settle("MPI_Waitall", count, before.data(), requests, ops, all_slots(count, statuses), true, rc);
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
  if (none_live() || count <= 0 || !requests) return PMPI_Testall(count, requests, flag, statuses);
  std::lock_guard<std::recursive_mutex> guard(p2p::lock());
  auto ops = ours(count, requests);
  if (!first(ops)) return PMPI_Testall(count, requests, flag, statuses);
  if (Result r = progress(ops, "MPI_Testall")) return raise(*first(ops), r.mpi_class, r.message);
  std::vector<MPI_Request> before(requests, requests + count);
  const int rc = PMPI_Testall(count, requests, flag, statuses);
  return settle("MPI_Testall", count, before.data(), requests, ops, all_slots(count, statuses), true, rc);
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
  if (none_live() || count <= 0 || !requests) return PMPI_Waitany(count, requests, index, status);
  std::lock_guard<std::recursive_mutex> guard(p2p::lock());
  auto ops = ours(count, requests);
  if (!first(ops)) return PMPI_Waitany(count, requests, index, status);
  std::vector<MPI_Request> before(requests, requests + count);
  for (unsigned spin = 0;; ++spin) {
    if (Result r = progress(ops, "MPI_Waitany")) return raise(*first(ops), r.mpi_class, r.message);
    int flag = 0;
    const int rc = PMPI_Testany(count, requests, index, &flag, status);
    if (rc != MPI_SUCCESS || flag)
      return settle("MPI_Waitany", count, before.data(), requests, ops, std::vector<MPI_Status *>(count), false, rc);
    pause(spin);
  }
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status) {
  if (none_live() || count <= 0 || !requests) return PMPI_Testany(count, requests, index, flag, status);
  std::lock_guard<std::recursive_mutex> guard(p2p::lock());
  auto ops = ours(count, requests);
  if (!first(ops)) return PMPI_Testany(count, requests, index, flag, status);
  if (Result r = progress(ops, "MPI_Testany")) return raise(*first(ops), r.mpi_class, r.message);
  std::vector<MPI_Request> before(requests, requests + count);
  const int rc = PMPI_Testany(count, requests, index, flag, status);
  return settle("MPI_Testany", count, before.data(), requests, ops, std::vector<MPI_Status *>(count), false, rc);
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
  if (none_live() || incount <= 0 || !requests) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  std::lock_guard<std::recursive_mutex> guard(p2p::lock());
  auto ops = ours(incount, requests);
  if (!first(ops)) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  std::vector<MPI_Request> before(requests, requests + incount);
  for (unsigned spin = 0;; ++spin) {
    if (Result r = progress(ops, "MPI_Waitsome")) return raise(*first(ops), r.mpi_class, r.message);
    const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    if (rc != MPI_SUCCESS || *outcount != 0)
      return settle("MPI_Waitsome", incount, before.data(), requests, ops,
                    some_slots(incount, *outcount, indices, statuses), true, rc);
    pause(spin);
  }
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]) {
  if (none_live() || incount <= 0 || !requests) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  std::lock_guard<std::recursive_mutex> guard(p2p::lock());
  auto ops = ours(incount, requests);
  if (!first(ops)) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  if (Result r = progress(ops, "MPI_Testsome")) return raise(*first(ops), r.mpi_class, r.message);
  std::vector<MPI_Request> before(requests, requests + incount);
  const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
  return settle("MPI_Testsome", incount, before.data(), requests, ops, some_slots(incount, *outcount, indices, statuses),
                true, rc);
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) {
  if (none_live()) return PMPI_Request_get_status(request, flag, status);
  std::lock_guard<std::recursive_mutex> guard(p2p::lock());
  auto ops = ours(1, &request);
  if (ops[0])
    if (Result r = progress(ops, "MPI_Request_get_status")) return raise(*ops[0], r.mpi_class, r.message);
  return PMPI_Request_get_status(request, flag, status);
}

// The operation goes on (a stream list may hold it); the MPI frees the request once it completes.
int MPI_Request_free(MPI_Request *request) {
  if (none_live() || !request) return PMPI_Request_free(request);
  std::lock_guard<std::recursive_mutex> guard(p2p::lock());
  if (auto op = p2p::op_of(*request)) {
    p2p::forget_request(*request);
    p2p::request_freed(*op);
  }
  return PMPI_Request_free(request);
}

}  // extern "C"
