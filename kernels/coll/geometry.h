// The size arithmetic of a collective call, shared by the host (src/coll, which sizes rounds and
// channels with it) and the schedules (which address scratch slots with it).
#pragma once
#include <cstdint>

#include "args.h"
#include "lines.h"

namespace mpix::coll {

// Node-local communicators the schedules handle (peer masks are 64-bit words).
constexpr int kMaxRanks = 64;

// Scratch slots are whole multiples of this, so vector copies stay aligned.
constexpr uint64_t kSlotAlign = 64;

// Chunks of the pipelined chains, bcast's and reduce's (the chunk model of [Chu 2019]; 512 KiB by
// default there).
constexpr uint64_t kChainChunkBytes = 512 * 1024;

// Two-shot allreduce and reduce: a reduce-scatter, then the parts pushed to every rank or the root.
MPIX_HOST_DEVICE inline bool is_two_shot(uint8_t kind, uint8_t algo) {
  return algo == kTwoShot && (kind == kAllreduce || kind == kReduce);
}

// Pipelined chains, bcast's and reduce's: one slot per half, a chunk of at most kChainChunkBytes.
MPIX_HOST_DEVICE inline bool is_chain(uint8_t kind, uint8_t algo) {
  return algo == kChain && (kind == kBcast || kind == kReduce);
}

// Slots a scratch half is cut into, and bytes of one (a multiple of kSlotAlign).
MPIX_HOST_DEVICE inline uint64_t slot_count(uint8_t kind, uint8_t algo, int n) {
  if (kind == kBcast || is_chain(kind, algo)) return 1;
  if (is_two_shot(kind, algo)) return 2 * static_cast<uint64_t>(n);  // n sources' parts, n results
  if (kind != kAllreduce) return n;  // reduce, allgather, alltoall: one slot per source
  switch (algo) {
    case kRing: return n > 1 ? 2 * static_cast<uint64_t>(n - 1) : 1;  // one per step
    case kGsb:
    case kBtb: return static_cast<uint64_t>(n) + 1;  // n sources' partials, the result
    default: return n;
  }
}
MPIX_HOST_DEVICE inline uint64_t slot_bytes(uint8_t kind, uint8_t algo, int n, uint64_t half_bytes) {
  uint64_t slot = half_bytes / slot_count(kind, algo, n) / kSlotAlign * kSlotAlign;
  if (is_chain(kind, algo) && slot > kChainChunkBytes) slot = kChainChunkBytes;
  return slot;
}

// Elements one round moves (of the vector, or of each rank's block); 0: the scratch is too small.
// Algorithms that cut the round into n parts move n slots' worth.
MPIX_HOST_DEVICE inline uint64_t round_capacity(uint8_t kind, uint8_t algo, int n, uint64_t half_bytes, uint32_t elem) {
  const uint64_t per_slot = slot_bytes(kind, algo, n, half_bytes) / elem;
  const bool parts = is_two_shot(kind, algo) || (kind == kAllreduce && algo == kRing && n > 1);
  return parts ? per_slot * n : per_slot;
}

// Channels (args.h): each region is an equal, aligned share of both scratch halves.
MPIX_HOST_DEVICE inline uint64_t channel_half_bytes(uint64_t half_bytes, uint32_t channels) {
  return half_bytes / channels / kSlotAlign * kSlotAlign;
}

// Allgather and alltoall use at most this much of each half, however large the scratch: on
// 4 H200s their 128 MiB calls lost 3-6% of bus bandwidth with 32 MiB halves and 15-18% with
// 64 MiB (bigger rounds, fewer of them to overlap), where the ring allreduce gained 38% with 32.
// Alltoall takes half of that again: on 4 H100s (one job, halves set by MPIX_ST_COLL_SCRATCH_KIB)
// its 128 MiB calls took 370 us with 8 MiB, 401-446 with 16 and 519 with 4 (NCCL 345-358), 64 MiB
// ones 208 against 218-230; the ring allgather took 405-410 us with 8 MiB against 338-346 with 16.
constexpr uint64_t kGatherHalfMaxBytes = uint64_t(16) << 20;
constexpr uint64_t kAlltoallHalfMaxBytes = uint64_t(8) << 20;
MPIX_HOST_DEVICE inline uint64_t used_half_bytes(uint8_t kind, uint64_t half_bytes) {
  const uint64_t most = kind == kAlltoall    ? kAlltoallHalfMaxBytes
                        : kind == kAllgather ? kGatherHalfMaxBytes
                                             : half_bytes;
  return half_bytes > most ? most : half_bytes;
}
// A channel's share of the part of a half the call uses: the host sizes rounds by it, the
// schedule addresses its region with it, so both come from here.
MPIX_HOST_DEVICE inline uint64_t call_channel_half_bytes(const Args &a) {
  return channel_half_bytes(used_half_bytes(a.kind, a.half_bytes), region_count(a));
}

// kLL: slots of a channel's line area (one per source; two-shot adds one per result part), the
// bytes of lines each gets, and elements a round moves then (two-shot: n parts of a slot each).
MPIX_HOST_DEVICE inline uint64_t line_slot_count(uint8_t kind, uint8_t algo, int n) {
  return (is_two_shot(kind, algo) ? 2 : 1) * static_cast<uint64_t>(n);
}
MPIX_HOST_DEVICE inline uint64_t line_slot_bytes(uint8_t kind, uint8_t algo, int n, uint64_t line_region_bytes) {
  return line_region_bytes / line_slot_count(kind, algo, n) / kSlotAlign * kSlotAlign;
}
MPIX_HOST_DEVICE inline uint64_t line_round_capacity(uint8_t kind, uint8_t algo, int n, uint64_t line_region_bytes,
                                                     uint32_t elem) {
  const uint64_t per_slot = line_slot_bytes(kind, algo, n, line_region_bytes) / kLineBytes * kLinePayload / elem;
  return is_two_shot(kind, algo) ? per_slot * n : per_slot;
}

// What every channel of a call computes from its arguments, computed once by the host into them.
// A 64-bit division is a chain of dependent instructions that one thread runs for about 0.1 us:
// on one H200 a one-rank 8-byte reduce's kernel spent 0.75 us of its 1.6 before its first step
// (this arithmetic and the cursor load); with it done here the replayed call took 1.75 us, not 2.06.
// Every round but the last is full (rounds = count / (channels x round_elems), rounded up), and in
// a full round each channel takes round_elems; the last round's elements are split evenly in
// channel order into 64-byte multiples, so channels left without elements still run its waits and
// signals and their flags stay in step.
MPIX_HOST_DEVICE inline void set_geometry(Args &a) {
  a.channel_half = call_channel_half_bytes(a);
  a.slot = slot_bytes(a.kind, a.algo, a.size, a.channel_half);
  a.line_slot = a.proto == kLL ? line_slot_bytes(a.kind, a.algo, a.size, a.line_region_bytes) : 0;
  const uint64_t channels = channel_count(a), cap = a.round_elems, full = channels * cap;
  const uint64_t start = a.rounds ? (a.rounds - 1) * full : 0;
  const uint64_t total = a.count - start < full ? a.count - start : full;
  const uint64_t align = kSlotAlign / elem_size(a.dtype);
  uint64_t share = (total + channels - 1) / channels;
  share = (share + align - 1) / align * align;
  a.last_share = share > cap ? cap : share;
}

}  // namespace mpix::coll
