#include "direct.h"

#include <atomic>
#include <cstring>

#include "context.h"
#include "settings/settings.h"

namespace mpix::p2p {

DirectMode direct_mode_setting() {
  const std::string &w = settings::word(settings::Id::MPIX_ST_P2P_DIRECT);
  return w == "off" ? DirectMode::kOff : w == "require" ? DirectMode::kRequire : DirectMode::kOn;
}

void publish_source(Context &c, int peer, const void *buf, uint64_t bytes, uint64_t *key, uint64_t *offset) {
  *key = 0;
  *offset = 0;
  DirectState &d = c.direct;
  const int j = c.local[peer];
  if (d.mode == DirectMode::kOff || j < 0) return;
  if (peer == c.rank) {  // its own address space: source table entry kSelfKey (set_up_direct)
    *key = kSelfKey;
    *offset = reinterpret_cast<uint64_t>(buf);
    return;
  }
  if (!d.peer_boards[j]) return;
  gpu::RegionHandle h;
  if (gpu::backend().export_region(const_cast<void *>(buf), bytes, &h)) return;  // not shareable: the mailbox
  // The allocation is the handle without its offset (the host backend's cross-memory attach: the
  // whole address space, its offset the address).
  const uint64_t at = h.offset;
  h.offset = 0;
  h.bytes = 0;
  const std::string id(reinterpret_cast<const char *>(&h), sizeof h);
  auto &keys = d.published[j];
  auto it = keys.find(id);
  if (it == keys.end()) {
    if (keys.size() >= work::kSourceEntries) return;  // the pair's keys are used up
    const uint64_t k = keys.size() + 1;
    BoardEntry &e = d.peer_boards[j][static_cast<size_t>(c.local[c.rank]) * work::kSourceEntries + (k - 1)];
    e.handle = h;
    std::atomic_ref<uint64_t>(e.key).store(k, std::memory_order_release);
    it = keys.emplace(id, k).first;
  }
  *key = it->second;
  *offset = at;
}

void map_sources(Context &c, int peer) {
  DirectState &d = c.direct;
  const int j = c.local[peer];
  if (d.mode == DirectMode::kOff || j < 0 || peer == c.rank || !d.board) return;
  gpu::Backend &be = gpu::backend();
  uint64_t *table = c.flags + kLocalFlags.sources(j);
  for (uint32_t &s = d.looked[j]; s < work::kSourceEntries; ++s) {
    BoardEntry &e = d.board[static_cast<size_t>(j) * work::kSourceEntries + s];
    const uint64_t key = std::atomic_ref<uint64_t>(e.key).load(std::memory_order_acquire);
    if (key == 0) break;  // keys are published in order
    gpu::MappedRegion m;
    if (be.import_region(e.handle, d.pids[j], &m)) continue;  // unmappable here: the mailbox
    d.sources.push_back(m);
    // Base and pid first, the key last: a stream that sees the key sees the rest.
    const uint64_t rest[3] = {reinterpret_cast<uint64_t>(m.base), static_cast<uint64_t>(m.cma_pid), 0};
    if (be.copy_to_device(table + 4 * s + 1, rest, sizeof rest) || be.copy_to_device(table + 4 * s, &key, sizeof key))
      d.sources.pop_back(), be.release_region(&m);
  }
}

core::Result set_up_direct(Context &c) {
  if (c.direct.mode == DirectMode::kOff) return core::ok();
  const uint64_t self[4] = {kSelfKey, 0, 0, 0};
  uint64_t *table = c.flags + kLocalFlags.sources(c.local[c.rank]);
  if (gpu::backend().copy_to_device(table, self, sizeof self))
    return core::fail(MPI_ERR_OTHER, "direct pulls: " + gpu::backend().last_error());
  return core::ok();
}

bool moved_through_mailbox(const Context &c, int peer, int box, uint64_t round) {
  const uint64_t word = gpu::backend().read_flag(c.chunk_in(peer, box));
  return (word >> 32) == round && (word & 0xFFFFFFFFu) != 0;
}

void release_direct(Context &c) {
  DirectState &d = c.direct;
  gpu::Backend &be = gpu::backend();
  for (gpu::MappedRegion &m : d.sources) be.release_region(&m);
  d.sources.clear();
  gpu::Backend &host = gpu::host_backend();
  for (gpu::MappedRegion &m : d.board_maps) host.release_region(&m);
  d.board_maps.clear();
  if (d.board) host.free_window_memory(d.board);
  d.board = nullptr;
  d.peer_boards.clear();
}

}  // namespace mpix::p2p
