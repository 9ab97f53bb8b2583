// One launch's stamps on the host backend (MPIX_ST_TRACE, kernels/launch_trace.h), written to the
// log together (one claim) when the launch ends, as the kernels write them: a launch's records
// stay contiguous whatever other streams stamp meanwhile. Epoch tasks (host_exec.cpp) and
// collective calls (host_coll_exec.cpp) both stamp through it.
#pragma once
#include <atomic>
#include <cstdint>

#include "host_exec.h"
#include "kernels/launch_trace.h"

namespace mpix::gpu::host_exec {

class LaunchStamps {
 public:
  // `parts`: the enter record's info (work::trace_parts, work::trace_collective_parts).
  LaunchStamps(work::TraceLog *log, uint32_t window_id, uint16_t parts) : log_(log), window_(window_id), parts_(parts) {}
  LaunchStamps(const LaunchStamps &) = delete;
  LaunchStamps &operator=(const LaunchStamps &) = delete;
  void operator()(uint16_t event) { at(event, log_ ? clock_ns() : 0); }
  // An event that happened at `t` (clock_ns), stamped now: collective calls learn when their last
  // wait ended only once the schedule is over.
  void at(uint16_t event, uint64_t t) {
    if (!log_ || n_ == work::kTraceEvents) return;
    t_[n_] = t;
    e_[n_++] = event;
  }
  bool on() const { return log_ != nullptr; }
  ~LaunchStamps() {
    if (!log_ || n_ == 0) return;
    const unsigned long long i = std::atomic_ref<unsigned long long>(log_->claimed).fetch_add(n_, std::memory_order_relaxed);
    for (int k = 0; k < n_; ++k)
      if (i + k < log_->capacity) log_->records()[i + k] = {t_[k], window_, e_[k], uint16_t(k == 0 ? parts_ : 0)};
  }

 private:
  work::TraceLog *log_;
  uint32_t window_;
  uint16_t parts_;
  int n_ = 0;
  uint64_t t_[work::kTraceEvents] = {};
  uint16_t e_[work::kTraceEvents] = {};
};

}  // namespace mpix::gpu::host_exec
