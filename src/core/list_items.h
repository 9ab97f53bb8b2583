// Builders of the work items epochs enqueue (kernels/work_items.h).
#pragma once
#include <cstdint>

#include "kernels/work_items.h"

namespace mpix::core {

// Waits until *flag >= value; `peer` and `why` are named in watchdog reports.
inline work::Item wait_item(const uint64_t *flag, uint64_t value, int peer, work::WaitReason why) {
  work::Item it{};
  it.kind = work::kWait;
  it.a = reinterpret_cast<uint64_t>(flag);
  it.b = value;
  it.dtype = why;
  it.peer = peer;
  return it;
}

// Copies `bytes` from src to dst.
inline work::Item copy_item(const void *dst, const void *src, uint64_t bytes) {
  work::Item it{};
  it.kind = work::kCopy;
  it.a = reinterpret_cast<uint64_t>(dst);
  it.b = reinterpret_cast<uint64_t>(src);
  it.bytes = bytes;
  return it;
}

// Stores value into *flag after the list's data.
inline work::Item signal_item(uint64_t *flag, uint64_t value) {
  work::Item it{};
  it.kind = work::kSignal;
  it.a = reinterpret_cast<uint64_t>(flag);
  it.b = value;
  return it;
}

// Epoch cursors (work::kCursor): signals and waits of stream epochs carry values relative to a
// per-peer counter in this process's flag area, so that a captured list replays as the next epoch.
// Waits until *flag >= *cursor + 1: the next epoch's signal from `peer`.
inline work::Item wait_next(const uint64_t *flag, uint64_t *cursor, int peer, work::WaitReason why) {
  work::Item it = wait_item(flag, 1, peer, why);
  it.flags = work::kCursor;
  it.bytes = reinterpret_cast<uint64_t>(cursor);
  return it;
}

// Stores *cursor + 1, the next epoch's number, into *flag.
inline work::Item signal_next(uint64_t *flag, uint64_t *cursor) {
  work::Item it = signal_item(flag, 1);
  it.flags = work::kCursor;
  it.bytes = reinterpret_cast<uint64_t>(cursor);
  return it;
}

// A put of `put` (a kCopy into the target's window at `offset`) as lines into `area` (work_items.h,
// line puts), tagged with the next complete epoch to that target (*cursor + 1): two items.
inline void line_put_items(const work::Item &put, uint64_t *area, uint64_t offset, uint64_t *cursor, work::Item out[2]) {
  out[0] = put;
  out[0].kind = work::kPutLines;
  out[0].a = reinterpret_cast<uint64_t>(area);
  out[1] = signal_next(nullptr, cursor);
  out[1].kind = work::kLineTag;
  out[1].a = offset;
}

// The kWaitLines form of a complete wait (wait_next): it also passes on the origin's lines in
// `area`, whose data goes to the window [base, base + bytes).
inline void wait_lines_items(const work::Item &wait, const uint64_t *area, const void *base, uint64_t bytes,
                             work::Item out[2]) {
  out[0] = wait;
  out[0].kind = work::kWaitLines;
  out[1] = work::Item{};
  out[1].kind = work::kLineArea;
  out[1].a = reinterpret_cast<uint64_t>(area);
  out[1].b = reinterpret_cast<uint64_t>(base);
  out[1].bytes = bytes;
}

// Advances a cursor by one epoch; a counting signal, so it runs after every value read from it.
inline work::Item advance(uint64_t *cursor) {
  work::Item it = signal_item(cursor, 1);
  it.flags = work::kSignalAdd;
  return it;
}

}  // namespace mpix::core
