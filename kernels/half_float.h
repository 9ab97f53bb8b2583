// IEEE binary16 ("half") and bfloat16 elements of the stream reductions: conversions to and from
// float, and how a reduction loads, combines and stores each element type.
//
// The conversions are plain bit manipulation rather than cuda_fp16.h / hip_fp16.h intrinsics, so
// one source compiles for the host backend (no GPU toolkit), CUDA and HIP, and every backend
// rounds the same way: results stay bit-identical between host and device runs. A reduction is
// memory-bound; a few integer operations per element cost nothing next to the loads.
#pragma once
#include <cstdint>
#include <cstring>

#include "work_items.h"  // MPIX_HOST_DEVICE

namespace mpix::coll {

// Storage of one element: the type's bits, nothing else (distinct types select the conversions).
struct Float16 {
  uint16_t bits;
};
struct Bfloat16 {
  uint16_t bits;
};

// Bit casts: nvcc's device intrinsics; clang's builtin for HIP device code (this header may come
// before hip_runtime.h); memcpy on the host.
MPIX_HOST_DEVICE inline uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#elif defined(__HIP_DEVICE_COMPILE__)
  return __builtin_bit_cast(uint32_t, f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
MPIX_HOST_DEVICE inline float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#elif defined(__HIP_DEVICE_COMPILE__)
  return __builtin_bit_cast(float, u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// Exact: every binary16 value (subnormals, infinities, NaN payloads) is a float.
MPIX_HOST_DEVICE inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  if (exp != 0) return bits_float(sign | ((exp + 112) << 23) | (mant << 13));  // rebias 15 -> 127
  if (mant == 0) return bits_float(sign);
  // Subnormal (mant * 2^-24): shift the leading one up to the implicit bit, lowering the exponent.
  exp = 113;
  while (!(mant & 0x400u)) {
    mant <<= 1;
    --exp;
  }
  return bits_float(sign | (exp << 23) | ((mant & 0x3ffu) << 13));
}

// Rounds to nearest, ties to even; overflow gives infinity, NaN stays a (quiet) NaN.
MPIX_HOST_DEVICE inline uint16_t float_to_half(float f) {
  const uint32_t x = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return sign | 0x7e00u | ((ax >> 13) & 0x3ffu);  // NaN: quiet bit set
  // 65520 (0x477ff000) lies halfway between 65504, the largest half (odd significand), and 2^16:
  // the tie goes to even, which is infinity.
  if (ax >= 0x477ff000u) return sign | 0x7c00u;
  if (ax >= 0x38800000u) {  // a normal half (>= 2^-14): drop 13 significand bits, rounding
    const uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));  // rebias 127 -> 15
  }
  const uint32_t exp = ax >> 23;
  if (exp < 102) return sign;  // below 2^-25: rounds to zero
  // Subnormal half: units of 2^-24. A carry into bit 10 gives the smallest normal, as it should.
  const uint32_t mant = (ax & 0x7fffffu) | 0x800000u, shift = 126 - exp;  // 14 .. 24
  uint32_t units = mant >> shift;
  const uint32_t rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (units & 1u))) ++units;
  return static_cast<uint16_t>(sign | units);
}

// bfloat16 is the top half of a float: widening is exact, narrowing rounds the low 16 bits away.
MPIX_HOST_DEVICE inline float bfloat16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

MPIX_HOST_DEVICE inline uint16_t float_to_bfloat16(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN: quiet bit set
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);  // overflow carries into infinity
}

// How a reduction treats an element type T: sources are loaded as Acc, combined in Acc and
// stored back as T. Half types compute in float and round once when the result is stored.
template <typename T>
struct ReduceIn {
  using Acc = T;
  MPIX_HOST_DEVICE static Acc load(T v) { return v; }
  MPIX_HOST_DEVICE static T store(Acc v) { return v; }
};
template <>
struct ReduceIn<Float16> {
  using Acc = float;
  MPIX_HOST_DEVICE static float load(Float16 v) { return half_to_float(v.bits); }
  MPIX_HOST_DEVICE static Float16 store(float v) { return Float16{float_to_half(v)}; }
};
template <>
struct ReduceIn<Bfloat16> {
  using Acc = float;
  MPIX_HOST_DEVICE static float load(Bfloat16 v) { return bfloat16_to_float(v.bits); }
  MPIX_HOST_DEVICE static Bfloat16 store(float v) { return Bfloat16{float_to_bfloat16(v)}; }
};

}  // namespace mpix::coll
