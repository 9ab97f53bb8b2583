// The budget of triggered-operation slots ([Namashivayam 2023] §5.2). A triggered operation holds a
// slot from the moment it is posted until its completion counter passes its threshold; NICs have
// few (Slingshot: about 504 per NIC service). Epochs reserve their operations as one batch.
//   app       never waits: a batch that does not fit after reclaiming finished ones is an error,
//             and the application synchronises its stream every few iterations
//   static    a batch that does not fit waits for every outstanding batch to finish
//   adaptive  reclaims batches as soon as they finish and proceeds once enough slots are free
#pragma once
#include <cstdint>
#include <deque>
#include <functional>

namespace mpix::throttle {

enum class Mode { app, static_wait, adaptive };

struct Stats {
  uint64_t batches = 0;           // batches reserved
  uint64_t ops = 0;               // slots reserved over all batches
  uint64_t waits = 0;             // reservations that had to wait (static, adaptive)
  uint64_t wait_ns = 0;           // time spent in those waits
  uint64_t reclaimed = 0;         // batches found finished and released
  uint64_t refused = 0;           // app mode: reservations refused
  uint64_t peak_in_use = 0;
};

enum class Status { ok, too_large, exhausted, timeout };

class TriggeredBudget {
 public:
  // Whether every operation of a batch has completed (reads its completion counter; may drive
  // provider progress). Called from the reserving thread only.
  using IsComplete = std::function<bool(uint64_t batch_id)>;

  TriggeredBudget(Mode mode, uint64_t capacity, IsComplete is_complete);

  // Reserves `ops` slots for a new batch and gives its id (ids count up from 1). too_large: the
  // batch alone exceeds the capacity; exhausted: app mode and no room; timeout: waited longer
  // than watchdog_ns (0: no limit).
  Status reserve(uint64_t ops, uint64_t watchdog_ns, uint64_t *batch_id);

  // Releases finished batches without waiting; returns how many slots are in use after it.
  uint64_t reclaim();

  Mode mode() const { return mode_; }
  uint64_t capacity() const { return capacity_; }
  uint64_t in_use() const { return in_use_; }
  uint64_t outstanding_batches() const { return batches_.size(); }
  uint64_t oldest_batch() const { return batches_.empty() ? 0 : batches_.front().id; }  // 0: none
  const Stats &stats() const { return stats_; }

 private:
  struct Batch {
    uint64_t id, ops;
  };
  bool fits(uint64_t ops) const { return in_use_ + ops <= capacity_; }
  void release_front_while_complete();
  bool wait_until(const std::function<bool()> &done, uint64_t watchdog_ns);

  Mode mode_;
  uint64_t capacity_;
  IsComplete is_complete_;
  std::deque<Batch> batches_;  // in reservation order
  uint64_t in_use_ = 0;
  uint64_t next_id_ = 1;
  Stats stats_;
};

const char *mode_name(Mode mode);

}  // namespace mpix::throttle
