// kernels/coll/geometry.h: set_geometry, the arithmetic the host does once per call so that the
// kernels divide nothing. Each channel takes round_elems of every full round and last_share of the
// last; the channels' slices (skip = min(c x share, total), elems = min(total - skip, share), as
// Schedule::round cuts them) must cover the last round exactly, in channel order, none larger
// than a channel's round capacity, each starting on a 64-byte boundary unless the share is that
// capacity (a kLL round's capacity is a multiple of 32 bytes).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <random>

#include "kernels/coll/geometry.h"

using namespace mpix::coll;

namespace {

Args call(uint8_t kind, uint8_t algo, uint8_t proto, int size, uint8_t dtype, uint32_t channels, uint64_t count) {
  Args a{};
  a.kind = kind;
  a.algo = algo;
  a.proto = proto;
  a.size = size;
  a.dtype = dtype;
  a.count = count;
  a.channels = channels;
  a.regions = channels;
  a.half_bytes = uint64_t(4) << 20;
  a.line_region_bytes = uint64_t(256) << 10;
  a.round_elems = proto == kLL ? line_round_capacity(kind, algo, size, a.line_region_bytes, elem_size(dtype))
                               : round_capacity(kind, algo, size, call_channel_half_bytes(a), elem_size(dtype));
  const uint64_t per_round = a.round_elems * channels;
  a.rounds = (count + per_round - 1) / per_round;
  set_geometry(a);
  return a;
}

// The last round's slices, checked as the comment above says.
void check_last_round(const Args &a) {
  const uint64_t channels = channel_count(a), full = channels * a.round_elems;
  const uint64_t start = (a.rounds - 1) * full, total = a.count - start;
  const uint64_t share = a.last_share, align = kSlotAlign / elem_size(a.dtype);
  REQUIRE(total >= 1);
  REQUIRE(total <= full);
  CHECK(share <= a.round_elems);
  uint64_t covered = 0;
  for (uint64_t c = 0; c < channels; ++c) {
    const uint64_t skip = c * share < total ? c * share : total;
    const uint64_t elems = total - skip < share ? total - skip : share;
    CHECK(skip == covered);  // contiguous, in channel order
    if (elems && share < a.round_elems) CHECK(skip % align == 0);
    covered += elems;
  }
  CHECK(covered == total);
}

}  // namespace

TEST_CASE("the geometry is the schedule's own arithmetic") {
  const Args a = call(kAllreduce, kRing, kSimple, 4, kFloat, 4, 1 << 20);
  CHECK(a.channel_half == call_channel_half_bytes(a));
  CHECK(a.slot == slot_bytes(a.kind, a.algo, a.size, a.channel_half));
  CHECK(a.line_slot == 0);
  const Args l = call(kReduce, kOneShot, kLL, 4, kDouble, 2, 1000);
  CHECK(l.line_slot == line_slot_bytes(l.kind, l.algo, l.size, l.line_region_bytes));
}

TEST_CASE("one round of one element, and a round exactly full") {
  check_last_round(call(kReduce, kOneShot, kLL, 4, kFloat, 1, 1));
  Args one = call(kAllreduce, kOneShot, kSimple, 2, kFloat, 1, 1);
  CHECK(one.last_share == 16);  // one element, rounded up to a 64-byte multiple of floats
  const Args a = call(kAllreduce, kOneShot, kSimple, 4, kFloat, 3, 1);
  const Args full = call(kAllreduce, kOneShot, kSimple, 4, kFloat, 3, 5 * 3 * a.round_elems);
  CHECK(full.rounds == 5);
  CHECK(full.last_share == full.round_elems);
  check_last_round(full);
}

TEST_CASE("random calls: the last round's slices cover it") {
  std::mt19937_64 rng(20261128);
  const uint8_t kinds[] = {kAllreduce, kReduce, kBcast, kAllgather, kAlltoall};
  const uint8_t dtypes[] = {kInt8, kHalf, kInt32, kFloat, kDouble, kBytes};
  for (int i = 0; i < 20000; ++i) {
    const uint8_t kind = kinds[rng() % 5];
    const uint8_t dtype = kind <= kReduce ? dtypes[rng() % 5] : uint8_t(kBytes);
    const uint8_t proto = rng() % 2 ? uint8_t(kLL) : uint8_t(kSimple);
    const uint8_t algo = proto == kLL || kind != kAllreduce ? uint8_t(kOneShot) : uint8_t(1 + rng() % 5);
    const int size = 1 + static_cast<int>(rng() % 8);
    const uint32_t channels = 1 + static_cast<uint32_t>(rng() % 8);
    const uint64_t count = 1 + rng() % (uint64_t(1) << (rng() % 26));
    const Args a = call(kind, algo, proto, size, dtype, channels, count);
    if (a.round_elems == 0) continue;
    CAPTURE(i);
    CAPTURE(count);
    check_last_round(a);
  }
}
