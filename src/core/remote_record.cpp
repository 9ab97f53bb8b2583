// Recording of operations on peers reached through the network (remote::record): each
// contiguous piece becomes one RemoteOp. Pieces of one put or get share a triggered operation up
// to the provider's vector limit (fi_writemsg / fi_readmsg iovecs); an accumulate's pieces take
// one each. Their count goes against the triggered-operation budget like any other.
#include <string>
#include <vector>

#include "internode.h"
#include "remote_epochs.h"
#include "staged_transfers.h"

namespace mpix::core::remote {

Result record(Window &w, const RemoteOp &op, const Pieces &pieces, const std::string &who) {
  AccessEpoch &a = w.access;
  const std::string to = who + " to rank " + std::to_string(op.target);
  if (w.remote && w.remote->staged)
    if (Result r = staged::check(w, op, pieces.count)) return r;
  if (fabric_operations(RemoteOp{op.kind, op.origin, 1, op.target, 0, op.dtype, op.op}) == 0)
    return fail(MPI_ERR_UNSUPPORTED_OPERATION,
                to + ": the inter-node transport has no atomic for this element type and operation");
  if (op.kind == RemoteKind::accumulate && op.offset % work::dtype_size(op.dtype) != 0)
    return fail(MPI_ERR_RMA_RANGE, who + ": the target offset " + std::to_string(op.offset) +
                                       " is not aligned to the element size, as the network's atomics require");
  const bool reads_target = op.kind == RemoteKind::get;
  char *const origin = static_cast<char *>(op.origin);
  thread_local std::vector<RemoteOp> mine;
  mine.clear();
  for (uint64_t i = 0; i < pieces.count; ++i) {
    const work::Pair &pair = pieces.pairs[i];
    RemoteOp p = op;
    p.origin = origin + (reads_target ? pair.dst : pair.src);
    p.offset = op.offset + static_cast<uint64_t>(reads_target ? pair.src : pair.dst);
    p.bytes = pair.bytes;
    if (pieces.count > 1) {
      p.span = origin + pieces.origin_lo;
      p.span_bytes = static_cast<uint64_t>(pieces.origin_hi - pieces.origin_lo);
      p.joins = i > 0;  // pieces of one operation: MPI orders none of them
    }
    mine.push_back(p);
  }
  // An epoch that can never fit the budget is refused here, where the application can still
  // change the operation, rather than at complete. Stream epochs also take each target's complete
  // signal and a local completion signal; staged ones a range block per target.
  const uint64_t nops = fabric_operations(mine);
  const bool stream = a.mode == EpochMode::stream;
  const uint64_t need = a.fabric_ops + nops + (stream ? 2 : 0) + (w.remote && w.remote->staged ? 1 : 0);
  const uint64_t cap = internode::budget().capacity();
  if (need > cap)
    return fail(resource_error_class(),
                to + ": " + std::to_string(pieces.count) + " contiguous piece" + (pieces.count == 1 ? "" : "s") +
                    " through the network take " + std::to_string(nops) +
                    " triggered operations, and with the epoch's others it needs " + std::to_string(need) +
                    ", more than the budget of " + std::to_string(cap) +
                    " (MPIX_ST_TRIGGERED_OPS_MAX; pieces of a derived datatype share an operation up to the "
                    "provider's vector limit: use fewer, larger pieces, or split the epoch)");
  a.remote_ops.insert(a.remote_ops.end(), mine.begin(), mine.end());
  a.fabric_ops += nops;
  if (op.kind != RemoteKind::get) a.fabric_ranges[op.target] += static_cast<uint32_t>(pieces.count);
  a.via_fabric[op.target] = 1;
  return ok();
}

}  // namespace mpix::core::remote
