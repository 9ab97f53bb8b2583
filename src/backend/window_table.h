// The host's side of the live-window table (kernels/work_items.h, window_key): which entry each
// live window holds, each entry's generation, and the reports of each window the program was
// given. Both backends keep one; they copy the keys it hands out into the entries their streams
// read (host memory, or device memory).
//
// An entry is never shared by two live windows: a window takes one from the free entries at
// creation and gives it back at MPI_Win_free. The entry's generation grows at each reuse, so a
// key (generation, entry) is never handed out twice, and a graph captured on a freed window finds
// a key other than its own however many windows came and went. Free entries are reused last
// freed first (the table's working set stays small); an entry whose generations are spent
// (2^48 - 1 windows) is retired, not reused. With every entry live, acquire refuses: window
// creation then fails instead of sharing an entry.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "kernels/work_items.h"

namespace mpix::gpu {

class WindowTable {
 public:
  explicit WindowTable(uint32_t entries = work::kWindowSlots)
      : capacity_(entries < work::kWindowSlots ? entries : work::kWindowSlots), slots_(new Slot[capacity_]) {
    free_.reserve(capacity_);
    for (uint32_t s = capacity_; s-- > 0;) free_.push_back(s);  // entry 0 first
  }
  WindowTable(const WindowTable &) = delete;
  WindowTable &operator=(const WindowTable &) = delete;

  // Window `id` takes a free entry under the entry's next generation: its key. 0 when every entry
  // holds a live window (or retired), or when `id` is 0 or live already.
  uint64_t acquire(uint32_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    if (id == 0 || free_.empty() || slot_of_.count(id)) return 0;
    const uint32_t s = free_.back();
    free_.pop_back();
    Slot &slot = slots_[s];
    const uint64_t key = work::window_key(++slot.generation, s);
    slot.taken.store(0, std::memory_order_relaxed);
    slot.id.store(id, std::memory_order_relaxed);
    slot.key.store(key, std::memory_order_release);
    slot_of_[id] = s;
    return key;
  }

  // Window `id` was freed: the key it held (0: none). Its entry serves a later window.
  uint64_t release(uint32_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slot_of_.find(id);
    if (it == slot_of_.end()) return 0;
    Slot &slot = slots_[it->second];
    const uint64_t key = slot.key.load(std::memory_order_relaxed);
    slot.key.store(0, std::memory_order_release);
    slot.id.store(0, std::memory_order_relaxed);
    if (slot.generation < work::kWindowGenerations) free_.push_back(it->second);
    slot_of_.erase(it);
    return key;
  }

  // The key of live window `id` (0: none). `hint`, where given, is an entry to try first, and
  // becomes the one found: a caller that asks for the same window again and again (each eager
  // enqueue) takes no lock.
  uint64_t key_of(uint32_t id, uint32_t *hint = nullptr) const {
    if (id == 0) return 0;
    if (hint && *hint < capacity_) {
      const Slot &slot = slots_[*hint];
      const uint64_t key = slot.key.load(std::memory_order_acquire);
      if (key && slot.id.load(std::memory_order_relaxed) == id && slot.key.load(std::memory_order_relaxed) == key)
        return key;
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slot_of_.find(id);
    if (it == slot_of_.end()) return 0;
    if (hint) *hint = it->second;
    return slots_[it->second].key.load(std::memory_order_relaxed);
  }

  // How many reports of the window holding `key` the program has taken (work::fault_skips).
  uint32_t reports_taken(uint64_t key) const {
    const uint32_t s = work::window_slot(key);
    return key && s < capacity_ ? slots_[s].taken.load(std::memory_order_acquire) : 0;
  }
  // The program took one more report of the window holding `key`: the new count, which the
  // window's fault word becomes (its pending mark cleared). 0 where `key` is not live.
  uint32_t take_report(uint64_t key) {
    const uint32_t s = work::window_slot(key);
    if (!key || s >= capacity_) return 0;
    std::lock_guard<std::mutex> lock(mu_);
    if (slots_[s].key.load(std::memory_order_relaxed) != key) return 0;
    return slots_[s].taken.fetch_add(1, std::memory_order_acq_rel) + 1;
  }

  uint32_t capacity() const { return capacity_; }
  uint32_t live() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<uint32_t>(slot_of_.size());
  }

 private:
  struct Slot {
    std::atomic<uint32_t> id{0};    // the live window's id; 0: free
    std::atomic<uint64_t> key{0};   // its key; 0: free
    std::atomic<uint32_t> taken{0};  // its reports the program took
    uint64_t generation = 0;        // of the last window it served (under mu_)
  };
  const uint32_t capacity_;
  std::unique_ptr<Slot[]> slots_;
  std::vector<uint32_t> free_;  // free entries, last freed at the back
  std::unordered_map<uint32_t, uint32_t> slot_of_;  // live window id -> entry
  mutable std::mutex mu_;
};

}  // namespace mpix::gpu
