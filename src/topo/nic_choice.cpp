#include "nic_choice.h"

#include <algorithm>

#include "settings/settings.h"

namespace mpix::topo {

NicRequest nic_request_from_env() {
  NicRequest r;
  // Read now: the library asks once, at MPI_Init, after MPI_Init checked every setting. A value the
  // table refuses is kept as a name, which no domain has: the choice then refuses it.
  settings::Value s;
  const std::string v = settings::read(settings::Id::MPIX_ST_OFI_NIC, &s, nullptr)
                            ? s.text
                            : settings::given(settings::Id::MPIX_ST_OFI_NIC);
  if (v == "auto") return r;
  if (v == "first") r.policy = NicPolicy::first;
  else if (v == "block") r.policy = NicPolicy::block;
  else if (v == "round-robin") r.policy = NicPolicy::round_robin;
  else if (v == "gpu") r.policy = NicPolicy::gpu;
  else r.policy = NicPolicy::named, r.name = v;
  return r;
}

int choose_nic(const std::vector<NicCandidate> &nics, const std::vector<int> &nearness, const NicRequest &request,
               int local_rank, int local_size, std::string *why) {
  const int n = static_cast<int>(nics.size());
  if (n == 0) return *why = "the provider offers no domain", -1;
  local_size = std::max(local_size, 1);
  local_rank = std::clamp(local_rank, 0, local_size - 1);
  switch (request.policy) {
    case NicPolicy::first: return 0;
    case NicPolicy::block: return static_cast<int>(static_cast<long long>(local_rank) * n / local_size);
    case NicPolicy::round_robin: return local_rank % n;
    case NicPolicy::named: {
      for (int i = 0; i < n; ++i)
        if (nics[i].domain == request.name) return i;
      std::string names;
      for (const NicCandidate &c : nics) names += (names.empty() ? "" : ", ") + c.domain;
      return *why = "MPIX_ST_OFI_NIC=" + request.name + " names no domain of the provider (it offers " + names + ")", -1;
    }
    case NicPolicy::automatic:
    case NicPolicy::gpu: break;
  }
  // Interfaces without PCI addresses (sockets, tcp) may not reach each other across nodes (a
  // loopback interface): keep the provider's first, as libfabric programs get by default.
  std::vector<int> real;
  for (int i = 0; i < n; ++i)
    if (!nics[i].pci.empty()) real.push_back(i);
  if (real.empty()) return 0;
  // The nearest: the lowest known nearness; unknown counts as farther than any known.
  constexpr int kUnknown = 1 << 20;
  auto far = [&](int i) { return nearness.size() == nics.size() && nearness[i] >= 0 ? nearness[i] : kUnknown; };
  int best = kUnknown;
  for (int i : real) best = std::min(best, far(i));
  std::vector<int> nearest;
  for (int i : real)
    if (far(i) == best) nearest.push_back(i);
  // Ranks that share the nearest NICs spread over them (bound ranks see their own few; unbound
  // ranks see every NIC as equally near and spread over all).
  return nearest[local_rank % static_cast<int>(nearest.size())];
}

}  // namespace mpix::topo
