#include "rma_ops.h"

#include <string>

#include "config.h"
#include "datatype_flatten.h"
#include "pair_lists.h"
#include "remote_epochs.h"

namespace mpix::core {
namespace {

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

// Whether the operation about to be appended to the epoch's ops may travel as lines: the first
// operation to `target`, a contiguous put that the process can store (no cross-memory attach) of
// at most MPIX_ST_LINE_PUT_BYTES into a window peers map directly (see work_items.h, line puts).
void note_line_put(Window &w, int target, const work::Item &it, bool pairs, bool reads_target) {
  AccessEpoch &a = w.access;
  if (a.line_put.empty()) return;  // a host-driven epoch
  int32_t &slot = a.line_put[target];
  const bool fits = it.kind == work::kCopy && !pairs && !reads_target && it.flags == 0 && it.bytes > 0 &&
                    it.bytes <= config().line_put_bytes;
  slot = fits && slot == AccessEpoch::kNoLinePut ? static_cast<int32_t>(a.ops.size()) : AccessEpoch::kNotLines;
}

// Appends a node-local data item (and the kPairList item that follows a pairs item), with the
// cross-memory-attach flags of the peer and its accumulate lock where it needs one.
void push_local(Window &w, int target, bool reads_target, work::Item it, const work::Item *pairs) {
  const Peer &peer = w.peers[target];
  if (peer.data.cma_pid) {
    it.flags = reads_target ? work::kSrcRemoteCma : work::kDstRemoteCma;
    it.peer = peer.data.cma_pid;
  }
  const bool accumulate = it.kind == work::kAccumulate || it.kind == work::kAccumulatePairs;
  // Origins reach this memory by read-modify-write copies: one at a time keeps elements atomic.
  work::Item lock{};
  const bool locked = accumulate && peer.accumulate_lock;
  if (locked) {
    lock.a = reinterpret_cast<uint64_t>(w.accumulate_lock_of(target));
    lock.kind = work::kLockAcquire;
    w.access.ops.push_back(lock);
  }
  note_line_put(w, target, it, pairs != nullptr, reads_target);
  w.access.ops.push_back(it);
  if (pairs) w.access.ops.push_back(*pairs);
  if (locked) {
    lock.kind = work::kLockRelease;
    w.access.ops.push_back(lock);
  }
}

// Peers on other nodes are reached through the fabric. So are accumulates to any peer of a window
// that has a fabric: NIC atomics and processor atomics on one element are not atomic together.
// (A staged window's network atomics apply to a target's mirror, if it keeps one: accumulates to
// other targets of such a window stay on the devices.)
bool via_fabric(const Window &w, int target, uint8_t item_kind) {
  const bool fabric_accumulate =
      item_kind == work::kAccumulate && w.remote && (!w.remote->staged || w.remote->peer_mirrors[target]);
  return !w.peers[target].node_local || fabric_accumulate;
}

RemoteKind remote_kind(RmaKind k) {
  return k == RmaKind::put ? RemoteKind::put : k == RmaKind::get ? RemoteKind::get : RemoteKind::accumulate;
}

std::string type_name(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return "a mix of basic types";
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  PMPI_Type_get_name(t, name, &len);
  return len ? name : "(unnamed)";
}

std::string to_string(__int128 v) {
  if (v >= INT64_MIN && v <= INT64_MAX) return std::to_string(static_cast<long long>(v));
  std::string s;
  const bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  for (; u; u /= 10) s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
  return negative ? "-" + s : s;
}

Result range_error(const std::string &who, const RmaRequest &q, const Peer &peer, __int128 lo, __int128 hi) {
  return fail(MPI_ERR_RMA_RANGE, who + ": displacement " + std::to_string(q.target_disp) + " x unit " +
                                     std::to_string(peer.disp_unit) + " with the target datatype touches bytes [" +
                                     to_string(lo) + ", " + to_string(hi) + "), outside rank " +
                                     std::to_string(q.target_rank) + "'s window of " + std::to_string(peer.bytes) +
                                     " bytes");
}

// Checks of a derived-datatype operation that read only what the MPI says of its types (no
// flattening): both types valid and committed, as many bytes on both sides, and the target
// datatype's true extent, `count` times, inside the window. So an operation refused on these
// costs microseconds however many blocks its types have.
Result check_before_flattening(const Window &w, const RmaRequest &q, const std::string &who) {
  TypeFacts fo, ft;
  if (Result r = type_facts(q.origin_type, &fo)) return fail(r.mpi_class, who + ": the origin datatype " + r.message);
  if (Result r = type_facts(q.target_type, &ft)) return fail(r.mpi_class, who + ": the target datatype " + r.message);
  const unsigned __int128 obytes = (unsigned __int128)fo.size * static_cast<uint64_t>(q.origin_count);
  const unsigned __int128 tbytes = (unsigned __int128)ft.size * static_cast<uint64_t>(q.target_count);
  if (obytes != tbytes)
    return fail(MPI_ERR_TYPE, who + ": origin and target type signatures differ (origin: " +
                                  describe_type(q.origin_type, static_cast<uint64_t>(q.origin_count)) + ", " +
                                  to_string(static_cast<__int128>(obytes)) + " bytes; target: " +
                                  describe_type(q.target_type, static_cast<uint64_t>(q.target_count)) + ", " +
                                  to_string(static_cast<__int128>(tbytes)) + " bytes)");
  if (tbytes == 0) return ok();
  if (!q.origin)
    return fail(MPI_ERR_BUFFER, who + ": the origin buffer is NULL (" + to_string(static_cast<__int128>(tbytes)) +
                                    " bytes to " + (q.kind == RmaKind::get ? "receive)" : "send)"));
  if (q.target_disp < 0) return fail(MPI_ERR_DISP, who + ": negative target displacement");
  // count instances, `extent` apart, each spanning [true_lb, true_lb + true_extent).
  const Peer &peer = w.peers[q.target_rank];
  const __int128 offset = (__int128)q.target_disp * peer.disp_unit;
  const __int128 spread = (__int128)(q.target_count - 1) * ft.extent;
  const __int128 lo = offset + ft.true_lb + (spread < 0 ? spread : 0);
  const __int128 hi = offset + ft.true_lb + ft.true_extent + (spread > 0 ? spread : 0);
  if (lo < 0 || hi > (__int128)peer.bytes) return range_error(who, q, peer, lo, hi);
  return ok();
}

// An operation with a derived origin or target datatype: one item walking a cached pair list.
Result record_derived(Window &w, const RmaRequest &q, const std::string &who) {
  const bool reads_target = q.kind == RmaKind::get;
  if (q.kind == RmaKind::accumulate && accumulate_op(q.op) < 0)
    return fail(MPI_ERR_OP, who + ": only MPI_SUM, MPI_MAX, MPI_MIN and MPI_REPLACE are supported");
  if (Result r = check_before_flattening(w, q, who)) return r;
  PairList l;
  if (Result r = pair_list({q.origin_type, q.origin_count, q.target_type, q.target_count, reads_target}, &l))
    return fail(r.mpi_class, who + ": " + r.message);
  work::Item it{};
  it.kind = work::kCopy;
  if (q.kind == RmaKind::accumulate) {
    const int op = accumulate_op(q.op);
    const int dtype = l.origin_element == l.target_element ? accumulate_dtype(l.origin_element) : -1;
    if (l.bytes && dtype < 0)
      return fail(MPI_ERR_TYPE, who + ": derived datatypes must be built from one basic type, the same on origin and "
                                      "target, a 32/64-bit integer, float or double (origin: " +
                                      type_name(l.origin_element) + "; target: " + type_name(l.target_element) + ")");
    it.kind = work::kAccumulate;
    it.dtype = static_cast<uint8_t>(dtype < 0 ? 0 : dtype);
    it.op = static_cast<uint8_t>(op);
  }
  if (l.bytes == 0) return ok();
  const Peer &peer = w.peers[q.target_rank];
  // Every byte touched lies in the window: disp * unit + [lo, hi) within [0, window bytes) (checked
  // before from the true extent; the pieces say it exactly).
  const __int128 offset = (__int128)q.target_disp * peer.disp_unit;
  const __int128 lo = offset + l.target_lo, hi = offset + l.target_hi;
  if (lo < 0 || hi > (__int128)peer.bytes) return range_error(who, q, peer, lo, hi);
  // Remote peers: the target side is an offset into the window (the network's atomics align to it).
  const bool fabric = via_fabric(w, q.target_rank, it.kind);
  const uint64_t target = (fabric ? 0 : reinterpret_cast<uint64_t>(peer.data.base)) + static_cast<uint64_t>(offset);
  const uint64_t origin = reinterpret_cast<uint64_t>(q.origin);
  const uint64_t dst = reads_target ? origin : target, src = reads_target ? target : origin;
  if (it.kind == work::kAccumulate) {
    // Element-wise atomics need elements at multiples of their size, on both sides.
    const uint64_t e = work::dtype_size(it.dtype);
    if (l.align % e || dst % e || src % e)
      return fail(MPI_ERR_RMA_RANGE, who + ": the datatypes place " + std::to_string(e) +
                                         "-byte elements at addresses that are not multiples of " + std::to_string(e));
  }
  if (fabric) {
    const RemoteOp op{remote_kind(q.kind), q.origin, l.bytes, q.target_rank, static_cast<uint64_t>(offset),
                      it.dtype, it.op};
    return remote::record(w, op, {host_pairs(l), l.count, l.origin_lo, l.origin_hi}, who);
  }
  if (l.count == 1) {
    it.a = dst + static_cast<uint64_t>(l.single.dst);
    it.b = src + static_cast<uint64_t>(l.single.src);
    it.bytes = l.single.bytes;
    push_local(w, q.target_rank, reads_target, it, nullptr);
    return ok();
  }
  it.kind = it.kind == work::kAccumulate ? work::kAccumulatePairs : work::kCopyPairs;
  it.a = dst;
  it.b = src;
  it.bytes = l.bytes;
  const work::Item list = pair_list_item(l);
  push_local(w, q.target_rank, reads_target, it, &list);
  return ok();
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
  // Predefined types on both sides keep the contiguous path (no cache lookup).
  if (!is_named(q.origin_type) || !is_named(q.target_type)) return record_derived(w, q, who);
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
  if (via_fabric(w, q.target_rank, it.kind)) {
    const RemoteOp op{remote_kind(q.kind), q.origin, bytes, q.target_rank, offset, it.dtype, it.op};
    const work::Pair whole{0, 0, bytes};
    return remote::record(w, op, {&whole, 1, 0, static_cast<int64_t>(bytes)}, who);
  }
  const uint64_t remote = reinterpret_cast<uint64_t>(peer.data.base) + offset;
  const uint64_t local = reinterpret_cast<uint64_t>(q.origin);
  it.bytes = bytes;
  const bool reads_target = q.kind == RmaKind::get;
  it.a = reads_target ? local : remote;
  it.b = reads_target ? remote : local;
  push_local(w, q.target_rank, reads_target, it, nullptr);
  return ok();
}

Result unrecorded_rma(const Window &w, const char *call, bool request_based) {
  if (w.access.mode == EpochMode::none) return ok();
  // Within 255 characters (Open MPI's MPI_MAX_ERROR_STRING) with the longest call names.
  const bool stream = w.access.mode == EpochMode::stream;
  const std::string epoch =
      "window " + std::to_string(w.id) + " has a " + (stream ? "stream" : "host-driven") + " access epoch open";
  if (request_based)
    return fail(MPI_ERR_RMA_SYNC, std::string(call) + ": request-based RMA belongs to lock epochs, and " + epoch +
                                      ": use MPI_Put, MPI_Get or MPI_Accumulate there, which complete at " +
                                      (stream ? "MPIX_Win_complete_stream" : "MPI_Win_complete"));
  return fail(MPI_ERR_UNSUPPORTED_OPERATION,
              std::string(call) + " is not carried in mpix-st's active-target epochs (" + epoch +
                  "): use MPI_Put, MPI_Get or MPI_Accumulate (SUM, MAX, MIN, REPLACE) there, or " + call +
                  " in a fence or lock epoch");
}

}  // namespace mpix::core
