// Collective creation and destruction of windows.
#pragma once
#include <mpi.h>

#include "result.h"

namespace mpix::core {

// Creates the underlying MPI window and, when every rank's memory is memory the backend manages
// (and no rank's info says mpix_st=false), the library's shadow state with mapped peers.
Result create_window(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, bool memory_owned,
                     MPI_Win *win);
// Frees a managed window once its stream work has drained. On success *memory_owned tells whether
// *base was allocated by the library (MPI_Win_allocate) and must be released by the caller.
Result free_window(MPI_Win *win, bool *memory_owned, void **base);

}  // namespace mpix::core
