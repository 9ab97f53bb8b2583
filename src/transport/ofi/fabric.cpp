// Opening the fabric: provider choice, the endpoint and its address vector, closing.
#include "fabric.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fabric_impl.h"
#include "settings/settings.h"

namespace mpix::ofi {

namespace {

constexpr uint32_t kApiVersion = FI_VERSION(1, 14);

std::vector<std::string> split_list(const std::string &list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string item = list.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

fi_info *make_hints(const std::string &provider, const Options &options, bool hmem) {
  fi_info *hints = fi_allocinfo();
  if (!hints) return nullptr;
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_RMA | FI_ATOMIC | FI_TRIGGER | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  if (hmem) {
    hints->caps |= FI_HMEM;
    hints->domain_attr->mr_mode |= FI_MR_HMEM;
  }
  // Our operation contexts are at least an fi_context2.
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  // Every registration mode below is handled in memory.cpp.
  hints->domain_attr->mr_mode |=
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  hints->domain_attr->threading = FI_THREAD_SAFE;  // the doorbell agent is another thread
  // sockets: manual progress by default, driven by the doorbell agent. Its FI_PROGRESS_AUTO
  // progress thread can go unscheduled for seconds on a loaded host (measured: 20 s runnable
  // without running), and nothing else reads its sockets meanwhile: requests and their
  // responses wait in the kernel's queues until the watchdog fires.
  using Progress = Options::Progress;
  if (options.progress == Progress::manual || (provider == "sockets" && options.progress == Progress::automatic))
    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  hints->fabric_attr->prov_name = strdup(provider.c_str());  // fi_freeinfo frees it
  if (!options.domain.empty() && provider == options.domain_provider)
    hints->domain_attr->name = strdup(options.domain.c_str());
  return hints;
}

// What the provider answers for `name` (FI_HMEM first where device memory will be registered);
// null with *rc where it answers nothing.
fi_info *provider_info(const std::string &name, const Options &options, bool *hmem, int *rc) {
  *rc = -FI_ENODATA;
  for (bool with_hmem : {options.device_memory, false}) {
    fi_info *hints = make_hints(name, options, with_hmem);
    if (!hints) return *rc = -FI_ENOMEM, nullptr;
    fi_info *info = nullptr;
    *rc = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints, &info);
    fi_freeinfo(hints);
    if (*rc == 0) return *hmem = with_hmem, info;
    if (!with_hmem) break;
  }
  return nullptr;
}

std::string pci_address(const fi_info *info) {
  if (!info->nic || !info->nic->bus_attr || info->nic->bus_attr->bus_type != FI_BUS_PCI) return "";
  const fi_pci_attr &p = info->nic->bus_attr->attr.pci;
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", p.domain_id, p.bus_id, p.device_id, p.function_id);
  return text;
}

int endpoint_name(fid_ep *ep, std::vector<uint8_t> *out) {
  out->resize(64);
  size_t len = out->size();
  int rc = fi_getname(&ep->fid, out->data(), &len);
  if (rc == -FI_ETOOSMALL) {
    out->resize(len);
    rc = fi_getname(&ep->fid, out->data(), &len);
  }
  out->resize(rc ? 0 : len);
  return rc;
}

// The domain, address vector, completion queue and endpoint; *why says what failed.
bool open_objects(Fabric::Impl &impl, std::string *why) {
  fi_info *info = impl.info;
  fi_av_attr av_attr{};
  av_attr.type = info->domain_attr->av_type == FI_AV_UNSPEC ? FI_AV_TABLE : info->domain_attr->av_type;
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_CONTEXT;
  cq_attr.wait_obj = FI_WAIT_NONE;
  int rc;
  if ((rc = fi_fabric(info->fabric_attr, &impl.fabric, nullptr))) return *why = fi_error_text("fi_fabric", rc), false;
  if ((rc = fi_domain(impl.fabric, info, &impl.domain, nullptr))) return *why = fi_error_text("fi_domain", rc), false;
  if ((rc = fi_av_open(impl.domain, &av_attr, &impl.av, nullptr))) return *why = fi_error_text("fi_av_open", rc), false;
  // Operations ask for no completion entries (FI_SELECTIVE_COMPLETION): the queue carries errors.
  if ((rc = fi_cq_open(impl.domain, &cq_attr, &impl.cq, nullptr))) return *why = fi_error_text("fi_cq_open", rc), false;
  if ((rc = fi_endpoint(impl.domain, info, &impl.ep, nullptr))) return *why = fi_error_text("fi_endpoint", rc), false;
  if ((rc = fi_ep_bind(impl.ep, &impl.av->fid, 0)) ||
      (rc = fi_ep_bind(impl.ep, &impl.cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)))
    return *why = fi_error_text("fi_ep_bind", rc), false;
  if ((rc = fi_enable(impl.ep))) return *why = fi_error_text("fi_enable", rc), false;

  size_t count = 0;
  if (fi_atomicvalid(impl.ep, FI_UINT64, FI_SUM, &count) || count == 0)
    return *why = "no 64-bit atomic sum (FI_UINT64, FI_SUM)", false;
  count = 0;
  impl.atomic_write = fi_atomicvalid(impl.ep, FI_UINT64, FI_ATOMIC_WRITE, &count) == 0 && count > 0;
  // Accumulate limits, asked once: the core splits every accumulate by them on each epoch.
  for (AtomicType t : {AtomicType::i32, AtomicType::i64, AtomicType::f32, AtomicType::f64})
    for (AtomicOp o : {AtomicOp::sum, AtomicOp::min, AtomicOp::max, AtomicOp::replace}) {
      size_t limit = 0;
      if (fi_atomicvalid(impl.ep, ofi_datatype(t), ofi_op(o), &limit) == 0)
        impl.atomic_limits[static_cast<int>(t)][static_cast<int>(o)] = limit;
    }

  std::vector<uint8_t> self;
  if ((rc = endpoint_name(impl.ep, &self))) return *why = fi_error_text("fi_getname", rc), false;
  if (fi_av_insert(impl.av, self.data(), 1, &impl.self, 0, nullptr) != 1)
    return *why = "fi_av_insert of the endpoint's own address failed", false;
  return true;
}

// The operation records; registered where atomic operands need a local descriptor.
bool make_records(Fabric::Impl &impl, size_t count, std::string *why) {
  impl.record_count = count ? count : 1;
  impl.records = std::make_unique<OpRecord[]>(impl.record_count);
  for (size_t i = impl.record_count; i-- > 0;) impl.free_records.push_back(static_cast<uint32_t>(i));
  const uint64_t mode = impl.info->domain_attr->mr_mode;
  if (!(mode & FI_MR_LOCAL)) return true;
  int rc = fi_mr_reg(impl.domain, impl.records.get(), impl.record_count * sizeof(OpRecord), FI_WRITE | FI_READ, 0,
                     impl.next_key++, 0, &impl.records_mr, nullptr);
  if (!rc && (mode & FI_MR_ENDPOINT) && !(rc = fi_mr_bind(impl.records_mr, &impl.ep->fid, 0)))
    rc = fi_mr_enable(impl.records_mr);
  if (rc) return *why = fi_error_text("fi_mr_reg (atomic operands)", rc), false;
  impl.records_desc = fi_mr_desc(impl.records_mr);
  return true;
}

// The deferred work queue is probed first: CXI accepts nothing else, and it names each operation's
// completion counter itself, where the triggered context style needs an endpoint per counter.
bool pick_style(Fabric::Impl &impl, TriggerStyle forced, std::string *why) {
  std::vector<TriggerStyle> styles = {TriggerStyle::deferred_work_queue, TriggerStyle::triggered_context};
  if (forced != TriggerStyle::none) styles = {forced};
  for (TriggerStyle s : styles) {
    std::string failed;
    Fabric::Impl::Probe result = impl.probe(s, &failed);
    if (!impl.probe_report.empty()) impl.probe_report += "; ";
    impl.probe_report += std::string(style_name(s)) + ": " + (result == Fabric::Impl::Probe::works ? "ok" : failed);
    if (result == Fabric::Impl::Probe::works) {
      impl.style = s;
      return true;
    }
    // Operations it left queued would fire into whatever comes next: refuse the provider.
    if (result == Fabric::Impl::Probe::broken) break;
  }
  return *why = "no triggered-operation style worked (" + impl.probe_report + ")", false;
}

std::unique_ptr<Fabric::Impl> open_provider(const std::string &name, const Options &options, std::string *why) {
  auto impl = std::make_unique<Fabric::Impl>();
  // Device memory registered directly where the provider can (FI_HMEM), else without it.
  int rc = 0;
  impl->info = provider_info(name, options, &impl->hmem, &rc);
  if (!impl->info) {
    *why = fi_error_text("fi_getinfo", rc) +
           " (not installed, or no reliable endpoint with RMA, atomics and triggered operations)";
    return nullptr;
  }
  impl->provider = impl->info->fabric_attr->prov_name;
  impl->manual_progress = impl->info->domain_attr->data_progress == FI_PROGRESS_MANUAL ||
                          impl->info->domain_attr->control_progress == FI_PROGRESS_MANUAL;
  impl->poke_triggers = impl->provider == "sockets";
  impl->busy_wait_ms = options.busy_wait_ms;
  if (!open_objects(*impl, why) || !make_records(*impl, options.max_pending_ops, why)) return nullptr;
  impl->query_limits();
  // Pieces per put or get: the provider's local and remote vector limits, and ours.
  const size_t vectors = std::min(impl->info->tx_attr->iov_limit, impl->info->tx_attr->rma_iov_limit);
  impl->pieces_limit = std::clamp<size_t>(std::min(vectors, options.max_rma_pieces ? options.max_rma_pieces : kMaxPieces),
                                          1, kMaxPieces);
  if (!pick_style(*impl, options.style, why)) return nullptr;
  return impl;
}

}  // namespace

std::string fi_error_text(const char *call, long ret) {
  return std::string(call) + ": " + fi_strerror(static_cast<int>(ret < 0 ? -ret : ret)) + " (" +
         std::to_string(ret) + ")";
}

const char *style_name(TriggerStyle style) {
  switch (style) {
    case TriggerStyle::deferred_work_queue: return "deferred_work_queue";
    case TriggerStyle::triggered_context: return "triggered_context";
    case TriggerStyle::none: break;
  }
  return "none";
}

// Read now, through the settings table (the library asks once, at MPI_Init; tests ask again).
bool options_from_env(Options *out, std::string *why) {
  using settings::Id;
  static_assert(settings::entry(Id::MPIX_ST_OFI_RMA_PIECES).min == 1 &&
                settings::entry(Id::MPIX_ST_OFI_RMA_PIECES).max == kMaxPieces);
  settings::Value provider, trigger, progress, pieces;
  if (!settings::read(Id::MPIX_ST_OFI_PROVIDER, &provider, why) ||
      !settings::read(Id::MPIX_ST_OFI_TRIGGER, &trigger, why) ||
      !settings::read(Id::MPIX_ST_OFI_PROGRESS, &progress, why) ||
      !settings::read(Id::MPIX_ST_OFI_RMA_PIECES, &pieces, why))
    return false;
  if (provider.set) out->providers = provider.text;
  if (trigger.set)
    out->style = trigger.text == "dwq"       ? TriggerStyle::deferred_work_queue
                 : trigger.text == "context" ? TriggerStyle::triggered_context
                                             : TriggerStyle::none;  // auto
  if (progress.set)
    out->progress = progress.text == "manual"     ? Options::Progress::manual
                    : progress.text == "provider" ? Options::Progress::provider
                                                  : Options::Progress::automatic;
  if (pieces.set) out->max_rma_pieces = static_cast<size_t>(pieces.number);
  return true;
}

std::vector<Nic> list_nics(const Options &options, std::string *why) {
  std::string tried;
  for (const std::string &name : split_list(options.providers)) {
    bool hmem = false;
    int rc = 0;
    fi_info *info = provider_info(name, options, &hmem, &rc);
    if (!info) {
      tried += (tried.empty() ? "" : "; ") + name + ": " + fi_error_text("fi_getinfo", rc);
      continue;
    }
    std::vector<Nic> nics;
    for (const fi_info *i = info; i; i = i->next) {
      const std::string domain = i->domain_attr->name ? i->domain_attr->name : "";
      if (std::none_of(nics.begin(), nics.end(), [&](const Nic &n) { return n.domain == domain; }))
        nics.push_back(Nic{i->fabric_attr->prov_name, domain, pci_address(i)});
    }
    fi_freeinfo(info);
    return nics;
  }
  *why = "no provider in \"" + options.providers + "\" answers (" + tried + ")";
  return {};
}

std::unique_ptr<Fabric> Fabric::open(const Options &options, std::string *why) {
  std::string tried;
  for (const std::string &name : split_list(options.providers)) {
    std::string failed;
    if (auto impl = open_provider(name, options, &failed)) return std::unique_ptr<Fabric>(new Fabric(std::move(impl)));
    tried += (tried.empty() ? "" : "; ") + name + ": " + failed;
  }
  *why = "no usable libfabric provider in \"" + options.providers + "\"" +
         (tried.empty() ? std::string(" (empty list)") : " (" + tried + ")");
  return nullptr;
}

Fabric::Fabric(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Fabric::~Fabric() = default;

Fabric::Impl::~Impl() {
  // Queued deferred work refers to our records and counters: cancel it first where the provider
  // can (sockets cannot: its queued triggers are left behind with the closed counters).
  bool pending = false;
  for (auto &c : counters) pending = pending || (c && !c->records.empty());
  if (pending && domain) fi_control(&domain->fid, FI_FLUSH_WORK, nullptr);
  for (auto &c : counters)
    if (c && c->ep) fi_close(&c->ep->fid);
  if (ep) fi_close(&ep->fid);
  for (auto &r : regions)
    if (r) fi_close(&r->mr->fid);
  if (records_mr) fi_close(&records_mr->fid);
  for (auto &c : counters)
    if (c) fi_close(&c->cntr->fid);
  if (cq) fi_close(&cq->fid);
  if (av) fi_close(&av->fid);
  if (domain) fi_close(&domain->fid);
  if (fabric) fi_close(&fabric->fid);
  if (info) fi_freeinfo(info);
}

Status Fabric::Impl::fail(Status status, std::string message) {
  error = std::move(message);
  return status;
}

const std::string &Fabric::provider() const { return impl_->provider; }
TriggerStyle Fabric::trigger_style() const { return impl_->style; }
const std::string &Fabric::probe_report() const { return impl_->probe_report; }
bool Fabric::manual_progress() const { return impl_->manual_progress; }
bool Fabric::needs_progress() const { return impl_->manual_progress || impl_->poke_triggers; }
uint64_t Fabric::triggered_op_limit() const { return impl_->triggered_limit; }
uint64_t Fabric::max_put_bytes() const { return impl_->info->ep_attr->max_msg_size; }
bool Fabric::supports_atomic_write() const { return impl_->atomic_write; }

std::string Fabric::last_error() const {
  std::lock_guard lock(impl_->mu);
  return impl_->error;
}

std::vector<uint8_t> Fabric::local_address() const {
  std::vector<uint8_t> name;
  endpoint_name(impl_->ep, &name);
  return name;
}

bool Fabric::insert_peers(const std::vector<std::vector<uint8_t>> &addresses) {
  std::lock_guard lock(impl_->mu);
  if (impl_->peers_inserted) return impl_->fail(kErrArg, "insert_peers: peers were already inserted"), false;
  std::vector<fi_addr_t> ids(addresses.size(), FI_ADDR_NOTAVAIL);
  for (size_t i = 0; i < addresses.size(); ++i) {
    // One at a time: address lengths need not match, and a failure names its peer.
    if (fi_av_insert(impl_->av, addresses[i].data(), 1, &ids[i], 0, nullptr) != 1)
      return impl_->fail(kErrProvider, "fi_av_insert failed for peer " + std::to_string(i)), false;
  }
  impl_->peers = std::move(ids);
  impl_->peers_inserted = true;
  return true;
}

int Fabric::peer_count() const {
  std::lock_guard lock(impl_->mu);
  return static_cast<int>(impl_->peers.size());
}

}  // namespace mpix::ofi
