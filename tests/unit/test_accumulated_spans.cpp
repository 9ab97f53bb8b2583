// AccumulatedSpans (src/core/accumulated_spans.h): which accumulates of an epoch overlap earlier
// ones, checked against a byte map of every span added.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "core/accumulated_spans.h"

using mpix::core::AccumulatedSpans;

TEST_CASE("overlap is any shared byte at the same target; touching spans do not overlap") {
  AccumulatedSpans s;
  CHECK_FALSE(s.overlaps(0, 0, 100));
  s.add(0, 100, 200);
  CHECK(s.overlaps(0, 150, 160));
  CHECK(s.overlaps(0, 50, 101));
  CHECK(s.overlaps(0, 199, 300));
  CHECK(s.overlaps(0, 0, 1000));
  CHECK_FALSE(s.overlaps(0, 0, 100));
  CHECK_FALSE(s.overlaps(0, 200, 300));
  CHECK_FALSE(s.overlaps(1, 150, 160));  // another target
  s.add(0, 200, 250);                    // touching: merged into one span
  CHECK(s.spans() == 1);
  s.add(0, 300, 310);
  CHECK(s.spans() == 2);
  CHECK_FALSE(s.overlaps(0, 250, 300));
  s.add(0, 240, 305);  // bridges both
  CHECK(s.spans() == 1);
  CHECK(s.overlaps(0, 270, 271));
}

TEST_CASE("random spans on three targets agree with a byte map") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    AccumulatedSpans s;
    std::vector<std::vector<char>> hit(3, std::vector<char>(512, 0));
    for (int i = 0; i < 200; ++i) {
      const int t = static_cast<int>(rng() % 3);
      const uint64_t b = rng() % 500, e = b + 1 + rng() % 12;
      bool want = false;
      for (uint64_t x = b; x < e; ++x) want = want || hit[t][x];
      REQUIRE(s.overlaps(t, b, e) == want);
      s.add(t, b, e);
      for (uint64_t x = b; x < e; ++x) hit[t][x] = 1;
    }
  }
}
