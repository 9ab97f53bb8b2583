// Raising library errors through MPI error handlers, with readable messages.
#pragma once
#include <mpi.h>

#include "core/result.h"

namespace mpix::api {

// Registers the message under an error code of the result's class and calls the window's error
// handler (MPI_COMM_SELF's when the window is MPI_WIN_NULL). Returns the code for the caller.
int raise_win(MPI_Win win, const core::Result &r);
int raise_comm(MPI_Comm comm, const core::Result &r);
int raise_no_object(const core::Result &r);

}  // namespace mpix::api
