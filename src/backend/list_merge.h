// Calls merged under stream capture: a work list joins the one enqueued just before it on the
// same stream, so post, complete and wait of an epoch become one kernel of the graph, and so do a
// two-sided start and its wait (src/p2p: the sends' list, then the receives').
//
// Replayed graphs pay about 1.5 us between two kernels (README, "Graph capture"), and an epoch is
// three calls. Eagerly nothing can be merged (a launched kernel is gone, and holding a call back
// could hold a peer that the host then waits for); under capture nothing runs until the graph is
// launched, so a backend that finds the previous call's node still the stream's only dependency
// (no work of any kind was captured since) may give that node the merged list instead of adding a
// node. Both backends do so (device: the kernel node's parameters; host: the recorded task).
//
// A kernel runs a list's parts in one order (work_items.h, LaunchHeader): leading signals, waits,
// ops, signals, trailing waits, trailing ops, counting signals. A list can join another only where
// each of its parts can go after all of the other's in that order:
//  - an earlier list of signals alone (a post) has no data to order, so its signals lead;
//  - waits go with waits (waiting commutes), or, for a list of waits alone (a wait), after the
//    earlier list's signals as trailing waits;
//  - ops and signals go only after everything of the earlier list but its waits;
//  - except a list of waits and ops alone (a two-sided wait's receives) after a list that ends with
//    its stores (the sends started before it): its waits trail those stores and its ops follow
//    them (trailing ops, in the same launch where the list fits one, device_launch.cpp). Neither
//    list may move chunks of long messages, which run before a launch's waits.
//  - a list of sends after one of the same send group (WorkList::send_group, captured two-sided
//    send lists: MPICH's MPIX_Isend_enqueue makes one per call): waits with waits, data with
//    data, stores with stores, as if one start had sent them all. The caller groups only sends
//    that one list could hold (src/p2p: at most 8 consecutive messages of a channel), since the
//    later sends' waits now come before the earlier sends' stores.
// Counting signals (cursor advances) all run last; each cursor-relative value of the later list
// is raised by what the earlier list's counts add to its cursor, as if they had run between. A
// count a peer waits for (work::kPeerCount, a receive's "free") must not wait behind a later
// list's waits, so a list holding one takes no more lists.
//
// Lists join within one window, with one exception: a list of signals alone (a post) may lead the
// lists of another window. That is the double-buffered exchange, where each iteration posts the
// next iteration's window before this one's complete and wait, so peers find the exposure open a
// whole iteration early and no post hop is left on the critical path (examples/faces, st). The
// merged list takes the later window's id (its waits are that window's, for watchdog reports) and
// keeps the post's as lead_window_id, so a replay checks both windows are alive. One such window a
// list.
//
// MPIX_ST_GRAPH_MERGE=0 turns merging off. One effect to know: work that another captured stream
// joins (an event recorded after a post, waited for elsewhere) waits for the merged node, i.e.
// also for the complete and wait that followed the post.
#pragma once
#include "backend.h"
#include "settings/settings.h"

namespace mpix::gpu {

inline bool graph_merge_enabled() { return settings::flag(settings::Id::MPIX_ST_GRAPH_MERGE); }

namespace list_merge_detail {
inline bool is_count(const work::Item &it) { return (it.flags & work::kSignalAdd) != 0; }

// The ordered parts of a list, as a kernel runs them.
enum Phase { kLead = 0, kWaits = 1, kOps = 2, kStores = 3, kTrail = 4, kNone = -1 };

inline bool signals_only(const WorkList &l) {
  return l.waits.empty() && l.ops.empty() && l.trailing_waits.empty() && l.trailing_ops.empty();
}

inline bool has_peer_counts(const WorkList &l) {
  for (const work::Item &it : l.signals)
    if (is_count(it) && (it.flags & work::kPeerCount)) return true;
  return false;
}

inline bool moves_chunks(const WorkList &l) {
  for (const work::Item &it : l.ops)
    if (work::is_chunks_head(it.kind)) return true;
  return false;
}

inline bool has_stores(const WorkList &l) {
  for (const work::Item &it : l.signals)
    if (!is_count(it)) return true;
  return false;
}

inline int last_phase(const WorkList &l) {
  if (!l.trailing_waits.empty()) return kTrail;
  if (has_stores(l)) return kStores;
  if (!l.ops.empty()) return kOps;
  if (!l.waits.empty()) return kWaits;
  if (!l.leading_signals.empty()) return kLead;
  return kNone;
}

// What `earlier`'s counting signals add to the cursor word at `address`.
inline uint64_t counted_on(const WorkList &earlier, uint64_t address) {
  uint64_t sum = 0;
  for (const work::Item &it : earlier.signals)
    if (is_count(it) && it.a == address) sum += it.b;
  return sum;
}

inline void raise_cursor_values(std::vector<work::Item> &items, const WorkList &earlier) {
  for (work::Item &it : items)
    if ((it.flags & work::kCursor) && !is_count(it)) it.b += counted_on(earlier, it.bytes);
}
}  // namespace list_merge_detail

// Two send lists of one group (see above): each part joins the same part; cursor-relative values
// of `next` raised by what `into` counts on the same cursors, as if `into` had run first.
inline bool join_sends(WorkList &into, WorkList &next) {
  using namespace list_merge_detail;
  auto plain = [](const WorkList &l) {
    return l.leading_signals.empty() && l.trailing_waits.empty() && l.trailing_ops.empty() && !moves_chunks(l) &&
           !has_peer_counts(l) && l.skip_word == 0;
  };
  if (!plain(into) || !plain(next)) return false;
  raise_cursor_values(next.waits, into);
  raise_cursor_values(next.ops, into);
  raise_cursor_values(next.signals, into);
  into.waits.insert(into.waits.end(), next.waits.begin(), next.waits.end());
  into.ops.insert(into.ops.end(), next.ops.begin(), next.ops.end());
  into.signals.insert(into.signals.end(), next.signals.begin(), next.signals.end());
  into.counts_unordered = into.counts_unordered && next.counts_unordered;
  return true;
}

// Appends `next` to `into` where one kernel can run both in order; false (and `into` untouched)
// where it cannot. Both are captured lists without trailing ops, of one window, or `into` a post
// of another window.
inline bool merge_captured(WorkList &into, WorkList next) {
  using namespace list_merge_detail;
  const bool same_window = into.window_id == next.window_id;
  const bool post_ahead = !same_window && into.lead_window_id == 0 && signals_only(into);
  if (!into.captured || !next.captured || !(same_window || post_ahead) || into.watchdog_ns != next.watchdog_ns)
    return false;
  if (!into.trailing_ops.empty() || !next.trailing_ops.empty() || !next.leading_signals.empty()) return false;
  // One doorbell skip word a list (the window's; a post that leads never skips its signals).
  if (same_window && into.skip_word && next.skip_word && into.skip_word != next.skip_word) return false;
  if (next.empty()) return true;
  if (has_peer_counts(into)) return false;
  if (same_window && into.send_group != 0 && into.send_group == next.send_group) return join_sends(into, next);
  WorkList merged = into;
  if (post_ahead) {
    merged.lead_window_id = into.window_id;
    merged.window_id = next.window_id;
  }
  if (post_ahead || next.skip_word) merged.skip_word = next.skip_word;
  merged.counts_unordered = into.counts_unordered && next.counts_unordered;
  // A list of signals alone orders no data: they can lead, before the next list's waits.
  if (signals_only(merged)) {
    std::vector<work::Item> counts;
    for (const work::Item &it : merged.signals) (is_count(it) ? counts : merged.leading_signals).push_back(it);
    merged.signals = std::move(counts);
  }
  const int last = last_phase(merged);
  const bool next_waits_only = next.ops.empty() && !has_stores(next) && next.trailing_waits.empty();
  // Waits and data released by them, after a list's stores: both trail.
  const bool next_trails = last == kStores && !next.ops.empty() && !has_stores(next) && next.trailing_waits.empty() &&
                           !moves_chunks(merged) && !moves_chunks(next);
  raise_cursor_values(next.waits, merged);
  raise_cursor_values(next.ops, merged);  // a line put's tag (kLineTag)
  raise_cursor_values(next.signals, merged);
  raise_cursor_values(next.trailing_waits, merged);
  if (!next.waits.empty()) {
    if (last <= kWaits) {
      merged.waits.insert(merged.waits.end(), next.waits.begin(), next.waits.end());
    } else if (next_waits_only || next_trails) {
      merged.trailing_waits.insert(merged.trailing_waits.end(), next.waits.begin(), next.waits.end());
    } else {
      return false;
    }
  }
  if (next_trails) {
    merged.trailing_ops = std::move(next.ops);
  } else if (!next.ops.empty()) {
    if (last >= kOps) return false;
    merged.ops = std::move(next.ops);
  }
  for (work::Item &it : next.signals) {
    if (!is_count(it) && last >= kStores) return false;
    merged.signals.push_back(it);
  }
  merged.trailing_waits.insert(merged.trailing_waits.end(), next.trailing_waits.begin(), next.trailing_waits.end());
  into = std::move(merged);
  return true;
}

}  // namespace mpix::gpu
