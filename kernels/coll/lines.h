// Lines of the collectives' low-latency protocol (args.h, kLL), shared by the host executor
// and the device kernel.
//
// A line is 16 bytes carrying 8 bytes of payload: two 64-bit words, each holding four payload
// bytes in its low half and the round's tag in its high half. Each word is written and read as one
// aligned 64-bit access, which is single-copy atomic, so a reader that finds the tag in both words
// holds the whole payload of that round: the data is its own flag, and the writer needs neither a
// fence nor a separate flag store (NCCL's LL protocol works the same way).
//
// Tags are never 0 (fresh memory) and differ between the rounds that share a half (r, r - 2, ...)
// unless a line stays unwritten for 2^32 - 1 rounds of its channel and is then read in the one
// round whose tag matches its stale one: a call writes every line it reads, so this needs a call
// larger than all of that many calls before it, in a round whose number matches to the unit.
#pragma once
#include <cstdint>

#include "kernels/work_items.h"

namespace mpix::coll {

constexpr uint64_t kLinePayload = 8;  // payload bytes of a line
constexpr uint64_t kLineBytes = 16;

MPIX_HOST_DEVICE inline uint32_t line_tag(uint64_t round) {
  return static_cast<uint32_t>(round % 0xFFFFFFFFull) + 1u;
}
MPIX_HOST_DEVICE inline uint64_t line_word(uint64_t payload_half, uint32_t tag) {
  return (payload_half & 0xFFFFFFFFull) | (static_cast<uint64_t>(tag) << 32);
}
MPIX_HOST_DEVICE inline bool line_has(uint64_t w0, uint64_t w1, uint32_t tag) {
  return static_cast<uint32_t>(w0 >> 32) == tag && static_cast<uint32_t>(w1 >> 32) == tag;
}
MPIX_HOST_DEVICE inline uint64_t line_payload(uint64_t w0, uint64_t w1) {
  return (w0 & 0xFFFFFFFFull) | (w1 << 32);
}

// For watchdog reports: the round a line's first word was last written for (modulo 2^32 - 1;
// 0 for fresh memory).
MPIX_HOST_DEVICE inline uint64_t line_round_seen(uint64_t w0) { return (w0 >> 32) ? (w0 >> 32) - 1 : 0; }

// Payload bytes of unit u (8 bytes each) of a piece of `bytes`: 8, or fewer for the last.
MPIX_HOST_DEVICE inline uint64_t unit_bytes(uint64_t bytes, uint64_t u) {
  return bytes - u * kLinePayload < kLinePayload ? bytes - u * kLinePayload : kLinePayload;
}
MPIX_HOST_DEVICE inline uint64_t unit_count(uint64_t bytes) { return (bytes + kLinePayload - 1) / kLinePayload; }

// k (1..8) bytes at p as the low bytes of a little-endian word, and back. One 64-bit access where
// p allows it; otherwise in the widest words both p and k allow (elements are aligned to their size).
MPIX_HOST_DEVICE inline uint64_t load_unit(const char *p, uint64_t k) {
  const uint64_t m = reinterpret_cast<uintptr_t>(p) | k;
  if ((m & 7) == 0) return *reinterpret_cast<const uint64_t *>(p);
  uint64_t v = 0;
  if ((m & 3) == 0) {
    for (uint64_t i = 0; i < k; i += 4) v |= static_cast<uint64_t>(*reinterpret_cast<const uint32_t *>(p + i)) << (8 * i);
  } else if ((m & 1) == 0) {
    for (uint64_t i = 0; i < k; i += 2) v |= static_cast<uint64_t>(*reinterpret_cast<const uint16_t *>(p + i)) << (8 * i);
  } else {
    for (uint64_t i = 0; i < k; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  }
  return v;
}
MPIX_HOST_DEVICE inline void store_unit(char *p, uint64_t v, uint64_t k) {
  const uint64_t m = reinterpret_cast<uintptr_t>(p) | k;
  if ((m & 7) == 0) {
    *reinterpret_cast<uint64_t *>(p) = v;
  } else if ((m & 3) == 0) {
    for (uint64_t i = 0; i < k; i += 4) *reinterpret_cast<uint32_t *>(p + i) = static_cast<uint32_t>(v >> (8 * i));
  } else if ((m & 1) == 0) {
    for (uint64_t i = 0; i < k; i += 2) *reinterpret_cast<uint16_t *>(p + i) = static_cast<uint16_t>(v >> (8 * i));
  } else {
    for (uint64_t i = 0; i < k; ++i) p[i] = static_cast<char>(v >> (8 * i));
  }
}

}  // namespace mpix::coll
