// Which NIC a rank uses (src/topo/nic_choice.h): the policies of MPIX_ST_OFI_NIC, and where NICs
// sit relative to a CPU binding or a GPU in a recorded topology (data/two_packages_three_nics.xml:
// behind package 0 (CPUs 0-3), NIC 10:00.0 on the host bridge and a PCI switch holding NIC 11:00.0
// and GPU 12:00.0; behind package 1 (CPUs 4-7), NIC 90:00.0). The file holds no XML comment:
// hwloc's built-in parser, all it has without the libxml2 plugin (libhwloc-plugins), rejects one.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "topo/nic_choice.h"

using mpix::topo::choose_nic;
using mpix::topo::NicCandidate;
using mpix::topo::NicPolicy;
using mpix::topo::NicRequest;

namespace {

const std::vector<NicCandidate> kCxi = {{"cxi0", "0000:10:00.0"}, {"cxi1", "0000:11:00.0"}, {"cxi2", "0000:90:00.0"}};
const std::vector<NicCandidate> kSockets = {{"eth0", ""}, {"eth0", ""}, {"lo", ""}};

NicRequest policy(NicPolicy p, std::string name = "") {
  NicRequest r;
  r.policy = p;
  r.name = std::move(name);
  return r;
}

// The NIC each of `n` local ranks gets.
std::vector<int> spread(const std::vector<NicCandidate> &nics, const std::vector<int> &locality, const NicRequest &r,
                        int n) {
  std::vector<int> out;
  for (int rank = 0; rank < n; ++rank) {
    std::string why;
    out.push_back(choose_nic(nics, locality, r, rank, n, &why));
    CHECK(why.empty());
  }
  return out;
}

}  // namespace

TEST_CASE("block, round robin, first and named policies") {
  const std::vector<int> unknown(3, -1);
  CHECK(spread(kCxi, unknown, policy(NicPolicy::block), 6) == std::vector<int>{0, 0, 1, 1, 2, 2});
  CHECK(spread(kCxi, unknown, policy(NicPolicy::round_robin), 5) == std::vector<int>{0, 1, 2, 0, 1});
  CHECK(spread(kCxi, unknown, policy(NicPolicy::first), 3) == std::vector<int>{0, 0, 0});
  CHECK(spread(kCxi, unknown, policy(NicPolicy::named, "cxi2"), 2) == std::vector<int>{2, 2});
  std::string why;
  CHECK(choose_nic(kCxi, unknown, policy(NicPolicy::named, "cxi7"), 0, 1, &why) == -1);
  CHECK(why.find("MPIX_ST_OFI_NIC=cxi7") != std::string::npos);
  CHECK(why.find("cxi0, cxi1, cxi2") != std::string::npos);
  why.clear();
  CHECK(choose_nic({}, {}, policy(NicPolicy::first), 0, 1, &why) == -1);
  CHECK(!why.empty());
}

TEST_CASE("auto keeps the first interface where none is a PCI device") {
  CHECK(spread(kSockets, std::vector<int>(3, -1), NicRequest{}, 4) == std::vector<int>{0, 0, 0, 0});
}

TEST_CASE("auto spreads ranks over equally near NICs, nearest first") {
  // Unknown places: every NIC is as near as any other.
  CHECK(spread(kCxi, std::vector<int>(3, -1), NicRequest{}, 4) == std::vector<int>{0, 1, 2, 0});
  // Bound near cxi0 and cxi1: those two only.
  CHECK(spread(kCxi, {0, 0, 2}, NicRequest{}, 4) == std::vector<int>{0, 1, 0, 1});
  // A known place beats an unknown one.
  CHECK(spread(kCxi, {-1, -1, 1}, NicRequest{}, 2) == std::vector<int>{2, 2});
  // A NIC without a PCI address is not a rail.
  const std::vector<NicCandidate> mixed = {{"lo", ""}, {"cxi0", "0000:10:00.0"}, {"cxi2", "0000:90:00.0"}};
  CHECK(spread(mixed, {-1, 2, 0}, NicRequest{}, 2) == std::vector<int>{2, 2});
}

TEST_CASE("MPIX_ST_OFI_NIC") {
  auto parsed = [](const char *v) {
    if (v) setenv("MPIX_ST_OFI_NIC", v, 1);
    else unsetenv("MPIX_ST_OFI_NIC");
    return mpix::topo::nic_request_from_env();
  };
  CHECK(parsed(nullptr).policy == NicPolicy::automatic);
  CHECK(parsed("").policy == NicPolicy::automatic);
  CHECK(parsed("auto").policy == NicPolicy::automatic);
  CHECK(parsed("first").policy == NicPolicy::first);
  CHECK(parsed("block").policy == NicPolicy::block);
  CHECK(parsed("round-robin").policy == NicPolicy::round_robin);
  CHECK(parsed("gpu").policy == NicPolicy::gpu);
  const NicRequest named = parsed("cxi3");
  CHECK(named.policy == NicPolicy::named);
  CHECK(named.name == "cxi3");
  unsetenv("MPIX_ST_OFI_NIC");
}

#ifdef MPIX_TEST_HWLOC
static std::string topology() { return std::string(MPIX_TEST_DATA_DIR) + "/two_packages_three_nics.xml"; }

TEST_CASE("where NICs sit relative to a CPU binding, from a recorded topology") {
  std::string why;
  const std::vector<NicCandidate> with_unknown = {kCxi[0], kCxi[1], kCxi[2], {"cxi9", "0000:aa:00.0"}, {"lo", ""}};
  CHECK(mpix::topo::nic_locality_in(with_unknown, topology(), "0-3", &why) == std::vector<int>{0, 0, 2, -1, -1});
  CHECK(mpix::topo::nic_locality_in(kCxi, topology(), "5", &why) == std::vector<int>{2, 2, 0});
  CHECK(mpix::topo::nic_locality_in(kCxi, topology(), "0-7", &why) == std::vector<int>{1, 1, 1});
  CHECK(mpix::topo::nic_locality_in(kCxi, topology(), "2-5", &why) == std::vector<int>{1, 1, 1});
  CHECK(why.empty());
  // Four ranks bound to package 1 share its one NIC; four on package 0 spread over its two.
  const std::vector<int> package1 = mpix::topo::nic_locality_in(kCxi, topology(), "4-7", &why);
  CHECK(spread(kCxi, package1, NicRequest{}, 4) == std::vector<int>{2, 2, 2, 2});
  CHECK(mpix::topo::nic_locality_in(kCxi, "/nonexistent.xml", "0", &why).empty());
  CHECK(why.find("/nonexistent.xml") != std::string::npos);
}

TEST_CASE("the NIC nearest a GPU, from a recorded topology") {
  std::string why;
  // The GPU shares a switch with cxi1 (2 links), the host bridge with cxi0 (3), only the machine
  // with cxi2.
  const std::vector<int> from_gpu = mpix::topo::nic_distance_in(kCxi, topology(), "0000:12:00.0", &why);
  CHECK(why.empty());
  REQUIRE(from_gpu.size() == 3);
  CHECK(from_gpu[1] == 2);
  CHECK(from_gpu[0] == 3);
  CHECK(from_gpu[2] > from_gpu[0]);
  CHECK(spread(kCxi, from_gpu, policy(NicPolicy::gpu), 2) == std::vector<int>{1, 1});
  // CPU binding alone cannot tell cxi0 from cxi1.
  CHECK(spread(kCxi, mpix::topo::nic_locality_in(kCxi, topology(), "0-3", &why), NicRequest{}, 2) ==
        std::vector<int>{0, 1});
  // A GPU the topology lacks: nothing is known.
  CHECK(mpix::topo::nic_distance_in(kCxi, topology(), "0000:77:00.0", &why) == std::vector<int>{-1, -1, -1});
}
#endif
