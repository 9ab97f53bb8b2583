#include "rma_ops.h"

#include <string>

#include "remote_epochs.h"
#include "staged_transfers.h"

namespace mpix::core {
namespace {

bool is_predefined(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return false;
  int ni, na, nd, combiner;
  if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return false;
  return combiner == MPI_COMBINER_NAMED;
}

// The element type of an accumulate, or -1 when the type is not supported.
int accumulate_dtype(MPI_Datatype t) {
  int size = 0;
  PMPI_Type_size(t, &size);
  if (t == MPI_FLOAT) return work::kFloat;
  if (t == MPI_DOUBLE) return work::kDouble;
  if (t == MPI_INT || t == MPI_INT32_T || (t == MPI_LONG && size == 4)) return work::kInt32;
  if (t == MPI_LONG_LONG || t == MPI_INT64_T || (t == MPI_LONG && size == 8)) return work::kInt64;
  return -1;
}

int accumulate_op(MPI_Op op) {
  if (op == MPI_SUM) return work::kSum;
  if (op == MPI_MAX) return work::kMax;
  if (op == MPI_MIN) return work::kMin;
  if (op == MPI_REPLACE) return work::kReplace;
  return -1;
}

const char *kind_name(RmaKind k) {
  return k == RmaKind::put ? "MPI_Put" : k == RmaKind::get ? "MPI_Get" : "MPI_Accumulate";
}

}  // namespace

Result record(Window &w, const RmaRequest &q) {
  const std::string who = kind_name(q.kind);
  if (w.access.mode == EpochMode::none) return fail(MPI_ERR_RMA_SYNC, who + " outside an access epoch");
  if (q.target_rank == MPI_PROC_NULL) return ok();
  if (q.target_rank < 0 || q.target_rank >= w.size)
    return fail(MPI_ERR_RANK, who + ": target rank " + std::to_string(q.target_rank) + " is not in the window");
  if (!w.access.in_group[q.target_rank])
    return fail(MPI_ERR_RMA_SYNC,
                who + ": target rank " + std::to_string(q.target_rank) + " is not in the group of MPI_Win_start");
  if (q.origin_count < 0 || q.target_count < 0) return fail(MPI_ERR_COUNT, who + ": negative count");
  if (!is_predefined(q.origin_type) || !is_predefined(q.target_type))
    return fail(MPI_ERR_TYPE, who + ": only predefined (contiguous) datatypes are supported");
  int osize = 0, tsize = 0;
  PMPI_Type_size(q.origin_type, &osize);
  PMPI_Type_size(q.target_type, &tsize);
  const uint64_t bytes = static_cast<uint64_t>(osize) * static_cast<uint64_t>(q.origin_count);
  if (bytes != static_cast<uint64_t>(tsize) * static_cast<uint64_t>(q.target_count))
    return fail(MPI_ERR_TYPE, who + ": origin and target describe different byte counts");

  work::Item it{};
  if (q.kind == RmaKind::accumulate) {
    const int op = accumulate_op(q.op), dtype = accumulate_dtype(q.origin_type);
    if (op < 0) return fail(MPI_ERR_OP, who + ": only MPI_SUM, MPI_MAX, MPI_MIN and MPI_REPLACE are supported");
    if (dtype < 0 || q.origin_type != q.target_type)
      return fail(MPI_ERR_TYPE, who + ": supported element types are 32/64-bit integers, float and double, the "
                                      "same on origin and target");
    it.kind = work::kAccumulate;
    it.dtype = static_cast<uint8_t>(dtype);
    it.op = static_cast<uint8_t>(op);
  } else {
    it.kind = work::kCopy;
  }
  if (bytes == 0) return ok();
  if (!q.origin)
    return fail(MPI_ERR_BUFFER, who + ": the origin buffer is NULL (" + std::to_string(bytes) + " bytes to " +
                                    (q.kind == RmaKind::get ? "receive)" : "send)"));

  const Peer &peer = w.peers[q.target_rank];
  if (q.target_disp < 0) return fail(MPI_ERR_DISP, who + ": negative target displacement");
  const uint64_t disp = static_cast<uint64_t>(q.target_disp), unit = static_cast<uint64_t>(peer.disp_unit);
  // Checked without overflow: disp * unit + bytes <= window bytes.
  if (bytes > peer.bytes || disp > (peer.bytes - bytes) / unit)
    return fail(MPI_ERR_RMA_RANGE, who + ": displacement " + std::to_string(disp) + " x unit " + std::to_string(unit) +
                                       " + " + std::to_string(bytes) + " bytes lies outside rank " +
                                       std::to_string(q.target_rank) + "'s window of " + std::to_string(peer.bytes) +
                                       " bytes");
  const uint64_t offset = disp * unit;
  if (offset + bytes > peer.bytes)
    return fail(MPI_ERR_RMA_RANGE, who + ": bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                                       ") lie outside rank " + std::to_string(q.target_rank) + "'s window of " +
                                       std::to_string(peer.bytes) + " bytes");
  // Peers on other nodes are reached through the fabric. So are accumulates to any peer of a window
  // that has a fabric: NIC atomics and processor atomics on one element are not atomic together.
  // (A staged window's network atomics apply to a target's mirror, if it keeps one: accumulates to
  // other targets of such a window stay on the devices.)
  const bool fabric_accumulate =
      it.kind == work::kAccumulate && w.remote && (!w.remote->staged || w.remote->peer_mirrors[q.target_rank]);
  if (!peer.node_local || fabric_accumulate) {
    const RemoteKind kind = q.kind == RmaKind::put   ? RemoteKind::put
                            : q.kind == RmaKind::get ? RemoteKind::get
                                                     : RemoteKind::accumulate;
    const RemoteOp op{kind, q.origin, bytes, q.target_rank, offset, it.dtype, it.op, nullptr, {}};
    if (w.remote && w.remote->staged)
      if (Result r = staged::check(w, op)) return r;
    if (remote::fabric_operations(op) == 0)
      return fail(MPI_ERR_UNSUPPORTED_OPERATION,
                  who + " to rank " + std::to_string(q.target_rank) +
                      ": the inter-node transport has no atomic for this element type and operation");
    if (kind == RemoteKind::accumulate && (offset % work::dtype_size(it.dtype) != 0))
      return fail(MPI_ERR_RMA_RANGE, who + ": the target offset " + std::to_string(offset) +
                                         " is not aligned to the element size, as the network's atomics require");
    w.access.remote_ops.push_back(op);
    if (kind != RemoteKind::get) ++w.access.fabric_ranges[q.target_rank];
    w.access.via_fabric[q.target_rank] = 1;
    return ok();
  }
  const uint64_t remote = reinterpret_cast<uint64_t>(peer.data.base) + offset;
  const uint64_t local = reinterpret_cast<uint64_t>(q.origin);
  it.bytes = bytes;
  const bool reads_target = q.kind == RmaKind::get;
  it.a = reads_target ? local : remote;
  it.b = reads_target ? remote : local;
  if (peer.data.cma_pid) {
    it.flags = reads_target ? work::kSrcRemoteCma : work::kDstRemoteCma;
    it.peer = peer.data.cma_pid;
  }
  if (it.kind == work::kAccumulate && peer.accumulate_lock) {
    // Origins reach this memory by read-modify-write copies: one at a time keeps elements atomic.
    work::Item lock{};
    lock.kind = work::kLockAcquire;
    lock.a = reinterpret_cast<uint64_t>(w.accumulate_lock_of(q.target_rank));
    w.access.ops.push_back(lock);
    w.access.ops.push_back(it);
    lock.kind = work::kLockRelease;
    w.access.ops.push_back(lock);
    return ok();
  }
  w.access.ops.push_back(it);
  return ok();
}

}  // namespace mpix::core
