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
  void *state = nullptr;
};

// Collective over `comm` (two ranks). `buffer` is this rank's device buffer of `bytes`.
Link connect(MPI_Comm comm, void *buffer, size_t bytes);
void disconnect(Link &link);

// One stream operation: wait until mine[wait_slot] >= wait_value (0: no wait), then store
// signal_value to the peer's flag peers[signal_slot] (0: no store).
void enqueue_hop(void *stream, const Link &link, int wait_slot, uint64_t wait_value, int signal_slot,
                 uint64_t signal_value);
// The same hop as stream memory operations (wait-value, then write-value): two operations.
// Returns false where the backend has none.
bool enqueue_memop_hop(void *stream, const Link &link, int wait_slot, uint64_t wait_value, int signal_slot,
                       uint64_t signal_value);
// Copy-engine copy of `bytes` from local `src` into the peer's buffer. Returns false if unsupported.
bool enqueue_peer_copy(void *stream, const Link &link, const void *src, size_t bytes);

}  // namespace raw
