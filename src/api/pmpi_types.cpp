// Interposed MPI_Type_free: the library caches flattenings and pair lists by datatype handle, and
// the MPI may hand a freed handle's value out again for a new type; dropping the entries before
// the handle is freed means a reused value never meets a stale list.
#include <mpi.h>

#include "../core/datatype_flatten.h"
#include "../core/pair_lists.h"

extern "C" int MPI_Type_free(MPI_Datatype *type) {
  if (type && *type != MPI_DATATYPE_NULL) {
    mpix::core::forget_datatype(*type);
    mpix::core::forget_pair_lists(*type);
  }
  return PMPI_Type_free(type);
}
