// Which network interface (libfabric domain) this rank uses when the provider offers several:
// the rails of [Kandadi Suresh 2022], each rank on its nearest NIC. Chosen once, at MPI_Init, by
// MPIX_ST_OFI_NIC (see nic_choice.cpp); the transport then opens only that domain.
#pragma once
#include <string>
#include <vector>

namespace mpix::topo {

struct NicCandidate {
  std::string domain;  // the provider's domain name (cxi0, mlx5_1, eth0)
  std::string pci;     // PCI address "dddd:bb:dd.f"; empty where the provider names none
};

enum class NicPolicy {
  automatic,    // the NICs nearest this process's CPUs, round robin by local rank among them;
                // the first domain where no candidate has a PCI address (sockets, tcp interfaces)
  first,        // the provider's first domain (what an unconfigured libfabric program gets)
  block,        // local ranks in blocks: rank r of n on NIC r * nics / n
  round_robin,  // rank r on NIC r % nics
  gpu,          // the NICs nearest this rank's GPU in the PCI tree, round robin among them; as
                // automatic where the GPU is unknown (the host backend)
  named,        // the domain the variable names
};

struct NicRequest {
  NicPolicy policy = NicPolicy::automatic;
  std::string name;  // named: the domain
};

// MPIX_ST_OFI_NIC: auto (also unset or empty), first, block, round-robin, gpu, or a domain name.
NicRequest nic_request_from_env();

// How close each candidate is to this process's CPU binding: 0 the NIC's CPUs hold every CPU
// this process may run on, 1 some of them, 2 none; -1 unknown (no PCI address, no topology
// information, or built without hwloc).
std::vector<int> nic_locality(const std::vector<NicCandidate> &nics);
// The same, from the hwloc XML topology at `xml_path` and the CPU set `cpus` (hwloc's list syntax,
// e.g. "0-3,8"): for tests, which cannot pick the machine they run on. Empty result: the topology
// could not be loaded (*why says why).
std::vector<int> nic_locality_in(const std::vector<NicCandidate> &nics, const std::string &xml_path,
                                 const std::string &cpus, std::string *why);

// How far each candidate is from the PCI device at `device_pci` (a GPU): the PCI links between
// the two through their closest common ancestor (2: behind one switch); -1 unknown.
std::vector<int> nic_distance(const std::vector<NicCandidate> &nics, const std::string &device_pci);
// The same in the hwloc XML topology at `xml_path` (tests). Empty with *why where it cannot load.
std::vector<int> nic_distance_in(const std::vector<NicCandidate> &nics, const std::string &xml_path,
                                 const std::string &device_pci, std::string *why);

// The index of the candidate local rank `local_rank` of `local_size` uses; -1 with *why when the
// request names no candidate. `nearness` (same length as `nics`; lower is nearer, -1 unknown):
// nic_locality() for automatic, nic_distance() from the rank's GPU for gpu.
int choose_nic(const std::vector<NicCandidate> &nics, const std::vector<int> &nearness, const NicRequest &request,
               int local_rank, int local_size, std::string *why);

}  // namespace mpix::topo
