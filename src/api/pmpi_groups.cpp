// Interposed MPI_Group_free: windows remember the translations of the groups their epochs named
// (core/group_translation.h), and the MPI may hand a freed handle's value out again for a group of
// other processes; forgetting them before the free means a reused value is translated afresh.
#include <mpi.h>

#include "../core/group_translation.h"

extern "C" int MPI_Group_free(MPI_Group *group) {
  if (group && *group != MPI_GROUP_NULL) mpix::core::forget_group_translations();
  return PMPI_Group_free(group);
}
