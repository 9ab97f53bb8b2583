// The live-window table's host side (src/backend/window_table.h) with the real entry count: a live
// window's key keeps naming its entry through more than 2^17 windows created and freed beside it,
// no key is handed out twice, a freed window's key never matches its entry again, all entries
// live refuse a new window; and the fault word's rule (work::fault_skips).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <random>
#include <unordered_set>
#include <vector>

#include "backend/window_table.h"

using mpix::gpu::WindowTable;
namespace work = mpix::work;

namespace {

// What a backend does with the keys: the entries its streams read.
struct Entries {
  std::vector<uint64_t> key = std::vector<uint64_t>(work::kWindowSlots, 0);
  uint64_t acquire(WindowTable &t, uint32_t id) {
    const uint64_t k = t.acquire(id);
    if (k) key[work::window_slot(k)] = k;
    return k;
  }
  void release(WindowTable &t, uint32_t id) {
    if (const uint64_t k = t.release(id)) key[work::window_slot(k)] = 0;
  }
  // A replay's check (kernels/epoch_kernel.cu, window_freed).
  bool alive(uint64_t k) const { return k && key[work::window_slot(k)] == k; }
};

}  // namespace

TEST_CASE("a live window keeps its entry while 2^17 + 4096 windows come and go") {
  WindowTable t;
  Entries e;
  REQUIRE(t.capacity() == work::kWindowSlots);
  const uint32_t kept_id = 1;
  const uint64_t kept = e.acquire(t, kept_id);
  REQUIRE(kept != 0);
  std::unordered_set<uint64_t> handed{kept};
  std::vector<uint64_t> stale;
  const uint32_t cycles = (1u << 17) + 4096;
  uint32_t id = 2;
  for (uint32_t c = 0; c < cycles; ++c, ++id) {
    const uint64_t k = e.acquire(t, id);
    REQUIRE(k != 0);
    CHECK_MESSAGE(work::window_slot(k) != work::window_slot(kept), "cycle " << c << " took the live window's entry");
    CHECK_MESSAGE(handed.insert(k).second, "cycle " << c << " got a key handed out before");
    CHECK(t.key_of(id) == k);
    e.release(t, id);
    CHECK(t.key_of(id) == 0);
    if (c % 4096 == 0) stale.push_back(k);
  }
  CHECK(t.key_of(kept_id) == kept);
  CHECK(e.alive(kept));
  CHECK(t.live() == 1);
  // A freed window's key never matches its entry again, also with a window in that entry now.
  const uint64_t now = e.acquire(t, id++);
  REQUIRE(now != 0);
  for (uint64_t k : stale) CHECK_FALSE(e.alive(k));
  CHECK(e.alive(now));
}

TEST_CASE("windows created and freed in random order never share an entry or a key") {
  WindowTable t;
  Entries e;
  std::mt19937_64 rng(47);
  std::vector<std::pair<uint32_t, uint64_t>> live;
  std::unordered_set<uint64_t> handed;
  std::vector<uint64_t> freed;
  uint32_t next_id = 1;
  for (int step = 0; step < 200000; ++step) {
    const bool create = live.empty() || (live.size() < 3000 && rng() % 2 == 0);
    if (create) {
      const uint64_t k = e.acquire(t, next_id);
      REQUIRE(k != 0);
      REQUIRE(handed.insert(k).second);
      live.push_back({next_id++, k});
    } else {
      const size_t i = rng() % live.size();
      e.release(t, live[i].first);
      freed.push_back(live[i].second);
      live[i] = live.back();
      live.pop_back();
    }
  }
  std::unordered_set<uint32_t> slots;
  for (auto &[id, k] : live) {
    CHECK(slots.insert(work::window_slot(k)).second);
    CHECK(t.key_of(id) == k);
    CHECK(e.alive(k));
  }
  for (uint64_t k : freed) CHECK_FALSE(e.alive(k));
  CHECK(t.live() == live.size());
}

TEST_CASE("every entry live: the next window is refused, and served once one is freed") {
  WindowTable t;
  Entries e;
  std::unordered_set<uint32_t> slots;
  for (uint32_t id = 1; id <= work::kWindowSlots; ++id) {
    const uint64_t k = e.acquire(t, id);
    REQUIRE(k != 0);
    REQUIRE(slots.insert(work::window_slot(k)).second);
  }
  CHECK(t.live() == work::kWindowSlots);
  CHECK(t.acquire(work::kWindowSlots + 1) == 0);
  const uint64_t old = t.key_of(77);
  e.release(t, 77);
  const uint64_t k = e.acquire(t, work::kWindowSlots + 1);
  REQUIRE(k != 0);
  CHECK(work::window_slot(k) == work::window_slot(old));
  CHECK(k != old);
  CHECK_FALSE(e.alive(old));
  CHECK(t.acquire(work::kWindowSlots + 2) == 0);
}

TEST_CASE("ids: 0 and live ones are refused; lookups with a hint") {
  WindowTable t;
  CHECK(t.acquire(0) == 0);
  const uint64_t a = t.acquire(5), b = t.acquire(6);
  REQUIRE(a != 0);
  REQUIRE(b != 0);
  CHECK(t.acquire(5) == 0);  // one entry per window
  uint32_t hint = work::window_slot(b);
  CHECK(t.key_of(5, &hint) == a);  // a wrong hint: looked up, and the hint follows
  CHECK(hint == work::window_slot(a));
  CHECK(t.key_of(5, &hint) == a);
  t.release(5);
  CHECK(t.key_of(5, &hint) == 0);  // the hinted entry no longer holds it
  CHECK(t.release(5) == 0);
  CHECK(t.key_of(0) == 0);
}

TEST_CASE("a smaller table (as a test build could make)") {
  WindowTable t(4);
  CHECK(t.capacity() == 4);
  for (uint32_t id = 1; id <= 4; ++id) CHECK(t.acquire(id) != 0);
  CHECK(t.acquire(5) == 0);
  t.release(2);
  CHECK(t.acquire(5) != 0);
}

TEST_CASE("reports taken and the fault rule") {
  WindowTable t;
  const uint64_t k = t.acquire(9);
  REQUIRE(k != 0);
  CHECK(t.reports_taken(k) == 0);
  CHECK(t.take_report(k) == 1);
  CHECK(t.take_report(k) == 2);
  CHECK(t.reports_taken(k) == 2);
  t.release(9);
  CHECK(t.take_report(k) == 0);  // a freed window's
  const uint64_t k2 = t.acquire(10);
  CHECK(t.reports_taken(k2) == 0);  // a new window starts with none

  // No fault: nothing ends. A pending report: every wait of the window ends, replays too.
  CHECK_FALSE(work::fault_skips(0, 0, false));
  CHECK_FALSE(work::fault_skips(0, 0, true));
  CHECK(work::fault_skips(work::kFaultPending, 0, false));
  CHECK(work::fault_skips(work::kFaultPending | 3, 7, false));
  CHECK(work::fault_skips(work::kFaultPending, 0, true));
  // The program took its 3rd report: lists enqueued before (taken 0..2) end, later ones wait;
  // replays wait (they were never enqueued by a call).
  CHECK(work::fault_skips(3, 0, false));
  CHECK(work::fault_skips(3, 2, false));
  CHECK_FALSE(work::fault_skips(3, 3, false));
  CHECK_FALSE(work::fault_skips(3, 2, true));
  // The count wraps after 2^32 reports: still ordered within a queue.
  CHECK(work::fault_skips(1, 0xffffffffu, false));
  CHECK_FALSE(work::fault_skips(0xffffffffu, 1, false));
}
