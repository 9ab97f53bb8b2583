// LineCarver (src/core/line_carver.h): pieces start on 64-byte lines and never pass the chunk's
// end, whatever the chunk's size (a chunk of a list's exact size once left `used` past it, and
// the next list was copied beyond the chunk).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <random>

#include "core/line_carver.h"

using mpix::core::LineCarver;

TEST_CASE("a piece that fills a chunk of no whole number of lines leaves no room") {
  LineCarver c;
  c.restart(264024);  // 11,001 pairs of 24 bytes
  REQUIRE(c.fits(264024));
  CHECK(c.take(264024) == 0);
  CHECK_FALSE(c.fits(1));
  CHECK(c.used == c.capacity);
}

TEST_CASE("pieces start on lines, in order, and stop at the end") {
  LineCarver c;
  c.restart(1000);
  CHECK(c.take(1) == 0);
  CHECK(c.take(64) == 64);
  CHECK(c.take(65) == 128);
  CHECK(c.used == 256);
  CHECK(c.fits(744));
  CHECK_FALSE(c.fits(745));
  CHECK(c.take(700) == 256);
  CHECK(c.used == 960);
  CHECK(c.fits(40));
  CHECK_FALSE(c.fits(41));
  CHECK(c.take(40) == 960);
  CHECK_FALSE(c.fits(1));
}

TEST_CASE("random pieces never overlap and never pass the chunk") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    LineCarver c;
    const uint64_t cap = 1 + rng() % 100000;
    c.restart(cap);
    uint64_t end = 0;  // end of the last piece
    for (int i = 0; i < 100; ++i) {
      const uint64_t n = 1 + rng() % 5000;
      if (!c.fits(n)) continue;
      const uint64_t at = c.take(n);
      CHECK(at % LineCarver::kLine == 0);
      CHECK(at >= end);
      CHECK(at + n <= cap);
      end = at + n;
      CHECK(c.used <= c.capacity);
    }
  }
  CHECK(LineCarver::lines(0) == 0);
  CHECK(LineCarver::lines(1) == 64);
  CHECK(LineCarver::lines(128) == 128);
}
