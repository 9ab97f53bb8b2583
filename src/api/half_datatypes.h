// The library's handles for IEEE binary16 and bfloat16 (MPIX_ST_FLOAT16, MPIX_ST_BFLOAT16 in
// mpix_st.h): made by the interposed MPI_Init, freed by MPI_Finalize.
#pragma once
#include <mpi.h>

namespace mpix::api {

void create_half_datatypes();
void free_half_datatypes();
// Whether `t` is one of the two handles (MPI_Type_free refuses them).
bool is_half_datatype(MPI_Datatype t);

}  // namespace mpix::api
