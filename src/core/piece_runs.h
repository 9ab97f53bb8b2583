// A derived-datatype operation's pieces as runs (work::Run): consecutive pieces of one length
// whose dst and src offsets each advance by a fixed stride join one run. The stream's walkers
// (the epoch kernel, the host backend's executor) compute each piece's addresses from its run
// (work::piece_of); the network path keeps the pieces themselves (pair_lists.h).
#pragma once
#include <cstddef>
#include <vector>

#include "kernels/work_items.h"

namespace mpix::core {

// The runs of pieces [0, n), in order, each within work::kRunMaxPieces and work::kRunMaxBytes
// (a longer piece is a run of its own). With `join` false every piece is a run of its own, which
// is how MPIX_ST_DTYPE_RUNS=0 measures what joining gains. Pieces of 2 GiB and more are cut
// (work::kRunPieceCut) either way.
std::vector<work::Run> to_runs(const work::Pair *pieces, size_t n, bool join);

}  // namespace mpix::core
