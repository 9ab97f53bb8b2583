#include "fault_monitor.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "config.h"
#include "gone_peers.h"
#include "window.h"

namespace mpix::core {
namespace {

struct Monitor {
  std::mutex mu;
  std::condition_variable wake;
  bool stop = false;
  std::thread thread;
  std::set<std::pair<uint32_t, int>> looked_at;  // (window id, window rank) of reports already judged
};

// Never destroyed: a joinable thread in a static would end a program that exits without
// MPI_Finalize; such a program stops the thread from atexit instead, before the window registry goes.
Monitor &monitor() {
  static Monitor &m = *new Monitor;
  return m;
}

// A report's waited-for peer, where it is a live window's node-local peer: its world rank and pid.
bool local_peer_of(const gpu::WatchdogReport &rep, int *world_rank, int *pid) {
  bool found = false;
  for_each_window([&](Window &w) {
    if (found || w.id != rep.window_id || rep.peer < 0 || rep.peer >= w.size || rep.peer == w.rank) return;
    const Peer &p = w.peers[rep.peer];
    if (!p.node_local || p.pid <= 0) return;
    *world_rank = p.world_rank;
    *pid = p.pid;
    found = true;
  });
  return found;
}

void look(Monitor &m) {
  std::vector<gpu::WatchdogReport> reports;
  gpu::backend().peek_watchdog_reports(&reports);
  for (const gpu::WatchdogReport &rep : reports) {
    if (rep.reason != work::kWaitPost && rep.reason != work::kWaitComplete) continue;
    if (!m.looked_at.insert({rep.window_id, rep.peer}).second) continue;
    int world_rank = 0, pid = 0;
    if (local_peer_of(rep, &world_rank, &pid) && process_gone(pid)) note_gone_process(world_rank, pid, 0);
  }
}

void run(Monitor &m, std::chrono::milliseconds period) {
  std::unique_lock<std::mutex> lock(m.mu);
  while (!m.wake.wait_for(lock, period, [&] { return m.stop; })) {
    lock.unlock();
    look(m);
    lock.lock();
  }
}

}  // namespace

void start_fault_monitor() {
  const uint64_t watchdog_ns = config().watchdog_ns;
  if (!watchdog_ns) return;
  Monitor &m = monitor();
  std::lock_guard<std::mutex> lock(m.mu);
  if (m.thread.joinable()) return;
  m.stop = false;
  // A twentieth of the watchdog, 5 ms to 200 ms: the news comes soon after a report, at no cost
  // worth measuring (one look at host memory, or at the host backend's list of reports).
  const auto period = std::chrono::milliseconds(std::clamp<uint64_t>(watchdog_ns / 20000000, 5, 200));
  m.thread = std::thread(run, std::ref(m), period);
  static const bool at_exit = std::atexit(stop_fault_monitor) == 0;
  (void)at_exit;
}

void stop_fault_monitor() {
  Monitor &m = monitor();
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (!m.thread.joinable()) return;
    m.stop = true;
  }
  m.wake.notify_all();
  m.thread.join();
}

}  // namespace mpix::core
