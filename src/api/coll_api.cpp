// The stream collectives' C entry points: argument checks, datatype and operator mapping, errors
// through the communicator's error handler. The work itself is src/coll.
#include <mpi.h>

#include <string>

#include "backend/backend.h"
#include "coll/collectives.h"
#include "errors.h"
#include "host_streams.h"
#include "mpich_streams.h"
#include "mpix/mpix_st.h"
#include "window_lookup.h"

using mpix::coll::Call;
using mpix::core::fail;
using mpix::core::ok;
using mpix::core::Result;

namespace {

struct TypeCode {
  MPI_Datatype type;
  bool is_signed, is_float;
};

// Half precision: the library's handles (half_datatypes.h) and, where mpi.h has it, MPICH's own.
bool half_type(MPI_Datatype t, mpix::coll::Dtype *out) {
  if (t == MPI_DATATYPE_NULL) return false;
#ifdef MPIX_C_FLOAT16
  if (t == MPIX_C_FLOAT16) {
    *out = mpix::coll::kHalf;
    return true;
  }
#endif
  if (t == MPIX_ST_FLOAT16) *out = mpix::coll::kHalf;
  else if (t == MPIX_ST_BFLOAT16) *out = mpix::coll::kBfloat16;
  else return false;
  return true;
}

// Element types of reductions, by what they are; the width comes from MPI_Type_size.
Result reduction_type(MPI_Datatype t, mpix::coll::Dtype *out) {
  if (half_type(t, out)) return ok();
  static const TypeCode known[] = {
      {MPI_SIGNED_CHAR, true, false},   {MPI_UNSIGNED_CHAR, false, false}, {MPI_INT, true, false},
      {MPI_UNSIGNED, false, false},     {MPI_LONG, true, false},          {MPI_UNSIGNED_LONG, false, false},
      {MPI_LONG_LONG, true, false},     {MPI_UNSIGNED_LONG_LONG, false, false},
      {MPI_INT8_T, true, false},        {MPI_UINT8_T, false, false},      {MPI_INT32_T, true, false},
      {MPI_UINT32_T, false, false},     {MPI_INT64_T, true, false},       {MPI_UINT64_T, false, false},
      {MPI_FLOAT, true, true},          {MPI_DOUBLE, true, true},
  };
  for (const TypeCode &k : known) {
    if (k.type != t) continue;
    int size = 0;
    PMPI_Type_size(t, &size);
    using namespace mpix::coll;
    if (k.is_float) *out = size == 4 ? kFloat : kDouble;
    else if (size == 1) *out = k.is_signed ? kInt8 : kUint8;
    else if (size == 4) *out = k.is_signed ? kInt32 : kUint32;
    else *out = k.is_signed ? kInt64 : kUint64;
    return ok();
  }
  return fail(MPI_ERR_TYPE, "reductions take 8-, 32- and 64-bit integers, float and double (predefined types), "
                            "MPIX_ST_FLOAT16 and MPIX_ST_BFLOAT16");
}

Result reduction_op(MPI_Op op, mpix::coll::Dtype d, mpix::coll::Op *out) {
  using namespace mpix::coll;
  if (op == MPI_OP_NULL) return fail(MPI_ERR_OP, "the operation is MPI_OP_NULL");
  const bool fp = d == kFloat || d == kDouble || d == kHalf || d == kBfloat16;
  if (op == MPI_SUM) *out = kSum;
  else if (op == MPI_PROD) *out = kProd;
  else if (op == MPI_MAX) *out = kMax;
  else if (op == MPI_MIN) *out = kMin;
  else if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) {
    if (fp) return fail(MPI_ERR_OP, "bitwise operations (MPI_BAND, MPI_BOR, MPI_BXOR) take integer types only");
    *out = op == MPI_BAND ? kBand : op == MPI_BOR ? kBor : kBxor;
  } else {
    return fail(MPI_ERR_OP, "supported operations: MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, and on integers MPI_BAND, "
                            "MPI_BOR, MPI_BXOR");
  }
  return ok();
}

// Collectives that only move data take any type laid out contiguously: *bytes is its size.
Result contiguous_type(MPI_Datatype t, const char *which, uint64_t *bytes) {
  if (t == MPI_DATATYPE_NULL) return fail(MPI_ERR_TYPE, std::string(which) + " is MPI_DATATYPE_NULL");
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_size(t, &size) != MPI_SUCCESS || PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(t, &true_lb, &true_extent) != MPI_SUCCESS)
    return fail(MPI_ERR_TYPE, std::string(which) + " is not a valid datatype");
  if (lb != 0 || true_lb != 0 || extent != size || true_extent != size)
    return fail(MPI_ERR_TYPE, std::string(which) + " is not contiguous (size " + std::to_string(size) + ", extent " +
                                  std::to_string(extent) + "): stream collectives take contiguous types");
  *bytes = static_cast<uint64_t>(size);
  return ok();
}

// A communicator the call can take part in: not MPI_COMM_NULL, an intra-communicator. A call whose
// communicator is not usable is refused here, on this rank alone.
Result check_comm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return fail(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return fail(MPI_ERR_COMM, "invalid communicator");
  if (inter) return fail(MPI_ERR_COMM, "stream collectives take intra-communicators only");
  return ok();
}

// Checks shared by every call: a usable stream, a count.
Result check_common(int count, void *stream, Call *call) {
  call->stream = stream;
  if (Result r = mpix::api::check_stream(stream)) return r;
  call->stream_ok = true;
  if (count < 0) return fail(MPI_ERR_COUNT, "negative count " + std::to_string(count));
  call->count = static_cast<uint64_t>(count);
  return ok();
}

Result check_root(MPI_Comm comm, int root) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  if (root < 0 || root >= size)
    return fail(MPI_ERR_ROOT, "root " + std::to_string(root) + " is not a rank of the communicator (size " +
                                  std::to_string(size) + ")");
  return ok();
}

// A buffer the stream reads or writes: not NULL when it holds data, and memory the backend's
// streams reach (device memory on GPU backends).
Result check_buffer(const void *buf, uint64_t bytes, const char *which) {
  if (bytes == 0) return ok();
  if (!buf) return fail(MPI_ERR_BUFFER, std::string(which) + " is NULL with " + std::to_string(bytes) + " bytes");
  if (buf == MPI_IN_PLACE) return fail(MPI_ERR_BUFFER, std::string(which) + " cannot be MPI_IN_PLACE here");
  if (!mpix::gpu::backend().manages_memory(buf))
    return fail(MPI_ERR_BUFFER, std::string(which) + " is not memory of the " + mpix::gpu::backend().name() +
                                    " backend (stream collectives take device memory)");
  return ok();
}

int rank_of(MPI_Comm comm) {
  int r = 0;
  PMPI_Comm_rank(comm, &r);
  return r;
}
int size_of(MPI_Comm comm) {
  int n = 0;
  PMPI_Comm_size(comm, &n);
  return n;
}

// Runs `body` (which fills and enqueues the call) and raises its error on the communicator.
template <typename Body>
int run(const char *name, MPI_Comm comm, Body &&body) {
  Result r = mpix::api::mpi_state(name);
  if (!r) r = mpix::api::backend_error();
  if (!r) r = body();
  if (!r) return MPI_SUCCESS;
  r.message = std::string(name) + ": " + r.message;
  if (comm == MPI_COMM_NULL || r.mpi_class == MPI_ERR_COMM) return mpix::api::raise_no_object(r);
  return mpix::api::raise_comm(comm, r);
}

// The checks of each collective fill *c and return why this rank refuses the call (or ok); the
// call is then enqueued, or recorded as refused (mpix::coll::enqueue), on a usable communicator.
Result reduction_checks(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                        bool all, MPI_Comm comm, void *stream, Call *cp) {
  Call &c = *cp;
  if (Result r = check_common(count, stream, &c)) return r;
  if (!all)
    if (Result r = check_root(comm, root)) return r;
  if (type == MPI_DATATYPE_NULL) return fail(MPI_ERR_TYPE, "the datatype is MPI_DATATYPE_NULL");
  if (Result r = reduction_type(type, &c.dtype)) return r;
  if (Result r = reduction_op(op, c.dtype, &c.op)) return r;
  const uint64_t bytes = c.count * mpix::coll::elem_size(c.dtype);
  const bool receives = all || rank_of(comm) == root;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && !receives)
    return fail(MPI_ERR_BUFFER, "MPI_IN_PLACE is the send buffer of the root only");
  if (receives)
    if (Result r = check_buffer(recvbuf, bytes, "the receive buffer")) return r;
  if (!in_place) {
    if (Result r = check_buffer(sendbuf, bytes, "the send buffer")) return r;
    if (receives && bytes && sendbuf == recvbuf)
      return fail(MPI_ERR_BUFFER, "the send and receive buffers are the same (use MPI_IN_PLACE)");
  }
  c.sendbuf = in_place ? recvbuf : sendbuf;
  c.recvbuf = receives ? recvbuf : nullptr;
  c.root = all ? 0 : root;
  return ok();
}

// Allgather and alltoall: blocks of `bytes` per rank, moved as bytes.
Result blocks_checks(mpix::coll::Kind kind, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm, void *stream, Call *cp) {
  Call &c = *cp;
  c.dtype = mpix::coll::kBytes;
  c.op = mpix::coll::kNoOp;
  if (Result r = check_common(recvcount, stream, &c)) return r;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  uint64_t rsize = 0, ssize = 0;
  if (Result r = contiguous_type(recvtype, "the receive type", &rsize)) return r;
  const uint64_t block = rsize * static_cast<uint64_t>(recvcount);
  const int n = size_of(comm), me = rank_of(comm);
  if (!in_place) {
    if (sendcount < 0) return fail(MPI_ERR_COUNT, "negative send count " + std::to_string(sendcount));
    if (Result r = contiguous_type(sendtype, "the send type", &ssize)) return r;
    if (ssize * static_cast<uint64_t>(sendcount) != block)
      return fail(MPI_ERR_TYPE, "the send block (" + std::to_string(ssize * sendcount) +
                                    " bytes) and the receive block (" + std::to_string(block) + " bytes) differ");
  }
  const uint64_t send_bytes = kind == mpix::coll::kAlltoall ? block * n : block;
  if (Result r = check_buffer(recvbuf, block * n, "the receive buffer")) return r;
  if (!in_place) {
    if (Result r = check_buffer(sendbuf, send_bytes, "the send buffer")) return r;
    if (block && sendbuf == recvbuf)
      return fail(MPI_ERR_BUFFER, "the send and receive buffers are the same (use MPI_IN_PLACE)");
  }
  c.dtype = mpix::coll::kBytes;
  c.op = mpix::coll::kNoOp;
  c.count = block;
  c.recvbuf = recvbuf;
  // In place, an allgather's own block already lies in the receive buffer; an alltoall's send
  // blocks are the receive blocks.
  c.sendbuf = !in_place ? sendbuf
              : kind == mpix::coll::kAllgather ? static_cast<const char *>(recvbuf) + block * me
                                               : recvbuf;
  return ok();
}

Result bcast_checks(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm, void *stream, Call *cp) {
  Call &c = *cp;
  c.dtype = mpix::coll::kBytes;
  c.op = mpix::coll::kNoOp;
  c.root = root;
  if (Result r = check_common(count, stream, &c)) return r;
  if (Result r = check_root(comm, root)) return r;
  uint64_t size = 0;
  if (Result r = contiguous_type(datatype, "the datatype", &size)) return r;
  c.count = size * c.count;
  if (Result r = check_buffer(buf, c.count, "the buffer")) return r;
  c.dtype = mpix::coll::kBytes;
  c.op = mpix::coll::kNoOp;
  c.sendbuf = buf;
  c.recvbuf = buf;
  return ok();
}

// A collective call: its checks on a usable communicator, then the call enqueued or, refused
// here, still counted on the communicator. `pre`: an error found before the checks (the
// *_enqueue calls' bound stream), or ok.
template <typename Checks>
Result collective(mpix::coll::Kind kind, MPI_Comm comm, Result pre, Checks &&checks) {
  if (Result r = check_comm(comm)) return r;
  Call c;
  c.kind = kind;
  c.comm = comm;
  Result local = pre ? pre : checks(&c);
  return mpix::coll::enqueue(c, local);
}

Result reduction(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, bool all,
                 MPI_Comm comm, void *stream, Result pre = ok()) {
  return collective(all ? mpix::coll::kAllreduce : mpix::coll::kReduce, comm, pre, [&](Call *c) {
    return reduction_checks(sendbuf, recvbuf, count, type, op, root, all, comm, stream, c);
  });
}

Result blocks(mpix::coll::Kind kind, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
              int recvcount, MPI_Datatype recvtype, MPI_Comm comm, void *stream, Result pre = ok()) {
  return collective(kind, comm, pre, [&](Call *c) {
    return blocks_checks(kind, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, stream, c);
  });
}

Result bcast(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm, void *stream, Result pre = ok()) {
  return collective(mpix::coll::kBcast, comm, pre,
                    [&](Call *c) { return bcast_checks(buf, count, datatype, root, comm, stream, c); });
}

}  // namespace

extern "C" {

int MPIX_Allreduce_stream(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, void *stream) {
  return run("MPIX_Allreduce_stream", comm,
             [&] { return reduction(sendbuf, recvbuf, count, datatype, op, 0, true, comm, stream); });
}

int MPIX_Reduce_stream(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                       MPI_Comm comm, void *stream) {
  return run("MPIX_Reduce_stream", comm,
             [&] { return reduction(sendbuf, recvbuf, count, datatype, op, root, false, comm, stream); });
}

int MPIX_Bcast_stream(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm, void *stream) {
  return run("MPIX_Bcast_stream", comm, [&] { return bcast(buf, count, datatype, root, comm, stream); });
}

int MPIX_Allgather_stream(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, void *stream) {
  return run("MPIX_Allgather_stream", comm, [&] {
    return blocks(mpix::coll::kAllgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, stream);
  });
}

int MPIX_Alltoall_stream(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, void *stream) {
  return run("MPIX_Alltoall_stream", comm, [&] {
    return blocks(mpix::coll::kAlltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, stream);
  });
}

// MPICH's spelling: the same calls on the stream bound to the communicator (mpich_streams.h).
#ifdef MPIX_ST_DEFINES_MPIX_STREAM

int MPIX_Allreduce_enqueue(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm) {
  return run("MPIX_Allreduce_enqueue", comm, [&]() -> Result {
    void *stream = nullptr;
    Result bound = mpix::api::bound_stream(comm, &stream);
    return reduction(sendbuf, recvbuf, count, datatype, op, 0, true, comm, stream, bound);
  });
}

int MPIX_Bcast_enqueue(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return run("MPIX_Bcast_enqueue", comm, [&]() -> Result {
    void *stream = nullptr;
    Result bound = mpix::api::bound_stream(comm, &stream);
    return bcast(buffer, count, datatype, root, comm, stream, bound);
  });
}

int MPIX_Allgather_enqueue(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  return run("MPIX_Allgather_enqueue", comm, [&]() -> Result {
    void *stream = nullptr;
    Result bound = mpix::api::bound_stream(comm, &stream);
    return blocks(mpix::coll::kAllgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, stream,
                  bound);
  });
}

int MPIX_Alltoall_enqueue(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm) {
  return run("MPIX_Alltoall_enqueue", comm, [&]() -> Result {
    void *stream = nullptr;
    Result bound = mpix::api::bound_stream(comm, &stream);
    return blocks(mpix::coll::kAlltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, stream,
                  bound);
  });
}

#endif  // MPIX_ST_DEFINES_MPIX_STREAM

}  // extern "C"
