// MPICH's stream objects (MPIX_Stream) as mpix-st defines them where the MPI does not: a wrapper
// of one GPU stream (or MPIX_Host_stream), bound to communicators for the *_enqueue calls.
#pragma once
#include <mpi.h>

#include "core/result.h"

namespace mpix::api {

// The stream bound to `comm` by MPIX_Stream_comm_create (an error when there is none).
core::Result bound_stream(MPI_Comm comm, void **stream);

}  // namespace mpix::api
