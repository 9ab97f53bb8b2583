// The doorbell agent (doc/design.md, The inter-node path). On Slingshot a GPU rings a triggered
// operation by storing to the trigger counter's MMIO address; elsewhere a stream writes a doorbell
// word in host memory and this thread adds each increase of that word to the trigger counter. It
// moves no data and decides nothing: it stands in for the MMIO store. It also drives provider
// progress where the provider needs it (Fabric::needs_progress()).
//
// Polling costs a core's time, and several ranks may share two cores: the agent polls closely
// (pauses from 1 to 64 us) only while a doorbell is armed, i.e. below the value the host expects
// the stream to write (arm()), or while a manual-progress provider depends on it; otherwise its
// pauses grow to 2 ms, and with nothing to watch or progress it blocks.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fabric.h"

namespace mpix::ofi {

class DoorbellAgent {
 public:
  // `fabric` must outlive the agent. `armed_pause`: the longest pause between polls while a
  // doorbell is armed (0: spin), i.e. the worst added latency of a ring.
  explicit DoorbellAgent(Fabric &fabric, std::chrono::microseconds armed_pause = std::chrono::microseconds(64));
  ~DoorbellAgent();  // stops and joins the thread
  DoorbellAgent(const DoorbellAgent &) = delete;
  DoorbellAgent &operator=(const DoorbellAgent &) = delete;

  // Watches `word`, whose value only grows: from now on each increase is added to `counter`. The
  // word's value now is the starting point. Returns an id for unwatch(). Thread-safe.
  // `stop`, where given, is a word the stream sets (to non-zero, never back) before any ring that
  // must not be forwarded: once the agent reads it set after seeing an increase, that increase
  // and every later one are taken as seen and never added (error() says so).
  uint64_t watch(uint64_t *word, Counter counter, const uint64_t *stop = nullptr);
  // The host enqueued work that will ring the doorbell up to `value`: poll closely until it does
  // (it wakes the agent at once). False for an unknown id.
  bool arm(uint64_t id, uint64_t value);
  // When it returns, the agent no longer reads the word. False for an unknown id.
  bool unwatch(uint64_t id);

  uint64_t forwarded() const;  // sum of the increases added to counters
  std::string error() const;   // the first failure (an add refused, a word that shrank); empty if none

 private:
  struct Bell {
    uint64_t id;
    uint64_t *word;
    const uint64_t *stop;  // null: none
    Counter counter;
    uint64_t seen;
    uint64_t armed;  // value the stream will write; polled closely while seen < armed
  };
  void run();
  bool scan(bool *armed);  // mu_ held; true if a doorbell rang

  Fabric &fabric_;
  const std::chrono::microseconds armed_pause_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::vector<Bell> bells_;
  uint64_t next_id_ = 1;
  uint64_t forwarded_ = 0;
  std::string error_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace mpix::ofi
