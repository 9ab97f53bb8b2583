// nic_locality() and nic_distance() where the library is built without hwloc: every NIC's place
// is unknown, so MPIX_ST_OFI_NIC=auto and gpu spread local ranks over the NICs round robin.
#include "nic_choice.h"

namespace mpix::topo {

std::vector<int> nic_locality(const std::vector<NicCandidate> &nics) { return std::vector<int>(nics.size(), -1); }

std::vector<int> nic_locality_in(const std::vector<NicCandidate> &, const std::string &, const std::string &,
                                 std::string *why) {
  *why = "built without hwloc";
  return {};
}

std::vector<int> nic_distance(const std::vector<NicCandidate> &nics, const std::string &) {
  return std::vector<int>(nics.size(), -1);
}

std::vector<int> nic_distance_in(const std::vector<NicCandidate> &, const std::string &, const std::string &,
                                 std::string *why) {
  *why = "built without hwloc";
  return {};
}

}  // namespace mpix::topo
