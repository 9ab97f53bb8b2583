// kernels/coll/lines.h and the line reduction of kernels/coll/reduce_ops.h (the collectives' kLL
// protocol, shared by the host executor and the device kernel): tags, word packing, units at every
// alignment and tail length, and reduce_unit against an element-wise reference.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/coll/lines.h"
#include "kernels/coll/reduce_ops.h"

using namespace mpix::coll;

TEST_CASE("tags are never those of fresh memory and differ between the rounds that share a half") {
  for (uint64_t k = 0; k < 4; ++k) {
    // The rounds where the low 32 bits wrap, and those where the modulus does.
    const uint64_t m = 0xFFFFFFFFull;
    for (uint64_t r : {uint64_t(k << 32), uint64_t((k << 32) + 1), k * m, k * m + 1}) {
      CHECK(line_tag(r) != 0u);
      CHECK(line_tag(r) != line_tag(r + 2));
      CHECK(line_tag(r) != line_tag(r - 2));
    }
  }
  CHECK(line_tag(1) != line_tag(3));
}

TEST_CASE("a line holds its payload and its tag in both words") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t payload = rng(), round = rng() % 100000 + 1;
    const uint32_t tag = line_tag(round);
    const uint64_t w0 = line_word(payload, tag), w1 = line_word(payload >> 32, tag);
    CHECK(line_has(w0, w1, tag));
    CHECK(line_payload(w0, w1) == payload);
    // A line half written (one word of this round, one of the round before) is not taken.
    CHECK_FALSE(line_has(w0, line_word(payload >> 32, line_tag(round + 2)), tag));
    CHECK_FALSE(line_has(0, 0, tag));
  }
}

TEST_CASE("units load and store exactly their bytes at every alignment and tail length") {
  std::vector<unsigned char> src(64), dst(64);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 37 + 11);
  for (size_t shift = 0; shift < 8; ++shift) {
    for (uint64_t bytes = 1; bytes <= 20; ++bytes) {
      std::fill(dst.begin(), dst.end(), 0xEE);
      const char *s = reinterpret_cast<const char *>(src.data()) + shift;
      char *d = reinterpret_cast<char *>(dst.data()) + shift;
      for (uint64_t u = 0; u < unit_count(bytes); ++u) {
        const uint64_t k = unit_bytes(bytes, u);
        store_unit(d + u * kLinePayload, load_unit(s + u * kLinePayload, k), k);
      }
      CAPTURE(shift);
      CAPTURE(bytes);
      CHECK(std::memcmp(d, s, bytes) == 0);
      for (size_t i = 0; i < dst.size(); ++i)
        if (i < shift || i >= shift + bytes) CHECK(dst[i] == 0xEE);  // nothing outside the piece
    }
  }
}

TEST_CASE("reduce_unit combines in source order like the element-wise reduction") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-10.f, 10.f);
  for (int nsrc = 1; nsrc <= 5; ++nsrc) {
    std::vector<float> in(2 * nsrc);
    for (float &f : in) f = value(rng);
    auto fetch = [&](int s, uint64_t *v) {
      std::memcpy(v, &in[2 * s], 8);
      return true;
    };
    for (uint8_t op : {kSum, kProd, kMax, kMin}) {
      uint64_t out = 0;
      REQUIRE(reduce_unit<float>(op, nsrc, fetch, &out));
      float got[2];
      std::memcpy(got, &out, 8);
      for (int l = 0; l < 2; ++l) {
        float want = in[l];
        for (int s = 1; s < nsrc; ++s) want = reduce_op<float>(op, want, in[2 * s + l]);
        CHECK(got[l] == want);  // same order, same bits
      }
    }
  }
  // A failed fetch drops the unit.
  uint64_t out = 0;
  CHECK_FALSE(reduce_unit<int32_t>(kSum, 3, [](int s, uint64_t *v) {
    *v = 1;
    return s < 2;
  }, &out));
}
