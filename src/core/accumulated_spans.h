// Target bytes that accumulates of an epoch have reached, by target: disjoint [begin, end) spans,
// so that checking a new accumulate (a derived datatype gives one per contiguous piece) against
// every earlier one costs O(log n) instead of a scan. An accumulate that overlaps an earlier one
// of the same origin must apply after it (MPI's default accumulate_ordering).
#pragma once
#include <cstdint>
#include <iterator>
#include <map>
#include <utility>

namespace mpix::core {

class AccumulatedSpans {
 public:
  // Whether [begin, end) at `target` shares a byte with a span added before.
  bool overlaps(int target, uint64_t begin, uint64_t end) const {
    auto it = spans_.upper_bound({target, begin});  // the first span starting after begin
    if (it != spans_.end() && it->first.first == target && it->first.second < end) return true;
    if (it == spans_.begin()) return false;
    --it;
    return it->first.first == target && it->second > begin;
  }
  // Adds [begin, end) at `target`, merged with the spans it overlaps or touches.
  void add(int target, uint64_t begin, uint64_t end) {
    auto it = spans_.lower_bound({target, begin});
    if (it != spans_.begin()) {
      auto prev = std::prev(it);
      if (prev->first.first == target && prev->second >= begin) it = prev;
    }
    while (it != spans_.end() && it->first.first == target && it->first.second <= end) {
      begin = begin < it->first.second ? begin : it->first.second;
      end = end > it->second ? end : it->second;
      it = spans_.erase(it);
    }
    spans_.emplace(std::make_pair(target, begin), end);
  }
  size_t spans() const { return spans_.size(); }

 private:
  std::map<std::pair<int, uint64_t>, uint64_t> spans_;  // (target, begin) -> end
};

}  // namespace mpix::core
