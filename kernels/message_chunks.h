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
// Rounds only grow, so a word left by an earlier message of the mailbox never passes a wait.
// Direct pulls: a receive whose process maps the sender's buffer (the header's source words name
// it, the receiver's source table maps it) reads lane g's shares of every chunk straight from
// there instead, and stores round << 32 | kChunksTaken in lane g's go word; the sender's lane
// then moves nothing. Lanes decide on their own (the table may gain the entry between two lanes'
// lookups); each moves the same bytes either way, so the message arrives whole. A
// receive carries a chunks item (kChunksIn) only in a list that moves chunks (a receive into a
// buffer longer than a mailbox, a send's chunks); any other receive of a long message takes
// nothing of it and frees the mailbox as usual, and the sender learns from its "free" word that
// the message was dropped (a taking receiver frees the mailbox only after the last chunk), as it
// does from an abandon or a go word of a later round.
// Between nodes (the words item's kRemoteRings): the words lie in the network's flag memory
// (src/p2p/network.h), and a handover is a ring of the message's own doorbell (the words item's b:
// a host-mapped word the transport's agent forwards to the trigger counter of operations the host
// posted for each ring):
//   - a send's ring k + 1, once chunk k is in its staging mailbox's half k % 2: the chunk's put into
//     the receiver's mailbox, then a max of round << 32 | k + 1 into the receiver's chunk word of
//     that half (lane word k % 2), chained on a completion counter of that half's puts alone. A
//     half holds one chunk in flight (the next waits for the receiver's go), so the word says
//     exactly that its chunk landed; the receiver waits on the word of its next chunk's half.
//   - a receive's ring i: a max of round << 32 | i + 1 into the sender's go word (ring 1: go 2; ring
//     k + 2 once chunk k is out: go k + 3), up to ring K (K: the chunks its buffer holds); its
//     last, ring K + 1, stores kChunksAbandoned once it took the whole message or nothing of it
//     (so a sender learns of a drop without the receive's free word, which its list adds only
//     after every chunk of the list moved). Every receive of a list that moves chunks has them.
// A send whose receiver did not take the message rings its remaining chunks at once (their data
// is not copied); those puts land in any order, so every send ends only once its own "done" words
// say that both halves' puts completed (round + 1, from operations chained on each half's last
// put): the next message through the mailbox never lands before them.
#pragma once
#include <cstdint>

#include "work_items.h"

namespace mpix::work {

constexpr uint32_t kChunksAbandoned = 0xFFFFFFFFu;
constexpr uint32_t kChunksTaken = 0xFFFFFFFEu;  // the receiver read the lane's shares itself

// Lanes: at most kMaxChunkLanes, each share at least kMinLaneBytes (a handover per share costs a
// flag round trip). Lane g's words lie g * kLaneStride bytes after lane 0's (src/p2p/layout.h).
constexpr uint32_t kMaxChunkLanes = 64;
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

// Chunks of `half` bytes that `bytes` take: both sides of a message between nodes number their
// rings by it (a send's chunks, the chunks a receive's buffer holds), so one function counts them.
MPIX_HOST_DEVICE inline uint64_t chunk_count(uint64_t bytes, uint64_t half) { return (bytes + half - 1) / half; }

// The state of a chunks item once its message's header is in (a send's always is). Reads the header.
MPIX_HOST_DEVICE inline ChunkState chunk_start(const Item &head, const Item &words) {
  ChunkState s{};
  const bool out = head.kind == kChunksOut;
  s.base = chunk_round(head, words) << 32;
  const uint64_t half = static_cast<uint32_t>(words.peer);
  s.length = out ? head.bytes : *reinterpret_cast<const volatile uint64_t *>(head.b - kChunkLengthBefore);
  if (s.length <= 2 * half) return s;  // it travelled whole, in the mailbox
  s.total = static_cast<uint32_t>(chunk_count(s.length, half));
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
// Whether a send's go word ends its lane: the receiver abandoned the message or read the lane's
// shares itself, or the word is of a later round. Checked before chunk_ready, which it would pass.
MPIX_HOST_DEVICE inline bool chunks_go_final(const ChunkState &s, uint64_t go) {
  return (go >> 32) > (s.base >> 32) || go >= (s.base | kChunksTaken);
}
// Whether a send's lane has nothing more to move: chunks_go_final, or its receiver freed the
// mailbox (`freed`: the send's free word) with chunks still to come, which only a receive that
// dropped the message does.
MPIX_HOST_DEVICE inline bool chunks_dropped(const ChunkState &s, uint64_t go, uint64_t freed) {
  return chunks_go_final(s, go) || freed >= (s.base >> 32) + 1;
}
// The value waited for (watchdog reports).
MPIX_HOST_DEVICE inline uint64_t chunk_want(const ChunkState &s) { return s.base | (s.next + 1); }

// Between nodes (the header comment, Between nodes): the word a lane waits on for its next chunk
// (a receive's: that chunk's half's), and where a handover of `value` goes (the peer's lane word, or
// the message's doorbell and the ring that sends the value).
MPIX_HOST_DEVICE inline bool chunks_remote(const Item &words) { return (words.flags & kRemoteRings) != 0; }
MPIX_HOST_DEVICE inline uint64_t chunk_wait_word(const Item &head, const Item &words, const ChunkState &s,
                                                 uint32_t lane) {
  return chunks_remote(words) && head.kind == kChunksIn ? lane_word(words.a, s.next & 1) : lane_word(words.a, lane);
}
// A receive's last ring: K + 1, K the chunks of the chunk size its buffer holds.
MPIX_HOST_DEVICE inline uint64_t chunks_last_ring(const Item &head, const Item &words) {
  return chunk_count(head.bytes, static_cast<uint32_t>(words.peer)) + 1;
}
struct Handover {
  uint64_t *word;  // null: nothing to store
  uint64_t value;
};
MPIX_HOST_DEVICE inline Handover chunk_handover(const Item &head, const Item &words, const ChunkState &s, uint32_t lane,
                                                uint64_t value) {
  if (!chunks_remote(words)) return {reinterpret_cast<uint64_t *>(lane_word(words.b, lane)), value};
  const uint64_t c = static_cast<uint32_t>(value), bell = words.b;
  if (head.kind == kChunksOut) return {reinterpret_cast<uint64_t *>(bell), c};  // chunk c - 1 is in: ring c
  const bool last = c == kChunksAbandoned || c >= static_cast<uint64_t>(s.total) + 2;
  return {reinterpret_cast<uint64_t *>(bell), last ? chunks_last_ring(head, words) : c - 1};
}
// What an item between nodes rings when it ends without moving (more) chunks: a receive that takes
// nothing of its message (it travelled whole, or the receive dropped it) its last ring, a send
// whose receiver dropped it every chunk's ring.
MPIX_HOST_DEVICE inline Handover chunks_release(const Item &head, const Item &words, const ChunkState &s) {
  if (!chunks_remote(words)) return {nullptr, 0};
  const uint64_t ring = head.kind == kChunksOut ? s.total : chunks_last_ring(head, words);
  return {reinterpret_cast<uint64_t *>(words.b), ring};
}
// A send between nodes ends once both halves' puts completed: its done words (a lane stride after
// its go word, and kRemoteDoneStride further) hold its round + 1.
constexpr uint64_t kRemoteDoneStride = 512;
MPIX_HOST_DEVICE inline bool chunks_drain(const Item &head, const Item &words) {
  return chunks_remote(words) && head.kind == kChunksOut;
}
MPIX_HOST_DEVICE inline const uint64_t *chunks_done_word(const Item &words, uint32_t half) {
  return reinterpret_cast<const uint64_t *>(lane_word(words.a, 1) + half * kRemoteDoneStride);
}
MPIX_HOST_DEVICE inline uint64_t chunks_done_value(const ChunkState &s) { return (s.base >> 32) + 1; }

struct ChunkMove {
  char *dst;
  const char *src;
  uint64_t bytes;
  uint64_t signal;  // stored into the peer's word (lane_word) after the move
};
// Lane `lane`'s share of chunk s.next (the words item's dtype is the lanes; a share past the
// message's end moves nothing, and is handed over all the same).
// Where lane `lane`'s share of chunk k lies in the message, and its length (0 past the end): the
// one cut of the message that both ways of moving a lane (chunk_move, chunk_direct_move) follow.
struct LaneShare {
  uint64_t at, bytes;
};
MPIX_HOST_DEVICE inline LaneShare lane_share(const Item &words, const ChunkState &s, uint32_t lane, uint64_t k) {
  const uint64_t half = static_cast<uint32_t>(words.peer), share = half / words.dtype;
  const uint64_t at = k * half + lane * share;
  return {at, at >= s.length ? 0 : s.length - at < share ? s.length - at : share};
}
MPIX_HOST_DEVICE inline ChunkMove chunk_move(const Item &head, const Item &words, const ChunkState &s, uint32_t lane) {
  const uint64_t k = s.next;
  const LaneShare l = lane_share(words, s, lane, k);
  const uint64_t half = static_cast<uint32_t>(words.peer);
  char *slot = reinterpret_cast<char *>(head.b) + (k & 1) * half + (l.at - k * half);  // its place in the chunk
  char *buf = reinterpret_cast<char *>(head.a) + l.at;
  if (head.kind == kChunksOut) return {slot, buf, l.bytes, s.base | (k + 1)};
  return {buf, slot, l.bytes, s.base | (k + 3)};
}

// Direct pulls. A chunked send's header carries, from kSourceBefore bytes before the data, its
// source: a key naming the sender's buffer's allocation among those it published to this receiver
// (0: none) and the buffer's offset in it. The receiver's source table (src/p2p/layout.h, per
// sender kSourceEntries entries of {key, base, pid, 0}, written by the receiver's host) lies
// kSourcesAfterChunkWord bytes after the chunk word of the sender's mailbox 0; a receive's chunks
// item carries its mailbox in `op`.
constexpr uint64_t kSourceBefore = 32;
constexpr uint32_t kSourceEntries = 32;
constexpr uint64_t kSourcesAfterChunkWord = kMaxChunkLanes * kLaneStride;

struct DirectSource {
  const char *src;  // the message's first byte as this process reaches it (CMA: the sender's address)
  int32_t pid;      // host backend: the sender's process, read with cross-memory attach; 0: mapped
};
// Where a receive that takes the data (s.copy) can read its message straight from the send buffer;
// src null where it cannot (no source, or this process has not mapped it).
MPIX_HOST_DEVICE inline DirectSource chunk_direct_source(const Item &head, const Item &words, const ChunkState &s) {
  if (head.kind != kChunksIn || !s.copy || s.total == 0) return {nullptr, 0};
  const auto *source = reinterpret_cast<const volatile uint64_t *>(head.b - kSourceBefore);
  const uint64_t key = source[0];
  if (key == 0) return {nullptr, 0};
  const uint64_t box0_chunk = words.a - static_cast<uint64_t>(head.op) * sizeof(uint64_t);
  const auto *entry = reinterpret_cast<const volatile uint64_t *>(box0_chunk + kSourcesAfterChunkWord) +
                      4 * ((key - 1) % kSourceEntries);
  if (entry[0] != key) return {nullptr, 0};
  return {reinterpret_cast<const char *>(entry[1] + source[1]), static_cast<int32_t>(entry[2])};
}
// Lane `lane`'s share of chunk k, read straight from the send buffer: the bytes chunk_move would
// have moved through the mailbox.
MPIX_HOST_DEVICE inline ChunkMove chunk_direct_move(const Item &head, const Item &words, const ChunkState &s,
                                                    const DirectSource &d, uint32_t lane, uint32_t k) {
  const LaneShare l = lane_share(words, s, lane, k);
  return {reinterpret_cast<char *>(head.a) + l.at, d.src + l.at, l.bytes, s.base | kChunksTaken};
}

}  // namespace mpix::work
