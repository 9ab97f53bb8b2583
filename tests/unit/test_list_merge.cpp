// Epoch lists merged under capture (src/backend/list_merge.h): which lists join, where each part
// lands, and how cursor-relative values follow the counts that run before them.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "core/list_items.h"
#include "backend/list_merge.h"

using mpix::gpu::merge_captured;
using mpix::gpu::WorkList;
namespace work = mpix::work;
namespace core = mpix::core;

namespace {

// Flag and cursor words: only their addresses matter here.
uint64_t post_flag[4], complete_flag[4], cursors[8];
char window[64], source[64];

WorkList captured_list(uint32_t window_id = 3) {
  WorkList l;
  l.captured = true;
  l.window_id = window_id;
  l.watchdog_ns = 1000;
  return l;
}

// The lists of a one-peer epoch, as src/core/epochs.cpp builds them under capture.
WorkList post_list() {
  WorkList l = captured_list();
  l.signals.push_back(core::signal_next(&post_flag[0], &cursors[0]));
  l.signals.push_back(core::advance(&cursors[0]));
  return l;
}
WorkList complete_list() {
  WorkList l = captured_list();
  l.waits.push_back(core::wait_next(&post_flag[1], &cursors[1], 1, work::kWaitPost));
  l.ops.push_back(core::copy_item(window, source, 8));
  l.signals.push_back(core::signal_next(&complete_flag[0], &cursors[2]));
  l.signals.push_back(core::advance(&cursors[1]));
  l.signals.push_back(core::advance(&cursors[2]));
  return l;
}
WorkList wait_list() {
  WorkList l = captured_list();
  l.waits.push_back(core::wait_next(&complete_flag[1], &cursors[3], 1, work::kWaitComplete));
  l.signals.push_back(core::advance(&cursors[3]));
  return l;
}

std::vector<work::Item> stores_of(const WorkList &l) {
  std::vector<work::Item> v;
  for (const work::Item &it : l.signals)
    if (!(it.flags & work::kSignalAdd)) v.push_back(it);
  return v;
}

size_t counts_in(const WorkList &l) {
  size_t n = 0;
  for (const work::Item &it : l.signals) n += (it.flags & work::kSignalAdd) != 0;
  return n;
}

}  // namespace

TEST_CASE("post, complete and wait of an epoch become one list in kernel order") {
  WorkList merged = post_list();
  REQUIRE(merge_captured(merged, complete_list()));
  REQUIRE(merge_captured(merged, wait_list()));
  // The post's signal leads (before the complete's wait for the peer's post)...
  REQUIRE(merged.leading_signals.size() == 1);
  CHECK(merged.leading_signals[0].a == reinterpret_cast<uint64_t>(&post_flag[0]));
  // ... the complete keeps its wait, copy and signal in place ...
  REQUIRE(merged.waits.size() == 1);
  CHECK(merged.waits[0].a == reinterpret_cast<uint64_t>(&post_flag[1]));
  CHECK(merged.ops.size() == 1);
  CHECK(stores_of(merged).size() == 1);
  // ... and the wait's wait trails the complete's signal.
  REQUIRE(merged.trailing_waits.size() == 1);
  CHECK(merged.trailing_waits[0].a == reinterpret_cast<uint64_t>(&complete_flag[1]));
  CHECK(counts_in(merged) == 4);  // every cursor advance, once
  CHECK(merged.captured);
  CHECK(merged.window_id == 3);
}

TEST_CASE("a wait alone joins a post as a plain wait") {
  WorkList merged = post_list();
  REQUIRE(merge_captured(merged, wait_list()));
  CHECK(merged.leading_signals.size() == 1);
  CHECK(merged.waits.size() == 1);
  CHECK(merged.trailing_waits.empty());
}

TEST_CASE("a later list's cursor values count the earlier list's advances") {
  // Two waits on the same cursor: the second is for the epoch after the first.
  WorkList merged = wait_list();
  REQUIRE(merge_captured(merged, wait_list()));
  REQUIRE(merged.waits.size() == 2);
  CHECK(merged.waits[0].b == 1);
  CHECK(merged.waits[1].b == 2);
  CHECK((merged.waits[1].flags & work::kCursor) != 0);
  // A complete's signal after a post that advances its cursor is raised the same way.
  WorkList post = post_list();
  WorkList complete = complete_list();
  complete.signals[0].bytes = reinterpret_cast<uint64_t>(&cursors[0]);  // reads the post's cursor
  REQUIRE(merge_captured(post, complete));
  REQUIRE(stores_of(post).size() == 1);
  CHECK(stores_of(post)[0].b == 2);
  CHECK(post.leading_signals[0].b == 1);  // the post's own value is unchanged
}

TEST_CASE("lists whose parts would run out of order stay apart, untouched") {
  const auto refuse = [](WorkList into, const WorkList &next) {
    const WorkList before = into;
    const bool merged = merge_captured(into, next);
    CHECK(into.waits.size() == before.waits.size());
    CHECK(into.signals.size() == before.signals.size());
    CHECK(into.leading_signals.size() == before.leading_signals.size());
    CHECK(into.trailing_waits.size() == before.trailing_waits.size());
    return !merged;
  };
  // A complete after a complete: its wait and copy would run before the first one's signal.
  CHECK(refuse(complete_list(), complete_list()));
  // A post after a wait: its signal would run before the wait's wait.
  WorkList epoch = post_list();
  REQUIRE(merge_captured(epoch, complete_list()));
  REQUIRE(merge_captured(epoch, wait_list()));
  CHECK(refuse(epoch, post_list()));
  // A complete after a complete merged with a wait.
  CHECK(refuse(epoch, complete_list()));
  // Another window's list after anything but a post, or after a post that already leads another
  // window's lists; an eager list; trailing ops.
  WorkList other = wait_list();
  other.window_id = 4;
  CHECK(refuse(complete_list(), other));
  WorkList ahead = post_list();
  REQUIRE(merge_captured(ahead, other));
  WorkList third = post_list();
  third.window_id = 5;
  CHECK(refuse(ahead, third));
  WorkList eager = wait_list();
  eager.captured = false;
  CHECK(refuse(post_list(), eager));
  WorkList staged = wait_list();
  staged.trailing_ops.push_back(core::copy_item(window, source, 8));
  CHECK(refuse(post_list(), staged));
}

TEST_CASE("a post leads the complete and wait of another window (post ahead)") {
  // Window 4's post for the next iteration, then window 3's epoch: one list of window 3 that
  // also checks window 4 is alive on replay.
  WorkList merged = post_list();
  merged.window_id = 4;
  merged.signals[0].a = reinterpret_cast<uint64_t>(&post_flag[2]);
  merged.signals[1].a = reinterpret_cast<uint64_t>(&cursors[4]);
  merged.signals[0].bytes = reinterpret_cast<uint64_t>(&cursors[4]);
  REQUIRE(merge_captured(merged, complete_list()));
  REQUIRE(merge_captured(merged, wait_list()));
  CHECK(merged.window_id == 3);
  CHECK(merged.lead_window_id == 4);
  REQUIRE(merged.leading_signals.size() == 1);
  CHECK(merged.leading_signals[0].a == reinterpret_cast<uint64_t>(&post_flag[2]));
  CHECK(merged.waits.size() == 1);
  CHECK(merged.ops.size() == 1);
  CHECK(stores_of(merged).size() == 1);
  CHECK(merged.trailing_waits.size() == 1);
  CHECK(counts_in(merged) == 4);
  // Window 3's values are not raised by window 4's cursor advance.
  CHECK(merged.waits[0].b == 1);
  CHECK(stores_of(merged)[0].b == 1);
  // A later post of window 3 cannot join: its signal would run before the wait.
  WorkList post = post_list();
  CHECK_FALSE(merge_captured(merged, post));
}

TEST_CASE("a merged list keeps the doorbell skip word of the lists whose signals can be skipped") {
  // Lists that ring a network doorbell carry their window's skip word (remote_epochs.cpp).
  uint64_t skip3 = 0, skip4 = 0, other = 0;
  // One window: the word of whichever list has one.
  WorkList one = post_list();
  WorkList complete = complete_list();
  complete.skip_word = reinterpret_cast<uint64_t>(&skip3);
  REQUIRE(merge_captured(one, complete));
  REQUIRE(merge_captured(one, wait_list()));
  CHECK(one.skip_word == reinterpret_cast<uint64_t>(&skip3));
  // Two different words in one window's lists cannot share a launch header: they stay apart.
  WorkList first = post_list(), second = complete_list();
  first.skip_word = reinterpret_cast<uint64_t>(&skip3);
  second.skip_word = reinterpret_cast<uint64_t>(&other);
  CHECK_FALSE(merge_captured(first, second));
  CHECK(first.skip_word == reinterpret_cast<uint64_t>(&skip3));
  CHECK(first.waits.empty());
  // Post ahead: the leading post of window 4 never skips its signals; the word is window 3's.
  WorkList ahead = post_list();
  ahead.window_id = 4;
  ahead.skip_word = reinterpret_cast<uint64_t>(&skip4);
  WorkList c3 = complete_list();
  c3.skip_word = reinterpret_cast<uint64_t>(&skip3);
  REQUIRE(merge_captured(ahead, c3));
  CHECK(ahead.skip_word == reinterpret_cast<uint64_t>(&skip3));
  // ... and none where window 3's lists ring no doorbell (all its peers node-local).
  WorkList ahead_local = post_list();
  ahead_local.window_id = 4;
  ahead_local.skip_word = reinterpret_cast<uint64_t>(&skip4);
  REQUIRE(merge_captured(ahead_local, complete_list()));
  CHECK(ahead_local.skip_word == 0);
}

namespace {
// Two-sided lists as src/p2p/engine.cpp builds them under capture (one message each way): the
// send waits for its mailbox to be free, copies and stores "full"; the receive waits for "full",
// copies, and adds to the sender's "free" word, which the sender waits for.
uint64_t full_flag[2], free_flag[2], mailbox_cursors[2];
char mailbox[64], inbox[64];

WorkList send_list() {
  WorkList l = captured_list();
  l.waits.push_back(core::wait_next(&free_flag[0], &mailbox_cursors[0], 0, work::kWaitPost));
  l.ops.push_back(core::copy_item(mailbox, source, 8));
  l.signals.push_back(core::signal_next(&full_flag[0], &mailbox_cursors[0]));
  l.signals.push_back(core::advance(&mailbox_cursors[0]));
  return l;
}
WorkList receive_list() {
  WorkList l = captured_list();
  l.waits.push_back(core::wait_next(&full_flag[1], &mailbox_cursors[1], 1, work::kWaitComplete));
  l.ops.push_back(core::copy_item(inbox, mailbox, 8));
  work::Item freed = core::signal_item(&free_flag[1], 1);
  freed.flags = work::kSignalAdd | work::kPeerCount;
  l.signals.push_back(freed);
  l.signals.push_back(core::advance(&mailbox_cursors[1]));
  return l;
}
}  // namespace

TEST_CASE("a two-sided wait's receives trail the sends started before it") {
  WorkList merged = send_list();
  REQUIRE(merge_captured(merged, receive_list()));
  // The sends run whole first: their wait, copy and "full"...
  REQUIRE(merged.waits.size() == 1);
  CHECK(merged.waits[0].a == reinterpret_cast<uint64_t>(&free_flag[0]));
  REQUIRE(merged.ops.size() == 1);
  CHECK(merged.ops[0].a == reinterpret_cast<uint64_t>(mailbox));
  CHECK(stores_of(merged).size() == 1);
  // ... then the receives wait and copy, and the counts (the sender's "free" among them) run last.
  REQUIRE(merged.trailing_waits.size() == 1);
  CHECK(merged.trailing_waits[0].a == reinterpret_cast<uint64_t>(&full_flag[1]));
  CHECK(merged.trailing_waits[0].b == 1);  // another cursor than the send's: not raised
  REQUIRE(merged.trailing_ops.size() == 1);
  CHECK(merged.trailing_ops[0].a == reinterpret_cast<uint64_t>(inbox));
  CHECK(counts_in(merged) == 3);
}

TEST_CASE("a merged list's counts go unfenced only where neither list's counts order data") {
  // Captured two-sided lists count only cursors and peers' "free" words (WorkList::counts_unordered).
  WorkList sends = send_list(), receives = receive_list();
  sends.counts_unordered = receives.counts_unordered = true;
  WorkList merged = sends;
  REQUIRE(merge_captured(merged, receives));
  CHECK(merged.counts_unordered);
  WorkList fenced = send_list();  // e.g. an epoch's list: its counts retire what the host reads
  REQUIRE(merge_captured(fenced, receives));
  CHECK_FALSE(fenced.counts_unordered);
  WorkList after = sends;
  REQUIRE(merge_captured(after, receive_list()));
  CHECK_FALSE(after.counts_unordered);
}

TEST_CASE("no list joins one whose counts a peer waits for") {
  // A receive's "free" would wait behind a later list's waits: if that list waited for the message
  // the sender can only send once the mailbox is free, neither side would move.
  WorkList merged = send_list();
  REQUIRE(merge_captured(merged, receive_list()));
  CHECK_FALSE(merge_captured(merged, send_list()));
  CHECK_FALSE(merge_captured(merged, wait_list()));
  WorkList receive = receive_list();
  WorkList zero_bytes = receive_list();
  zero_bytes.ops.clear();  // a captured zero-byte receive: a wait and counts
  CHECK_FALSE(merge_captured(receive, zero_bytes));
  CHECK(receive.waits.size() == 1);
  CHECK(receive.trailing_waits.empty());
}

TEST_CASE("receives that move chunks of a long message do not trail sends") {
  // A launch moves chunks before its waits (kernels/message_chunks.h): as trailing ops they would
  // never move.
  WorkList long_receive = receive_list();
  work::Item chunks{};
  chunks.kind = work::kChunksIn;
  work::Item words{};
  words.kind = work::kChunkWords;
  long_receive.ops.push_back(chunks);
  long_receive.ops.push_back(words);
  WorkList sends = send_list();
  CHECK_FALSE(merge_captured(sends, long_receive));
  CHECK(sends.trailing_waits.empty());
  CHECK(sends.trailing_ops.empty());
}

TEST_CASE("merging is on unless MPIX_ST_GRAPH_MERGE=0") {
  // The process's environment decides once; ctest runs this without the variable.
  CHECK(mpix::gpu::graph_merge_enabled());
}
