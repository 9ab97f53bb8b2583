// Interposed MPI_Init / MPI_Init_thread / MPI_Finalize: the inter-node transport is opened
// collectively right after the MPI starts (only when some peers are on other nodes) and closed
// right before it stops. Init also makes the library's half-precision datatype handles
// (half_datatypes.h), which Finalize frees while the MPI still runs; Finalize writes the launch
// trace (MPIX_ST_TRACE) first.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "backend/launch_trace_file.h"
#include "coll/context.h"
#include "core/internode.h"
#include "half_datatypes.h"

extern "C" {

int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) mpix::api::create_half_datatypes();
  if (rc == MPI_SUCCESS) mpix::core::internode::open_if_needed();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) mpix::api::create_half_datatypes();
  if (rc == MPI_SUCCESS) mpix::core::internode::open_if_needed();
  return rc;
}

int MPI_Finalize(void) {
  // MPIX_ST_TRACE: the launch trace is written while the MPI still names this rank.
  if (mpix::gpu::launch_trace_prefix()) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::string why;
    if (!mpix::gpu::finish_launch_trace(rank, &why)) std::fprintf(stderr, "mpix-st: %s\n", why.c_str());
  }
  mpix::coll::release_all_contexts();
  mpix::core::internode::close();
  mpix::api::free_half_datatypes();
  return PMPI_Finalize();
}

}  // extern "C"
