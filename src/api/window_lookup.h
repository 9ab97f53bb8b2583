// Shared checks of the API entry points.
#pragma once
#include <mpi.h>

#include "../core/result.h"
#include "../core/window.h"

namespace mpix::api {

// The managed window behind `win`, or an MPI_ERR_WIN result saying why there is none.
core::Result managed_window(MPI_Win win, core::Window **out);
// Errors that surface asynchronously (backend selection, watchdog) as a result, checked on entry
// of local calls.
core::Result pending_errors();
// The part every rank shares (backend selection): collective calls check only this, so no rank
// leaves a collective call early over an error of its own.
core::Result backend_error();

}  // namespace mpix::api
