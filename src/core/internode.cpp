#include "internode.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "config.h"
#include "settings/settings.h"
#include "topo/locality.h"
#include "topo/nic_choice.h"

namespace mpix::core::internode {
namespace {

struct State {
  std::unique_ptr<ofi::Fabric> fabric;
  std::unique_ptr<ofi::DoorbellAgent> agent;
  std::unique_ptr<throttle::TriggeredBudget> budget;
  std::unordered_map<uint64_t, std::pair<ofi::Counter, uint64_t>> batches;  // id -> completion
  std::string error = "no peer is on another node";
};

State &state() {
  static State s;
  return s;
}

// Whether any two ranks of the job are on different (virtual) nodes.
bool some_peer_remote() {
  const topo::Locality here = topo::locate_process(config().vnode_size);
  int size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<topo::Locality> all(size);
  PMPI_Allgather(&here, sizeof here, MPI_BYTE, all.data(), sizeof here, MPI_BYTE, MPI_COMM_WORLD);
  for (const topo::Locality &l : all)
    if (!l.same_node_as(here)) return true;
  return false;
}

// MPIX_ST_THROTTLE and MPIX_ST_TRIGGERED_OPS_MAX (0: not set, the provider's limit decides).
void throttle_settings(throttle::Mode *mode, uint64_t *budget) {
  using settings::Id;
  const std::string &name = settings::word(Id::MPIX_ST_THROTTLE);
  *mode = name == "app"      ? throttle::Mode::app
          : name == "static" ? throttle::Mode::static_wait
                             : throttle::Mode::adaptive;
  *budget = settings::is_set(Id::MPIX_ST_TRIGGERED_OPS_MAX) ? settings::number(Id::MPIX_ST_TRIGGERED_OPS_MAX) : 0;
}

// This rank's place among the ranks of its (physical) node: which NIC it takes depends on it.
struct LocalRank {
  int rank = 0, size = 1;
};
LocalRank local_rank() {
  MPI_Comm node;
  LocalRank l;
  PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  PMPI_Comm_rank(node, &l.rank);
  PMPI_Comm_size(node, &l.size);
  PMPI_Comm_free(&node);
  return l;
}

// Where the provider offers several domains, the one this rank opens (MPIX_ST_OFI_NIC, see
// topo/nic_choice.h): options->domain names it (for its provider only: should that provider fail
// to open, the next one of the list is opened as before). "" or why the variable names none.
// *report: the choice, for MPIX_ST_OFI_REPORT.
std::string choose_domain(ofi::Options *options, LocalRank local, std::string *report) {
  std::string why;
  const std::vector<ofi::Nic> nics = ofi::list_nics(*options, &why);
  if (nics.empty()) return "";  // open() says what no provider answered
  std::vector<topo::NicCandidate> candidates;
  for (const ofi::Nic &n : nics) candidates.push_back({n.domain, n.pci});
  const topo::NicRequest request = topo::nic_request_from_env();
  // hwloc's view of the machine (a PCI scan) only where it can change the choice. The GPU policy
  // asks the backend for its device now, which binds the device current at MPI_Init.
  const auto rails = std::count_if(nics.begin(), nics.end(), [](const ofi::Nic &n) { return !n.pci.empty(); });
  // Where the GPU's place is unknown (the host backend), the CPU binding decides.
  std::vector<int> nearness(nics.size(), -1);
  auto known = [&] { return std::any_of(nearness.begin(), nearness.end(), [](int d) { return d >= 0; }); };
  const bool by_gpu = request.policy == topo::NicPolicy::gpu;
  if (rails > 1 && by_gpu) nearness = topo::nic_distance(candidates, gpu::backend().device_id());
  if (rails > 1 && !known() && (by_gpu || request.policy == topo::NicPolicy::automatic))
    nearness = topo::nic_locality(candidates);
  const int pick = topo::choose_nic(candidates, nearness, request, local.rank, local.size, &why);
  if (pick < 0) return why;
  const ofi::Nic &nic = nics[pick];
  options->domain = nic.domain;
  options->domain_provider = nic.provider;
  *report = nic.provider + " domain " + nic.domain + (nic.pci.empty() ? "" : " (PCI " + nic.pci + ")") + ", " +
            std::to_string(pick + 1) + " of " + std::to_string(nics.size()) + " for local rank " +
            std::to_string(local.rank) + " of " + std::to_string(local.size);
  return "";
}

// Opens the fabric on this rank; every rank then takes part in the address exchange, so a rank
// that failed cannot leave the others waiting.
std::string open_local(State &s, LocalRank local, throttle::Mode *mode, uint64_t *budget) {
  std::string why;
  throttle_settings(mode, budget);
  ofi::Options options;
  if (!ofi::options_from_env(&options, &why)) return why;
  // Posting waits for operation records as long as the budget waits for slots.
  options.busy_wait_ms = config().watchdog_ns / 1000000;
  // Unless the host backend is asked for, windows may be device memory: ask for FI_HMEM first.
  // (The backend itself is chosen later, on first use: a GPU plugin binds the device current then.)
  options.device_memory = settings::word(settings::Id::MPIX_ST_BACKEND) != "host";
  std::string nic;
  if (std::string refused = choose_domain(&options, local, &nic); !refused.empty()) return refused;
  s.fabric = ofi::Fabric::open(options, &why);
  if (!s.fabric) return "no libfabric provider could be opened: " + why;
  if (settings::flag(settings::Id::MPIX_ST_OFI_REPORT)) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "mpix-st ofi rank %d: %s, trigger style %s\n", rank,
                 nic.empty() ? s.fabric->provider().c_str() : nic.c_str(), ofi::style_name(s.fabric->trigger_style()));
  }
  return "";
}

}  // namespace

void open_if_needed() {
  if (!some_peer_remote()) return;
  State &s = state();
  throttle::Mode mode = throttle::Mode::adaptive;
  uint64_t budget = 0;
  const LocalRank local = local_rank();  // collective: before anything that may fail
  std::string why = open_local(s, local, &mode, &budget);

  std::vector<uint8_t> mine = why.empty() ? s.fabric->local_address() : std::vector<uint8_t>{};
  int size = 0, len = static_cast<int>(mine.size()), ok = why.empty() ? 1 : 0, all_ok = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  std::vector<int> lens(size), displs(size);
  PMPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size; ++r) displs[r] = total, total += lens[r];
  std::vector<uint8_t> bytes(total);
  PMPI_Allgatherv(mine.data(), len, MPI_BYTE, bytes.data(), lens.data(), displs.data(), MPI_BYTE, MPI_COMM_WORLD);
  if (!all_ok) {
    s.error = why.empty() ? "the inter-node transport failed to open on another rank" : why;
    s.fabric.reset();
    return;
  }
  std::vector<std::vector<uint8_t>> addresses(size);
  for (int r = 0; r < size; ++r) addresses[r].assign(bytes.begin() + displs[r], bytes.begin() + displs[r] + lens[r]);
  if (!s.fabric->insert_peers(addresses)) {
    s.error = "inserting peer addresses failed: " + s.fabric->last_error();
    s.fabric.reset();
    return;
  }
  // The budget: MPIX_ST_TRIGGERED_OPS_MAX, else what the provider says it can queue.
  // Without either, half the operation records: records are released in bulk, when a
  // completion counter has caught up (Fabric::Impl::reclaim), so they free up later than slots.
  if (budget == 0) budget = s.fabric->triggered_op_limit();
  if (budget == 0) budget = ofi::Options{}.max_pending_ops / 2;
  s.agent = std::make_unique<ofi::DoorbellAgent>(*s.fabric, std::chrono::microseconds(config().doorbell_poll_us));
  s.budget = std::make_unique<throttle::TriggeredBudget>(mode, budget, [&s](uint64_t id) {
    auto it = s.batches.find(id);
    if (it == s.batches.end()) return true;
    auto done = [&] { return s.fabric->read(it->second.first) >= it->second.second; };
    if (!done()) {
      s.fabric->progress();  // a waiting host drives the provider (its fired triggers can stall)
      if (!done()) return false;
    }
    s.batches.erase(it);
    return true;
  });
  s.error.clear();
}

// MPIX_ST_THROTTLE_REPORT=1: one line per rank at MPI_Finalize with the budget's counters.
void report(const State &s) {
  if (!s.budget || !settings::flag(settings::Id::MPIX_ST_THROTTLE_REPORT)) return;
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const throttle::Stats &st = s.budget->stats();
  std::fprintf(stderr,
               "mpix-st throttle rank %d: mode %s, budget %llu, batches %llu, operations %llu, peak in use %llu, "
               "waits %llu (%.3f ms), reclaimed %llu, refused %llu\n",
               rank, throttle::mode_name(s.budget->mode()), (unsigned long long)s.budget->capacity(),
               (unsigned long long)st.batches, (unsigned long long)st.ops, (unsigned long long)st.peak_in_use,
               (unsigned long long)st.waits, st.wait_ns / 1e6, (unsigned long long)st.reclaimed,
               (unsigned long long)st.refused);
}

void close() {
  State &s = state();
  // Operations of peers toward this rank complete only while its endpoint is open (and driven):
  // no rank closes before every rank has waited for its own.
  if (s.fabric) PMPI_Barrier(MPI_COMM_WORLD);
  report(s);
  s.agent.reset();
  s.budget.reset();
  s.batches.clear();
  s.fabric.reset();
  s.error = "the inter-node transport was closed";
}

Result available() {
  const State &s = state();
  if (s.fabric) return ok();
  return fail(MPI_ERR_OTHER, "peers on other nodes need the inter-node transport: " + s.error);
}

ofi::Fabric &fabric() { return *state().fabric; }

uint64_t wait_limit_ms() {
  const uint64_t ms = config().watchdog_ns / 1000000;
  return ms ? ms : 24ull * 3600 * 1000;
}

Result transport_failure(const char *what) {
  return fail(MPI_ERR_OTHER, std::string(what) + ": " + fabric().last_error());
}
ofi::DoorbellAgent &doorbells() { return *state().agent; }
throttle::TriggeredBudget &budget() { return *state().budget; }

void forget_completed(ofi::Counter completion) {
  State &s = state();
  std::erase_if(s.batches, [&](const auto &b) { return b.second.first.id == completion.id; });
}

Result reserve(uint64_t ops, ofi::Counter completion, uint64_t threshold) {
  State &s = state();
  uint64_t id = 0;
  const uint64_t cap = s.budget->capacity();
  switch (s.budget->reserve(ops, config().watchdog_ns, &id)) {
    case throttle::Status::ok:
      s.batches[id] = {completion, threshold};
      return ok();
    case throttle::Status::too_large:
      return fail(resource_error_class(), "an epoch needs " + std::to_string(ops) +
                                              " triggered operations but the budget holds " + std::to_string(cap) +
                                              " (raise MPIX_ST_TRIGGERED_OPS_MAX)");
    case throttle::Status::exhausted:
      return fail(resource_error_class(),
                  "the budget of " + std::to_string(cap) +
                      " triggered operations is in use (MPIX_ST_THROTTLE=app): synchronize the stream every few "
                      "iterations, raise MPIX_ST_TRIGGERED_OPS_MAX, or set MPIX_ST_THROTTLE=static or adaptive");
    default: {
      std::string transport = s.fabric->last_error();
      if (auto oldest = s.batches.find(s.budget->oldest_batch()); oldest != s.batches.end())
        transport += (transport.empty() ? "" : "; ") + std::string("the oldest reservation awaits ") +
                     std::to_string(oldest->second.second) + " completions, its counter holds " +
                     std::to_string(s.fabric->read(oldest->second.first)) + ", " +
                     std::to_string(s.fabric->pending_ops()) + " operations pending";
      return fail(resource_error_class(), "waited longer than MPIX_ST_WATCHDOG_MS for triggered operations to "
                                          "complete (MPIX_ST_THROTTLE=" +
                                              std::string(throttle::mode_name(s.budget->mode())) + ")" +
                                              (transport.empty() ? "" : "; the transport reports: " + transport));
    }
  }
}

}  // namespace mpix::core::internode
