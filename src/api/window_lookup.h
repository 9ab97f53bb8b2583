// Shared checks of the API entry points.
#pragma once
#include <mpi.h>

#include "../core/result.h"
#include "../core/window.h"

namespace mpix::api {

// The managed window behind `win`, or an MPI_ERR_WIN result saying why there is none.
core::Result managed_window(MPI_Win win, core::Window **out);
// Errors that surface asynchronously (backend selection, watchdog) as a result, checked on entry.
core::Result pending_errors();

}  // namespace mpix::api
