// Collective creation and destruction of managed windows: flag allocation, exchange of region
// handles among node-local peers, mapping of peer memory.
#include "window_setup.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "config.h"
#include "epochs.h"
#include "pair_lists.h"
#include "remote_epochs.h"
#include "staged_transfers.h"
#include "topo/device_sharing.h"
#include "topo/locality.h"
#include "window.h"

namespace mpix::core {
namespace {

std::atomic<uint32_t> g_next_object_id{1};

struct PeerRecord {
  gpu::RegionHandle data, flags;
  uint64_t bytes;
  int32_t disp_unit;
  int32_t pid;
  topo::Locality where;
  int32_t world_rank;
  int32_t takes_lines;  // its stream waits take line puts (MPIX_ST_LINE_PUT_BYTES > 0 there)
  remote::Exchange fabric;  // registrations for peers on other nodes (empty without a transport)
  char device[32];          // gpu::Backend::device_id: ranks on one device shrink their grids
};

bool info_says_false(MPI_Info info, const char *key) {
  if (info == MPI_INFO_NULL) return false;
  char value[16] = {};
  int flag = 0;
  PMPI_Info_get(info, key, sizeof value - 1, value, &flag);
  return flag && (std::strcmp(value, "false") == 0 || std::strcmp(value, "0") == 0);
}

void release_mappings(Window &w) {
  gpu::Backend &be = gpu::backend();
  if (w.remote) remote::detach(w);
  for (int p = 0; p < static_cast<int>(w.peers.size()); ++p) {
    if (p == w.rank) continue;
    be.release_region(&w.peers[p].data);
    be.release_region(&w.peers[p].flags);
  }
  if (w.flags) be.free_flags(w.flags);
  w.flags = nullptr;
}

Result backend_failure(const char *what) {
  return fail(MPI_ERR_WIN, std::string(what) + ": " + gpu::backend().last_error());
}

// Maps every node-local peer's window and flags; all ranks learn whether everyone succeeded. A rank
// whose setup failed before (`failed`) still takes part in both collectives, exporting nothing.
Result map_peers(Window &w, Result failed) {
  gpu::Backend &be = gpu::backend();
  PeerRecord mine{};
  mine.bytes = w.bytes;
  mine.disp_unit = w.disp_unit;
  mine.pid = static_cast<int32_t>(getpid());
  mine.where = topo::locate(w.comm, config().vnode_size);
  std::snprintf(mine.device, sizeof mine.device, "%s", be.device_id().c_str());
  PMPI_Comm_rank(MPI_COMM_WORLD, &mine.world_rank);
  mine.takes_lines = config().line_put_bytes > 0;
  Result r = std::move(failed);
  if (!r && w.bytes > 0 && be.export_region(w.base, w.bytes, &mine.data)) r = backend_failure("window memory export");
  if (!r && be.export_region(w.flags, Window::flag_slots(w.size) * sizeof(uint64_t), &mine.flags))
    r = backend_failure("flag export");
  remote::Registration fabric_reg;
  if (!r) r = remote::register_window(w, &fabric_reg, &mine.fabric);
  std::vector<PeerRecord> all(w.size);
  PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, w.comm);

  w.peers.assign(w.size, Peer{});
  bool some_remote = false;
  for (int p = 0; p < w.size && !r; ++p) {
    Peer &peer = w.peers[p];
    peer.world_rank = all[p].world_rank;
    peer.pid = all[p].pid;
    peer.disp_unit = all[p].disp_unit;
    peer.bytes = all[p].bytes;
    peer.node_local = all[p].where.same_node_as(mine.where);
    peer.accumulate_lock = all[p].data.flags & gpu::kRegionReachedByCopy;
    peer.takes_lines = all[p].takes_lines != 0;
    if (p == w.rank) {
      peer.data.base = static_cast<char *>(w.base);
      peer.flags.base = reinterpret_cast<char *>(w.flags);
      continue;
    }
    if (!peer.node_local) {  // reached through the inter-node transport
      some_remote = true;
      continue;
    }
    if (peer.bytes > 0 && be.import_region(all[p].data, peer.pid, &peer.data))
      r = backend_failure("mapping a peer's window memory");
    else if (be.import_region(all[p].flags, peer.pid, &peer.flags))
      r = backend_failure("mapping a peer's flags");
  }
  be.set_device_sharers(topo::device_sharers(all, [&](const PeerRecord &p) { return p.where.same_node_as(mine.where); },
                                        mine.device));
  if (!r && some_remote) {
    std::vector<remote::Exchange> fabric(w.size);
    for (int p = 0; p < w.size; ++p) fabric[p] = all[p].fabric;
    r = remote::attach(w, fabric_reg, fabric);
  }
  if (!w.remote) remote::release_registrations(&fabric_reg);
  int mine_ok = r ? 0 : 1, all_ok = 0;
  PMPI_Allreduce(&mine_ok, &all_ok, 1, MPI_INT, MPI_LAND, w.comm);
  // Every peer has mapped what it needed: names of shared memory can go (see exported_region_mapped).
  if (w.bytes > 0) be.exported_region_mapped(w.base);
  if (w.flags) be.exported_region_mapped(w.flags);
  if (!r && !all_ok) r = fail(MPI_ERR_WIN, "another rank could not set up its peers' window memory");
  return r;
}

// Where the underlying MPI cannot create windows, what to set (appended to the errors below; kept
// short: Open MPI keeps 255 characters of an error string).
#ifdef OPEN_MPI
constexpr const char *kOscHint = "; set OMPI_MCA_osc=sm,pt2pt (Open MPI's osc rdma/ucx cannot run here)";
#else
constexpr const char *kOscHint = "";
#endif

std::string error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  PMPI_Error_string(code, text, &len);
  return text;
}

// The underlying MPI's window beside a managed one. The library's own epochs use it only as the
// handle (error handlers, attributes, and the MPI's fence and lock epochs), so where the MPI's
// one-sided components cannot create a window over this memory (Open MPI's rdma and ucx in
// containers; nothing picks pt2pt unless told), the window gets a zero-size stand-in from
// MPI_Win_allocate_shared instead, which the MPI's shared-memory component makes on one node:
// active-target epochs then work as usual, and RMA calls in fence and lock epochs are refused with
// *stub_reason saying what to set. Errors are returned, not raised: the caller raises them.
Result create_underlying(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win,
                         std::string *stub_reason) {
  MPI_Errhandler user = MPI_ERRHANDLER_NULL;
  PMPI_Comm_get_errhandler(comm, &user);
  PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int ranks = 0, created = 0;
  PMPI_Comm_size(comm, &ranks);
  const int rc = PMPI_Win_create(base, size, disp_unit, info, comm, win);
  const int mine = rc == MPI_SUCCESS ? 1 : 0;
  PMPI_Allreduce(&mine, &created, 1, MPI_INT, MPI_SUM, comm);
  Result r;
  if (created > 0 && created < ranks) {
    r = fail(MPI_ERR_WIN, std::string("the underlying MPI_Win_create failed on ") + std::to_string(ranks - created) +
                              " of " + std::to_string(ranks) + " ranks" + (mine ? "" : ": " + error_text(rc)) + kOscHint);
  } else if (created == 0) {
    void *unused = nullptr;
    const int fallback_rc = PMPI_Win_allocate_shared(0, disp_unit, MPI_INFO_NULL, comm, &unused, win);
    const int fallback_ok = fallback_rc == MPI_SUCCESS ? 1 : 0;
    int all_ok = 0;
    PMPI_Allreduce(&fallback_ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (all_ok) {
      *stub_reason = std::string("RMA in fence and lock epochs needs the MPI's own window, which it could not "
                                 "create here (only a zero-size stand-in; active-target epochs work)") +
                     kOscHint;
    } else {
      r = fail(MPI_ERR_WIN, "the underlying MPI_Win_create failed: " + error_text(rc) + kOscHint);
    }
  }
  PMPI_Comm_set_errhandler(comm, user);
  if (user != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&user);
  return r;
}

}  // namespace

uint32_t next_object_id() { return g_next_object_id++; }

bool stream_work_drained(const uint64_t *flag, uint64_t count) {
  gpu::Backend &be = gpu::backend();
  return stream_work_drained([&] { return be.read_flag(flag); }, count);
}

bool stream_work_drained(const std::function<uint64_t()> &ran, uint64_t count) {
  const auto start = std::chrono::steady_clock::now();
  while (ran() < count) {
    const auto waited = std::chrono::steady_clock::now() - start;
    if (config().watchdog_ns &&
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(waited).count()) >
            config().watchdog_ns)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

Result check_window_info(MPI_Info info) {
  if (info == MPI_INFO_NULL) return ok();
  struct Key {
    const char *name;
    const char *values[4];
  };
  static const Key keys[] = {{"mpix_st", {"true", "false", "1", "0"}},
                             {"mpix_st_staged_get_accumulate", {"true", "false", "1", "0"}},
                             {"mpix_st_memory", {"device", "host", nullptr, nullptr}}};
  for (const Key &k : keys) {
    char value[64] = {};
    int flag = 0;
    if (PMPI_Info_get(info, k.name, sizeof value - 1, value, &flag) != MPI_SUCCESS)
      return fail(MPI_ERR_INFO, "the info object cannot be read");
    if (!flag) continue;
    bool known = false;
    std::string allowed;
    for (const char *v : k.values) {
      if (!v) continue;
      known = known || std::strcmp(value, v) == 0;
      allowed += allowed.empty() ? v : std::string(", ") + v;
    }
    if (!known)
      return fail(MPI_ERR_INFO_VALUE, std::string("info key ") + k.name + " has the value \"" + value +
                                          "\"; it takes " + allowed);
  }
  return ok();
}

Result check_window_arguments(const void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Win *win,
                              bool base_required) {
  if (!win) return fail(MPI_ERR_ARG, "the window argument (MPI_Win *) is NULL");
  if (size < 0) return fail(MPI_ERR_SIZE, "window size is negative");
  if (disp_unit <= 0) return fail(MPI_ERR_DISP, "window displacement unit must be positive");
  if (base_required && !base && size > 0)
    return fail(MPI_ERR_ARG, "window base is NULL but its size is " + std::to_string(size) + " bytes");
  return check_window_info(info);
}

bool agree_on_arguments(Result *r, int *flag, MPI_Comm comm, const char *call) {
  int mine[2] = {*r ? 0 : 1, *flag ? 1 : 0}, all[2] = {0, 0};
  PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, comm);
  *flag = all[1];
  if (!all[0] && !*r)
    *r = fail(MPI_ERR_ARG, std::string(call) + ": another rank of the communicator passed invalid arguments");
  return all[0] != 0;
}

Result create_window(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, bool memory_owned,
                     MPI_Win *win, MPI_Win adopt) {
  const bool adopted = adopt != MPI_WIN_NULL;
  if (adopted) *win = adopt;
  gpu::Backend &be = gpu::backend();
  if (comm == MPI_COMM_NULL) return fail(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  // Arguments wrong on one rank fail the call on every rank (none is left waiting in a collective).
  Result args = check_window_arguments(base, size, disp_unit, info, win, !memory_owned && !adopted);
  const bool device_memory = !args && size > 0 && be.manages_memory(base);
  int managed = (size == 0 || device_memory) && !info_says_false(info, "mpix_st") ? 1 : 0;
  if (!agree_on_arguments(&args, &managed, comm, adopted ? "MPI_Win_allocate" : "MPI_Win_create")) {
    if (adopted) PMPI_Win_free(win);  // as on every failure below: the caller has no window left
    return args;
  }

  // The underlying MPI gets a zero-size stand-in for device memory it cannot touch, managed or not
  // (MPICH over UCX without GPU support hangs at finalize on device memory it registered).
  const bool stub = device_memory && std::strcmp(be.name(), "host") != 0 && !config().mpi_gpu_aware;
  if (!managed && adopted) return ok();
  if (!managed) {
    int rc = PMPI_Win_create(stub ? nullptr : base, stub ? 0 : size, disp_unit, info, comm, win);
    if (rc != MPI_SUCCESS) {
      int cls = MPI_ERR_OTHER;
      PMPI_Error_class(rc, &cls);
      return fail(cls, "the underlying MPI_Win_create failed: " + error_text(rc) + kOscHint);
    }
    note_window_created(*win);
    return ok();
  }
  std::string stub_reason;
  if (stub)
    stub_reason = "fence and lock epochs on a device-memory window need a GPU-aware MPI (set MPIX_ST_MPI_GPU_AWARE=1 "
                  "if yours is); use active-target epochs";
  if (!adopted) {
    if (Result r = create_underlying(stub ? nullptr : base, stub ? 0 : size, disp_unit, info, comm, win, &stub_reason))
      return r;
    note_window_created(*win);
  }

  auto w = std::make_unique<Window>();
  w->handle = *win;
  w->id = next_object_id();
  w->base = base;
  w->bytes = static_cast<uint64_t>(size);
  w->disp_unit = disp_unit;
  w->memory_owned = memory_owned;
  w->mirror_requested = staged::mirror_requested(info);
  w->pmpi_window_stub = std::move(stub_reason);
  PMPI_Comm_dup(comm, &w->comm);
  PMPI_Comm_group(comm, &w->group);
  PMPI_Comm_rank(comm, &w->rank);
  PMPI_Comm_size(comm, &w->size);
  const size_t slots = Window::flag_slots(w->size);
  Result r;
  if (be.allocate_flags(slots * sizeof(uint64_t), reinterpret_cast<void **>(&w->flags))) {
    r = backend_failure("flag allocation");
    w->flags = nullptr;
  } else if (be.set_window_alive(w->id, true)) {  // its entry of the live-window table
    r = fail(MPI_ERR_NO_MEM, "window creation: " + be.last_error());
  }
  // Every rank takes part in the exchange, so a local failure cannot leave peers waiting.
  r = map_peers(*w, std::move(r));
  if (r) {
    be.set_window_alive(w->id, false);
    release_mappings(*w);
    PMPI_Group_free(&w->group);
    PMPI_Comm_free(&w->comm);
    PMPI_Win_free(win);
    return r;
  }
  reserve_pair_memory();  // derived-datatype lists recorded during a graph capture allocate nothing
  register_window(std::move(w));
  return ok();
}

Result free_window(MPI_Win *win, bool *memory_owned, void **base) {
  Window *w = find_window(*win);
  *memory_owned = false;
  if (!w) return fail(MPI_ERR_WIN, "not a managed window");
  gpu::Backend &be = gpu::backend();
  Result r;
  if (w->access.mode != EpochMode::none)
    r = fail(MPI_ERR_RMA_SYNC, "MPI_Win_free with an access epoch still open (call MPI_Win_complete / "
                               "MPIX_Win_complete_stream first)");
  else if (w->exposure.mode != EpochMode::none)
    r = fail(MPI_ERR_RMA_SYNC, "MPI_Win_free with an exposure epoch still open (call MPI_Win_wait / "
                               "MPIX_Win_wait_stream first)");
  if (!r) r = drain_notifications(*w);
  // Stream work on this window that has not run yet still uses its memory: let it drain.
  if (!r && !stream_work_drained(w->retire_slot(), w->stream_lists))
    r = fail(MPI_ERR_RMA_SYNC, "MPI_Win_free while " +
                                   std::to_string(w->stream_lists - be.read_flag(w->retire_slot())) +
                                   " stream operations on the window have not run (watchdog expired); "
                                   "synchronize the stream before freeing the window");
  // Its triggered operations next (the stream has rung their doorbells by now). Registrations stay
  // until the barrier below: peers' operations may still target them.
  if (!r && w->remote) r = remote::quiesce(*w);
  int mine_ok = r ? 0 : 1, all_ok = 0;
  PMPI_Allreduce(&mine_ok, &all_ok, 1, MPI_INT, MPI_LAND, w->comm);
  if (r) return r;
  if (!all_ok) return fail(MPI_ERR_RMA_SYNC, "MPI_Win_free failed on another rank of the window");
  // The allreduce's result needs every rank's part: every peer has drained its work on this window,
  // so none touches our memory or flags any more.
  // Host-driven notifications nobody received (an epoch the watchdog ended) would otherwise match
  // in a later communicator that reuses this one's context.
  for (int pending = 1; pending;) {
    MPI_Status st;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, w->comm, &pending, &st);
    if (pending) PMPI_Recv(nullptr, 0, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, w->comm, MPI_STATUS_IGNORE);
  }
  std::unique_ptr<Window> owned = unregister_window(*win);
  be.set_window_alive(owned->id, false);  // replays of its captured graphs now do nothing
  release_mappings(*owned);
  PMPI_Group_free(&owned->group);
  PMPI_Comm_free(&owned->comm);
  *memory_owned = owned->memory_owned;
  *base = owned->base;
  int rc = PMPI_Win_free(win);
  if (rc != MPI_SUCCESS) {
    int cls = MPI_ERR_OTHER;
    PMPI_Error_class(rc, &cls);
    return fail(cls, "the underlying MPI_Win_free failed");
  }
  return ok();
}

}  // namespace mpix::core
