#include "window.h"

#include <mutex>
#include <unordered_map>

namespace mpix::core {
namespace {
std::mutex g_mu;
std::unordered_map<MPI_Win, std::unique_ptr<Window>> g_windows;
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

void register_window(std::unique_ptr<Window> w) {
  std::lock_guard<std::mutex> lock(g_mu);
  MPI_Win h = w->handle;
  g_windows[h] = std::move(w);
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
