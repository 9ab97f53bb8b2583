// MPI has no standard half-precision types, and MPICH's MPIX_C_FLOAT16 exists in neither Open MPI
// nor for bfloat16. The library therefore makes its own handles: committed contiguous types of two
// MPI_BYTEs, which every MPI can build and any collective that only moves data accepts as they are.
// The stream reductions recognise them by handle value, so their byte layout carries no meaning.
#include "half_datatypes.h"

#include "core/datatype_flatten.h"
#include "core/pair_lists.h"
#include "mpix/mpix_st.h"

extern "C" {
MPI_Datatype MPIX_ST_FLOAT16 = MPI_DATATYPE_NULL;
MPI_Datatype MPIX_ST_BFLOAT16 = MPI_DATATYPE_NULL;
}

namespace mpix::api {
namespace {

void make(MPI_Datatype *handle, const char *name) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  if (PMPI_Type_contiguous(2, MPI_BYTE, &t) != MPI_SUCCESS) return;  // stays MPI_DATATYPE_NULL
  if (PMPI_Type_commit(&t) != MPI_SUCCESS) {
    PMPI_Type_free(&t);
    return;
  }
  PMPI_Type_set_name(t, name);
  *handle = t;
}

// As the interposed MPI_Type_free does: RMA may have cached the handle's layout.
void drop(MPI_Datatype *handle) {
  if (*handle == MPI_DATATYPE_NULL) return;
  core::forget_datatype(*handle);
  core::forget_pair_lists(*handle);
  PMPI_Type_free(handle);
  *handle = MPI_DATATYPE_NULL;
}

}  // namespace

void create_half_datatypes() {
  if (MPIX_ST_FLOAT16 == MPI_DATATYPE_NULL) make(&MPIX_ST_FLOAT16, "MPIX_ST_FLOAT16");
  if (MPIX_ST_BFLOAT16 == MPI_DATATYPE_NULL) make(&MPIX_ST_BFLOAT16, "MPIX_ST_BFLOAT16");
}

void free_half_datatypes() {
  drop(&MPIX_ST_FLOAT16);
  drop(&MPIX_ST_BFLOAT16);
}

bool is_half_datatype(MPI_Datatype t) {
  return t != MPI_DATATYPE_NULL && (t == MPIX_ST_FLOAT16 || t == MPIX_ST_BFLOAT16);
}

}  // namespace mpix::api
