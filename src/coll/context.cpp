#include "context.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "backend/host/shm_segments.h"
#include "core/config.h"
#include "core/window_setup.h"
#include "kernels/coll/geometry.h"
#include "multicast_choice.h"
#include "multinode.h"
#include "settings/settings.h"
#include "topo/device_sharing.h"
#include "topo/locality.h"

namespace mpix::coll {
namespace {

using settings::Id;

// Scratch per rank and communicator, two halves of this (MPIX_ST_COLL_SCRATCH_KIB): device memory
// is plentiful; the host backend's shared memory (/dev/shm) often is not. GPUs take 16 MiB on two
// ranks and 32 MiB on more, where the ring's 2 (n - 1) steps cut each half into smaller slots: on
// 4 H200s the ring allreduce reached 0.94-0.97x NCCL's bus bandwidth at 16-128 MiB with 32 MiB
// halves and 0.68-0.80x with 16 MiB (bench/results/four-h200-2026-11-26). Not measured on 8.
// The table bounds it to [4 KiB, 1 GiB]: the scratch's bytes (2 halves and the line areas) stay far
// inside 64 bits, and a scratch too small for a call is refused by the call.
uint64_t default_half_bytes(int size) {
  if (settings::is_set(Id::MPIX_ST_COLL_SCRATCH_KIB)) return settings::number(Id::MPIX_ST_COLL_SCRATCH_KIB) * 1024;
  if (std::string(gpu::backend().name()) == "host") return 256 * 1024;
  return (size > 2 ? 32 : 16) * uint64_t(1024 * 1024);
}

// Channels a call may use at most (MPIX_ST_COLL_CHANNELS, up to kMaxChannels), and the bytes a
// rank moves per channel before a call takes another (MPIX_ST_COLL_CHANNEL_KIB). The host backend
// runs channels one after another, so one is best there. GPUs take 128: on 2 H200s every
// collective at 128 MiB ran 1-12% faster with 128 than with 64 (bench/results/README.md). A device
// with fewer blocks at once runs the extra channels one after another in a block.
constexpr uint32_t kMaxChannels = 128;
static_assert(settings::entry(Id::MPIX_ST_COLL_CHANNELS).max == kMaxChannels &&
              settings::entry(Id::MPIX_ST_COLL_LL_CHANNELS).max == kMaxChannels);
uint32_t default_max_channels() {
  if (settings::is_set(Id::MPIX_ST_COLL_CHANNELS))
    return static_cast<uint32_t>(settings::number(Id::MPIX_ST_COLL_CHANNELS));
  return std::string(gpu::backend().name()) == "host" ? 1 : kMaxChannels;
}
// Default 16 KiB: on 2 H200s, calls of 64 KiB to 1 MiB took 16-27% less time than with 64 KiB (more
// blocks share the push), 4 and 16 MiB within 3% (bench/results/README.md, 2026-11-24). At most
// 1 GiB: rounding pushed bytes up to channels stays inside 64 bits.
uint64_t default_channel_bytes() { return settings::number(Id::MPIX_ST_COLL_CHANNEL_KIB) * 1024; }

// kLL line areas (kernels/coll/args.h). A kLL call takes one channel per line_channel_bytes a rank pushes
// (MPIX_ST_COLL_LL_CHANNEL_KIB, default 2 KiB), within the bounds collectives.cpp puts on it: a
// line is one round trip to memory per unit and thread, so small calls need many threads in
// flight, not large slices (on 2 H100s, 16 KiB allreduces took 11.7 us with 2 KiB channels, 13.0
// with 4 KiB, 14.1 with 8 KiB). A channel's area holds 16 line_channel_bytes of lines per half, and
// at most max_line_channels channels use kLL (MPIX_ST_COLL_LL_CHANNELS, default 128), so the line
// areas take 8 MiB per rank. A second round of the areas costs a freed-flag round trip: on 4
// H100s (one job, kLL forced) two-shot allreduces of 512 KiB and 1 MiB took 15.3 and 21.0 us with
// 128 areas of 32 KiB a half (one round; 4 KiB channels) against 21.4 and 37.3 with 64 of 16 KiB
// (two rounds and more), NCCL 14.4-14.5 and 17.5-17.6 (bench/results/four-h100-2026-11-27-lines/).
uint32_t default_max_line_channels() { return static_cast<uint32_t>(settings::number(Id::MPIX_ST_COLL_LL_CHANNELS)); }
uint64_t default_line_channel_bytes() { return settings::number(Id::MPIX_ST_COLL_LL_CHANNEL_KIB) * 1024; }
uint64_t line_region_offer(uint64_t line_channel_bytes) { return 16 * line_channel_bytes; }
uint64_t scratch_bytes(uint64_t half_bytes, uint32_t line_channels, uint64_t line_region_bytes) {
  return 2 * half_bytes + 2 * line_channels * line_region_bytes;
}

// The flag area: FlagLayout's words for every channel, then the PeerTable the executing stream reads.
uint64_t flag_words(int n, uint32_t channels) { return channels * FlagLayout::words(n); }
uint64_t flag_area_bytes(int n, uint32_t channels) {
  return flag_words(n, channels) * sizeof(uint64_t) + n * sizeof(PeerTable);
}

struct Record {
  gpu::RegionHandle scratch, flags;
  uint64_t half_bytes;
  uint64_t channel_bytes;
  uint64_t line_channel_bytes;
  uint64_t line_region_bytes;
  uint32_t max_channels;
  uint32_t line_channels;  // line areas (at most max_channels)
  int32_t pid;
  int32_t ok;  // this rank made and exported its memory
  topo::Locality where;
  char device[32];  // gpu::Backend::device_id
  int32_t multicast;  // MPIX_ST_MULTICAST=1 here
  int32_t capturing;  // this rank's stream is being captured: nothing was made
  char board[96];     // rank 0: the call board's shared memory (shm::find's name)
};

constexpr const char *kCaptureRefusal =
    "the first stream collective on a communicator makes its scratch memory (allocations and copies a stream "
    "capture forbids): call one collective on it outside the capture first (a count of 0 is enough)";

std::mutex g_mu;
std::set<Context *> g_contexts;  // alive, for release_all_contexts
uint64_t g_created = 0;
int g_keyval = MPI_KEYVAL_INVALID;

// Every call enqueued outside captures has run (core::stream_work_drained): false means give up
// and leak rather than free memory a stream may still touch.
bool drained(const Context &c) {
  return core::stream_work_drained(c.flags + FlagLayout::eager_calls(c.size), c.eager_calls_enqueued);
}

void release_board(Context &c) {
  c.board.reset();
  if (c.board_memory) {
    if (c.board_owner) gpu::shm::destroy(c.board_memory);
    else gpu::shm::unmap(c.board_memory, CallBoard::bytes(c.size));
  }
  c.board_memory = nullptr;
}

void destroy(Context *c) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_contexts.erase(c);
  }
  gpu::Backend &be = gpu::backend();
  // Across nodes: release_net drains and frees the state (this context has no node-local memory).
  const bool finished = c->net ? release_net(*c) : !c->flags || drained(*c);
  if (!finished) {
    std::fprintf(stderr, "mpix-st: collectives on communicator %u did not finish before it was freed; its scratch "
                         "memory is leaked\n", c->id);
    release_board(*c);  // host memory no stream touches
    delete c;
    return;
  }
  if (c->multicast_driver) gpu::multicast_release(*c->multicast_driver, &c->multicast);
  for (auto *regions : {&c->peer_scratch, &c->peer_flags})
    for (gpu::MappedRegion &m : *regions) be.release_region(&m);
  if (c->scratch) be.free_window_memory(c->scratch);
  if (c->flags) be.free_flags(c->flags);
  release_board(*c);
  delete c;
}

// MPIX_ST_MULTICAST as multicast_choice.h takes it: "1" where the setting is true, "0" where it is
// given false, null where it is unset.
const char *multicast_setting() {
  if (!settings::is_set(Id::MPIX_ST_MULTICAST)) return nullptr;
  return settings::flag(Id::MPIX_ST_MULTICAST) ? "1" : "0";
}

int delete_attribute(MPI_Comm, int, void *value, void *) {
  destroy(static_cast<Context *>(value));
  return MPI_SUCCESS;
}

// Hardware multicast for the communicator's bcast, only where MPIX_ST_MULTICAST=1 (every rank
// reaches this with the same inputs: they come from the allgathered records). With it unset the
// choice stops at the environment and nothing multicast-related is called.
void set_up_multicast(Context &c, MPI_Comm comm, bool every_rank_requested, bool all_local) {
  MulticastInputs in;
  in.env = multicast_setting();
  if (!multicast_requested(in.env)) return;  // the reason stays empty: nothing was asked
  in.every_rank_requested = every_rank_requested;
  in.every_peer_node_local = all_local;
  in.ranks = c.size;
  in.bytes = 2 * c.half_bytes;
  gpu::MulticastExchange x;
  x.rank = c.rank;
  x.size = c.size;
  x.root = 0;
  x.bcast_from_root = [comm](void *bytes, size_t n) {
    PMPI_Bcast(bytes, static_cast<int>(n), MPI_BYTE, 0, comm);
  };
  x.all_true = [comm](bool mine) {
    int m = mine, all = 0;
    PMPI_Allreduce(&m, &all, 1, MPI_INT, MPI_LAND, comm);
    return all != 0;
  };
  MulticastChoice ch = set_up_bcast_multicast(
      in, x, [](std::string *why) { return gpu::backend().multicast_driver(why); }, &c.multicast,
      &c.multicast_driver);
  c.multicast_reason = std::move(ch.reason);
}

// Makes and maps the memory; every rank learns whether all succeeded and whether all are on one
// node. Returns the error of this rank, or that of the first rank that failed.
core::Result build(Context &c, MPI_Comm comm, bool capturing) {
  gpu::Backend &be = gpu::backend();
  PMPI_Comm_rank(comm, &c.rank);
  PMPI_Comm_size(comm, &c.size);
  std::string why;
  Record mine{};
  mine.half_bytes = default_half_bytes(c.size);
  mine.max_channels = default_max_channels();
  mine.channel_bytes = default_channel_bytes();
  mine.line_channel_bytes = default_line_channel_bytes();
  mine.line_region_bytes = line_region_offer(mine.line_channel_bytes);
  mine.line_channels = std::min(mine.max_channels, default_max_line_channels());
  const uint64_t my_scratch_bytes = scratch_bytes(mine.half_bytes, mine.line_channels, mine.line_region_bytes);
  mine.pid = static_cast<int32_t>(getpid());
  mine.where = topo::locate(comm, core::config().vnode_size);
  std::snprintf(mine.device, sizeof mine.device, "%s", be.device_id().c_str());
  mine.multicast = multicast_requested(multicast_setting());
  mine.capturing = capturing;
  void *flags = nullptr;
  if (capturing) {
    why = kCaptureRefusal;  // nothing is made; every rank fails below
  } else if (c.size > 1 && c.rank == 0 &&
             !(c.board_memory = gpu::shm::create(CallBoard::bytes(c.size)))) {
    why = std::string("call board allocation: ") + std::strerror(errno);
  } else if (be.allocate_window_memory(my_scratch_bytes, &c.scratch)) {
    why = "scratch allocation: " + be.last_error();
    c.scratch = nullptr;
  } else if (be.allocate_flags(flag_area_bytes(c.size, mine.max_channels), &flags)) {
    why = "flag allocation: " + be.last_error();
  } else {
    c.flags = static_cast<uint64_t *>(flags);
    // freed(src) starts at 2 in every channel: rounds 1 and 2 write halves nobody has used yet.
    std::vector<uint64_t> init(flag_words(c.size, mine.max_channels), 0);
    for (uint32_t ch = 0; ch < mine.max_channels; ++ch)
      for (int q = 0; q < c.size; ++q) init[ch * FlagLayout::words(c.size) + FlagLayout::freed(q, c.size)] = 2;
    if (be.copy_to_device(c.flags, init.data(), init.size() * sizeof(uint64_t)) ||
        be.export_region(c.scratch, my_scratch_bytes, &mine.scratch) ||
        be.export_region(c.flags, flag_area_bytes(c.size, mine.max_channels), &mine.flags))
      why = "sharing the collective memory: " + be.last_error();
  }
  if (c.board_memory) {
    c.board_owner = true;
    std::string name;
    size_t offset = 0;
    if (gpu::shm::find(c.board_memory, &name, &offset)) std::snprintf(mine.board, sizeof mine.board, "%s", name.c_str());
  }
  mine.ok = why.empty();
  std::vector<Record> all(c.size);
  PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm);

  int failed_rank = -1, capturing_rank = -1;
  bool all_local = true, every_rank_multicast = true;
  c.half_bytes = mine.half_bytes;
  uint32_t max_channels = mine.max_channels, line_channels = mine.line_channels;
  c.channel_bytes = mine.channel_bytes;
  c.line_channel_bytes = mine.line_channel_bytes;
  c.line_region_bytes = mine.line_region_bytes;
  for (int q = 0; q < c.size; ++q) {
    if (!all[q].ok && failed_rank < 0) failed_rank = q;
    if (all[q].capturing && capturing_rank < 0) capturing_rank = q;
    every_rank_multicast = every_rank_multicast && all[q].multicast;
    all_local = all_local && all[q].where.same_node_as(mine.where);
    c.half_bytes = std::min(c.half_bytes, all[q].half_bytes);
    max_channels = std::min(max_channels, all[q].max_channels);
    line_channels = std::min(line_channels, all[q].line_channels);
    c.channel_bytes = std::max(c.channel_bytes, all[q].channel_bytes);
    c.line_channel_bytes = std::max(c.line_channel_bytes, all[q].line_channel_bytes);
    c.line_region_bytes = std::min(c.line_region_bytes, all[q].line_region_bytes);
  }
  // Every region holds a channel's worth (channel_bytes) and the most slots an algorithm cuts it
  // into (two-shot's 2n): a small scratch keeps one region, so calls still move it whole per round.
  const uint64_t smallest_region = std::max<uint64_t>(c.channel_bytes, 2 * static_cast<uint64_t>(c.size) * kSlotAlign);
  c.regions = static_cast<uint32_t>(std::clamp<uint64_t>(c.half_bytes / smallest_region, 1, max_channels));
  // Within every rank's line areas: regions <= each rank's max_channels, halves and line regions
  // no larger than each rank's.
  c.line_regions = std::min(c.regions, line_channels);
  be.set_device_sharers(
      topo::device_sharers(all, [&](const Record &r) { return r.where.same_node_as(mine.where); }, mine.device));
  if (capturing_rank >= 0)
    return core::fail(MPI_ERR_UNSUPPORTED_OPERATION,
                      capturing ? std::string(kCaptureRefusal)
                                : "rank " + std::to_string(capturing_rank) + "'s stream is being captured: " +
                                      kCaptureRefusal);
  if (failed_rank >= 0)
    return core::fail(core::resource_error_class(),
                      why.empty() ? "rank " + std::to_string(failed_rank) + " could not make its collective memory"
                                  : why);
  if (!all_local) {
    // Decided alike on every rank: each sees the same localities. The node-local memory made above
    // is not used across nodes.
    be.exported_region_mapped(c.scratch);
    be.exported_region_mapped(c.flags);
    be.free_window_memory(c.scratch);
    be.free_flags(c.flags);
    c.scratch = nullptr;
    c.flags = nullptr;
    release_board(c);  // across nodes the ranks agree on each call instead
    set_up_multicast(c, comm, every_rank_multicast, false);  // only the reason: not node-local
    std::vector<int> node_index_of(c.size, -1);
    int nodes = 0;
    for (int q = 0; q < c.size; ++q) {
      if (node_index_of[q] >= 0) continue;
      for (int p = q; p < c.size; ++p)
        if (all[p].where.same_node_as(all[q].where)) node_index_of[p] = nodes;
      ++nodes;
    }
    return build_net(c, comm, node_index_of, 2 * c.half_bytes);
  }
  // Map every peer's memory; the table gives the stream each rank's addresses.
  c.peer_scratch.assign(c.size, gpu::MappedRegion{});
  c.peer_flags.assign(c.size, gpu::MappedRegion{});
  std::vector<PeerTable> table(c.size);
  for (int q = 0; q < c.size && why.empty(); ++q) {
    if (q == c.rank) {
      table[q] = PeerTable{reinterpret_cast<uint64_t>(c.scratch), reinterpret_cast<uint64_t>(c.flags)};
      continue;
    }
    if (be.import_region(all[q].scratch, all[q].pid, &c.peer_scratch[q]) ||
        be.import_region(all[q].flags, all[q].pid, &c.peer_flags[q])) {
      why = "mapping rank " + std::to_string(q) + "'s collective memory: " + be.last_error();
    } else if (c.peer_scratch[q].cma_pid || c.peer_flags[q].cma_pid) {
      why = "rank " + std::to_string(q) + "'s collective memory cannot be mapped here";
    }
    table[q] = PeerTable{reinterpret_cast<uint64_t>(c.peer_scratch[q].base),
                         reinterpret_cast<uint64_t>(c.peer_flags[q].base)};
  }
  if (c.size > 1 && why.empty()) {
    if (c.rank != 0 && !(c.board_memory = gpu::shm::map(all[0].board, CallBoard::bytes(c.size))))
      why = "mapping rank 0's call board " + std::string(all[0].board) + ": " + std::strerror(errno);
    else
      c.board = std::make_unique<CallBoard>(c.board_memory, c.rank, c.size);
  }
  c.table = c.flags + flag_words(c.size, mine.max_channels);
  if (why.empty() && be.copy_to_device(c.table, table.data(), table.size() * sizeof(PeerTable)))
    why = "collective table upload: " + be.last_error();
  int mine_ok = why.empty(), all_ok = 0;
  PMPI_Allreduce(&mine_ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
  be.exported_region_mapped(c.scratch);
  be.exported_region_mapped(c.flags);
  if (c.board_owner) gpu::shm::unlink_name(c.board_memory);  // every rank has mapped it
  if (!why.empty()) return core::fail(core::resource_error_class(), why);
  if (!all_ok) return core::fail(core::resource_error_class(), "another rank could not map the collective memory");
  set_up_multicast(c, comm, every_rank_multicast, true);
  return core::ok();
}

}  // namespace

core::Result context_of(MPI_Comm comm, bool capturing, Context **out) {
  *out = nullptr;
  if (g_keyval == MPI_KEYVAL_INVALID &&
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attribute, &g_keyval, nullptr) != MPI_SUCCESS)
    return core::fail(MPI_ERR_OTHER, "cannot create the attribute key of collective state");
  void *value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, g_keyval, &value, &found) != MPI_SUCCESS)
    return core::fail(MPI_ERR_COMM, "invalid communicator");
  if (found) {
    *out = static_cast<Context *>(value);
    return core::ok();
  }
  auto *c = new Context;
  c->comm = comm;
  c->id = core::next_object_id();
  if (core::Result r = build(*c, comm, capturing)) {
    destroy(c);
    return r;
  }
  {
    std::lock_guard<std::mutex> lock(g_mu);
    c->created = ++g_created;
    g_contexts.insert(c);
  }
  PMPI_Comm_set_attr(comm, g_keyval, c);
  *out = c;
  return core::ok();
}

std::string multicast_reason(MPI_Comm comm) {
  void *value = nullptr;
  int found = 0;
  if (g_keyval == MPI_KEYVAL_INVALID || PMPI_Comm_get_attr(comm, g_keyval, &value, &found) != MPI_SUCCESS || !found)
    return "";
  return static_cast<Context *>(value)->multicast_reason;
}

void release_all_contexts() {
  // Newest first, one at a time: releasing a context may free others (the node communicator of
  // one that spans nodes), and every rank releases shared ones in the same order (their creation
  // was collective), since releasing is collective too.
  for (;;) {
    Context *newest = nullptr;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      for (Context *c : g_contexts)
        if (!newest || c->created > newest->created) newest = c;
    }
    if (!newest) return;
    PMPI_Comm_delete_attr(newest->comm, g_keyval);  // its delete callback destroys it
  }
}

}  // namespace mpix::coll
