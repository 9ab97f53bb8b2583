// nic_locality(): where each NIC sits relative to this process's CPU binding, from hwloc's view of
// the PCI tree (built where hwloc is found; nic_locality_absent.cpp elsewhere).
#include <hwloc.h>

#include <cstdio>
#include <vector>

#include "nic_choice.h"

namespace mpix::topo {
namespace {

// A loaded topology with its PCI devices, freed when it goes out of scope.
class Topology {
 public:
  explicit Topology(const char *xml_path) {
    if (hwloc_topology_init(&t_)) return;
    hwloc_topology_set_io_types_filter(t_, HWLOC_TYPE_FILTER_KEEP_ALL);
    if ((xml_path && hwloc_topology_set_xml(t_, xml_path)) || hwloc_topology_load(t_)) {
      hwloc_topology_destroy(t_);
      t_ = nullptr;
    }
  }
  ~Topology() {
    if (t_) hwloc_topology_destroy(t_);
  }
  Topology(const Topology &) = delete;
  Topology &operator=(const Topology &) = delete;
  hwloc_topology_t get() const { return t_; }

 private:
  hwloc_topology_t t_ = nullptr;
};

hwloc_obj_t pci_device(hwloc_topology_t t, const std::string &pci) {
  unsigned domain = 0, bus = 0, dev = 0, func = 0;
  if (pci.empty() || std::sscanf(pci.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &func) != 4) return nullptr;
  return hwloc_get_pcidev_by_busid(t, domain, bus, dev, func);
}

// 0: the NIC's CPUs (those of its nearest non-I/O ancestor) hold all of `cpus`; 1: some; 2: none;
// -1: the address is not a PCI device of the topology.
int locality_of(hwloc_topology_t t, const std::string &pci, hwloc_const_bitmap_t cpus) {
  hwloc_obj_t nic = pci_device(t, pci);
  if (!nic) return -1;
  hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(t, nic);
  if (!near || !near->cpuset) return -1;
  if (hwloc_bitmap_isincluded(cpus, near->cpuset)) return 0;
  return hwloc_bitmap_intersects(cpus, near->cpuset) ? 1 : 2;
}

std::vector<int> localities(hwloc_topology_t t, const std::vector<NicCandidate> &nics, hwloc_const_bitmap_t cpus) {
  std::vector<int> out;
  for (const NicCandidate &n : nics) out.push_back(locality_of(t, n.pci, cpus));
  return out;
}

// Links from `a` up to the closest ancestor it shares with `b` and down to `b` (hwloc's I/O
// objects have parents like any other, up to the machine).
int hops_between(hwloc_obj_t a, hwloc_obj_t b) {
  std::vector<hwloc_obj_t> up;
  for (hwloc_obj_t o = a; o; o = o->parent) up.push_back(o);
  int down = 0;
  for (hwloc_obj_t o = b; o; o = o->parent, ++down)
    for (size_t i = 0; i < up.size(); ++i)
      if (up[i] == o) return static_cast<int>(i) + down;
  return -1;
}

std::vector<int> distances(hwloc_topology_t t, const std::vector<NicCandidate> &nics, const std::string &device_pci) {
  std::vector<int> out(nics.size(), -1);
  hwloc_obj_t device = pci_device(t, device_pci);
  if (!device) return out;
  for (size_t i = 0; i < nics.size(); ++i)
    if (hwloc_obj_t nic = pci_device(t, nics[i].pci)) out[i] = hops_between(nic, device);
  return out;
}

}  // namespace

std::vector<int> nic_locality(const std::vector<NicCandidate> &nics) {
  std::vector<int> unknown(nics.size(), -1);
  Topology topo(nullptr);
  if (!topo.get()) return unknown;
  hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
  std::vector<int> out = unknown;
  if (cpus && hwloc_get_cpubind(topo.get(), cpus, HWLOC_CPUBIND_PROCESS) == 0) out = localities(topo.get(), nics, cpus);
  hwloc_bitmap_free(cpus);
  return out;
}

std::vector<int> nic_locality_in(const std::vector<NicCandidate> &nics, const std::string &xml_path,
                                 const std::string &cpu_list, std::string *why) {
  Topology topo(xml_path.c_str());
  if (!topo.get()) return *why = "hwloc could not load " + xml_path, std::vector<int>{};
  hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
  std::vector<int> out;
  if (!cpus || hwloc_bitmap_list_sscanf(cpus, cpu_list.c_str()))
    *why = "not a CPU list: " + cpu_list;
  else
    out = localities(topo.get(), nics, cpus);
  hwloc_bitmap_free(cpus);
  return out;
}

std::vector<int> nic_distance(const std::vector<NicCandidate> &nics, const std::string &device_pci) {
  Topology topo(nullptr);
  if (!topo.get()) return std::vector<int>(nics.size(), -1);
  return distances(topo.get(), nics, device_pci);
}

std::vector<int> nic_distance_in(const std::vector<NicCandidate> &nics, const std::string &xml_path,
                                 const std::string &device_pci, std::string *why) {
  Topology topo(xml_path.c_str());
  if (!topo.get()) return *why = "hwloc could not load " + xml_path, std::vector<int>{};
  return distances(topo.get(), nics, device_pci);
}

}  // namespace mpix::topo
