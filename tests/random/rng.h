// The random test's generator of numbers and of data: splitmix64, with its own draws (no <random>
// distributions, whose results differ between standard libraries), so a seed names one plan on
// every rank, every run and every build.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace rt {

inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline uint64_t key(uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0, uint64_t e = 0) {
  return mix(mix(mix(mix(mix(a) ^ b) ^ c) ^ d) ^ e);
}

class Rng {
 public:
  explicit Rng(uint64_t seed = 1) : s_(mix(seed)) {}
  uint64_t u64() { return mix(s_++); }
  // 0 .. n-1 (0 when n is 0).
  uint64_t below(uint64_t n) { return n ? u64() % n : 0; }
  // lo .. hi, both included.
  int64_t range(int64_t lo, int64_t hi) {
    return hi <= lo ? lo : lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }
  template <typename T>
  const T &pick(const std::vector<T> &v) {
    return v[below(v.size())];
  }
  // A size of `max` at most: small ones often, the whole range sometimes.
  int64_t size_upto(int64_t max) {
    if (max <= 1) return max;
    const uint64_t d = below(10);
    if (d < 3) return range(1, max < 16 ? max : 16);
    if (d < 7) return range(1, max < 256 ? max : 256);
    return range(1, max);
  }

 private:
  uint64_t s_;
};

// Byte i of the data pattern named `k`.
inline uint8_t pattern_byte(uint64_t k, uint64_t i) { return static_cast<uint8_t>(mix(k ^ (i >> 3)) >> ((i & 7) * 8)); }
inline void fill_pattern(uint8_t *dst, size_t n, uint64_t k) {
  for (size_t i = 0; i < n; ++i) dst[i] = pattern_byte(k, i);
}
inline std::vector<uint8_t> pattern(size_t n, uint64_t k) {
  std::vector<uint8_t> v(n);
  fill_pattern(v.data(), n, k);
  return v;
}

}  // namespace rt
