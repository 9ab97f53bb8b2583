#include "engine.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/config.h"
#include "core/datatype_flatten.h"
#include "core/list_items.h"
#include "direct.h"
#include "network.h"

namespace mpix::p2p {

using core::fail;
using core::ok;
using core::Result;

namespace {

constexpr size_t kRecordsPerChunk = 1024;  // 32 KiB of status records at a time

// Kept for the process's life (never destroyed at exit, when the backend may be gone already).
std::set<std::shared_ptr<Queue>> &g_busy = *new std::set<std::shared_ptr<Queue>>;  // lists not known to have run
std::map<void *, std::shared_ptr<Queue>> &g_stream_queues = *new std::map<void *, std::shared_ptr<Queue>>;  // MPICH's
std::unordered_map<MPI_Request, std::shared_ptr<Op>> &g_requests = *new std::unordered_map<MPI_Request, std::shared_ptr<Op>>;
std::atomic<uint64_t> g_live{0};
// Queues that kept an error of an operation a stream wait took (take_any_error).
std::vector<std::weak_ptr<Queue>> &g_erred = *new std::vector<std::weak_ptr<Queue>>;

// An error the queue keeps for its next call (or MPIX_St_check) to raise.
void keep_error(Queue &q, Result r) {
  if (q.errors.empty()) g_erred.push_back(q.weak_from_this());
  q.errors.push_back(std::move(r));
}

bool host_backend() { return std::strcmp(gpu::backend().name(), "host") == 0; }

work::Item store2(const char *at, uint64_t first, uint64_t second) {
  work::Item it{};
  it.kind = work::kStore2;
  it.a = reinterpret_cast<uint64_t>(at);
  it.b = first;
  it.bytes = second;
  return it;
}

work::Item add_one(uint64_t *word) {
  work::Item it = core::signal_item(word, 1);
  it.flags = work::kSignalAdd;
  return it;
}

// The last signal of q's lists: counts them, also where the watchdog skipped the rest of the list
// (counting signals are made at the end of every list), in the word the host reads.
work::Item list_ran(const Queue &q) { return add_one(static_cast<uint64_t *>(q.done.device)); }

// Where the stream (or a host call after it) writes the count of op's status (MPI_BYTE).
char *status_count_word(const Op &op) { return reinterpret_cast<char *>(op.user_status) + status_count_offset(); }

// MPICH's stream waits on GPU backends: the counts of a list's receives, copied into the program's
// statuses by a host call on the stream after the list (the kernels cannot write pageable host
// memory), which then counts the list as run: the records stay until it has read them.
struct StatusCopies {
  std::vector<std::pair<char *, const uint64_t *>> copies;  // (the status's count word, the record's length)
  uint64_t *done;                                             // the queue's lists that ran (host view)
};
void copy_counts(const std::vector<std::pair<char *, const uint64_t *>> &copies) {
  for (const auto &[count, length] : copies) {
    const uint64_t bytes = std::atomic_ref<uint64_t>(*const_cast<uint64_t *>(length)).load(std::memory_order_acquire);
    const int n = static_cast<int>(bytes);
    std::memcpy(count, &n, sizeof n);
  }
}
void copy_statuses(void *arg) {
  auto *job = static_cast<StatusCopies *>(arg);
  copy_counts(job->copies);
  std::atomic_ref<uint64_t>(*job->done).fetch_add(1, std::memory_order_release);
  delete job;
}

// Statuses of captured receives on GPU backends (MPICH's stream waits): each replay's list copies
// the message's length into a word of its own, and a host node of the graph after the list copies
// it into the status. The graph may be replayed until the program ends, so words and jobs are kept
// for the process's life (8 and 16 bytes per captured receive that asked for a status).
struct CapturedStatuses {
  std::vector<std::pair<char *, const uint64_t *>> copies;  // (the status's count word, the length word)
};
void copy_captured_statuses(void *arg) { copy_counts(static_cast<const CapturedStatuses *>(arg)->copies); }
std::vector<std::unique_ptr<CapturedStatuses>> &g_captured_statuses =
    *new std::vector<std::unique_ptr<CapturedStatuses>>;

// A length word for a captured receive's status: (device view, host view).
Result captured_length_word(uint64_t **device, uint64_t **host) {
  constexpr size_t kWords = 512;
  static gpu::HostMapped chunk;  // never freed: graphs may use its words until exit
  static size_t used = kWords;
  if (used == kWords) {
    gpu::Backend &be = gpu::backend();
    if (be.allocate_host_mapped(kWords * sizeof(uint64_t), &chunk))
      return fail(core::resource_error_class(), "a captured receive's status word: " + be.last_error());
    used = 0;
  }
  *device = static_cast<uint64_t *>(chunk.device) + used;
  *host = static_cast<uint64_t *>(chunk.host) + used;
  ++used;
  return ok();
}

std::string peer_text(const Op &op) {
  return std::string(op.send ? " to rank " : " from rank ") + std::to_string(op.peer) + " (tag " +
         std::to_string(op.tag) + ")";
}

// A message's round in its mailbox (layout.h, cursors): the number, while the host counts the
// context's cursors, else relative to the mailbox's cursor, which the list advances.
work::Item at_round(work::Item it, uint64_t *cursor, uint64_t round, bool counted) {
  if (counted) {
    it.b += round;
  } else {
    it.flags |= work::kCursor;
    it.bytes = reinterpret_cast<uint64_t>(cursor);
  }
  return it;
}

// The data of op between its buffer and a mailbox: one copy, or a derived type's pieces (a pairs
// item and its list, work::kCopyPairs). `dst`, `src`: the bases the pieces' offsets start from.
// `counted` (a receive): the sender's length, in the header before the data, decides: a prefix of
// one piece where it fits (kCopyCounted), the pieces it reaches where it fits the type (kCountedPieces).
void push_data(gpu::WorkList &list, const Op &op, char *dst, char *src, bool counted) {
  const int32_t length_at = static_cast<int32_t>(kLengthAt) - static_cast<int32_t>(kDataAt);
  const core::PairList &l = op.pairs;
  if (l.count <= 1) {
    const int64_t d = l.count ? l.single.dst : 0, s = l.count ? l.single.src : 0;
    work::Item copy = core::copy_item(dst + d, src + s, op.bytes);
    if (counted) {
      // A message longer than the mailbox moves in chunks (chunk_items): this copy takes only one
      // that travelled whole.
      copy.kind = work::kCopyCounted;
      copy.peer = length_at;
      copy.bytes = std::min(op.bytes, op.ctx->slot_bytes);
    }
    list.ops.push_back(copy);
    return;
  }
  work::Item head{};
  head.kind = work::kCopyPairs;
  head.a = reinterpret_cast<uint64_t>(dst);
  head.b = reinterpret_cast<uint64_t>(src);
  head.bytes = l.bytes;
  if (counted) {
    head.flags |= work::kCountedPieces;
    head.peer = length_at;
  }
  list.ops.push_back(head);
  list.ops.push_back(core::pair_list_item(l));
}

// Where a message travels, as this rank's stream reaches it: the mailbox it writes (a send) or
// reads (a receive), the word it waits on ("free" for a send, "full" for a receive), the peer's
// word it signals (the receiver's "full", stored; the sender's "free", added to), and the cursor of
// its rounds. A peer on another node: the staging mailbox that the network copies from, words in
// the network's flag memory, and no word to signal (a doorbell ring fires the network's signal).
struct Route {
  char *mailbox;
  uint64_t *wait_word, *signal_word, *cursor;
  bool remote;
  // Chunks of a message longer than the mailbox: the word this rank waits on per chunk (a send's
  // go, a receive's chunk) and the peer's word it stores (between nodes: the message's doorbell,
  // net::post_chunks).
  uint64_t *chunk_wait = nullptr, *chunk_signal = nullptr;
};

Route route_of(const Op &op, int box) {
  const Context &c = *op.ctx;
  const int p = op.peer;
  if (c.local[p] >= 0)
    return op.send ? Route{c.mailbox_out(p, box), c.free_out(p, box), c.full_out(p, box), c.sent_cursor(p, box), false,
                           c.go_out(p, box), c.chunk_out(p, box)}
                   : Route{c.mailbox_in(p, box), c.full_in(p, box), c.free_in(p, box), c.received_cursor(p, box), false,
                           c.chunk_in(p, box), c.go_in(p, box)};
  const net::Remote &r = *c.remote;
  const int j = r.index[p];
  return op.send ? Route{r.staging_out(p, box), r.word(kRemoteFlags.free(j, box)), nullptr,
                         r.word(kRemoteFlags.sent_cursor(r.nremote, j, box)), true, r.word(kRemoteFlags.go(j, box))}
                 : Route{r.mailbox_in(p, box), r.word(kRemoteFlags.full(j, box)), nullptr,
                         r.word(kRemoteFlags.received_cursor(r.nremote, j, box)), true,
                         r.word(kRemoteFlags.chunk(j, box))};
}

// A send's items: the mailbox's previous round taken, the data and header in, "full" stored.
void send_items(gpu::WorkList &list, const Op &op, const Route &rt) {
  const Context &c = *op.ctx;
  const uint64_t round = box_round(op.use);
  const bool counted = c.cursors_counted;
  if (round > 0 || !counted)
    list.waits.push_back(at_round(core::wait_item(rt.wait_word, 0, op.peer, work::kWaitPost), rt.cursor, round,
                                  counted));
  char *mb = rt.mailbox;
  if (op.bytes > 0 && !op.chunked) push_data(list, op, mb + kDataAt, static_cast<char *>(op.buf), false);
  list.ops.push_back(store2(mb, 1, op.ident));
  list.ops.push_back(store2(mb + 16, 0, op.bytes));
  // Always stored for a long message: a source left by an earlier message would be read.
  if (op.chunked) list.ops.push_back(store2(mb + kHeaderBytes, op.source_key, op.source_offset));
  if (rt.signal_word)
    list.signals.push_back(at_round(core::signal_item(rt.signal_word, 1), rt.cursor, round, counted));
  list.signals.push_back(core::advance(rt.cursor));
}

// The chunks item of a message (kernels/message_chunks.h): a chunked send's data, or a long
// receive's (it takes a long message where it fits, else drops it).
void chunk_items(std::vector<work::Item> &ops, const Op &op, const Route &rt) {
  const Context &c = *op.ctx;
  work::Item head{};
  head.kind = op.send ? work::kChunksOut : work::kChunksIn;
  head.op = static_cast<uint8_t>(box_index(op.channel, op.use));  // finds the source table (direct pulls)
  const int64_t at = op.pairs.count == 1 ? (op.send ? op.pairs.single.src : op.pairs.single.dst) : 0;
  if (op.pairs.count <= 1) head.a = reinterpret_cast<uint64_t>(static_cast<char *>(op.buf) + at);  // else it drops
  head.b = reinterpret_cast<uint64_t>(rt.mailbox + kDataAt);
  head.bytes = op.bytes;
  head.peer = op.peer;
  head.dtype = op.send ? work::kWaitPost : work::kWaitComplete;
  work::Item words{};
  words.kind = work::kChunkWords;
  words.a = reinterpret_cast<uint64_t>(rt.chunk_wait);
  words.b = reinterpret_cast<uint64_t>(rt.chunk_signal);
  words.peer = static_cast<int32_t>(c.slot_bytes / 2);
  words.dtype = static_cast<uint8_t>(rt.remote ? 1 : c.chunk_lanes);  // between nodes: a ring per chunk
  if (rt.remote) words.flags |= work::kRemoteRings;
  if (c.cursors_counted) {
    words.bytes = box_round(op.use);
  } else {
    words.flags = work::kCursor;
    words.bytes = reinterpret_cast<uint64_t>(rt.cursor);
  }
  ops.push_back(head);
  ops.push_back(words);
}

// A receive's items: "full" awaited; the data (the sender's length, only where it fits:
// kCopyCounted) into the buffer, a longer message's chunks (node-local, `with_chunks`), then the
// header copied into the record (not for a captured receive, which nothing checks on the host),
// after the chunks so that a record says the whole message arrived; "free" added. One launch on a
// GPU.
void receive_items(gpu::WorkList &list, std::vector<work::Item> &chunks, std::vector<work::Item> &tail, const Op &op,
                   const Route &rt, bool with_chunks) {
  const Context &c = *op.ctx;
  uint64_t *cursor = rt.cursor;
  list.waits.push_back(at_round(core::wait_item(rt.wait_word, 1, op.peer, work::kWaitComplete), cursor,
                                box_round(op.use), c.cursors_counted));
  char *mb = rt.mailbox;
  if (op.bytes > 0) push_data(list, op, static_cast<char *>(op.buf), mb + kDataAt, true);
  if (with_chunks) chunk_items(chunks, op, rt);
  if (!op.captured) tail.push_back(core::copy_item(op.record, mb, kHeaderBytes));
  if (op.user_status && host_backend())
    tail.push_back(core::copy_item(status_count_word(op),
                                   mb + kLengthAt, 4));
  else if (op.user_status && op.captured)
    tail.push_back(core::copy_item(op.length_word, mb + kLengthAt, sizeof(uint64_t)));
  if (rt.signal_word) {
    work::Item freed = add_one(rt.signal_word);
    freed.flags |= work::kPeerCount;  // the sender waits for it: no later wait may come first
    list.signals.push_back(freed);
  }
  list.signals.push_back(core::advance(cursor));
}

// A chunked send at a wait point: its chunks, then the mark in its record that they all went.
void send_chunk_items(std::vector<work::Item> &chunks, std::vector<work::Item> &tail, const Op &op, const Route &rt) {
  chunk_items(chunks, op, rt);
  tail.push_back(store2(reinterpret_cast<const char *>(op.record), 1, op.ident));
}

// Whether q's stream is being captured; operations go in lists in the capture state they were
// called in, so that a captured block holds exactly the calls made within it. Checked for every
// operation an entry point would put in lists before any goes, so a refusal leaves them as they were.
template <class Ops>
Result capture_state(Queue &q, const Ops &ops, bool *capturing) {
  *capturing = false;
  gpu::backend().capture_status(q.stream, capturing);
  for (const auto &op : ops)
    if (op->captured != *capturing)
      return fail(MPI_ERR_OTHER,
                  std::string(op->call) + peer_text(*op) +
                      (op->captured ? ": called while the stream was captured, it must be started and waited for "
                                      "within the capture"
                                    : ": called before the stream's capture began, it must be started and waited "
                                      "for outside it"));
  return ok();
}

// A captured operation is done with once its list is in the graph: its request completes (the
// data moves at each replay, which the host does not see).
void finish_captured(Op &op) {
  op.finished = true;
  if (op.greq != MPI_REQUEST_NULL && !op.greq_completed) {
    op.greq_completed = true;
    PMPI_Grequest_complete(op.greq);
  }
}

Key key_of(const Op &op) { return {op.ctx.get(), op.peer, op.channel}; }

// The send group of a captured send list (list_merge.h): the queue's open group where every
// message of `ops` is fewer than kMailboxes after its channel's first in the group (so the node
// they may share holds what one start's list could), else a new group. Counts every list given to
// the group, merged or not (the backend merges only where nothing was captured between), so the
// check errs on the safe side.
uint64_t join_send_group(Queue &q, const std::vector<std::shared_ptr<Op>> &ops) {
  static uint64_t groups = 0;  // under lock(): group numbers unique across queues sharing a stream
  bool fits = q.send_group != 0;
  for (const auto &op : ops)
    if (const uint64_t *first = q.send_group_first.find(key_of(*op)); fits && first && op->use - *first >= kMailboxes)
      fits = false;
  if (!fits) {
    q.send_group = ++groups;
    q.send_group_first.clear();
  }
  for (const auto &op : ops) q.send_group_first.emplace(key_of(*op), op->use);
  return q.send_group;
}

Result enqueue_list(Queue &q, const std::vector<std::shared_ptr<Op>> &ops, bool sends) {
  // Operations toward other nodes: lists within net::list_budget() triggered operations, in order.
  uint64_t demand = 0;
  for (const auto &op : ops) demand += net::operations(*op, sends);
  if (ops.size() > 1 && demand > 0 && demand > net::list_budget()) {
    std::vector<std::shared_ptr<Op>> part;
    uint64_t taken = 0;
    for (const auto &op : ops) {
      const uint64_t n = net::operations(*op, sends);
      if (!part.empty() && taken + n > net::list_budget()) {
        if (Result r = enqueue_list(q, part, sends)) return r;
        part.clear();
        taken = 0;
      }
      part.push_back(op);
      taken += n;
    }
    return enqueue_list(q, part, sends);
  }
  bool capturing = false;
  if (Result r = capture_state(q, ops, &capturing)) return r;
  // Scratch kept per thread (every call's path; emptied, capacity kept): nothing below enqueues
  // another list before this one went.
  thread_local gpu::WorkList list;
  thread_local std::vector<work::Item> chunks, tail;
  list.clear();
  chunks.clear();
  tail.clear();
  list.watchdog_ns = core::config().watchdog_ns;
  list.window_id = ops.front()->ctx->id;
  list.captured = capturing;
  // Replays write no records and count no lists: the counts are cursors and peers' "free" words.
  list.counts_unordered = capturing;
  // Captured sends may share a node with the sends captured just before them; anything else on
  // the queue closes the group.
  if (capturing && sends) list.send_group = join_send_group(q, ops);
  else q.send_group = 0;
  // Replays advance cursors the host cannot count: from now on the lists read them.
  if (capturing)
    for (const auto &op : ops) op->ctx->cursors_counted = false;
  // Operations toward other nodes are posted for the queue's next doorbell ring, which the list
  // rings once after all its messages.
  bool remote = false;
  // Ops in order: the data of every message, then the chunks of those longer than a mailbox, all
  // moving together, then what records their end.
  // A list that moves chunks (a chunked send's, a receive's into a buffer longer than the mailbox)
  // gives each of its node-local receives a chunks item, so that all of them move (or drop a long
  // message) before the list's waits; a receive elsewhere drops a long message through its free
  // word (kernels/message_chunks.h), and short messages' lists stay as they were.
  bool with_chunks = false;
  for (const auto &op : ops)
    with_chunks = with_chunks || (!sends && (op->send || (op->pairs.count <= 1 && op->bytes > op->ctx->slot_bytes)));
  // Long receives may read their messages straight from the send buffers their senders published
  // (direct.h): map those published since the last look, while the host may write the table.
  if (with_chunks && !capturing) {
    std::set<std::pair<Context *, int>> looked;
    for (const auto &op : ops)
      if (!op->send && op->ctx->local[op->peer] >= 0 && looked.emplace(op->ctx.get(), op->peer).second)
        map_sources(*op->ctx, op->peer);
  }
  // Statuses of captured receives on GPU backends: a host node after the list.
  std::unique_ptr<CapturedStatuses> captured_statuses;
  if (!sends && capturing && !host_backend())
    for (const auto &op : ops)
      if (!op->send && op->user_status) {
        uint64_t *host = nullptr;
        if (Result r = captured_length_word(&op->length_word, &host)) return r;
        if (!captured_statuses) captured_statuses = std::make_unique<CapturedStatuses>();
        captured_statuses->copies.emplace_back(status_count_word(*op), host);
      }
  for (const auto &op : ops) {
    Route rt = route_of(*op, box_index(op->channel, op->use));
    // Between nodes, a message's chunks ring a doorbell of their own.
    if (rt.remote && !sends && (op->send ? op->chunked : with_chunks))
      if (Result r = net::post_chunks(*op, &rt.chunk_signal)) {
        if (remote) net::ring_lost(q);
        return r;
      }
    if (sends) send_items(list, *op, rt);
    else if (op->send) send_chunk_items(chunks, tail, *op, rt);
    else {
      receive_items(list, chunks, tail, *op, rt, with_chunks);
      op->round_known = op->ctx->cursors_counted;
    }
    if (!rt.remote || (!sends && op->send)) continue;  // a chunked send's header went with its send list
    if (Result r = sends ? net::post_send(*op, q) : net::post_receive(*op, q)) {
      if (remote) net::ring_lost(q);  // operations already posted for this ring must never fire
      return r;
    }
    remote = true;
  }
  list.ops.insert(list.ops.end(), chunks.begin(), chunks.end());
  list.ops.insert(list.ops.end(), tail.begin(), tail.end());
  if (remote)
    if (Result r = net::ring(list, q)) {
      net::ring_lost(q);
      return r;
    }
  core::place_pair_lists_on_device(list, capturing);
  // Statuses of MPICH's stream waits on GPU backends: a host call after the list counts it.
  std::unique_ptr<StatusCopies> statuses;
  if (!sends && !capturing && !host_backend())
    for (const auto &op : ops)
      if (!op->send && op->user_status) {
        if (!statuses) statuses.reset(new StatusCopies{{}, static_cast<uint64_t *>(q.done.host)});
        statuses->copies.emplace_back(status_count_word(*op), op->record_host + 3);
      }
  if (!capturing && !statuses) list.signals.push_back(list_ran(q));  // replays would count lists no call enqueued
  gpu::Backend &be = gpu::backend();
  if (be.enqueue(q.stream, list)) {
    if (remote) net::ring_lost(q);
    return fail(MPI_ERR_OTHER, std::string("enqueuing the ") + (sends ? "send" : "receive") +
                                   " list on the stream failed: " + be.last_error());
  }
  if (statuses) {
    if (be.enqueue_host_call(q.stream, copy_statuses, statuses.get())) {
      // The list must still count as run, statuses or not.
      gpu::WorkList counted;
      counted.signals.push_back(list_ran(q));
      const std::string why = be.last_error();
      if (be.enqueue(q.stream, counted)) return fail(MPI_ERR_OTHER, "enqueuing a receive list's end failed: " + why);
      return fail(MPI_ERR_OTHER, "enqueuing the copy of the receives' statuses failed: " + why);
    }
    statuses.release();  // copy_statuses deletes it
  }
  if (captured_statuses) {
    if (be.enqueue_host_call(q.stream, copy_captured_statuses, captured_statuses.get()))
      return fail(MPI_ERR_OTHER, "capturing the copy of the receives' statuses failed: " + be.last_error());
    g_captured_statuses.push_back(std::move(captured_statuses));
  }
  // A chunked send is done with once its chunks' list ran (or, captured, is in the graph).
  auto chunks_follow = [&](const std::shared_ptr<Op> &op) {
    if (!sends || !op->chunked) return false;
    q.chunking.push_back(op);
    return true;
  };
  if (capturing) {
    for (const auto &op : ops)
      if (!chunks_follow(op)) finish_captured(*op);
    return ok();
  }
  ++q.lists;
  auto self = q.shared_from_this();
  for (const auto &op : ops) {
    note_user(*op->ctx, self, q.lists);
    if (chunks_follow(op)) continue;
    op->list = q.lists;
    q.in_lists.push_back(op);
  }
  g_busy.insert(self);
  return ok();
}

// Whether a send of `ops` goes through a mailbox a chunked send of q still holds (its chunks in no
// list yet): those must go first, or the later send would wait for them behind itself.
bool reuses_chunking_mailbox(const Queue &q, const std::vector<std::shared_ptr<Op>> &ops) {
  for (const auto &c : q.chunking)
    for (const auto &op : ops)
      if (op->ctx == c->ctx && op->peer == c->peer && op->channel == c->channel && op->use >= c->use + kMailboxes)
        return true;
  return false;
}


// Takes from q.waiting the sends (or receives) that go in one list, in program order, into `out`
// (emptied first): of each (context, peer, channel), messages of one round only (n = 8r .. 8r + 7,
// kMailboxes of them). A list holding messages n and n + kMailboxes would wait for its own end
// (n + kMailboxes reuses n's mailbox, which the receive of n frees); and rounds aligned on both
// sides keep one-way traffic of a channel from deadlocking: a send list's waits are for the previous
// round, which the receiver's lists take apart from any message of this round (with unaligned
// lists, sends [1..8] wait for the receive of 0, which a receive list [0..7] makes only once 1..7
// arrived). Captured lists take any kMailboxes consecutive messages: each replay moves them to
// later rounds the host does not count, so no alignment could hold there. An operation held back
// holds back the later ones of its channel. A receive from this rank itself waits for a list
// after the one holding its send, unless `force`. `limit`: only receives of these channels up to
// these message numbers.
void pick(Queue &q, bool sends, bool force, const ChannelNumbers *limit, std::vector<std::shared_ptr<Op>> &out) {
  thread_local std::vector<std::shared_ptr<Op>> rest;
  thread_local ChannelNumbers first_of, held;  // held: channels whose next message waits
  out.clear();
  rest.clear();
  first_of.clear();
  held.clear();
  for (auto &op : q.waiting) {
    const Key k = key_of(*op);
    const uint64_t *up_to = limit && !sends ? limit->find(k) : nullptr;
    if (op->send != sends || (limit && !sends && (!up_to || op->use > *up_to))) {
      rest.push_back(std::move(op));
      continue;
    }
    const uint64_t first = first_of.emplace(k, op->use);
    bool take = !held.find(k) && (op->captured ? op->use - first < kMailboxes : box_round(op->use) == box_round(first));
    if (take && !sends && !force && op->peer == op->ctx->rank) take = op->use < op->ctx->listed_self[op->channel];
    if (!take) {
      held.emplace(k, 0);
      rest.push_back(std::move(op));
      continue;
    }
    out.push_back(std::move(op));
  }
  q.waiting.swap(rest);
  rest.clear();
  if (sends)
    for (const auto &op : out)
      if (op->peer == op->ctx->rank) ++op->ctx->listed_self[op->channel];
}

// Every waiting send goes in lists now: one list per kMailboxes messages of the channel with the most.
Result emit_sends(Queue &q) {
  std::vector<std::shared_ptr<Op>> s;
  for (;;) {
    pick(q, true, false, nullptr, s);
    if (s.empty()) return ok();
    if (reuses_chunking_mailbox(q, s))
      if (Result r = send_chunks(q)) return r;
    if (Result r = enqueue_list(q, s, true)) return r;
  }
}

void set_error(Op &op, int cls, std::string msg) {
  op.error_class = cls;
  op.error = std::string(op.call) + peer_text(op) + ": " + msg;
}

// The checks of a finished receive: it arrived, it is the message the receive expected, it fit.
void finish(Op &op) {
  op.finished = true;
  if (op.send && op.chunked && op.record_host && op.record_host[0] != 1) {
    set_error(op, MPI_ERR_OTHER, "the message's chunks did not all go: a stream wait of its list ended early (the "
                                 "watchdog, MPIX_ST_WATCHDOG_MS)");
    gpu::WatchdogReport report;
    gpu::backend().take_watchdog_report(&report, op.ctx->id, nullptr);
  }
  if (!op.send && op.ctx) {
    const volatile uint64_t *rec = op.record_host;
    if (rec[0] != 1) {
      set_error(op, MPI_ERR_OTHER, "the message did not arrive: a stream wait of its list ended early (the watchdog, "
                                   "MPIX_ST_WATCHDOG_MS)");
      // This error tells the program: lists of the context enqueued from now on wait again
      // (work::fault_skips), as an epoch's do once its window's report is taken.
      gpu::WatchdogReport report;
      gpu::backend().take_watchdog_report(&report, op.ctx->id, nullptr);
    } else if (rec[1] != op.ident) {
      set_error(op, MPI_ERR_OTHER,
                "the message in its mailbox is tag " + std::to_string(static_cast<int>(rec[1] >> 32)) +
                    "'s: messages whose tags are equal modulo " + std::to_string(kChannels) +
                    " share a channel and must be received in the order they were sent");
    } else if (rec[3] > op.bytes) {
      set_error(op, MPI_ERR_TRUNCATE,
                "message of " + std::to_string(rec[3]) + " bytes is longer than the receive buffer (" +
                    std::to_string(op.bytes) + " bytes); nothing was written to the buffer");
    } else if (op.ctx->direct.mode == DirectMode::kRequire && rec[3] > op.ctx->slot_bytes && op.round_known &&
               moved_through_mailbox(*op.ctx, op.peer, box_index(op.channel, op.use), box_round(op.use))) {
      set_error(op, MPI_ERR_OTHER,
                "the message of " + std::to_string(rec[3]) + " bytes moved through the mailbox, not straight from "
                "the send buffer (MPIX_ST_P2P_DIRECT=require)");
    }
  }
  if (op.greq != MPI_REQUEST_NULL && !op.greq_completed) {
    op.greq_completed = true;
    PMPI_Grequest_complete(op.greq);
  }
}

void reap(Queue &q) {
  const uint64_t ran = lists_ran(q);
  while (!q.in_lists.empty() && q.in_lists.front()->list <= ran) {
    std::shared_ptr<Op> op = q.in_lists.front();
    q.in_lists.pop_front();
    if (!op->finished) finish(*op);
    if (op->stream_waited && op->error_class != MPI_SUCCESS) keep_error(q, fail(op->error_class, op->error));
  }
}

void pause(unsigned spin) {
  if (spin < 64) return;
  if (spin < 1024) {
    sched_yield();
    return;
  }
  std::this_thread::sleep_for(std::chrono::microseconds(20));
}

// MPI_Status's count word for MPI_BYTE: found by setting it.
int probe_count_offset() {
  MPI_Status a, b;
  std::memset(&a, 0, sizeof a);
  std::memset(&b, 0, sizeof b);
  const int magic = 0x5a17c3;
  PMPI_Status_set_elements(&b, MPI_BYTE, magic);
  for (size_t at = 0; at + sizeof(int) <= sizeof(MPI_Status); at += sizeof(int)) {
    int v = 0;
    std::memcpy(&v, reinterpret_cast<const char *>(&b) + at, sizeof v);
    if (v == magic) return static_cast<int>(at);
  }
  return 0;
}

int query_fn(void *extra, MPI_Status *status) {
  const Op &op = **static_cast<std::shared_ptr<Op> *>(extra);
  uint64_t bytes = 0;
  if (!op.send && op.ctx && op.error_class == MPI_SUCCESS && op.finished) bytes = op.record_host[3];
  PMPI_Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(bytes));
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = op.send ? MPI_UNDEFINED : op.peer;
  status->MPI_TAG = op.send ? MPI_UNDEFINED : op.ctx ? op.tag : MPI_ANY_TAG;
  if (!op.send && !op.ctx) status->MPI_SOURCE = MPI_PROC_NULL;
  // The interposed completion call reports the operation's error itself (naming the call) and
  // puts it in the statuses of multiple completions: the MPI sees success.
  status->MPI_ERROR = MPI_SUCCESS;
  return MPI_SUCCESS;
}

int free_fn(void *extra) {
  std::lock_guard<std::recursive_mutex> guard(lock());
  delete static_cast<std::shared_ptr<Op> *>(extra);
  return MPI_SUCCESS;
}

int cancel_fn(void *, int) { return MPI_SUCCESS; }  // a stream operation cannot be cancelled

// A derived datatype's pieces between op's buffer and the mailbox, packed there (pair_lists.h:
// the mailbox side is op.bytes of MPI_BYTE). Contiguous buffers keep none.
Result pieces_of(Op &op, const Context &c) {
  if (op.bytes == 0 || core::is_named(op.type)) return ok();
  core::TypeFacts f;
  if (Result r = core::type_facts(op.type, &f)) return fail(r.mpi_class, "the datatype " + r.message);
  if (f.lb == 0 && f.true_lb == 0 && f.extent == static_cast<int64_t>(f.size) &&
      f.true_extent == static_cast<int64_t>(f.size))
    return ok();
  // A receive of a derived type takes a message of at most its size through one mailbox (long
  // messages move in chunks into one piece only).
  if (!op.send && op.bytes > c.slot_bytes)
    return fail(MPI_ERR_UNSUPPORTED_OPERATION,
                "a receive of " + std::to_string(op.bytes) + " bytes of a derived datatype: messages are limited to " +
                    std::to_string(c.slot_bytes) + " bytes, a mailbox (MPIX_ST_P2P_SLOT_KIB)");
  const core::PairKey key{op.type, op.count, MPI_BYTE, static_cast<int>(op.bytes), !op.send};
  if (Result r = core::pair_list(key, &op.pairs)) return fail(r.mpi_class, "the datatype: " + r.message);
  return ok();
}

}  // namespace

Op::~Op() {
  if (!record || !queue) return;
  std::lock_guard<std::recursive_mutex> guard(lock());
  queue->free_records.emplace_back(record, record_host);
}

Queue::~Queue() {
  gpu::Backend &be = gpu::backend();
  for (gpu::HostMapped &m : record_chunks) be.free_host_mapped(&m);
  if (done.host) be.free_host_mapped(&done);
}

uint64_t lists_ran(const Queue &q) {
  return std::atomic_ref<uint64_t>(*static_cast<uint64_t *>(q.done.host)).load(std::memory_order_acquire);
}

std::recursive_mutex &lock() {
  static std::recursive_mutex mu;
  return mu;
}

Result make_queue(void *stream, bool user_queue, std::shared_ptr<Queue> *out) {
  auto q = std::make_shared<Queue>();
  q->stream = stream;
  q->user_queue = user_queue;
  gpu::Backend &be = gpu::backend();
  if (be.allocate_host_mapped(sizeof(uint64_t), &q->done))
    return fail(core::resource_error_class(), "the queue's progress word: " + be.last_error());
  *out = q;
  return ok();
}

Result queue_of_stream(void *stream, std::shared_ptr<Queue> *out) {
  auto it = g_stream_queues.find(stream);
  if (it != g_stream_queues.end()) {
    *out = it->second;
    return ok();
  }
  if (Result r = make_queue(stream, false, out)) return r;
  g_stream_queues[stream] = *out;
  return ok();
}

Result match(Op &op, bool capturing) {
  if (op.peer == MPI_PROC_NULL) return ok();
  if (Result r = context_of(op.comm, capturing, &op.ctx)) return r;
  Context &c = *op.ctx;
  if (c.local[op.peer] < 0 && !c.remote)
    return fail(MPI_ERR_UNSUPPORTED_OPERATION, "rank " + std::to_string(op.peer) + " is on another node: " + c.remote_why);
  if (c.local[op.peer] < 0 && capturing)
    return fail(MPI_ERR_UNSUPPORTED_OPERATION,
                "rank " + std::to_string(op.peer) +
                    " is on another node: messages between nodes cannot be captured into a graph yet (their "
                    "network operations are posted once, when the call is made)");
  if (Result r = pieces_of(op, c)) return r;
  if (op.send && op.bytes > c.slot_bytes) {
    if (op.pairs.count > 1)
      return fail(MPI_ERR_UNSUPPORTED_OPERATION,
                  "a message of " + std::to_string(op.bytes) + " bytes of a derived datatype in " +
                      std::to_string(op.pairs.count) + " pieces: such messages are limited to " +
                      std::to_string(c.slot_bytes) + " bytes, a mailbox (MPIX_ST_P2P_SLOT_KIB)");
    op.chunked = true;
    const int64_t at = op.pairs.count == 1 ? op.pairs.single.src : 0;
    if (c.local[op.peer] >= 0)  // direct pulls are node-local
      publish_source(c, op.peer, static_cast<const char *>(op.buf) + at, op.bytes, &op.source_key, &op.source_offset);
  }
  if (Result r = net::check_chunk_budget(op)) return r;
  op.channel = channel_of(op.tag);
  const size_t at = static_cast<size_t>(op.peer) * kChannels + op.channel;
  op.use = op.send ? c.sent[at]++ : c.received[at]++;
  op.ident = identity(op.tag, (op.send ? c.sent_of_tag : c.received_of_tag)[{op.peer, op.tag}]++);
  return ok();
}

Result add(Queue &q, const std::shared_ptr<Op> &op, bool started) {
  op->queue = q.shared_from_this();
  if (!op->ctx) {  // MPI_PROC_NULL: nothing to move
    op->started = true;
    finish(*op);
    return ok();
  }
  if (!op->send || op->chunked) {
    if (q.free_records.empty()) {
      gpu::HostMapped m;
      gpu::Backend &be = gpu::backend();
      if (be.allocate_host_mapped(kRecordsPerChunk * kHeaderBytes, &m))
        return fail(core::resource_error_class(), "status records: " + be.last_error());
      q.record_chunks.push_back(m);
      for (size_t i = 0; i < kRecordsPerChunk; ++i)
        q.free_records.emplace_back(reinterpret_cast<uint64_t *>(static_cast<char *>(m.device) + i * kHeaderBytes),
                                    reinterpret_cast<uint64_t *>(static_cast<char *>(m.host) + i * kHeaderBytes));
    }
    std::tie(op->record, op->record_host) = q.free_records.back();
    q.free_records.pop_back();
    std::memset(op->record_host, 0, kHeaderBytes);
  }
  op->started = started;
  (started ? q.waiting : q.unstarted).push_back(op);
  return ok();
}

Result start(Queue &q) {
  bool capturing = false;
  if (Result r = capture_state(q, q.unstarted, &capturing)) return r;
  if (Result r = capture_state(q, q.waiting, &capturing)) return r;
  for (auto &op : q.unstarted) {
    op->started = true;
    q.waiting.push_back(op);
  }
  q.unstarted.clear();
  return emit_sends(q);
}

Result send_now(Queue &q) {
  bool capturing = false;
  if (Result r = capture_state(q, q.waiting, &capturing)) return r;
  return emit_sends(q);
}

Result send_chunks(Queue &q) {
  if (q.chunking.empty()) return ok();
  std::vector<std::shared_ptr<Op>> c;
  c.swap(q.chunking);
  return enqueue_list(q, c, false);
}

Result flush(Queue &q, const std::vector<Op *> *only) {
  if (q.waiting.empty() && q.chunking.empty()) return ok();
  bool capturing = false;
  if (Result r = capture_state(q, q.waiting, &capturing)) return r;
  if (Result r = capture_state(q, q.chunking, &capturing)) return r;
  if (Result r = emit_sends(q)) return r;
  ChannelNumbers limit;
  if (only)
    for (const Op *op : *only) {
      if (op->send || op->list != 0 || !op->ctx) continue;
      uint64_t &up_to = limit.emplace(key_of(*op), op->use);
      up_to = std::max(up_to, op->use);
    }
  const ChannelNumbers *lim = only ? &limit : nullptr;
  std::vector<std::shared_ptr<Op>> r;
  while (!q.waiting.empty()) {
    pick(q, false, false, lim, r);
    // Only receives from this rank itself before their sends: the stream waits, as MPI would.
    if (r.empty()) pick(q, false, true, lim, r);
    if (r.empty()) break;
    // Chunked sends whose header went out move with the first receives, so that an exchange of
    // long messages never waits for itself.
    r.insert(r.end(), q.chunking.begin(), q.chunking.end());
    q.chunking.clear();
    if (Result e = enqueue_list(q, r, false)) return e;
  }
  return send_chunks(q);
}

Result status_after(const std::shared_ptr<Op> &held) {
  Op &op = *held;
  if (!op.user_status) return ok();
  Queue &q = *op.queue;
  if (op.captured)
    return fail(MPI_ERR_UNSUPPORTED_OPERATION,
                std::string(op.call) + peer_text(op) +
                    ": its status is asked for after an earlier wait put it in the captured graph; a captured "
                    "receive fills a status only where its first wait asks for it");
  gpu::Backend &be = gpu::backend();
  if (host_backend()) {
    gpu::WorkList list;
    list.window_id = op.ctx->id;
    list.ops.push_back(core::copy_item(status_count_word(op), op.record + 3, 4));
    list.signals.push_back(list_ran(q));
    if (be.enqueue(q.stream, list)) return fail(MPI_ERR_OTHER, "enqueuing a status copy failed: " + be.last_error());
  } else {
    auto *job = new StatusCopies{{{status_count_word(op), op.record_host + 3}},
                                 static_cast<uint64_t *>(q.done.host)};
    if (be.enqueue_host_call(q.stream, copy_statuses, job)) {
      delete job;
      return fail(MPI_ERR_OTHER, "enqueuing a status copy failed: " + be.last_error());
    }
  }
  ++q.lists;
  op.user_status = nullptr;
  op.list = q.lists;  // the record is read until this list ran: the operation stays until then
  q.in_lists.push_back(held);
  g_busy.insert(q.shared_from_this());
  return ok();
}

bool finished(Op &op) {
  if (op.finished) return true;
  if (!op.ctx) {
    finish(op);
    return true;
  }
  if (op.list == 0) return false;
  if (lists_ran(*op.queue) < op.list) return false;
  finish(op);
  return true;
}

void reap_all() {
  for (auto it = g_busy.begin(); it != g_busy.end();) {
    reap(**it);
    if ((*it)->in_lists.empty()) it = g_busy.erase(it);
    else ++it;
  }
}

Result wait_host(Op &op, const char *caller) {
  if (op.finished) return ok();
  if (op.list == 0 && op.ctx) {
    if (!op.started)
      return fail(MPI_ERR_REQUEST, std::string(caller) + ": the request's operation (" + op.call +
                                       ") was not started: call MPIX_Enqueue_start on its queue first");
    // A long send's chunks move only as its receiver takes them, which may wait for this rank's
    // own started receives (an exchange): they all go in lists with it, as MPI progresses them.
    const std::vector<Op *> only{&op};
    if (Result r = flush(*op.queue, op.chunked ? nullptr : &only)) return r;
  }
  for (unsigned spin = 0; !finished(op); ++spin) pause(spin);
  return ok();
}

Result free_queue(const std::shared_ptr<Queue> &q) {
  size_t receives = 0;
  for (const auto &op : q->waiting) receives += !op->send;
  if (!q->unstarted.empty())
    return fail(MPI_ERR_PENDING, std::to_string(q->unstarted.size()) +
                                     " operation(s) enqueued on the queue were never started: call "
                                     "MPIX_Enqueue_start and MPIX_Enqueue_wait before freeing it");
  if (receives > 0)
    return fail(MPI_ERR_PENDING, std::to_string(receives) +
                                     " started receive(s) on the queue were never waited for: call "
                                     "MPIX_Enqueue_wait (or complete their requests) before freeing it");
  if (!q->waiting.empty() || !q->chunking.empty())
    if (Result r = flush(*q)) return r;  // sends held back, chunks of sends: their lists go out now
  if (Result r = take_queue_error(*q)) return r;
  q->freed = true;
  return ok();
}

Result take_queue_error(Queue &q) {
  if (q.errors.empty()) return ok();
  Result r = q.errors.front();
  if (q.errors.size() > 1) r.message += " (and " + std::to_string(q.errors.size() - 1) + " more)";
  q.errors.clear();
  return r;
}

Result take_any_error() {
  reap_all();
  Result found;
  for (auto it = g_erred.begin(); it != g_erred.end();) {
    std::shared_ptr<Queue> q = it->lock();
    if (q && !found) found = take_queue_error(*q);
    if (!q || q->errors.empty()) it = g_erred.erase(it);
    else ++it;
  }
  return found;
}

Result make_request(const std::shared_ptr<Op> &op, MPI_Request *out) {
  auto *extra = new std::shared_ptr<Op>(op);
  if (PMPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, &op->greq) != MPI_SUCCESS) {
    delete extra;
    return fail(MPI_ERR_OTHER, "MPI_Grequest_start failed");
  }
  if (op->finished) {  // MPI_PROC_NULL
    op->greq_completed = true;
    PMPI_Grequest_complete(op->greq);
  }
  g_requests[op->greq] = op;
  ++g_live;
  *out = op->greq;
  return ok();
}

std::shared_ptr<Op> op_of(MPI_Request r) {
  if (r == MPI_REQUEST_NULL) return nullptr;
  auto it = g_requests.find(r);
  return it == g_requests.end() ? nullptr : it->second;
}

void forget_request(MPI_Request r) {
  if (g_requests.erase(r)) --g_live;
}

void request_freed(Op &op) {
  const bool finished_before = op.finished;
  op.stream_waited = true;  // from now on reap() hands its error to the queue
  // Nothing will wait for a chunked send now: its chunks go (errors go to the queue, as below).
  if (op.chunked && op.list == 0 && op.queue)
    if (Result r = send_chunks(*op.queue)) keep_error(*op.queue, r);
  finished(op);
  if (finished_before && op.error_class != MPI_SUCCESS && op.queue)
    keep_error(*op.queue, fail(op.error_class, op.error));
}

uint64_t live_requests() { return g_live.load(std::memory_order_relaxed); }

int status_count_offset() {
  static const int at = probe_count_offset();
  return at;
}

}  // namespace mpix::p2p
