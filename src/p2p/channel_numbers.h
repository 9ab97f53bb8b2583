// Per (context, peer, channel) of two-sided messages, a message number (src/p2p/engine.cpp: a
// list's first message of a channel, a limit, a send group's first message).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mpix::p2p {

struct Context;

using Key = std::tuple<Context *, int, int>;

// Per (context, peer, channel), a message number: a list's first message of the channel, a send
// group's, or a limit. On every call's path: most calls touch a few channels, searched in a flat
// table (a map's nodes cost an allocation each); a call to many peers gets an index past kLinear
// of them, so a start of sends to every rank of a large communicator stays linear.
struct KeyHash {
  size_t operator()(const Key &k) const {
    return std::hash<const void *>()(std::get<0>(k)) ^ (static_cast<size_t>(std::get<1>(k)) * 0x9E3779B97F4A7C15ull) ^
           static_cast<size_t>(std::get<2>(k));
  }
};
struct ChannelNumbers {
  static constexpr size_t kLinear = 16;
  std::vector<std::pair<Key, uint64_t>> v;
  std::unordered_map<Key, size_t, KeyHash> index;  // into v, once it holds more than kLinear
  void clear() {
    v.clear();
    index.clear();
  }
  uint64_t *find(const Key &k) {
    if (v.size() > kLinear) {
      auto it = index.find(k);
      return it == index.end() ? nullptr : &v[it->second].second;
    }
    for (auto &[key, n] : v)
      if (key == k) return &n;
    return nullptr;
  }
  const uint64_t *find(const Key &k) const { return const_cast<ChannelNumbers *>(this)->find(k); }
  // The number kept for k (`n` where k had none).
  uint64_t &emplace(const Key &k, uint64_t n) {
    if (uint64_t *at = find(k)) return *at;
    v.emplace_back(k, n);
    if (v.size() == kLinear + 1)
      for (size_t i = 0; i < v.size(); ++i) index.emplace(v[i].first, i);
    else if (v.size() > kLinear + 1)
      index.emplace(k, v.size() - 1);
    return v.back().second;
  }
};

}  // namespace mpix::p2p
