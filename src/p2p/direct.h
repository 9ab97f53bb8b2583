// Direct pulls of long node-local messages (doc/design.md, Two-sided messages, Direct pulls): the
// receiver's stream reads a message longer than a mailbox straight from the send buffer, where its
// process has mapped that buffer's allocation, instead of taking it through the mailbox in chunks.
//   - A sender publishes the allocation of each long send buffer to its receiver once: a key
//     (1, 2, ... per ordered pair, at most work::kSourceEntries) and the allocation's handle, in the
//     receiver's board (host shared memory, made with the context). Its send's header carries the
//     key and the buffer's offset in the allocation (0: no source).
//   - A receiver, before it enqueues a list that takes long messages, maps the allocations its
//     senders published since it last looked and writes {key, base, pid} into its source table
//     (its flag memory, layout.h), which its streams read when a header names a key.
// Neither side waits for the other's host: a message whose source the receiver has not mapped
// when its stream reaches it moves through the mailbox as before (kernels/message_chunks.h).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/result.h"
#include "kernels/message_chunks.h"

namespace mpix::p2p {

struct Context;

enum class DirectMode { kOff, kOn, kRequire };

// One entry of a board: the key last (released), after the handle it names.
struct BoardEntry {
  uint64_t key;
  uint64_t reserved;
  gpu::RegionHandle handle;  // the allocation (offset 0)
};
constexpr uint64_t board_bytes(int nlocal) {
  return static_cast<uint64_t>(nlocal) * work::kSourceEntries * sizeof(BoardEntry);
}

struct DirectState {
  DirectMode mode = DirectMode::kOff;
  BoardEntry *board = nullptr;             // this rank's, by sender local index, then key - 1
  std::vector<BoardEntry *> peer_boards;   // by local index: where this rank publishes to it
  std::vector<gpu::MappedRegion> board_maps;  // host backend regions to release
  std::vector<int> pids;                   // by local index
  // Sender: per receiver (local index), the keys of the allocations published to it, by handle.
  std::vector<std::map<std::string, uint64_t>> published;
  // Receiver: per sender (local index), how many of its entries (keys 1..n, published in order)
  // this rank has looked at, mapped or not.
  std::vector<uint32_t> looked;
  std::vector<gpu::MappedRegion> sources;  // the senders' allocations mapped, released with the context
};

// A rank's messages to itself name its own address space (key 1 of its own source table, base 0):
// their offset is the buffer's address.
constexpr uint64_t kSelfKey = 1;

// MPIX_ST_P2P_DIRECT.
DirectMode direct_mode_setting();

// The source a long send to node-local `peer` publishes for its buffer: *key (0: none, e.g. the
// buffer is not memory the backend can share, or the pair's keys are used up) and the buffer's
// offset in its allocation.
void publish_source(Context &c, int peer, const void *buf, uint64_t bytes, uint64_t *key, uint64_t *offset);

// The context's own source entry (kSelfKey), once its flag memory is made.
core::Result set_up_direct(Context &c);

// Maps what node-local `peer` published to this rank since it last looked, into the source table.
// Not while a stream of the process is being captured (the table is written with a copy).
void map_sources(Context &c, int peer);

// Whether the long message a receive from `peer` took through `box` in `round` moved through the
// mailbox: the sender stored lane 0's chunk word of that round (a direct pull stores none). False
// where it cannot tell (a later round's word is there already).
bool moved_through_mailbox(const Context &c, int peer, int box, uint64_t round);

// Releases the mapped sources and the boards (the context's memory goes after).
void release_direct(Context &c);

}  // namespace mpix::p2p
