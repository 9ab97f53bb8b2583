// The triggered-operation budget: reservations, reclaiming, and the three throttling modes.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <set>
#include <thread>

#include "throttle/triggered_budget.h"

using mpix::throttle::Mode;
using mpix::throttle::Status;
using mpix::throttle::TriggeredBudget;

namespace {
// Batches marked done by the test stand in for completion counters.
struct FakeCounters {
  std::set<uint64_t> done;
  TriggeredBudget::IsComplete probe() {
    return [this](uint64_t id) { return done.count(id) > 0; };
  }
};
}  // namespace

TEST_CASE("reservations count slots until their batches complete") {
  FakeCounters c;
  TriggeredBudget b(Mode::adaptive, 10, c.probe());
  uint64_t id1 = 0, id2 = 0;
  CHECK(b.reserve(4, 0, &id1) == Status::ok);
  CHECK(b.reserve(6, 0, &id2) == Status::ok);
  CHECK(id1 == 1);
  CHECK(id2 == 2);
  CHECK(b.in_use() == 10);
  c.done.insert(id1);
  CHECK(b.reclaim() == 6);
  CHECK(b.stats().reclaimed == 1);
  CHECK(b.stats().peak_in_use == 10);
}

TEST_CASE("a batch larger than the whole budget is refused in every mode") {
  for (Mode m : {Mode::app, Mode::static_wait, Mode::adaptive}) {
    FakeCounters c;
    TriggeredBudget b(m, 8, c.probe());
    uint64_t id = 0;
    CHECK(b.reserve(9, 0, &id) == Status::too_large);
    CHECK(b.reserve(8, 0, &id) == Status::ok);  // exactly the budget fits
  }
}

TEST_CASE("app mode never waits: a full budget is an error until batches finish") {
  FakeCounters c;
  TriggeredBudget b(Mode::app, 4, c.probe());
  uint64_t id = 0, first = 0;
  CHECK(b.reserve(3, 0, &first) == Status::ok);
  CHECK(b.reserve(2, 0, &id) == Status::exhausted);
  CHECK(b.stats().refused == 1);
  c.done.insert(first);  // the application synchronised its stream
  CHECK(b.reserve(2, 0, &id) == Status::ok);
  CHECK(b.stats().waits == 0);
}

TEST_CASE("adaptive mode proceeds as soon as enough earlier batches finish") {
  FakeCounters c;
  std::atomic<uint64_t> finished{0};  // batches 1..finished are complete
  TriggeredBudget b(Mode::adaptive, 6, [&](uint64_t id) { return id <= finished.load(); });
  uint64_t id = 0;
  for (int i = 0; i < 3; ++i) REQUIRE(b.reserve(2, 0, &id) == Status::ok);
  std::thread nic([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    finished = 1;  // only the first batch finishes
  });
  CHECK(b.reserve(2, 2'000'000'000, &id) == Status::ok);
  nic.join();
  CHECK(b.outstanding_batches() == 3);  // batches 2 and 3 still hold their slots
  CHECK(b.stats().waits == 1);
}

TEST_CASE("static mode waits for every outstanding batch") {
  std::atomic<uint64_t> finished{0};
  TriggeredBudget b(Mode::static_wait, 6, [&](uint64_t id) { return id <= finished.load(); });
  uint64_t id = 0;
  for (int i = 0; i < 3; ++i) REQUIRE(b.reserve(2, 0, &id) == Status::ok);
  std::atomic<bool> reserved{false};
  std::thread host([&] {
    uint64_t mine = 0;
    CHECK(b.reserve(2, 2'000'000'000, &mine) == Status::ok);
    reserved = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  finished = 1;  // adaptive would proceed here; static must not
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_FALSE(reserved.load());
  finished = 3;
  host.join();
  CHECK(reserved.load());
  CHECK(b.outstanding_batches() == 1);
}

TEST_CASE("a wait longer than the watchdog reports a timeout instead of hanging") {
  FakeCounters c;
  for (Mode m : {Mode::static_wait, Mode::adaptive}) {
    TriggeredBudget b(m, 2, c.probe());
    uint64_t id = 0;
    REQUIRE(b.reserve(2, 0, &id) == Status::ok);
    CHECK(b.reserve(1, 30'000'000, &id) == Status::timeout);
    CHECK(b.stats().wait_ns >= 30'000'000);
  }
}

TEST_CASE("10,000 batches through a budget of one hundred slots, NIC finishing in order") {
  for (Mode m : {Mode::static_wait, Mode::adaptive}) {
    std::atomic<uint64_t> posted{0}, finished{0};
    std::atomic<bool> stop{false};
    TriggeredBudget b(m, 100, [&](uint64_t id) { return id <= finished.load(); });
    std::thread nic([&] {  // completes whatever has been posted, a little later
      while (!stop) {
        finished = posted.load();
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    });
    for (int i = 0; i < 10000; ++i) {
      uint64_t id = 0;
      REQUIRE(b.reserve(7, 5'000'000'000ull, &id) == Status::ok);
      posted = id;
      CHECK(b.in_use() <= 100);
    }
    stop = true;
    nic.join();
    CHECK(b.stats().batches == 10000);
    CHECK(b.stats().peak_in_use <= 100);
  }
}
