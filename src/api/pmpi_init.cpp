// Interposed MPI_Init / MPI_Init_thread / MPI_Finalize: the inter-node transport is opened
// collectively right after the MPI starts (only when some peers are on other nodes) and closed
// right before it stops. Init also makes the library's half-precision datatype handles
// (half_datatypes.h), which Finalize frees while the MPI still runs.
#include <mpi.h>

#include "../coll/context.h"
#include "../core/internode.h"
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
  mpix::coll::release_all_contexts();
  mpix::core::internode::close();
  mpix::api::free_half_datatypes();
  return PMPI_Finalize();
}

}  // extern "C"
