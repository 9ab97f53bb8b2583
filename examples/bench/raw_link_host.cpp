// Host-backend floor: flags in an MPI shared-memory window, hops as host-stream tasks.
#include <mpix/mpix_st.h>
#include <sched.h>

#include <atomic>

#include "raw_link.h"

namespace raw {
namespace {
struct State {
  MPI_Win win;
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
}  // namespace

Link connect(MPI_Comm comm, void *, size_t) {
  auto *st = new State{};
  uint64_t *base = nullptr;
  MPI_Win_allocate_shared(kSlots * sizeof(uint64_t), 1, MPI_INFO_NULL, comm, &base, &st->win);
  for (int i = 0; i < kSlots; ++i) base[i] = 0;
  int rank, disp;
  MPI_Aint size;
  MPI_Comm_rank(comm, &rank);
  uint64_t *peer = nullptr;
  MPI_Win_shared_query(st->win, 1 - rank, &size, &disp, &peer);
  MPI_Barrier(comm);
  Link link;
  link.mine = base;
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

}  // namespace raw
