// Host-backend floor: flags in an MPI shared-memory window, hops as host-stream tasks.
#include <mpix/mpix_st.h>
#include <sched.h>

#include <atomic>
#include <deque>

#include "raw_link.h"

namespace raw {
namespace {
struct RelativeHop {
  const uint64_t *mine;
  uint64_t *peers, *counter;
  int wait_offset, signal_offset, advance;
};
struct State {
  MPI_Win win;
  std::deque<RelativeHop> relative_hops;  // a captured hop runs at every replay: kept until disconnect
};
struct Hop {
  uint64_t *mine, *peers;
  uint64_t wait_value, signal_value;
};
void run_hop(void *arg) {
  auto *h = static_cast<Hop *>(arg);
  if (h->wait_value)
    while (std::atomic_ref<uint64_t>(*h->mine).load(std::memory_order_acquire) < h->wait_value) sched_yield();
  if (h->signal_value) std::atomic_ref<uint64_t>(*h->peers).store(h->signal_value, std::memory_order_release);
  delete h;
}
void run_relative_hop(void *arg) {
  auto *h = static_cast<RelativeHop *>(arg);
  const uint64_t c = *h->counter;
  if (h->wait_offset >= 0)
    while (std::atomic_ref<const uint64_t>(*h->mine).load(std::memory_order_acquire) < c + h->wait_offset) sched_yield();
  if (h->signal_offset >= 0)
    std::atomic_ref<uint64_t>(*h->peers).store(c + h->signal_offset, std::memory_order_release);
  *h->counter = c + h->advance;
}
}  // namespace

Link connect(MPI_Comm comm, void *, size_t) {
  auto *st = new State{};
  uint64_t *base = nullptr;
  // kSlots flags the peer stores into, then kSlots private counters.
  MPI_Win_allocate_shared(2 * kSlots * sizeof(uint64_t), 1, MPI_INFO_NULL, comm, &base, &st->win);
  for (int i = 0; i < 2 * kSlots; ++i) base[i] = 0;
  int rank, disp;
  MPI_Aint size;
  MPI_Comm_rank(comm, &rank);
  uint64_t *peer = nullptr;
  MPI_Win_shared_query(st->win, 1 - rank, &size, &disp, &peer);
  MPI_Barrier(comm);
  Link link;
  link.mine = base;
  link.counters = base + kSlots;
  link.peers = peer;
  link.state = st;
  return link;
}

void disconnect(Link &link) {
  auto *st = static_cast<State *>(link.state);
  MPI_Win_free(&st->win);
  delete st;
  link = Link{};
}

void enqueue_hop(void *stream, const Link &link, int wait_slot, uint64_t wait_value, int signal_slot,
                 uint64_t signal_value) {
  MPIX_Host_stream_enqueue(static_cast<MPIX_Host_stream>(stream), run_hop,
                           new Hop{link.mine + wait_slot, link.peers + signal_slot, wait_value, signal_value});
}

bool enqueue_peer_copy(void *, const Link &, const void *, size_t) { return false; }
bool enqueue_memop_hop(void *, const Link &, int, uint64_t, int, uint64_t) { return false; }

void enqueue_relative_hop(void *stream, const Link &link, int counter, int wait_slot, int wait_offset, int signal_slot,
                          int signal_offset, int advance) {
  auto *st = static_cast<State *>(link.state);
  st->relative_hops.push_back(
      {link.mine + wait_slot, link.peers + signal_slot, link.counters + counter, wait_offset, signal_offset, advance});
  MPIX_Host_stream_enqueue(static_cast<MPIX_Host_stream>(stream), run_relative_hop, &st->relative_hops.back());
}

}  // namespace raw
