// The element-wise operators of the stream reductions, shared by the host executor and the device
// kernel: one element, one 8-byte unit of line payloads, and the dispatch on a dtype code.
#pragma once
#include <cstdint>
#include <type_traits>

#include "args.h"
#include "kernels/half_float.h"
#include "lines.h"

namespace mpix::coll {

// Element-wise operators of the reductions, shared by host and device code. Half types reach them
// as float (ReduceIn in half_float.h).
template <typename T>
MPIX_HOST_DEVICE inline T reduce_op(uint8_t op, T a, T b) {
  switch (op) {
    case kSum: return a + b;
    case kProd: return a * b;
    case kMax: return a > b ? a : b;
    case kMin: return a < b ? a : b;
    default: break;
  }
  if constexpr (std::is_integral<T>::value) {
    switch (op) {
      case kBand: return a & b;
      case kBor: return a | b;
      default: return a ^ b;
    }
  }
  return b;  // bitwise operators on floating point are refused before enqueue
}

// Calls fn(Type<T>{}) with the element type of a reduction's dtype code (nothing for kBytes).
template <typename T>
struct Type {
  using type = T;
};
template <typename Fn>
MPIX_HOST_DEVICE inline void with_reduce_type(uint8_t dtype, Fn &&fn) {
  switch (dtype) {
    case kInt8: return fn(Type<int8_t>{});
    case kUint8: return fn(Type<uint8_t>{});
    case kInt32: return fn(Type<int32_t>{});
    case kUint32: return fn(Type<uint32_t>{});
    case kInt64: return fn(Type<int64_t>{});
    case kUint64: return fn(Type<uint64_t>{});
    case kFloat: return fn(Type<float>{});
    case kDouble: return fn(Type<double>{});
    case kHalf: return fn(Type<Float16>{});
    case kBfloat16: return fn(Type<Bfloat16>{});
    default: return;
  }
}

// One unit (8 bytes) of a reduction over line payloads: fetch(s, &word) gives source s's payload
// (false: its wait failed, and the unit is dropped). Elements combine as ReduceIn<T>::Acc in source
// order and are rounded once, as the kSimple reduction does, so both protocols give the same bits.
template <typename T, typename Fetch>
MPIX_HOST_DEVICE inline bool reduce_unit(uint8_t op, int nsrc, Fetch &&fetch, uint64_t *out) {
  using In = ReduceIn<T>;
  using Acc = typename In::Acc;
  constexpr int kLanes = static_cast<int>(kLinePayload / sizeof(T));
  union Unit {
    uint64_t word;
    T lane[kLanes];
  } u;
  Acc acc[kLanes];
  if (!fetch(0, &u.word)) return false;
  for (int l = 0; l < kLanes; ++l) acc[l] = In::load(u.lane[l]);
  for (int s = 1; s < nsrc; ++s) {
    if (!fetch(s, &u.word)) return false;
    for (int l = 0; l < kLanes; ++l) acc[l] = reduce_op<Acc>(op, acc[l], In::load(u.lane[l]));
  }
  for (int l = 0; l < kLanes; ++l) u.lane[l] = In::store(acc[l]);
  *out = u.word;
  return true;
}

}  // namespace mpix::coll
