#include "triggered_budget.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace mpix::throttle {
namespace {
uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}
}  // namespace

const char *mode_name(Mode mode) {
  switch (mode) {
    case Mode::app: return "app";
    case Mode::static_wait: return "static";
    default: return "adaptive";
  }
}

TriggeredBudget::TriggeredBudget(Mode mode, uint64_t capacity, IsComplete is_complete)
    : mode_(mode), capacity_(capacity), is_complete_(std::move(is_complete)) {}

// Batches finish in the order their epochs run on the streams, which is reservation order per
// stream; releasing from the front keeps the bookkeeping a queue (FIFO over thresholds).
void TriggeredBudget::release_front_while_complete() {
  while (!batches_.empty() && is_complete_(batches_.front().id)) {
    in_use_ -= batches_.front().ops;
    batches_.pop_front();
    ++stats_.reclaimed;
  }
}

uint64_t TriggeredBudget::reclaim() {
  release_front_while_complete();
  return in_use_;
}

// Polls with growing pauses: the operations being waited for progress on the NIC (or on the
// doorbell agent's thread), not on this one.
bool TriggeredBudget::wait_until(const std::function<bool()> &done, uint64_t watchdog_ns) {
  const uint64_t start = now_ns();
  ++stats_.waits;
  for (unsigned spin = 0;; ++spin) {
    if (done()) break;
    if (watchdog_ns && now_ns() - start > watchdog_ns) {
      stats_.wait_ns += now_ns() - start;
      return false;
    }
    if (spin < 64) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(spin < 1024 ? 5 : 50));
  }
  stats_.wait_ns += now_ns() - start;
  return true;
}

Status TriggeredBudget::reserve(uint64_t ops, uint64_t watchdog_ns, uint64_t *batch_id) {
  if (ops > capacity_) return Status::too_large;
  release_front_while_complete();
  if (!fits(ops)) {
    switch (mode_) {
      case Mode::app:
        ++stats_.refused;
        return Status::exhausted;
      case Mode::static_wait: {
        // Everything outstanding must finish before anything new is posted.
        auto all_done = [&] {
          release_front_while_complete();
          return batches_.empty();
        };
        if (!wait_until(all_done, watchdog_ns)) return Status::timeout;
        break;
      }
      case Mode::adaptive: {
        auto room = [&] {
          release_front_while_complete();
          return fits(ops);
        };
        if (!wait_until(room, watchdog_ns)) return Status::timeout;
        break;
      }
    }
  }
  *batch_id = next_id_++;
  batches_.push_back(Batch{*batch_id, ops});
  in_use_ += ops;
  ++stats_.batches;
  stats_.ops += ops;
  stats_.peak_in_use = std::max(stats_.peak_in_use, in_use_);
  return Status::ok;
}

}  // namespace mpix::throttle
