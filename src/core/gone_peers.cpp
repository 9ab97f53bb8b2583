#include "gone_peers.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
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

bool names(const std::vector<std::pair<int, int>> &list, int world_rank, int pid) {
  return std::find(list.begin(), list.end(), std::make_pair(world_rank, pid)) != list.end();
}

std::string describe(const Window &w, int r) {
  const Peer &p = w.peers[r];
  return "window rank " + std::to_string(r) + " (world rank " + std::to_string(p.world_rank) + ", pid " +
         std::to_string(p.pid) + ") is no longer running";
}

}  // namespace

bool process_gone(int pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  // A zombie (dead, not yet reaped by its parent) is gone too.
  char path[64], stat[256] = {};
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = std::fopen(path, "r");
  if (!f) return false;
  const size_t n = std::fread(stat, 1, sizeof stat - 1, f);
  std::fclose(f);
  const char *close_paren = std::strrchr(stat, ')');
  return n > 0 && close_paren && (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

bool note_gone_process(int world_rank, int pid, uint32_t except_window_id) {
  GonePeers &g = gone();
  {
    std::lock_guard<std::mutex> lock(g.mu);
    if (names(g.world_rank_pid, world_rank, pid)) return false;
    g.world_rank_pid.emplace_back(world_rank, pid);
    g.any.store(true, std::memory_order_release);
  }
  // Epochs already queued on other windows toward the process end at once too, instead of each
  // window waiting out the watchdog in turn: windows whose group holds it fail their queued lists
  // (those toward other peers too), as after a timeout of their own.
  for_each_window([&](Window &other) {
    if (other.id == except_window_id) return;
    for (int r = 0; r < other.size; ++r)
      if (r != other.rank && other.peers[r].world_rank == world_rank && other.peers[r].pid == pid) {
        gpu::backend().mark_fault(other.id);
        return;
      }
  });
  return true;
}

std::string note_gone_peer(const Window &w, int peer) {
  note_gone_process(w.peers[peer].world_rank, w.peers[peer].pid, w.id);
  return describe(w, peer);
}

std::string gone_peer_among(const Window &w, const std::vector<int> &peers) {
  GonePeers &g = gone();
  if (!g.any.load(std::memory_order_acquire)) return "";
  std::lock_guard<std::mutex> lock(g.mu);
  for (int r : peers) {
    if (r >= 0 && r < w.size && r != w.rank && names(g.world_rank_pid, w.peers[r].world_rank, w.peers[r].pid))
      return describe(w, r);
  }
  return "";
}

}  // namespace mpix::core
