// Two-sided messages: where a message travels between two node-local ranks (doc/design.md,
// Two-sided messages). Each rank owns, for every node-local sender (itself included), an area of
// mailboxes that the sender writes into and the owner's stream reads; and flag words: "full"
// counters its senders store (the owner polls them) and "free" counters its receivers add to (the
// owner polls them before it writes a mailbox again).
//
// Messages of one (sender, receiver) pair go through kChannels channels, a channel per tag modulo
// kChannels; a channel's messages take its kMailboxes mailboxes in turn. Both sides number the
// messages of a channel in program order (MPI's non-overtaking order per source and tag), so the
// n-th send of a channel and the n-th receive of it meet in mailbox n % kMailboxes, in the mailbox's
// round n / kMailboxes: the stream never matches anything.
#pragma once
#include <cstdint>

#include "kernels/message_chunks.h"

namespace mpix::p2p {

constexpr int kChannels = 8;   // per ordered pair: tags t and t + 8k share a channel (and its order)
constexpr int kMailboxes = 8;  // per channel: messages in flight before a sender waits for its receiver
constexpr int kBoxes = kChannels * kMailboxes;

// A mailbox, from its start:
//   header  32 bytes, stored by the sender after its data: 1, the identity word, 0, the length
//           (the receiver's kCopyCounted item reads the length: it copies exactly the sender's
//           bytes, and nothing of a message longer than the receive buffer)
//   source  16 bytes after the header, stored with it by a send longer than slot_bytes: the key of
//           its buffer's allocation and the buffer's offset in it (direct.h; key 0: none)
//   data    at kDataAt, slot_bytes: the message; one longer than slot_bytes is read straight from
//           the send buffer where the receiver mapped it, else moves through the data in chunks of
//           half of it, after the header (kernels/message_chunks.h)
constexpr uint64_t kHeaderBytes = 32;
constexpr uint64_t kLengthAt = 24;
constexpr uint64_t kDataAt = 64;  // a whole cache line after the header
static_assert(kDataAt - kLengthAt == work::kChunkLengthBefore,
              "chunks items find the length from the data");

// Data bytes of a mailbox, the largest message, unless MPIX_ST_P2P_SLOT_KIB says otherwise.
constexpr uint64_t kSlotBytesHost = 16 * 1024;
constexpr uint64_t kSlotBytesDevice = 1024 * 1024;

inline uint64_t mailbox_stride(uint64_t slot_bytes) { return kDataAt + slot_bytes; }
inline uint64_t area_bytes(uint64_t slot_bytes) { return kBoxes * mailbox_stride(slot_bytes); }
inline int box_index(int channel, uint64_t use) {
  return channel * kMailboxes + static_cast<int>(use % kMailboxes);
}
inline uint64_t box_round(uint64_t use) { return use / kMailboxes; }
inline int channel_of(int tag) { return tag % kChannels; }

// Flag words of a rank, per peer j (its index among the node-local ranks, or among those on other
// nodes): kBoxes "full" words (messages from j landed in this rank's area for j, stored by j),
// kBoxes "free" words (messages of this rank to j that j has taken, added to by j), then, for
// node-local peers only, per lane of messages larger than a mailbox (kernels/message_chunks.h)
// kBoxes "chunk" words (chunks from j in, stored by j) and kBoxes "go" words (chunks to j that j
// allows, stored by j), and then j's source table: work::kSourceEntries entries of {key, base, pid,
// 0}, the allocations of j's send buffers this rank mapped (written by this rank's host, read by
// its streams' direct pulls). After those of every peer, the rank's own cursors, which only its streams
// touch: per peer j, the rounds of each mailbox its streams sent through, then those they received
// from (work::kCursor). A message's round is its mailbox's cursor when its list runs, so a list
// captured into a graph is the next round of its mailboxes at every replay.
struct FlagLayout {
  uint64_t peer_words;
  constexpr uint64_t full(int j, int box) const { return static_cast<uint64_t>(j) * peer_words + box; }
  constexpr uint64_t free(int j, int box) const { return full(j, box) + kBoxes; }
  // Lane 0's; lane g's lie g * 2 * kBoxes words further (work::lane_word).
  constexpr uint64_t chunk(int j, int box) const { return full(j, box) + 2 * kBoxes; }
  constexpr uint64_t go(int j, int box) const { return full(j, box) + 3 * kBoxes; }
  constexpr uint64_t sources(int j) const { return full(j, 0) + (2 + 2 * work::kMaxChunkLanes) * kBoxes; }
  uint64_t sent_cursor(int peers, int j, int box) const {
    return static_cast<uint64_t>(peers) * peer_words + static_cast<uint64_t>(j) * 2 * kBoxes + box;
  }
  uint64_t received_cursor(int peers, int j, int box) const { return sent_cursor(peers, j, box) + kBoxes; }
  uint64_t words(int peers) const { return static_cast<uint64_t>(peers) * (peer_words + 2 * kBoxes); }
};
constexpr uint64_t kSourceWords = 4 * work::kSourceEntries;
constexpr FlagLayout kLocalFlags{(2 + 2 * work::kMaxChunkLanes) * kBoxes + kSourceWords};
// Peers on other nodes: full, free, then the words of chunks (kernels/message_chunks.h, Between
// nodes): chunk (half 0's), go, chunk (half 1's, where lane 1's would be), and a send's own done
// words per half.
struct RemoteFlagLayout : FlagLayout {
  constexpr uint64_t done(int j, int box, int half) const { return full(j, box) + (5 + half) * kBoxes; }
};
constexpr RemoteFlagLayout kRemoteFlags{{7 * kBoxes}};
static_assert(kRemoteFlags.chunk(0, 0) + work::kLaneStride / sizeof(uint64_t) == 4 * kBoxes, "half 1's chunk word");
static_assert(kRemoteFlags.go(0, 0) + work::kLaneStride / sizeof(uint64_t) == kRemoteFlags.done(0, 0, 0) &&
                  kRemoteFlags.done(0, 0, 0) + work::kRemoteDoneStride / sizeof(uint64_t) == kRemoteFlags.done(0, 0, 1),
              "chunks items find a send's done words from its go word");
static_assert((2 * kBoxes) * sizeof(uint64_t) == work::kLaneStride, "a lane's words follow the lane before");
static_assert((2 * kBoxes) * sizeof(uint64_t) == work::kFullWordBefore, "chunks items find the full word");
static_assert((kLocalFlags.sources(0) - kLocalFlags.chunk(0, 0)) * sizeof(uint64_t) == work::kSourcesAfterChunkWord,
              "direct pulls find the source table");
static_assert(kDataAt - kHeaderBytes == work::kSourceBefore, "the source words follow the header");

// The identity a header carries: the tag and the number of the message among those of its source
// and tag, which the receiver checks when the message completes on the host.
inline uint64_t identity(int tag, uint64_t tag_seq) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(tag)) << 32) | (tag_seq & 0xFFFFFFFFull);
}

}  // namespace mpix::p2p
