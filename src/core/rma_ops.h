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

}  // namespace mpix::core
