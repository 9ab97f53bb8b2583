// Epoch groups translated into a window's ranks, remembered per window for the groups its epochs
// named last: stencil codes name the same neighbour group in every epoch, and the translation
// (two MPI calls and three allocations) was a sixth of an eager MPIX call's own host time.
// The MPI may give a freed group's handle value to a new group of other processes, so the
// interposed MPI_Group_free (api/pmpi_groups.cpp) forgets every remembered translation.
#pragma once
#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

#include "result.h"

namespace mpix::core {

class Window;

struct GroupTranslations {
  struct Entry {
    MPI_Group group = MPI_GROUP_NULL;
    uint64_t generation = 0;  // group_generation() when translated
    std::vector<int> ranks;
  };
  std::array<Entry, 2> entries;  // an exposure group and an access group
  unsigned next = 0;             // the entry replaced next
};

// Window ranks of the group's members in group order; checks that each is a distinct process of
// the window that the window can reach.
Result translate_group(Window &w, MPI_Group group, std::vector<int> *ranks);

// Every group freed from now on invalidates the translations made before.
void forget_group_translations();

}  // namespace mpix::core
