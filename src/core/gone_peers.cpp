#include "gone_peers.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>

#include "backend/backend.h"

namespace mpix::core {
namespace {

struct GonePeers {
  std::mutex mu;
  std::vector<std::pair<int, int>> world_rank_pid;  // under mu
  std::atomic<bool> any{false};
};

GonePeers &gone() {
  static GonePeers g;
  return g;
}

bool names(const std::vector<std::pair<int, int>> &list, const Peer &p) {
  return std::find(list.begin(), list.end(), std::make_pair(p.world_rank, p.pid)) != list.end();
}

std::string describe(const Window &w, int r) {
  const Peer &p = w.peers[r];
  return "window rank " + std::to_string(r) + " (world rank " + std::to_string(p.world_rank) + ", pid " +
         std::to_string(p.pid) + ") is no longer running";
}

}  // namespace

std::string note_gone_peer(const Window &w, int peer) {
  GonePeers &g = gone();
  const Peer p = w.peers[peer];
  bool fresh = false;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    fresh = !names(g.world_rank_pid, p);
    if (fresh) g.world_rank_pid.emplace_back(p.world_rank, p.pid);
    g.any.store(true, std::memory_order_release);
  }
  // Epochs already queued on other windows toward the peer end at once too, instead of each window
  // waiting out the watchdog in turn (the first report is the news: windows whose group holds the
  // process fail their queued lists, those toward other peers too, as after a timeout of their own).
  if (fresh)
    for_each_window([&](Window &other) {
      if (&other == &w) return;
      for (int r = 0; r < other.size; ++r)
        if (r != other.rank && other.peers[r].world_rank == p.world_rank && other.peers[r].pid == p.pid) {
          gpu::backend().mark_fault(other.id);
          return;
        }
    });
  return describe(w, peer);
}

std::string gone_peer_among(const Window &w, const std::vector<int> &peers) {
  GonePeers &g = gone();
  if (!g.any.load(std::memory_order_acquire)) return "";
  std::lock_guard<std::mutex> lock(g.mu);
  for (int r : peers) {
    if (r >= 0 && r < w.size && r != w.rank && names(g.world_rank_pid, w.peers[r])) return describe(w, r);
  }
  return "";
}

}  // namespace mpix::core
