#include "window.h"

#include <deque>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "fault_monitor.h"

namespace mpix::core {
namespace {
std::mutex g_mu;
std::unordered_map<MPI_Win, std::unique_ptr<Window>> g_windows;
// Freed handles, oldest first (bounded: the MPI reuses handles, so the set stays small anyway).
constexpr size_t kFreedKept = 4096;
std::unordered_set<MPI_Win> g_freed;
std::deque<MPI_Win> g_freed_order;
}  // namespace

uint64_t *Window::post_flag_at(int origin) const {
  return reinterpret_cast<uint64_t *>(peers[origin].flags.base) + rank;
}

uint64_t *Window::complete_flag_at(int target) const {
  return reinterpret_cast<uint64_t *>(peers[target].flags.base) + size + rank;
}

Window *find_window(MPI_Win win) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_windows.find(win);
  return it == g_windows.end() ? nullptr : it->second.get();
}

Window *find_window_by_id(uint32_t id) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto &kv : g_windows)
    if (kv.second->id == id) return kv.second.get();
  return nullptr;
}

void for_each_window(const std::function<void(Window &)> &f) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto &kv : g_windows) f(*kv.second);
}

void register_window(std::unique_ptr<Window> w) {
  MPI_Win h = w->handle;
  note_window_created(h);
  start_fault_monitor();  // where a watchdog is set; once
  std::lock_guard<std::mutex> lock(g_mu);
  g_windows[h] = std::move(w);
}

void note_window_freed(MPI_Win win) {
  if (win == MPI_WIN_NULL) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_freed.insert(win).second) return;
  g_freed_order.push_back(win);
  if (g_freed_order.size() > kFreedKept) {
    g_freed.erase(g_freed_order.front());
    g_freed_order.pop_front();
  }
}

void note_window_created(MPI_Win win) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_freed.erase(win))
    for (auto it = g_freed_order.begin(); it != g_freed_order.end(); ++it)
      if (*it == win) {
        g_freed_order.erase(it);
        break;
      }
}

bool window_was_freed(MPI_Win win) {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_freed.count(win) != 0;
}

std::unique_ptr<Window> unregister_window(MPI_Win win) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_windows.find(win);
  if (it == g_windows.end()) return nullptr;
  auto w = std::move(it->second);
  g_windows.erase(it);
  return w;
}

}  // namespace mpix::core
