// Shared checks of the API entry points.
#pragma once
#include <mpi.h>

#include "core/result.h"
#include "core/window.h"

namespace mpix::api {

// Whether the MPI can be called now: an error naming `call` before MPI_Init or after MPI_Finalize
// (raise_* then print the message and return its class without calling an error handler).
core::Result mpi_state(const char *call);
// MPI_WIN_NULL or a handle freed through MPI_Win_free (errors are raised on MPI_COMM_SELF: a stale
// handle has no error handler to call).
core::Result usable_handle(MPI_Win win);
// The managed window behind `win`, or an MPI_ERR_WIN result saying why there is none.
core::Result managed_window(MPI_Win win, core::Window **out);
// Errors that surface asynchronously as a result, checked on entry of a window's epoch calls:
// backend selection, and watchdog reports of stream work of this window (a timeout belongs to the
// window whose epoch it ended, not to whichever call comes next).
core::Result pending_errors(const core::Window &w);
// The part every rank shares (backend selection): collective calls check only this, so no rank
// leaves a collective call early over an error of its own.
core::Result backend_error();

}  // namespace mpix::api
