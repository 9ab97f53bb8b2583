// kernels/half_float.h (the conversions every backend's half and bfloat16 reductions use) against
// the independent reference of tests/common/half_reference.h: every 16-bit pattern widens exactly
// and narrows back to itself; floats round to nearest-even, including ties, overflow, subnormals
// and NaN.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/half_float.h"
#include "tests/common/half_reference.h"

using namespace mpix::coll;

namespace {

float as_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t as_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Every float of one binade pattern class the rounding cares about: random bits, values near the
// format's edges (ties and their neighbours), in both signs.
std::vector<float> sample_floats() {
  std::vector<float> v;
  std::mt19937 rng(12345);
  for (int i = 0; i < 200000; ++i) v.push_back(as_float(rng()));
  // Floats a few ulps around every half and bfloat16 value and the midpoints between neighbours.
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    const float mid = float((half_ref::decode(half_ref::kBinary16, uint16_t(b)) +
                             half_ref::decode(half_ref::kBinary16, uint16_t(b + 1))) / 2);
    for (int d = -2; d <= 2; ++d) v.push_back(as_float(as_bits(mid) + d));
  }
  for (uint32_t b = 0; b < 0x7f80; b += 7) {
    const uint32_t mid = (b << 16) + 0x8000u;
    for (int d = -2; d <= 2; ++d) v.push_back(as_float(mid + d));
  }
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  return v;
}

}  // namespace

TEST_CASE("binary16: every pattern widens exactly and narrows back to itself") {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = half_to_float(uint16_t(b));
    if (half_ref::is_nan(half_ref::kBinary16, uint16_t(b))) {
      REQUIRE(std::isnan(f));
      CHECK(half_ref::is_nan(half_ref::kBinary16, float_to_half(f)));
      continue;
    }
    REQUIRE(double(f) == half_ref::decode(half_ref::kBinary16, uint16_t(b)));
    REQUIRE(std::signbit(f) == bool(b & 0x8000u));
    REQUIRE(float_to_half(f) == b);
  }
}

TEST_CASE("bfloat16: every pattern widens exactly and narrows back to itself") {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bfloat16_to_float(uint16_t(b));
    if (half_ref::is_nan(half_ref::kBfloat16, uint16_t(b))) {
      REQUIRE(std::isnan(f));
      CHECK(half_ref::is_nan(half_ref::kBfloat16, float_to_bfloat16(f)));
      continue;
    }
    REQUIRE(double(f) == half_ref::decode(half_ref::kBfloat16, uint16_t(b)));
    REQUIRE(float_to_bfloat16(f) == b);
  }
}

TEST_CASE("floats round to the nearest binary16 and bfloat16, ties to even") {
  int checked = 0;
  for (float f : sample_floats()) {
    if (std::isnan(f)) {
      CHECK(half_ref::is_nan(half_ref::kBinary16, float_to_half(f)));
      CHECK(half_ref::is_nan(half_ref::kBfloat16, float_to_bfloat16(f)));
      continue;
    }
    const uint16_t h = float_to_half(f), want_h = half_ref::encode(half_ref::kBinary16, f);
    const uint16_t b = float_to_bfloat16(f), want_b = half_ref::encode(half_ref::kBfloat16, f);
    if (h != want_h || b != want_b) {
      FAIL_CHECK("float " << f << " (0x" << std::hex << as_bits(f) << "): half 0x" << h << " want 0x" << want_h
                          << ", bfloat16 0x" << b << " want 0x" << want_b);
      if (++checked > 20) break;
    }
  }
}

TEST_CASE("edge cases by name") {
  CHECK(float_to_half(65504.0f) == 0x7bff);          // largest finite
  CHECK(float_to_half(65519.996f) == 0x7bff);        // just below the tie with 2^16
  CHECK(float_to_half(65520.0f) == 0x7c00);          // the tie rounds to even: infinity
  CHECK(float_to_half(-INFINITY) == 0xfc00);
  CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);           // smallest subnormal
  CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);           // tie with 0: even
  CHECK(float_to_half(std::ldexp(1.5f, -25)) == 0x0001);           // above the tie
  CHECK(float_to_half(std::ldexp(3.0f, -25)) == 0x0002);           // tie 1.5 units: even (2)
  CHECK(float_to_half(std::ldexp(1023.5f, -24)) == 0x0400);        // tie at the top: smallest normal
  CHECK(float_to_half(-0.0f) == 0x8000);
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);    // tie: even (1.0)
  CHECK(float_to_half(1.0f + std::ldexp(3.0f, -11)) == 0x3c02);    // tie: even (1 + 2^-9)
  CHECK(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);  // tie: even (1.0)
  CHECK(float_to_bfloat16(1.0f + std::ldexp(3.0f, -8)) == 0x3f82);
  CHECK(float_to_bfloat16(3.4028235e38f) == 0x7f80);                // rounds past the largest: inf
  CHECK(float_to_bfloat16(std::ldexp(1.0f, -149)) == 0x0000);       // float subnormal below half a unit
  CHECK(float_to_bfloat16(-0.0f) == 0x8000);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(half_to_float(0x03ff) == std::ldexp(1023.0f, -24));
  CHECK(bfloat16_to_float(0x0001) == std::ldexp(1.0f, -133));
}
