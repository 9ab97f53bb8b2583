// Two-sided messages larger than a mailbox (doc/design.md, Two-sided messages), shared by the host
// executor and the epoch kernel. The send list stores the header (the length) and the "full" word
// as for any message, but no data; the data follows through the same mailbox in chunks of half
// its data area, alternating halves. A chunk is cut into `lanes` equal shares, each moved on its
// own (on GPUs a thread block per lane, so the whole grid copies and no lane waits for another's
// handover), lane g's share of every chunk handed over by lane g's pair of words per mailbox:
//   - the receiver stores its "go" word (in the sender's flags): round << 32 | c, c = the chunks
//     the sender may have written so far: 2 when its stream reaches the message, k + 3 once it
//     copied chunk k out. A receive that cannot take the message (too long for its buffer) stores
//     round << 32 | kChunksAbandoned.
//   - the sender stores its "chunk" word (in the receiver's flags): round << 32 | k + 1 once
//     chunk k is in.
// Rounds only grow, so a word left by an earlier message of the mailbox never passes a wait. A
// receive carries a chunks item (kChunksIn) only in a list that moves chunks (a receive into a
// buffer longer than a mailbox, a send's chunks); any other receive of a long message takes
// nothing of it and frees the mailbox as usual, and the sender learns from its "free" word that
// the message was dropped (a taking receiver frees the mailbox only after the last chunk), as it
// does from an abandon or a go word of a later round.
#pragma once
#include <cstdint>

#include "work_items.h"

namespace mpix::work {

constexpr uint32_t kChunksAbandoned = 0xFFFFFFFFu;

// Lanes: at most kMaxChunkLanes, each share at least kMinLaneBytes (a handover per share costs a
// flag round trip). Lane g's words lie g * kLaneStride bytes after lane 0's (src/p2p/layout.h).
constexpr uint32_t kMaxChunkLanes = 16;
constexpr uint64_t kMinLaneBytes = 4096;
constexpr uint64_t kLaneStride = 1024;
// The lanes of a chunk of `half` bytes, given the most allowed (MPIX_ST_P2P_LANES): a power of two,
// so the shares of a chunk (a multiple of 512 bytes) stay whole 32-byte multiples.
MPIX_HOST_DEVICE inline uint32_t chunk_lanes(uint64_t half, uint32_t most) {
  uint32_t lanes = 1;
  while (lanes * 2 <= most && lanes * 2 <= kMaxChunkLanes && half / (lanes * 2) >= kMinLaneBytes &&
         half % (lanes * 2) == 0)
    lanes *= 2;
  return lanes;
}
// Lane `lane`'s copy of a chunks word.
MPIX_HOST_DEVICE inline uint64_t lane_word(uint64_t word, uint32_t lane) { return word + lane * kLaneStride; }
constexpr uint64_t kChunkLengthBefore = 40;  // the header's length word lies this far before the data (src/p2p/layout.h)

// A receive's "full" word lies this many bytes before its chunk word, and a send's "free" word as
// far before its go word (src/p2p/layout.h).
constexpr uint64_t kFullWordBefore = 1024;

// Plain data (no member initializers), so that kernels may keep it in shared memory.
struct ChunkState {
  uint64_t base;    // round << 32
  uint64_t length;  // the message's
  uint32_t total;   // chunks to move; 0: nothing (a mailbox-sized message)
  uint32_t next;    // the next chunk
  bool copy;        // a receive that takes the data (else it takes nothing: it abandons)
};

// The message's round: in the item, or relative to the mailbox's cursor (a send's list of chunks
// runs after the list that advanced it for the header).
MPIX_HOST_DEVICE inline uint64_t chunk_round(const Item &head, const Item &words) {
  if (!(words.flags & kCursor)) return words.bytes;
  return *reinterpret_cast<const volatile uint64_t *>(words.bytes) - (head.kind == kChunksOut ? 1 : 0);
}
// A receive's "full" word and the value that says its message (the header) is in; for a send, its
// "free" word.
MPIX_HOST_DEVICE inline const uint64_t *chunk_full_word(const Item &words) {
  return reinterpret_cast<const uint64_t *>(words.a - kFullWordBefore);
}
MPIX_HOST_DEVICE inline uint64_t chunk_full_value(const Item &head, const Item &words) {
  return chunk_round(head, words) + 1;
}

// The state of a chunks item once its message's header is in (a send's always is). Reads the header.
MPIX_HOST_DEVICE inline ChunkState chunk_start(const Item &head, const Item &words) {
  ChunkState s{};
  const bool out = head.kind == kChunksOut;
  s.base = chunk_round(head, words) << 32;
  const uint64_t half = static_cast<uint32_t>(words.peer);
  s.length = out ? head.bytes : *reinterpret_cast<const volatile uint64_t *>(head.b - kChunkLengthBefore);
  if (s.length <= 2 * half) return s;  // it travelled whole, in the mailbox
  s.total = static_cast<uint32_t>((s.length + half - 1) / half);
  s.copy = out || (head.a != 0 && s.length <= head.bytes);
  return s;
}

// Whether the item moves chunks (else its message travelled whole, or a receive cannot take it and
// stores its abandon word).
MPIX_HOST_DEVICE inline bool chunks_progress(const ChunkState &s) { return s.total > 0 && s.copy; }
MPIX_HOST_DEVICE inline bool chunks_abandon(const Item &head, const ChunkState &s) {
  return head.kind == kChunksIn && s.total > 0 && !s.copy;
}
// The go a receive stores when it starts taking the chunks.
MPIX_HOST_DEVICE inline uint64_t chunks_go(const ChunkState &s) { return s.base | 2; }
MPIX_HOST_DEVICE inline uint64_t chunks_abandoned(const ChunkState &s) { return s.base | kChunksAbandoned; }

// Whether chunk s.next can move, given the word waited on (`seen`).
MPIX_HOST_DEVICE inline bool chunk_ready(const ChunkState &s, uint64_t seen) { return seen >= (s.base | (s.next + 1)); }
// Whether a send's receiver dropped the message: its go word abandons it or is of a later round,
// or it freed the mailbox (`freed`: the send's free word) with chunks still to come.
MPIX_HOST_DEVICE inline bool chunks_dropped(const ChunkState &s, uint64_t go, uint64_t freed) {
  const uint64_t round = s.base >> 32;
  return (go >> 32) > round || go == (s.base | kChunksAbandoned) || freed >= round + 1;
}
// The value waited for (watchdog reports).
MPIX_HOST_DEVICE inline uint64_t chunk_want(const ChunkState &s) { return s.base | (s.next + 1); }

struct ChunkMove {
  char *dst;
  const char *src;
  uint64_t bytes;
  uint64_t signal;  // stored into the peer's word (lane_word) after the move
};
// Lane `lane`'s share of chunk s.next (the words item's dtype is the lanes; a share past the
// message's end moves nothing, and is handed over all the same).
MPIX_HOST_DEVICE inline ChunkMove chunk_move(const Item &head, const Item &words, const ChunkState &s, uint32_t lane) {
  const uint64_t half = static_cast<uint32_t>(words.peer), share = half / words.dtype, k = s.next;
  const uint64_t at = k * half + lane * share;
  const uint64_t bytes = at >= s.length ? 0 : s.length - at < share ? s.length - at : share;
  char *slot = reinterpret_cast<char *>(head.b) + (k & 1) * half + lane * share;
  char *buf = reinterpret_cast<char *>(head.a) + at;
  if (head.kind == kChunksOut) return {slot, buf, bytes, s.base | (k + 1)};
  return {buf, slot, bytes, s.base | (k + 3)};
}

}  // namespace mpix::work
