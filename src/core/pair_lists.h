// Pair lists of derived-datatype RMA operations: the intersection of the origin's and the
// target's segmentations (both walked in signature order), as (dst offset, src offset, length)
// pieces. The stream walks them as runs of evenly spaced pieces (piece_runs.h; one work item,
// work::kCopyPairs or work::kAccumulatePairs, and its kPairList); the network path takes the
// pieces one by one.
//
// Lists are cached per (origin type, origin count, target type, target count, direction), so an
// exchange that uses the same types every epoch builds nothing after its first. A list the
// stream reads lives in memory the backend's streams reach (Backend::allocate_host_mapped),
// allocated here, in recording, never while a list is enqueued or captured. Enqueued work and
// captured graphs may read a list at any later time, so list memory is never freed: it lives
// as long as the process, up to MPIX_ST_DTYPE_LIST_MIB (default 256) in all, beyond which
// operations needing a new list fail with the library's resource error class. The pieces the host
// reads are ordinary memory, shared by the cached entry and its copies.
#pragma once
#include <mpi.h>

#include "backend/backend.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/work_items.h"
#include "result.h"

namespace mpix::core {

struct PairKey {
  MPI_Datatype origin_type;
  int origin_count;
  MPI_Datatype target_type;
  int target_count;
  bool target_to_origin;  // MPI_Get: data moves from the target to the origin
};

struct PairList {
  uint64_t count = 0;     // pieces
  uint64_t runs = 0;      // runs of them the stream walks (count > 1)
  uint64_t large = 0;     // the first `large` runs are pieces of at least work::kPairLarge bytes
  uint32_t group_shift = 0;  // the stream's walker gives each of the other runs 1 << this many threads
  uint64_t address = 0;   // where the stream reads the runs (count > 1)
  std::shared_ptr<const std::vector<work::Pair>> pieces;  // the pieces, for the host (count > 1)
  work::Pair single{};    // the piece, when count == 1 (no list needed)
  uint64_t bytes = 0;     // data moved
  int64_t target_lo = 0, target_hi = 0;  // bytes [lo, hi) around the target address it touches
  int64_t origin_lo = 0, origin_hi = 0;  // the same around the origin address
  uint32_t align = 16;    // every offset and length is a multiple of this power of two (<= 16)
  MPI_Datatype origin_element = MPI_DATATYPE_NULL, target_element = MPI_DATATYPE_NULL;  // one basic type, or null
};

// The work::kPairList item that follows a pairs item of `l` (l.count > 1): where the stream reads
// its runs, and how it walks them.
inline work::Item pair_list_item(const PairList &l) {
  work::Item it{};
  it.kind = work::kPairList;
  it.a = l.address;
  it.b = l.runs;
  it.bytes = l.large;
  it.peer = static_cast<int32_t>(l.group_shift);
  return it;
}

// The pieces of `l` as the host reads them (its `single` piece, or its list).
inline const work::Pair *host_pairs(const PairList &l) { return l.count == 1 ? &l.single : l.pieces->data(); }

// The list of `key` (built on first use). MPI_ERR_TYPE where the signatures differ or a type is
// not supported; the resource class where list memory is exhausted.
Result pair_list(const PairKey &key, PairList *out);

// Drops cached lists that name `type` (MPI_Type_free); their memory stays (see above).
void forget_pair_lists(MPI_Datatype type);

// Allocates the first block of list memory now (window creation), so that the first lists of a
// program that captures its epochs into graphs need no allocation during capture.
void reserve_pair_memory();

// Points the list's pair-list items at copies in device memory, made now (once per list) unless
// `capturing`: the kernels then read pairs from device memory instead of host-mapped memory over
// the bus. Lists without a copy keep the host-mapped address, which every stream can read. No-op
// on the host backend.
void place_pair_lists_on_device(gpu::WorkList &list, bool capturing);

}  // namespace mpix::core
