#include "pair_lists.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "config.h"
#include "datatype_flatten.h"
#include "line_carver.h"
#include "piece_runs.h"

namespace mpix::core {
namespace {

constexpr uint64_t kMaxPairs = uint64_t(1) << 22;
constexpr uint64_t kChunkBytes = 256 * 1024;

struct KeyLess {
  bool operator()(const PairKey &a, const PairKey &b) const {
    return std::tie(a.origin_type, a.origin_count, a.target_type, a.target_count, a.target_to_origin) <
           std::tie(b.origin_type, b.origin_count, b.target_type, b.target_count, b.target_to_origin);
  }
};

uint64_t limit_bytes() { return config().dtype_list_mib << 20; }

// List memory: chunks of host-mapped memory, carved in order and never given back.
struct Arena {
  std::vector<gpu::HostMapped> chunks;
  std::vector<uint64_t> sizes;  // bytes of each chunk
  LineCarver carve;
  uint64_t total = 0;

  Result reserve(uint64_t bytes) {
    if (carve.fits(bytes)) return ok();
    const uint64_t want = LineCarver::lines(bytes > kChunkBytes ? bytes : kChunkBytes);
    if (total + want > limit_bytes())
      return fail(resource_error_class(),
                  "derived-datatype pair lists would exceed MPIX_ST_DTYPE_LIST_MIB=" +
                      std::to_string(limit_bytes() >> 20) + " (" + std::to_string(total >> 10) +
                      " KiB in use, " + std::to_string(want >> 10) +
                      " KiB more wanted); lists are kept for the process's lifetime, one per (origin type, "
                      "count, target type, count)");
    gpu::HostMapped m;
    if (gpu::backend().allocate_host_mapped(want, &m) != gpu::kOk)
      return fail(resource_error_class(),
                  "memory for derived-datatype pair lists: " + gpu::backend().last_error());
    chunks.push_back(m);
    sizes.push_back(want);
    carve.restart(want);
    total += want;
    return ok();
  }
  // The host view of an address the stream reads (null if no chunk holds it).
  const void *host_view(uint64_t device_address) const {
    for (size_t i = 0; i < chunks.size(); ++i) {
      const uint64_t base = reinterpret_cast<uint64_t>(chunks[i].device);
      if (device_address >= base && device_address - base < sizes[i])
        return static_cast<const char *>(chunks[i].host) + (device_address - base);
    }
    return nullptr;
  }
  // Copies `runs` in; returns the address the stream reads.
  Result store(const std::vector<work::Run> &runs, uint64_t *address) {
    const uint64_t bytes = runs.size() * sizeof(work::Run);
    if (Result r = reserve(bytes)) return r;
    const gpu::HostMapped &m = chunks.back();
    const uint64_t at = carve.take(bytes);
    std::memcpy(static_cast<char *>(m.host) + at, runs.data(), bytes);
    *address = reinterpret_cast<uint64_t>(static_cast<char *>(m.device) + at);
    return ok();
  }
};

std::mutex g_mu;
std::map<PairKey, PairList, KeyLess> g_lists;
// Never destroyed: list memory lives as long as the process (above), and a stream or graph may
// still read it while static destructors run. A static Arena's destructor dropped the chunk
// pointers at exit, leaving the chunks unreachable (LeakSanitizer reported them as leaked).
Arena &g_arena = *new Arena;

// Pieces of `count` instances of a flattened type, in signature order.
struct Walk {
  const Flat &f;
  uint64_t count, rep = 0;
  size_t seg = 0;
  uint64_t done = 0;  // bytes of the current segment already used
  bool end() const { return rep >= count || f.segments.empty(); }
  // Offset of the current position; false on overflow.
  bool offset(int64_t *out) const {
    __int128 v = (__int128)f.extent * rep + f.segments[seg].offset + (__int128)done;
    if (v > INT64_MAX || v < INT64_MIN) return false;
    *out = static_cast<int64_t>(v);
    return true;
  }
  uint64_t left() const { return f.segments[seg].bytes - done; }
  void take(uint64_t n) {
    done += n;
    if (done < f.segments[seg].bytes) return;
    done = 0;
    if (++seg == f.segments.size()) seg = 0, ++rep;
  }
};

Result build(const PairKey &k, PairList *out) {
  FlatRef fo, ft;
  if (Result r = flatten(k.origin_type, &fo)) return fail(r.mpi_class, "origin datatype: " + r.message);
  if (Result r = flatten(k.target_type, &ft)) return fail(r.mpi_class, "target datatype: " + r.message);
  const uint64_t oc = static_cast<uint64_t>(k.origin_count), tc = static_cast<uint64_t>(k.target_count);
  if (!same_signature(*fo, oc, *ft, tc))
    return fail(MPI_ERR_TYPE, "origin and target type signatures differ (origin: " + describe(*fo, oc) + ", " +
                                  std::to_string(fo->size * oc) + " bytes; target: " + describe(*ft, tc) + ", " +
                                  std::to_string(ft->size * tc) + " bytes)");
  PairList l;
  l.origin_element = fo->element;
  l.target_element = ft->element;
  std::vector<work::Pair> pairs;
  Walk o{*fo, oc}, t{*ft, tc};
  uint64_t bits = 0;
  bool first = true;
  while (!o.end() && !t.end()) {
    int64_t at_o, at_t;
    if (!o.offset(&at_o) || !t.offset(&at_t))
      return fail(MPI_ERR_TYPE, "datatype displacements times counts overflow 64 bits");
    const uint64_t n = o.left() < t.left() ? o.left() : t.left();
    const int64_t dst = k.target_to_origin ? at_o : at_t, src = k.target_to_origin ? at_t : at_o;
    if (first || at_t < l.target_lo) l.target_lo = at_t;
    if (first || at_t + static_cast<int64_t>(n) > l.target_hi) l.target_hi = at_t + static_cast<int64_t>(n);
    if (first || at_o < l.origin_lo) l.origin_lo = at_o;
    if (first || at_o + static_cast<int64_t>(n) > l.origin_hi) l.origin_hi = at_o + static_cast<int64_t>(n);
    first = false;
    bits |= static_cast<uint64_t>(dst) | static_cast<uint64_t>(src) | n;
    l.bytes += n;
    work::Pair *last = pairs.empty() ? nullptr : &pairs.back();
    const int64_t last_len = last ? static_cast<int64_t>(last->bytes) : 0;
    if (last && last->dst + last_len == dst && last->src + last_len == src)
      last->bytes += n;
    else
      pairs.push_back({dst, src, n});
    if (pairs.size() > kMaxPairs)
      return fail(resource_error_class(), "the datatypes give more than " + std::to_string(kMaxPairs) +
                                              " contiguous pieces per operation");
    o.take(n);
    t.take(n);
  }
  l.align = 16;
  while (l.align > 1 && (bits & (l.align - 1))) l.align >>= 1;
  // Large pieces first, a run each: the kernel moves them one by one with the whole grid (a list
  // entry per 8 KiB or more costs nothing worth saving, and a loop over a run's pieces there
  // made the kernel spill registers). The rest join in runs, moved by small groups of threads.
  const auto large_end = std::stable_partition(pairs.begin(), pairs.end(),
                                               [](const work::Pair &p) { return p.bytes >= work::kPairLarge; });
  const size_t large = static_cast<size_t>(large_end - pairs.begin());
  std::vector<work::Run> runs = to_runs(pairs.data(), large, false);
  l.large = runs.size();
  const std::vector<work::Run> small = to_runs(pairs.data() + large, pairs.size() - large, config().dtype_runs);
  uint64_t small_bytes = 0;
  for (size_t i = large; i < pairs.size(); ++i) small_bytes += pairs[i].bytes;
  l.group_shift = work::run_group_shift(small_bytes, small.size());
  runs.insert(runs.end(), small.begin(), small.end());
  l.count = pairs.size();
  l.runs = runs.size();
  if (l.count == 1) l.single = pairs[0];
  if (l.count > 1) {
    if (Result r = g_arena.store(runs, &l.address)) return r;
    l.pieces = std::make_shared<const std::vector<work::Pair>>(std::move(pairs));
  }
  *out = l;
  return ok();
}

}  // namespace

Result pair_list(const PairKey &key, PairList *out) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_lists.find(key);
  if (it != g_lists.end()) {
    *out = it->second;
    return ok();
  }
  if (Result r = build(key, out)) return r;
  g_lists.emplace(key, *out);
  return ok();
}

void forget_pair_lists(MPI_Datatype type) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto it = g_lists.begin(); it != g_lists.end();) {
    if (it->first.origin_type == type || it->first.target_type == type) it = g_lists.erase(it);
    else ++it;
  }
}

namespace {

// Device copies of host-mapped lists, by host-mapped address (lists are never freed, so neither
// are their copies). Chunks of device memory carved in order, within MPIX_ST_DTYPE_LIST_MIB.
struct DeviceCopies {
  std::unordered_map<uint64_t, uint64_t> by_list;
  char *chunk = nullptr;
  LineCarver carve;
  uint64_t total = 0;
  bool unavailable = false;  // the backend has no device memory, or allocating failed once

  uint64_t copy_of(uint64_t list, uint64_t bytes) {
    auto it = by_list.find(list);
    if (it != by_list.end()) return it->second;
    gpu::Backend &be = gpu::backend();
    if (!carve.fits(bytes)) {
      const uint64_t want = LineCarver::lines(bytes > 4 * kChunkBytes ? bytes : 4 * kChunkBytes);
      void *mem = nullptr;
      if (total + want > limit_bytes() || be.allocate_window_memory(want, &mem) != gpu::kOk) {
        unavailable = true;  // host-mapped lists serve from now on
        return 0;
      }
      chunk = static_cast<char *>(mem), total += want;
      carve.restart(want);
    }
    const void *host = g_arena.host_view(list);
    if (!host) return 0;
    char *at = chunk + carve.used;
    if (be.copy_to_device(at, host, bytes) != gpu::kOk) return 0;
    carve.take(bytes);
    by_list.emplace(list, reinterpret_cast<uint64_t>(at));
    return reinterpret_cast<uint64_t>(at);
  }
};

DeviceCopies &g_device = *new DeviceCopies;  // never destroyed, as the arena

}  // namespace

void place_pair_lists_on_device(gpu::WorkList &list, bool capturing) {
  static const bool host_backend = std::strcmp(gpu::backend().name(), "host") == 0;
  if (host_backend) return;
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto *items : {&list.ops, &list.trailing_ops})
    for (work::Item &it : *items) {
      if (it.kind != work::kPairList || g_device.unavailable) continue;
      auto found = g_device.by_list.find(it.a);
      if (found != g_device.by_list.end()) {
        it.a = found->second;
      } else if (!capturing) {
        if (const uint64_t d = g_device.copy_of(it.a, it.b * sizeof(work::Run))) it.a = d;
      }
    }
}

void reserve_pair_memory() {
  std::lock_guard<std::mutex> lock(g_mu);
  (void)g_arena.reserve(1);
}

}  // namespace mpix::core
