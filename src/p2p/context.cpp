#include "context.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include "core/config.h"
#include "core/window_setup.h"
#include "engine.h"
#include "network.h"
#include "settings/settings.h"
#include "topo/locality.h"

namespace mpix::p2p {
namespace {

struct Record {
  gpu::RegionHandle areas, flags, board;
  uint64_t slot_bytes;
  uint32_t chunk_lanes;
  int32_t pid;
  int32_t ok;  // this rank made and exported its memory
  topo::Locality where;
};

int g_keyval = MPI_KEYVAL_INVALID;
int g_self_keyval = MPI_KEYVAL_INVALID;
std::set<Context *> g_alive;  // contexts on communicators, released at MPI_Finalize at the latest

// Frees the memory once every list that used it ran (core::stream_work_drained): false means give
// up and leak rather than free memory a stream may still touch.
void release(Context *c) {
  bool drained = true;
  for (auto &[queue, lists] : c->users)
    drained = drained && core::stream_work_drained([q = queue.get()] { return lists_ran(*q); }, lists);
  // Puts toward peers on other nodes read the staging memory after the lists rang them.
  if (c->remote)
    for (auto &[queue, lists] : c->users) net::settle(*queue);
  c->users.clear();
  if (!drained) {
    std::fprintf(stderr, "mpix-st: two-sided messages on communicator %u had not run when it was freed; its "
                         "mailbox memory is leaked\n", c->id);
    return;
  }
  net::detach(*c);
  release_direct(*c);
  gpu::Backend &be = gpu::backend();
  for (gpu::MappedRegion &m : c->mapped) be.release_region(&m);
  c->mapped.clear();
  if (c->areas) be.free_window_memory(c->areas);
  if (c->flags) be.free_flags(c->flags);
  c->areas = nullptr;
  c->flags = nullptr;
}

// The context outlives its communicator while operations hold it (shared_ptr); the attribute holds
// one reference. Its memory goes when the communicator does. A communicator whose ranks did not
// all come to its first call holds no context, only why (every later call reports it).
struct Holder {
  std::shared_ptr<Context> ctx;
  std::string failed;
};

int delete_attribute(MPI_Comm, int, void *value, void *) {
  auto *h = static_cast<Holder *>(value);
  if (!h->ctx) {
    delete h;
    return MPI_SUCCESS;
  }
  {
    std::lock_guard<std::recursive_mutex> guard(lock());
    g_alive.erase(h->ctx.get());
    gpu::backend().set_window_alive(h->ctx->id, false);
    release(h->ctx.get());
    h->ctx->comm = MPI_COMM_NULL;  // errors of its operations go to MPI_COMM_SELF from now on
  }
  delete h;
  return MPI_SUCCESS;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes first: contexts of communicators the program
// did not free (MPI_COMM_WORLD's) are released then, their attributes deleted.
// Operations whose lists ran complete their requests first, so the MPI frees the ones the program
// freed or a stream wait took.
int finalize_attribute(MPI_Comm, int, void *, void *) {
  std::lock_guard<std::recursive_mutex> guard(lock());
  reap_all();
  const std::set<Context *> alive = g_alive;
  for (Context *c : alive)
    if (c->comm != MPI_COMM_NULL) PMPI_Comm_delete_attr(c->comm, g_keyval);  // releases it
  return MPI_SUCCESS;
}

// MPIX_ST_P2P_SLOT_KIB, or the backend's default: the host backend's shared memory (/dev/shm) is
// often small, device memory is not.
uint64_t slot_bytes_setting(gpu::Backend &be) {
  using settings::Id;
  if (settings::is_set(Id::MPIX_ST_P2P_SLOT_KIB)) return settings::number(Id::MPIX_ST_P2P_SLOT_KIB) * 1024;
  return std::string(be.name()) == "host" ? kSlotBytesHost : kSlotBytesDevice;
}

// Whether every rank of comm came to its first two-sided call within the watchdog. The call is
// collective, and a rank that never makes it would leave the others in the set-up's collectives
// for good: with MPIX_ST_WATCHDOG_MS set, two nonblocking barriers bounded by it come first. A rank
// that gives up never joins the second, so one that arrives after it (its first barrier matched
// by the one left behind) gives up there too, instead of entering the set-up alone. The barriers
// left behind cannot be cancelled (MPI forbids it for collectives): they stay pending.
core::Result all_arrive(MPI_Comm comm) {
  const uint64_t limit_ns = core::config().watchdog_ns;
  if (limit_ns == 0) return core::ok();
  for (int round = 0; round < 2; ++round)
    if (!barrier_within(comm, std::chrono::nanoseconds(limit_ns)))
      return core::fail(MPI_ERR_OTHER,
                        "not every rank of the communicator made its first two-sided call within MPIX_ST_WATCHDOG_MS (" +
                            std::to_string(limit_ns / 1000000) +
                            " ms): that call is collective (it makes the mailbox memory), so every rank must make "
                            "one; two-sided calls on this communicator fail from now on");
  return core::ok();
}

core::Result build(Context &c, MPI_Comm comm) {
  gpu::Backend &be = gpu::backend();
  PMPI_Comm_rank(comm, &c.rank);
  PMPI_Comm_size(comm, &c.size);
  Record mine{};
  mine.slot_bytes = slot_bytes_setting(be);
  mine.chunk_lanes = work::chunk_lanes(mine.slot_bytes / 2,
                                       static_cast<uint32_t>(settings::number(settings::Id::MPIX_ST_P2P_LANES)));
  mine.pid = static_cast<int32_t>(getpid());
  mine.where = topo::locate(comm, core::config().vnode_size);
  // Every rank learns the others' places first: the memory is per node-local sender.
  std::vector<topo::Locality> where(c.size);
  PMPI_Allgather(&mine.where, sizeof mine.where, MPI_BYTE, where.data(), sizeof mine.where, MPI_BYTE, comm);
  c.local.assign(c.size, -1);
  for (int q = 0; q < c.size; ++q)
    if (where[q].same_node_as(mine.where)) c.local[q] = c.nlocal++;
  std::string why;
  const uint64_t area = area_bytes(mine.slot_bytes), flag_bytes = kLocalFlags.words(c.nlocal) * sizeof(uint64_t);
  void *areas = nullptr, *flags = nullptr;
  if (be.allocate_window_memory(area * c.nlocal, &areas)) {
    why = "mailbox allocation (" + std::to_string(area * c.nlocal) + " bytes): " + be.last_error();
  } else {
    c.areas = static_cast<char *>(areas);
    if (be.allocate_flags(flag_bytes, &flags)) {
      why = "flag allocation: " + be.last_error();
    } else {
      c.flags = static_cast<uint64_t *>(flags);
      if (be.export_region(c.areas, area * c.nlocal, &mine.areas) ||
          be.export_region(c.flags, flag_bytes, &mine.flags))
        why = "sharing the mailbox memory: " + be.last_error();
    }
  }
  // The board where node-local senders publish their buffers for direct pulls (direct.h): host
  // shared memory whatever the backend. Without it this rank's messages only take the mailboxes.
  DirectState &d = c.direct;
  d.mode = direct_mode_setting();
  gpu::Backend &host = gpu::host_backend();
  void *board = nullptr;
  if (why.empty() && d.mode != DirectMode::kOff && !host.allocate_window_memory(board_bytes(c.nlocal), &board)) {
    std::memset(board, 0, board_bytes(c.nlocal));
    d.board = static_cast<BoardEntry *>(board);
    if (host.export_region(board, board_bytes(c.nlocal), &mine.board)) mine.board = gpu::RegionHandle{};
  }
  mine.ok = why.empty();
  std::vector<Record> all(c.size);
  PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm);
  int failed_rank = -1, other_slot = -1, other_lanes = -1;
  c.slot_bytes = mine.slot_bytes;
  c.chunk_lanes = mine.chunk_lanes;
  for (int q = 0; q < c.size; ++q) {
    if (!all[q].ok && failed_rank < 0) failed_rank = q;
    if (all[q].slot_bytes != mine.slot_bytes && other_slot < 0) other_slot = q;
    if (all[q].chunk_lanes != mine.chunk_lanes && other_lanes < 0) other_lanes = q;
  }
  if (failed_rank >= 0)
    return core::fail(core::resource_error_class(),
                      why.empty() ? "rank " + std::to_string(failed_rank) + " could not make its mailbox memory" : why);
  // Every rank lays its areas out with its own mailbox size: they must agree (one backend per job).
  if (other_slot >= 0)
    return core::fail(MPI_ERR_OTHER, "rank " + std::to_string(other_slot) + "'s mailboxes hold " +
                                         std::to_string(all[other_slot].slot_bytes) + " bytes, this rank's " +
                                         std::to_string(mine.slot_bytes) + " (ranks on different backends?)");
  if (other_lanes >= 0)
    return core::fail(MPI_ERR_OTHER, "rank " + std::to_string(other_lanes) + " moves long messages in " +
                                         std::to_string(all[other_lanes].chunk_lanes) + " lanes, this rank in " +
                                         std::to_string(mine.chunk_lanes) + " (MPIX_ST_P2P_LANES differs)");
  c.peer_areas.assign(c.nlocal, nullptr);
  c.peer_flags.assign(c.nlocal, nullptr);
  d.peer_boards.assign(c.nlocal, nullptr);
  d.pids.assign(c.nlocal, 0);
  d.published.assign(c.nlocal, {});
  d.looked.assign(c.nlocal, 0);
  for (int q = 0; q < c.size && why.empty(); ++q) {
    const int j = c.local[q];
    if (j < 0) continue;
    d.pids[j] = all[q].pid;
    gpu::MappedRegion b;
    if (d.board && all[q].board.kind && q != c.rank && !host.import_region(all[q].board, all[q].pid, &b)) {
      d.board_maps.push_back(b);
      if (!b.cma_pid) d.peer_boards[j] = reinterpret_cast<BoardEntry *>(b.base);
    }
    if (q == c.rank) {
      c.peer_areas[j] = c.areas;
      c.peer_flags[j] = c.flags;
      continue;
    }
    gpu::MappedRegion a, f;
    if (be.import_region(all[q].areas, all[q].pid, &a)) {
      why = "mapping rank " + std::to_string(q) + "'s mailboxes: " + be.last_error();
      break;
    }
    c.mapped.push_back(a);
    if (be.import_region(all[q].flags, all[q].pid, &f)) {
      why = "mapping rank " + std::to_string(q) + "'s flags: " + be.last_error();
      break;
    }
    c.mapped.push_back(f);
    if (a.cma_pid || f.cma_pid) {
      why = "rank " + std::to_string(q) + "'s mailbox memory cannot be mapped here";
      break;
    }
    c.peer_areas[j] = a.base;
    c.peer_flags[j] = reinterpret_cast<uint64_t *>(f.base);
  }
  int mine_ok = why.empty(), all_ok = 0;
  PMPI_Allreduce(&mine_ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
  be.exported_region_mapped(c.areas);
  be.exported_region_mapped(c.flags);
  if (d.board) host.exported_region_mapped(d.board);
  if (!why.empty()) return core::fail(core::resource_error_class(), why);
  if (!all_ok) return core::fail(core::resource_error_class(), "another rank could not map the mailbox memory");
  if (core::Result r = set_up_direct(c)) return r;
  if (c.nlocal < c.size)
    if (core::Result r = net::attach(c, where)) return r;
  c.sent.assign(static_cast<size_t>(c.size) * kChannels, 0);
  c.received.assign(static_cast<size_t>(c.size) * kChannels, 0);
  return core::ok();
}

}  // namespace

char *Context::mailbox_out(int peer, int box) const {
  return peer_areas[local[peer]] + (static_cast<uint64_t>(local[rank]) * kBoxes + box) * mailbox_stride(slot_bytes);
}
char *Context::mailbox_in(int peer, int box) const {
  return areas + (static_cast<uint64_t>(local[peer]) * kBoxes + box) * mailbox_stride(slot_bytes);
}
uint64_t *Context::full_out(int peer, int box) const {
  return peer_flags[local[peer]] + kLocalFlags.full(local[rank], box);
}
uint64_t *Context::full_in(int peer, int box) const { return flags + kLocalFlags.full(local[peer], box); }
uint64_t *Context::free_out(int peer, int box) const { return flags + kLocalFlags.free(local[peer], box); }
uint64_t *Context::free_in(int peer, int box) const {
  return peer_flags[local[peer]] + kLocalFlags.free(local[rank], box);
}
uint64_t *Context::chunk_in(int peer, int box) const { return flags + kLocalFlags.chunk(local[peer], box); }
uint64_t *Context::chunk_out(int peer, int box) const {
  return peer_flags[local[peer]] + kLocalFlags.chunk(local[rank], box);
}
uint64_t *Context::go_out(int peer, int box) const { return flags + kLocalFlags.go(local[peer], box); }
uint64_t *Context::go_in(int peer, int box) const { return peer_flags[local[peer]] + kLocalFlags.go(local[rank], box); }
uint64_t *Context::sent_cursor(int peer, int box) const {
  return flags + kLocalFlags.sent_cursor(nlocal, local[peer], box);
}
uint64_t *Context::received_cursor(int peer, int box) const {
  return flags + kLocalFlags.received_cursor(nlocal, local[peer], box);
}

bool barrier_within(MPI_Comm comm, std::chrono::nanoseconds limit) {
  MPI_Request req = MPI_REQUEST_NULL;
  if (PMPI_Ibarrier(comm, &req) != MPI_SUCCESS) return false;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (int done = 0;;) {
    PMPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

core::Result context_of(MPI_Comm comm, bool capturing, std::shared_ptr<Context> *out) {
  out->reset();
  if (g_keyval == MPI_KEYVAL_INVALID &&
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attribute, &g_keyval, nullptr) != MPI_SUCCESS)
    return core::fail(MPI_ERR_OTHER, "cannot create the attribute key of two-sided state");
  void *value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, g_keyval, &value, &found) != MPI_SUCCESS)
    return core::fail(MPI_ERR_COMM, "invalid communicator");
  if (found) {
    const Holder &h = *static_cast<Holder *>(value);
    if (!h.ctx) return core::fail(MPI_ERR_OTHER, h.failed);
    *out = h.ctx;
    return core::ok();
  }
  if (capturing)
    return core::fail(MPI_ERR_UNSUPPORTED_OPERATION,
                      "the first two-sided call on a communicator makes its mailbox memory (allocations a stream "
                      "capture forbids): make one outside the capture first");
  if (g_self_keyval == MPI_KEYVAL_INVALID) {
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_attribute, &g_self_keyval, nullptr) != MPI_SUCCESS)
      return core::fail(MPI_ERR_OTHER, "cannot create the attribute key of two-sided state");
    PMPI_Comm_set_attr(MPI_COMM_SELF, g_self_keyval, nullptr);
  }
  if (core::Result r = all_arrive(comm)) {
    PMPI_Comm_set_attr(comm, g_keyval, new Holder{nullptr, r.message});
    return r;
  }
  auto c = std::make_shared<Context>();
  c->comm = comm;
  c->id = core::next_object_id();
  if (core::Result r = build(*c, comm)) {
    release(c.get());
    return r;
  }
  // In the live-window table, as a window is: replays of captured lists check the context is alive
  // (work::kCheckAlive), and a timed-out wait fails the context's queued lists at once (fault_skips).
  gpu::Backend &be = gpu::backend();
  if (be.set_window_alive(c->id, true)) {
    release(c.get());
    return core::fail(core::resource_error_class(), "two-sided state of the communicator: " + be.last_error());
  }
  g_alive.insert(c.get());
  PMPI_Comm_set_attr(comm, g_keyval, new Holder{c, {}});
  *out = c;
  return core::ok();
}

void note_user(Context &ctx, const std::shared_ptr<Queue> &queue, uint64_t lists) {
  for (auto &[q, n] : ctx.users)
    if (q == queue) {
      n = lists;
      return;
    }
  ctx.users.emplace_back(queue, lists);
}

}  // namespace mpix::p2p
