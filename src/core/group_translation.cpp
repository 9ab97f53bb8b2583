#include "group_translation.h"

#include <atomic>
#include <string>

#include "window.h"

namespace mpix::core {
namespace {

std::atomic<uint64_t> g_generation{1};

Result translate_now(const Window &w, MPI_Group group, std::vector<int> *ranks) {
  int n = 0;
  if (PMPI_Group_size(group, &n) != MPI_SUCCESS) return fail(MPI_ERR_GROUP, "invalid group");
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = i;
  ranks->resize(n);
  if (n > 0 && PMPI_Group_translate_ranks(group, n, in.data(), w.group, ranks->data()) != MPI_SUCCESS)
    return fail(MPI_ERR_GROUP, "invalid group");
  // An MPI may build a group that names a process twice (MPICH 4.0's MPI_Group_incl does not check):
  // its epoch would count that peer's signals twice.
  std::vector<int> member_of(w.size, -1);
  for (int i = 0; i < n; ++i) {
    if ((*ranks)[i] == MPI_UNDEFINED)
      return fail(MPI_ERR_GROUP, "group member " + std::to_string(i) + " is not in the window's communicator");
    int &first = member_of[(*ranks)[i]];
    if (first >= 0)
      return fail(MPI_ERR_GROUP, "group members " + std::to_string(first) + " and " + std::to_string(i) +
                                     " are the same process (window rank " + std::to_string((*ranks)[i]) + ")");
    first = i;
    if (!w.peers[(*ranks)[i]].node_local && !w.remote)
      return fail(MPI_ERR_RANK, "window rank " + std::to_string((*ranks)[i]) +
                                    " is on another node, and the window has no inter-node transport");
  }
  return ok();
}

}  // namespace

Result translate_group(Window &w, MPI_Group group, std::vector<int> *ranks) {
  if (group == MPI_GROUP_NULL) return fail(MPI_ERR_GROUP, "group is MPI_GROUP_NULL");
  const uint64_t generation = g_generation.load(std::memory_order_acquire);
  GroupTranslations &t = w.group_translations;
  for (const GroupTranslations::Entry &e : t.entries) {
    if (e.group == group && e.generation == generation) {
      *ranks = e.ranks;
      return ok();
    }
  }
  if (Result r = translate_now(w, group, ranks)) return r;
  GroupTranslations::Entry &e = t.entries[t.next];
  t.next = (t.next + 1) % t.entries.size();
  e.group = group;
  e.generation = generation;
  e.ranks = *ranks;
  return ok();
}

void forget_group_translations() { g_generation.fetch_add(1, std::memory_order_acq_rel); }

}  // namespace mpix::core
