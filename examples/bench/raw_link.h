// The floor the ST path is measured against: a raw cross-process link between two ranks on one
// node — a flag each side polls, the peer's flag mapped for stores, and the peer's buffer mapped
// for copy-engine copies — with no MPI and no library in the data or control path.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace raw {

constexpr int kSlots = 8;  // flags per rank

struct Link {
  uint64_t *mine = nullptr;   // this rank's kSlots flags, polled by its stream
  uint64_t *peers = nullptr;  // the peer's flags, mapped here
  void *peer_buffer = nullptr;  // the peer's `buffer`, mapped here (nullptr where unsupported)
  uint64_t *counters = nullptr;  // kSlots counters of this rank, for relative hops (not mapped by the peer)
  void *state = nullptr;
};

// Collective over `comm` (two ranks). `buffer` is this rank's device buffer of `bytes`.
Link connect(MPI_Comm comm, void *buffer, size_t bytes);
void disconnect(Link &link);

// One stream operation: wait until mine[wait_slot] >= wait_value (0: no wait), then store
// signal_value to the peer's flag peers[signal_slot] (0: no store).
void enqueue_hop(void *stream, const Link &link, int wait_slot, uint64_t wait_value, int signal_slot,
                 uint64_t signal_value);
// A hop whose values are relative to this rank's counters[counter], so that a captured graph of
// hops replays as the next iterations (as the library's epoch cursors do): waits until
// mine[wait_slot] >= c + wait_offset (wait_offset < 0: no wait), stores c + signal_offset to the
// peer's peers[signal_slot] (signal_offset < 0: no store), then adds `advance` to the counter,
// where c is the counter's value when the hop runs. One kernel (host: one task).
void enqueue_relative_hop(void *stream, const Link &link, int counter, int wait_slot, int wait_offset, int signal_slot,
                          int signal_offset, int advance);
// The same hop as stream memory operations (wait-value, then write-value): two operations.
// Returns false where the backend has none.
bool enqueue_memop_hop(void *stream, const Link &link, int wait_slot, uint64_t wait_value, int signal_slot,
                       uint64_t signal_value);
// Copy-engine copy of `bytes` from local `src` into the peer's buffer. Returns false if unsupported.
bool enqueue_peer_copy(void *stream, const Link &link, const void *src, size_t bytes);

}  // namespace raw
