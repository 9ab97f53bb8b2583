// The local steps of collectives across nodes (args.h: kLocalReduce, kLocalCopy): one round over
// this rank's memory only (schedule.h: Schedule).
#pragma once
#include <cstdint>

#include "schedule.h"

namespace mpix::coll::detail {

// Local steps (args.h): one round over this rank's memory only; no flags.
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::local_reduce(const Round &rd) {
  const int ns = a_.pieces < kMaxRanks ? static_cast<int>(a_.pieces) : kMaxRanks;
  const char *first = send();
  const uint64_t stride = a_.src_stride;
  const auto srcs = indexed([first, stride](int j) { return static_cast<const void *>(first + j * stride); });
  x_.reduce(same(static_cast<void *>(recv())), 1, srcs, ns, rd.elems);
}

template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::local_copy(const Round &rd) {
  for (uint32_t j = 0; j < a_.pieces; ++j) {
    const char *src = static_cast<int>(j) == a_.root ? reinterpret_cast<const char *>(a_.own)
                                                     : send() + j * a_.src_stride;
    char *dst = recv() + j * a_.dst_stride;
    if (src && src != dst) x_.copy(dst, src, rd.elems * esize_);
  }
}

}  // namespace mpix::coll::detail
