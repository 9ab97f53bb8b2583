// Start-up probe of a trigger style: the chain the epochs use ([Namashivayam 2023] §5.1), run on
// our own address: a put triggered by a counter, and an atomic add triggered by the put's
// completion. Also what the provider can tell about its triggered-operation capacity.
#include <atomic>
#include <thread>

#include "fabric_impl.h"

#if __has_include(<rdma/fi_cxi_ext.h>)
#include <rdma/fi_cxi_ext.h>
#endif

namespace mpix::ofi {

namespace {
constexpr uint64_t kProbeTimeoutMs = 2000;

uint64_t load(uint64_t &word) { return std::atomic_ref<uint64_t>(word).load(std::memory_order_acquire); }
}  // namespace

Fabric::Impl::Probe Fabric::Impl::probe(TriggerStyle s, std::string *why) {
  auto last = [this] {
    std::lock_guard lock(mu);
    return error;
  };
  if (!probe_region && !(probe_region = register_memory(probe_words, sizeof probe_words, nullptr)))
    return *why = last(), Probe::refused;
  RemoteRegion remote;
  {
    std::lock_guard lock(mu);
    remote = region(probe_region)->remote;
  }
  Counter trig = make_counter(), put_done = make_counter(), sig_done = make_counter();
  if (!trig || !put_done || !sig_done) return *why = last(), Probe::refused;
  auto release = [&] {
    release_counter(trig);
    release_counter(put_done);
    release_counter(sig_done);
  };
  const uint64_t pattern = 0x5eed000000000000ull | static_cast<uint64_t>(s);
  std::atomic_ref<uint64_t>(probe_words[0]).store(pattern);
  std::atomic_ref<uint64_t>(probe_words[1]).store(0);
  std::atomic_ref<uint64_t>(probe_words[2]).store(0);

  const Fabric::Piece piece{&probe_words[0], probe_region, 8, 8};
  if (rma(s, OpKind::put, &piece, 1, self, remote, Trigger{trig, 1, put_done})) {
    *why = "put: " + last();
    release();
    return Probe::refused;
  }
  if (atomic(s, FI_SUM, FI_UINT64, nullptr, 1, Region{}, 1, self, remote, 16, Trigger{put_done, 1, sig_done})) {
    *why = "atomic: " + last();
    // Let the queued put run so that nothing stays queued.
    add(trig, 1);
    if (wait(put_done, 1, kProbeTimeoutMs)) return *why += "; the put it left queued did not finish", Probe::broken;
    release();
    return Probe::refused;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (load(probe_words[1]) || load(probe_words[2]) || read(put_done))
    return *why = "the put ran before its trigger", Probe::broken;
  add(trig, 1);
  if (wait(sig_done, 1, kProbeTimeoutMs)) {
    *why = "the chain did not finish: " + last() + " (put completions " + std::to_string(read(put_done)) +
           ", errors " + std::to_string(read_errors(put_done)) + "; signal errors " +
           std::to_string(read_errors(sig_done)) + ")";
    return Probe::broken;
  }
  uint64_t got = load(probe_words[1]), flag = load(probe_words[2]);
  release();
  if (got != pattern || flag != 1)
    return *why = "wrong result (data " + std::to_string(got) + ", flag " + std::to_string(flag) + ")", Probe::refused;
  return Probe::works;
}

// CXI: the deferred work queue depth, shared by the processes of a job step (fi_cxi_ext.h).
// Compiled only where that header exists; not built or run on this project's test machines.
void Fabric::Impl::query_limits() {
#ifdef FI_CXI_DOM_OPS_5
  if (provider != "cxi") return;
  fi_cxi_dom_ops *ops = nullptr;
  size_t depth = 0;
  if (fi_open_ops(&domain->fid, FI_CXI_DOM_OPS_5, 0, reinterpret_cast<void **>(&ops), nullptr) == 0 &&
      ops && ops->get_dwq_depth && ops->get_dwq_depth(&domain->fid, &depth) == 0)
    triggered_limit = depth;
#endif
}

}  // namespace mpix::ofi
