// Interposed RMA calls. MPI_Put / MPI_Get / MPI_Accumulate (and their MPI-4 large-count forms) are
// recorded inside the library's active-target epochs and passed to the underlying MPI inside its
// fence and lock epochs. The RMA calls the library does not record (MPI_Get_accumulate,
// MPI_Fetch_and_op, MPI_Compare_and_swap, the request-based MPI_R*) are the MPI's, except inside
// the library's access epochs, where they are refused saying what to use instead.
#include <mpi.h>

#include <climits>
#include <string>

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

// The calls the library does not record: true when the MPI takes the call; otherwise *rc is the
// result (a refusal inside the library's access epochs, or a window the MPI cannot serve).
bool mpi_takes(MPI_Win win, const char *call, bool request_based, int *rc) {
  if (Result r = mpix::api::mpi_state(call)) {
    *rc = mpix::api::raise_no_object(r);
    return false;
  }
  const Window *w = mpix::core::find_window(win);
  if (!w) {
    Result r = mpix::api::usable_handle(win);
    if (!r) return true;
    *rc = mpix::api::raise_no_object(r);
    return false;
  }
  Result r = mpix::core::unrecorded_rma(*w, call, request_based);
  if (!r && (w->fence_epoch || w->passive_epochs > 0) && !w->pmpi_window_stub.empty())
    r = mpix::core::fail(MPI_ERR_WIN, w->pmpi_window_stub);
  if (!r) return true;
  *rc = mpix::api::raise_win(win, r);
  return false;
}

#if MPI_VERSION >= 4
// MPI-4's large-count forms take the int forms' paths where the counts fit an int; the library
// records no operation of more elements in its epochs (a derived datatype carries as much data in
// fewer elements); the MPI's fence and lock epochs take them.
bool fit_int(MPI_Count a, MPI_Count b) { return a >= INT_MIN && a <= INT_MAX && b >= INT_MIN && b <= INT_MAX; }

bool recorded_here(MPI_Win win) {
  const Window *w = mpix::core::find_window(win);
  return w && w->access.mode != EpochMode::none;
}

int refuse_counts(MPI_Win win, const char *call) {
  return mpix::api::raise_win(win, mpix::core::fail(MPI_ERR_COUNT, std::string(call) +
                                                                       ": counts beyond an int are not carried on "
                                                                       "mpix-st's windows; use a derived datatype"));
}
#endif

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

int MPI_Get_accumulate(const void *origin, int origin_count, MPI_Datatype origin_type, void *result, int result_count,
                       MPI_Datatype result_type, int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  int rc;
  if (!mpi_takes(win, "MPI_Get_accumulate", false, &rc)) return rc;
  return PMPI_Get_accumulate(origin, origin_count, origin_type, result, result_count, result_type, target_rank,
                             target_disp, target_count, target_type, op, win);
}

int MPI_Fetch_and_op(const void *origin, void *result, MPI_Datatype type, int target_rank, MPI_Aint target_disp,
                     MPI_Op op, MPI_Win win) {
  int rc;
  if (!mpi_takes(win, "MPI_Fetch_and_op", false, &rc)) return rc;
  return PMPI_Fetch_and_op(origin, result, type, target_rank, target_disp, op, win);
}

int MPI_Compare_and_swap(const void *origin, const void *compare, void *result, MPI_Datatype type, int target_rank,
                         MPI_Aint target_disp, MPI_Win win) {
  int rc;
  if (!mpi_takes(win, "MPI_Compare_and_swap", false, &rc)) return rc;
  return PMPI_Compare_and_swap(origin, compare, result, type, target_rank, target_disp, win);
}

int MPI_Rput(const void *origin, int origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request *request) {
  int rc;
  if (!mpi_takes(win, "MPI_Rput", true, &rc)) return rc;
  return PMPI_Rput(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win,
                   request);
}

int MPI_Rget(void *origin, int origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request *request) {
  int rc;
  if (!mpi_takes(win, "MPI_Rget", true, &rc)) return rc;
  return PMPI_Rget(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win,
                   request);
}

int MPI_Raccumulate(const void *origin, int origin_count, MPI_Datatype origin_type, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                    MPI_Request *request) {
  int rc;
  if (!mpi_takes(win, "MPI_Raccumulate", true, &rc)) return rc;
  return PMPI_Raccumulate(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, op,
                          win, request);
}

int MPI_Rget_accumulate(const void *origin, int origin_count, MPI_Datatype origin_type, void *result,
                        int result_count, MPI_Datatype result_type, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win, MPI_Request *request) {
  int rc;
  if (!mpi_takes(win, "MPI_Rget_accumulate", true, &rc)) return rc;
  return PMPI_Rget_accumulate(origin, origin_count, origin_type, result, result_count, result_type, target_rank,
                              target_disp, target_count, target_type, op, win, request);
}

#if MPI_VERSION >= 4
int MPI_Put_c(const void *origin, MPI_Count origin_count, MPI_Datatype origin_type, int target_rank,
              MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_type, MPI_Win win) {
  if (!fit_int(origin_count, target_count)) {
    if (recorded_here(win)) return refuse_counts(win, "MPI_Put_c");
    return PMPI_Put_c(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win);
  }
  return MPI_Put(origin, static_cast<int>(origin_count), origin_type, target_rank, target_disp,
                 static_cast<int>(target_count), target_type, win);
}

int MPI_Get_c(void *origin, MPI_Count origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
              MPI_Count target_count, MPI_Datatype target_type, MPI_Win win) {
  if (!fit_int(origin_count, target_count)) {
    if (recorded_here(win)) return refuse_counts(win, "MPI_Get_c");
    return PMPI_Get_c(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win);
  }
  return MPI_Get(origin, static_cast<int>(origin_count), origin_type, target_rank, target_disp,
                 static_cast<int>(target_count), target_type, win);
}

int MPI_Accumulate_c(const void *origin, MPI_Count origin_count, MPI_Datatype origin_type, int target_rank,
                     MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  if (!fit_int(origin_count, target_count)) {
    if (recorded_here(win)) return refuse_counts(win, "MPI_Accumulate_c");
    return PMPI_Accumulate_c(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type,
                             op, win);
  }
  return MPI_Accumulate(origin, static_cast<int>(origin_count), origin_type, target_rank, target_disp,
                        static_cast<int>(target_count), target_type, op, win);
}

int MPI_Get_accumulate_c(const void *origin, MPI_Count origin_count, MPI_Datatype origin_type, void *result,
                         MPI_Count result_count, MPI_Datatype result_type, int target_rank, MPI_Aint target_disp,
                         MPI_Count target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  int rc;
  if (!mpi_takes(win, "MPI_Get_accumulate_c", false, &rc)) return rc;
  return PMPI_Get_accumulate_c(origin, origin_count, origin_type, result, result_count, result_type, target_rank,
                               target_disp, target_count, target_type, op, win);
}

int MPI_Rput_c(const void *origin, MPI_Count origin_count, MPI_Datatype origin_type, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_type, MPI_Win win,
               MPI_Request *request) {
  int rc;
  if (!mpi_takes(win, "MPI_Rput_c", true, &rc)) return rc;
  return PMPI_Rput_c(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win,
                     request);
}

int MPI_Rget_c(void *origin, MPI_Count origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
               MPI_Count target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request *request) {
  int rc;
  if (!mpi_takes(win, "MPI_Rget_c", true, &rc)) return rc;
  return PMPI_Rget_c(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win,
                     request);
}

int MPI_Raccumulate_c(const void *origin, MPI_Count origin_count, MPI_Datatype origin_type, int target_rank,
                      MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                      MPI_Request *request) {
  int rc;
  if (!mpi_takes(win, "MPI_Raccumulate_c", true, &rc)) return rc;
  return PMPI_Raccumulate_c(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type,
                            op, win, request);
}

int MPI_Rget_accumulate_c(const void *origin, MPI_Count origin_count, MPI_Datatype origin_type, void *result,
                          MPI_Count result_count, MPI_Datatype result_type, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                          MPI_Request *request) {
  int rc;
  if (!mpi_takes(win, "MPI_Rget_accumulate_c", true, &rc)) return rc;
  return PMPI_Rget_accumulate_c(origin, origin_count, origin_type, result, result_count, result_type, target_rank,
                                target_disp, target_count, target_type, op, win, request);
}
#endif

}  // extern "C"
