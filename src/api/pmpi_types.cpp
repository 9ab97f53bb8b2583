// Interposed MPI_Type_free: the library caches flattenings and pair lists by datatype handle, and
// the MPI may hand a freed handle's value out again for a new type; dropping the entries before
// the handle is freed means a reused value never meets a stale list. The library's half-precision
// handles are predefined as far as the application is concerned: freeing one is refused.
#include <mpi.h>

#include "errors.h"
#include "half_datatypes.h"

#include "core/datatype_flatten.h"
#include "core/pair_lists.h"

extern "C" int MPI_Type_free(MPI_Datatype *type) {
  if (type && mpix::api::is_half_datatype(*type))
    return mpix::api::raise_no_object(mpix::core::fail(
        MPI_ERR_TYPE, "MPI_Type_free: MPIX_ST_FLOAT16 and MPIX_ST_BFLOAT16 belong to the library (freed by MPI_Finalize)"));
  if (type && *type != MPI_DATATYPE_NULL) {
    mpix::core::forget_datatype(*type);
    mpix::core::forget_pair_lists(*type);
  }
  return PMPI_Type_free(type);
}
