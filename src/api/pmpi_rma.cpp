// Interposed MPI_Put / MPI_Get / MPI_Accumulate: recorded inside the library's active-target
// epochs, passed to the underlying MPI inside its fence and lock epochs.
#include <mpi.h>

#include "core/rma_ops.h"
#include "errors.h"
#include "window_lookup.h"

using mpix::core::EpochMode;
using mpix::core::Result;
using mpix::core::RmaKind;
using mpix::core::RmaRequest;
using mpix::core::Window;

namespace {

// Returns true when the call belongs to the underlying MPI; otherwise *rc is the result.
bool handled_here(const RmaRequest &q, MPI_Win win, int *rc) {
  if (Result r = mpix::api::mpi_state(q.kind == RmaKind::put   ? "MPI_Put"
                                      : q.kind == RmaKind::get ? "MPI_Get"
                                                               : "MPI_Accumulate")) {
    *rc = mpix::api::raise_no_object(r);
    return true;
  }
  Window *w = mpix::core::find_window(win);
  if (!w) {
    // MPI_WIN_NULL and freed handles (which the MPI may not notice) are refused here.
    Result r = mpix::api::usable_handle(win);
    if (!r) return false;
    *rc = mpix::api::raise_no_object(r);
    return true;
  }
  Result r;
  if (w->access.mode == EpochMode::none && (w->fence_epoch || w->passive_epochs > 0)) {
    if (w->pmpi_window_stub.empty()) return false;
    r = mpix::core::fail(MPI_ERR_WIN, w->pmpi_window_stub);
  } else {
    r = mpix::core::record(*w, q);
  }
  *rc = mpix::api::raise_win(win, r);
  return true;
}

}  // namespace

extern "C" {

int MPI_Put(const void *origin, int origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_type, MPI_Win win) {
  RmaRequest q{RmaKind::put, const_cast<void *>(origin), origin_count, origin_type, target_rank, target_disp,
               target_count, target_type, MPI_OP_NULL};
  int rc;
  if (handled_here(q, win, &rc)) return rc;
  return PMPI_Put(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win);
}

int MPI_Get(void *origin, int origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_type, MPI_Win win) {
  RmaRequest q{RmaKind::get, origin, origin_count, origin_type, target_rank, target_disp,
               target_count, target_type, MPI_OP_NULL};
  int rc;
  if (handled_here(q, win, &rc)) return rc;
  return PMPI_Get(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win);
}

int MPI_Accumulate(const void *origin, int origin_count, MPI_Datatype origin_type, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  RmaRequest q{RmaKind::accumulate, const_cast<void *>(origin), origin_count, origin_type, target_rank,
               target_disp, target_count, target_type, op};
  int rc;
  if (handled_here(q, win, &rc)) return rc;
  return PMPI_Accumulate(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, op,
                         win);
}

}  // extern "C"
