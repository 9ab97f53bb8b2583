#include "doorbell_agent.h"

#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace mpix::ofi {

namespace {
// The pause after a quiet pass doubles from kMinPause, up to the armed pause while a doorbell is
// armed (or a manual-progress provider depends on us), else up to kIdlePause. Measured on the
// 2-core test VM: a wake-up costs about 9 us, so an agent waking every 100 us took 7-10% of a core.
constexpr auto kMinPause = std::chrono::microseconds(1);
constexpr auto kIdlePause = std::chrono::microseconds(2000);
}  // namespace

DoorbellAgent::DoorbellAgent(Fabric &fabric, std::chrono::microseconds armed_pause)
    : fabric_(fabric), armed_pause_(armed_pause), thread_([this] { run(); }) {}

DoorbellAgent::~DoorbellAgent() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

uint64_t DoorbellAgent::watch(uint64_t *word, Counter counter, const uint64_t *stop) {
  uint64_t id;
  {
    std::lock_guard lock(mu_);
    id = next_id_++;
    uint64_t now = std::atomic_ref<uint64_t>(*word).load(std::memory_order_acquire);
    bells_.push_back({id, word, stop, counter, now, now});
  }
  wake_.notify_all();
  return id;
}

bool DoorbellAgent::arm(uint64_t id, uint64_t value) {
  {
    std::lock_guard lock(mu_);
    auto it = std::find_if(bells_.begin(), bells_.end(), [id](const Bell &b) { return b.id == id; });
    if (it == bells_.end()) return false;
    it->armed = std::max(it->armed, value);
  }
  wake_.notify_all();
  return true;
}

bool DoorbellAgent::unwatch(uint64_t id) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(bells_.begin(), bells_.end(), [id](const Bell &b) { return b.id == id; });
  if (it == bells_.end()) return false;
  bells_.erase(it);
  return true;
}

uint64_t DoorbellAgent::forwarded() const {
  std::lock_guard lock(mu_);
  return forwarded_;
}

std::string DoorbellAgent::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

bool DoorbellAgent::scan(bool *armed) {
  bool rang = false;
  for (Bell &b : bells_) {
    // Acquire: what the stream wrote before its doorbell is visible to the operations it fires.
    uint64_t now = std::atomic_ref<uint64_t>(*b.word).load(std::memory_order_acquire);
    if (now == b.seen) continue;
    if (now < b.seen) {
      if (error_.empty())
        error_ = "doorbell word went back from " + std::to_string(b.seen) + " to " + std::to_string(now);
      b.seen = now;
      continue;
    }
    // Read after the word: a stop set before the ring we saw is seen here (the acquire above).
    if (b.stop && std::atomic_ref<uint64_t>(*const_cast<uint64_t *>(b.stop)).load(std::memory_order_acquire)) {
      if (error_.empty())
        error_ = "doorbell: " + std::to_string(now - b.seen) + " ring(s) after a stopped one not forwarded";
      b.seen = now;
      continue;
    }
    if (fabric_.add(b.counter, now - b.seen) != kOk) {
      if (error_.empty()) error_ = "doorbell: " + fabric_.last_error();
      continue;  // retried on the next pass
    }
    forwarded_ += now - b.seen;
    b.seen = now;
    rang = true;
  }
  *armed = std::any_of(bells_.begin(), bells_.end(), [](const Bell &b) { return b.seen < b.armed; });
  return rang;
}

void DoorbellAgent::run() {
  prctl(PR_SET_TIMERSLACK, 1000UL);  // 1 us: let short pauses stay short
  const bool progress = fabric_.needs_progress();
  const bool manual = fabric_.manual_progress();
  auto pause = kMinPause;
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (bells_.empty() && !progress) {
      wake_.wait(lock, [this] { return stop_ || !bells_.empty(); });
      pause = kMinPause;
      continue;
    }
    bool armed = false;
    bool rang = scan(&armed);
    if (progress) {
      lock.unlock();
      fabric_.progress();
      lock.lock();
    }
    if (rang) {
      pause = kMinPause;
      continue;
    }
    const auto limit = armed || manual ? armed_pause_ : kIdlePause;
    if (limit.count() == 0) {  // spin while armed: a core for the lowest doorbell latency
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
      continue;
    }
    pause = std::min(pause, limit);
    // arm() and watch() notify: a newly armed doorbell ends the pause at once.
    if (wake_.wait_for(lock, pause) == std::cv_status::no_timeout) pause = kMinPause;
    else pause = std::min(pause * 2, limit);
  }
}

}  // namespace mpix::ofi
