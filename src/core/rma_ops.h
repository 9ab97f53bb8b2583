// Recording of MPI_Put / MPI_Get / MPI_Accumulate inside active-target epochs on managed windows.
#pragma once
#include <mpi.h>

#include "result.h"
#include "window.h"

namespace mpix::core {

enum class RmaKind { put, get, accumulate };

struct RmaRequest {
  RmaKind kind;
  void *origin;  // read for put/accumulate, written for get
  int origin_count;
  MPI_Datatype origin_type;
  int target_rank;
  MPI_Aint target_disp;
  int target_count;
  MPI_Datatype target_type;
  MPI_Op op;  // accumulate only
};

// Appends the operation to the open access epoch (addresses resolved now, data moved at complete).
Result record(Window &w, const RmaRequest &req);

// RMA calls the library does not record (MPI_Get_accumulate, MPI_Fetch_and_op,
// MPI_Compare_and_swap, and the request-based MPI_R* calls): refused while an access epoch of the
// library is open (MPI_ERR_UNSUPPORTED_OPERATION; MPI_ERR_RMA_SYNC for request-based calls,
// which MPI allows only in lock epochs), saying what to use; ok otherwise (the MPI's call).
Result unrecorded_rma(const Window &w, const char *call, bool request_based);

}  // namespace mpix::core
