// A reference for IEEE binary16 and bfloat16 that shares nothing with kernels/half_float.h: values
// decode from the formats' definition with ldexp, and a double rounds to the nearest encoding by
// binary search over the (ordered) encodings, ties to the even one. Slow and obvious on purpose.
#pragma once
#include <cmath>
#include <cstdint>

namespace half_ref {

struct Format {
  int mant_bits, exp_bits;
};
constexpr Format kBinary16{10, 5};
constexpr Format kBfloat16{7, 8};

inline int bias(Format f) { return (1 << (f.exp_bits - 1)) - 1; }
inline uint16_t inf_bits(Format f) { return static_cast<uint16_t>(((1u << f.exp_bits) - 1) << f.mant_bits); }

inline double decode(Format f, uint16_t b) {
  const uint32_t mant = b & ((1u << f.mant_bits) - 1);
  const uint32_t exp = (b >> f.mant_bits) & ((1u << f.exp_bits) - 1);
  const double sign = (b & 0x8000u) ? -1.0 : 1.0;
  if (exp == (1u << f.exp_bits) - 1) return mant ? NAN : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(double(mant), 1 - bias(f) - f.mant_bits);
  return sign * std::ldexp(double(mant | (1u << f.mant_bits)), int(exp) - bias(f) - f.mant_bits);
}

// The value of positive encoding k, where the infinity encoding stands for 2^(emax+1): the value
// the format would have next with an unbounded exponent. Rounding to it means overflow.
inline double ladder(Format f, uint32_t k) {
  return k < inf_bits(f) ? decode(f, static_cast<uint16_t>(k)) : std::ldexp(1.0, bias(f) + 1);
}

// Nearest encoding of v (not NaN), ties to the even encoding; overflow gives infinity.
inline uint16_t encode(Format f, double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000u : 0u;
  const double a = std::fabs(v);
  const uint32_t top = inf_bits(f);
  if (a >= ladder(f, top)) return sign | top;
  uint32_t lo = 0, hi = top;  // ladder(lo) <= a < ladder(hi)
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    if (ladder(f, mid) <= a) lo = mid;
    else hi = mid;
  }
  const double below = a - ladder(f, lo), above = ladder(f, hi) - a;
  const uint32_t k = below < above ? lo : above < below ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<uint16_t>(sign | k);
}

inline bool is_nan(Format f, uint16_t b) { return (b & 0x7fffu) > inf_bits(f); }

}  // namespace half_ref
