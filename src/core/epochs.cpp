// The active-target epoch state machine, stream-triggered and host-driven (doc/design.md, The epoch
// protocol). Stream mode: each call becomes one work list on the stream; the host only computes, in
// program order, the flag values that signals will carry and waits expect. Host mode: the same data
// work runs at MPI_Win_complete, and post/complete notifications are zero-byte messages.
#include "epochs.h"

#include <chrono>
#include <thread>

#include "config.h"
#include "gone_peers.h"
#include "list_items.h"
#include "pair_lists.h"
#include "remote_epochs.h"
#include "window_setup.h"

namespace mpix::core {
namespace {

constexpr int kTagPost = 1;
constexpr int kTagComplete = 2;

const char *mode_name(EpochMode m) {
  return m == EpochMode::stream ? "stream-triggered" : m == EpochMode::host ? "host-driven" : "no";
}

// How error messages name an epoch kind's calls.
struct EpochNames {
  const char *kind, *opener;
  const char *host_open, *stream_open;    // how each mode opens it
  const char *host_close, *stream_close;  // and closes it
};
constexpr EpochNames kAccessNames{"an access", "MPI_Win_start", "MPI_Win_start without MPIX_MODE_STREAM",
                                  "MPIX_MODE_STREAM", "MPI_Win_complete", "MPIX_Win_complete_stream"};
constexpr EpochNames kExposureNames{"an exposure", "post", "MPI_Win_post", "MPIX_Win_post_stream", "MPI_Win_wait",
                                    "MPIX_Win_wait_stream"};

// A closing call must find an open epoch of its own mode.
Result check_closing(EpochMode open, bool stream_mode, const EpochNames &n) {
  const char *call = stream_mode ? n.stream_close : n.host_close;
  if (open == EpochMode::none)
    return fail(MPI_ERR_RMA_SYNC, std::string(call) + " without " + n.kind + " epoch (missing " + n.opener + ")");
  if (open != (stream_mode ? EpochMode::stream : EpochMode::host))
    return fail(MPI_ERR_RMA_SYNC, std::string("the epoch was opened ") + mode_name(open) + " (" +
                                      (stream_mode ? n.host_open : n.stream_open) + "): close it with " +
                                      (stream_mode ? n.host_close : n.stream_close) + ", not " + call);
  return ok();
}

Result translate_group(const Window &w, MPI_Group group, std::vector<int> *ranks) {
  if (group == MPI_GROUP_NULL) return fail(MPI_ERR_GROUP, "group is MPI_GROUP_NULL");
  int n = 0;
  if (PMPI_Group_size(group, &n) != MPI_SUCCESS) return fail(MPI_ERR_GROUP, "invalid group");
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = i;
  ranks->resize(n);
  if (n > 0 && PMPI_Group_translate_ranks(group, n, in.data(), w.group, ranks->data()) != MPI_SUCCESS)
    return fail(MPI_ERR_GROUP, "invalid group");
  // An MPI may build a group that names a process twice (MPICH 4.0's MPI_Group_incl does not check):
  // its epoch would count that peer's signals twice.
  std::vector<int> member_of(w.size, -1);
  for (int i = 0; i < n; ++i) {
    if ((*ranks)[i] == MPI_UNDEFINED)
      return fail(MPI_ERR_GROUP, "group member " + std::to_string(i) + " is not in the window's communicator");
    int &first = member_of[(*ranks)[i]];
    if (first >= 0)
      return fail(MPI_ERR_GROUP, "group members " + std::to_string(first) + " and " + std::to_string(i) +
                                     " are the same process (window rank " + std::to_string((*ranks)[i]) + ")");
    first = i;
    if (!w.peers[(*ranks)[i]].node_local && !w.remote)
      return fail(MPI_ERR_RANK, "window rank " + std::to_string((*ranks)[i]) +
                                    " is on another node, and the window has no inter-node transport");
  }
  return ok();
}

uint64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count());
}

// Completes host-mode notifications, turning a wait past MPIX_ST_WATCHDOG_MS into an error.
Result wait_requests(std::vector<MPI_Request> &reqs, const char *what) {
  if (reqs.empty()) return ok();
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    int done = 0;
    PMPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
    if (done) return ok();
    if (config().watchdog_ns && elapsed_ns(start) > config().watchdog_ns) {
      for (MPI_Request &r : reqs) {
        if (r == MPI_REQUEST_NULL) continue;
        PMPI_Cancel(&r);
        PMPI_Request_free(&r);
      }
      return fail(MPI_ERR_OTHER, std::string("watchdog: waited more than MPIX_ST_WATCHDOG_MS for ") + what);
    }
    std::this_thread::yield();
  }
}

// Drops completed notifications so the list stays short.
void reap_sends(std::vector<MPI_Request> &reqs) {
  if (reqs.empty()) return;
  int done = 0;
  PMPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
  if (done) reqs.clear();
}

Result notify(const Window &w, const std::vector<int> &peers, int tag, std::vector<MPI_Request> *reqs) {
  for (int p : peers) {
    reqs->push_back(MPI_REQUEST_NULL);
    PMPI_Isend(nullptr, 0, MPI_BYTE, p, tag, w.comm, &reqs->back());
  }
  return ok();
}

void receive_notifications(const Window &w, const std::vector<int> &peers, int tag, std::vector<MPI_Request> *reqs) {
  reqs->assign(peers.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < peers.size(); ++i)
    PMPI_Irecv(nullptr, 0, MPI_BYTE, peers[i], tag, w.comm, &(*reqs)[i]);
}

Result await(const Window &w, const std::vector<int> &peers, int tag, const char *what) {
  std::vector<MPI_Request> reqs;
  receive_notifications(w, peers, tag, &reqs);
  return wait_requests(reqs, what);
}

// Host mode: the receives of the origins' completion notifications, posted once per epoch (by the
// first MPI_Win_test or by MPI_Win_wait).
void expect_completions(Window &w) {
  ExposureEpoch &e = w.exposure;
  if (e.completes_posted) return;
  receive_notifications(w, e.origins, kTagComplete, &e.complete_recvs);
  e.completes_posted = true;
}

// Once every origin's completion notification arrived: staged data into the window, the post
// notifications' sends completed, and the epoch closed.
Result finish_host_exposure(Window &w) {
  ExposureEpoch &e = w.exposure;
  if (Result r = remote::wait_now(w, e.origins)) return r;
  if (Result r = wait_requests(e.post_sends, "post notifications to the origins")) return r;
  e = ExposureEpoch{};
  return ok();
}

// Names the window in watchdog reports and gives the list the watchdog's limit.
void stamp(gpu::WorkList &list, const Window &w) {
  list.window_id = w.id;
  list.watchdog_ns = config().watchdog_ns;
}

// While the host knows every cursor's value, cursor-relative waits and stored signals become
// absolute values, so a backend can wait for them outside its kernels (stream memory operations on
// a device shared without MPS: gpu::Backend::enqueue); the kernels read no cursor for them. The
// list's advances are counted here; a captured list ends the counting for the window's lifetime.
void resolve_cursors(Window &w, gpu::WorkList &list, bool captured) {
  if (captured) w.cursors_counted = false;
  if (!w.cursors_counted) return;
  if (w.cursor_counts.empty()) w.cursor_counts.assign(4 * static_cast<size_t>(w.size), 0);
  const uint64_t *first = w.cursor(Window::kPostsSent, 0);
  auto count_of = [&](uint64_t address) -> uint64_t * {
    const auto *word = reinterpret_cast<const uint64_t *>(address);
    return word >= first && word < first + w.cursor_counts.size() ? &w.cursor_counts[word - first] : nullptr;
  };
  for (auto *items : {&list.waits, &list.signals, &list.trailing_waits})
    for (work::Item &it : *items) {
      const uint64_t *count = (it.flags & work::kCursor) ? count_of(it.bytes) : nullptr;
      if (!count) continue;  // stays relative: the kernels keep every cursor, counted or not
      it.b += *count;
      it.flags &= ~work::kCursor;
      it.bytes = 0;
    }
  for (const work::Item &it : list.signals)
    if (it.flags & work::kSignalAdd)
      if (uint64_t *count = count_of(it.a)) *count += it.b;
}

// One stream operation; its last signal counts it as retired for MPI_Win_free. A list captured
// into a graph runs only when (and as often as) the graph is replayed: it is not counted, and the
// user frees such graphs before the window (README, "Graph capture").
Result enqueue(Window &w, void *stream, gpu::WorkList &list, bool captured) {
  stamp(list, w);
  list.captured = captured;
  resolve_cursors(w, list, captured);
  place_pair_lists_on_device(list, captured);
  if (!captured) {
    work::Item retire = signal_item(w.retire_slot(), 1);
    retire.flags = work::kSignalAdd;
    list.signals.push_back(retire);
  }
  gpu::Backend &be = gpu::backend();
  if (be.enqueue(stream, list)) {
    w.cursors_counted = false;  // the list's advances may or may not run
    return fail(MPI_ERR_OTHER, std::string("enqueue on the stream failed: ") + be.last_error());
  }
  if (!captured) ++w.stream_lists;
  return ok();
}

// Whether `stream` is being captured into a graph.
Result capturing(void *stream, bool *yes) {
  gpu::Backend &be = gpu::backend();
  if (be.capture_status(stream, yes))
    return fail(MPI_ERR_OTHER, std::string("cannot tell whether the stream is capturing: ") + be.last_error());
  return ok();
}

// Inter-node work is one-shot (triggered operations posted now, budgets reserved now): a replay
// could not re-arm it, so captured epochs must be node-local.
Result refuse_capture(const char *call, const Window &w, int peer, const char *why) {
  return fail(MPI_ERR_UNSUPPORTED_OPERATION,
              std::string(call) + " on a stream that is being captured into a graph: window " + std::to_string(w.id) +
                  ", window rank " + std::to_string(peer) + " " + why +
                  "; inter-node epochs post one-shot triggered operations that a replay cannot re-arm, so "
                  "enqueue this epoch outside the capture");
}

// Line puts (work_items.h) in a window with line areas and no inter-node part, between node-local
// peers whose MPIX_ST_LINE_PUT_BYTES is not 0 (exchanged at window creation, so ranks that
// disagree never wait for lines that do not come).
bool lines_in(const Window &w) { return Window::has_line_areas(w.size) && !w.remote; }
// Whether this rank's complete to `target` may travel as lines: the target takes them, and this
// process stores to its flag area directly.
bool lines_reach(const Window &w, int target) {
  const Peer &p = w.peers[target];
  return lines_in(w) && p.node_local && p.takes_lines && p.flags.base && !p.flags.cma_pid;
}
// Whether this rank's wait for `origin` takes lines (the origin decides at each epoch).
bool lines_from(const Window &w, int origin) {
  return lines_in(w) && w.peers[w.rank].takes_lines && w.peers[origin].node_local;
}

// The complete's puts that travel as lines: each becomes a kPutLines item and its tag, and its
// target gets no complete flag store (`lined[t]`).
void use_line_puts(Window &w, gpu::WorkList &list, std::vector<uint8_t> *lined) {
  AccessEpoch &a = w.access;
  lined->assign(w.size, 0);
  if (a.line_put.empty()) return;
  thread_local std::vector<int> target_of;  // enqueue is the hot path: no allocation once warm
  target_of.assign(a.ops.size(), -1);
  bool any = false;
  for (int t : a.targets)
    if (a.line_put[t] >= 0 && !a.via_fabric[t] && lines_reach(w, t)) {
      target_of[a.line_put[t]] = t;
      (*lined)[t] = any = 1;
    }
  if (!any) return;
  list.ops.clear();
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const int t = target_of[i];
    if (t < 0) {
      list.ops.push_back(a.ops[i]);
      continue;
    }
    const work::Item &put = a.ops[i];
    const uint64_t offset = put.a - reinterpret_cast<uint64_t>(w.peers[t].data.base);
    work::Item two[2];
    line_put_items(put, w.line_area(w.peers[t].flags.base, w.rank), offset, w.cursor(Window::kCompletesSent, t), two);
    list.ops.insert(list.ops.end(), two, two + 2);
  }
}

// An exposure epoch (its post or its wait) can be captured only if every origin signals it by a
// plain store: a node-local peer, into a window that does not mirror itself to the network.
Result refuse_captured_origins(const char *call, const Window &w, const std::vector<int> &origins) {
  for (int o : origins) {
    if (!w.peers[o].node_local) return refuse_capture(call, w, o, "is on another node");
    if (w.remote && w.remote->mirrors)
      return refuse_capture(call, w, o, "is an origin of a window that mirrors itself to the network");
  }
  return ok();
}

// Active-target epochs do not begin inside the MPI's lock epochs (nor lock epochs inside them:
// before_mpi_epoch); RMA calls there go to the MPI.
Result inside_lock_epoch(const Window &w, const char *call) {
  return fail(MPI_ERR_RMA_SYNC, std::string(call) + " inside a lock epoch: window " + std::to_string(w.id) +
                                    " has a lock epoch open at this rank (MPI_Win_lock or MPI_Win_lock_all); end it "
                                    "with MPI_Win_unlock or MPI_Win_unlock_all before an active-target epoch");
}

}  // namespace

std::string open_epochs(const Window &w) {
  std::vector<std::string> open, closers;
  if (w.access.mode != EpochMode::none) {
    const bool stream = w.access.mode == EpochMode::stream;
    open.push_back(stream ? "a stream access epoch" : "a host-driven access epoch");
    closers.push_back(stream ? "MPIX_Win_complete_stream" : "MPI_Win_complete");
  }
  if (w.exposure.mode != EpochMode::none) {
    const bool stream = w.exposure.mode == EpochMode::stream;
    open.push_back(stream ? "a stream exposure epoch" : "a host-driven exposure epoch");
    closers.push_back(stream ? "MPIX_Win_wait_stream" : "MPI_Win_wait");
  }
  if (open.empty()) return "";
  if (open.size() == 1) return open[0] + " open; close it with " + closers[0];
  return open[0] + " and " + open[1] + " open; close them with " + closers[0] + " and " + closers[1];
}

// Messages stay within 255 characters (Open MPI's MPI_MAX_ERROR_STRING) with the longest call
// names, so the closing call they name is never cut off.
Result before_mpi_epoch(Window &w, const char *call) {
  if (const std::string open = open_epochs(w); !open.empty())
    return fail(MPI_ERR_RMA_SYNC, std::string(call) + ": window " + std::to_string(w.id) + " has " + open +
                                      " first (a fence or lock epoch does not begin inside an active-target epoch)");
  // Epochs closed on the host may still be queued on their streams: the MPI's epoch comes after
  // them, as the program ordered. (Replays of captured graphs are not counted here: the program
  // synchronises their streams itself.)
  gpu::Backend &be = gpu::backend();
  if (be.read_flag(w.retire_slot()) >= w.stream_lists) return ok();
  if (stream_work_drained(w.retire_slot(), w.stream_lists)) return ok();
  return fail(MPI_ERR_OTHER, std::string("watchdog: ") + call + " waited more than MPIX_ST_WATCHDOG_MS for " +
                                 std::to_string(w.stream_lists - be.read_flag(w.retire_slot())) +
                                 " stream operations of window " + std::to_string(w.id) +
                                 " (its closed stream epochs, which run first); does their stream wait for "
                                 "something done after " + call + "?");
}

Result check_lock_call(const Window &w, const char *call) {
  if (w.passive_epochs > 0) return ok();
  const std::string open = open_epochs(w);
  if (open.empty()) return ok();
  return fail(MPI_ERR_RMA_SYNC, std::string(call) + " belongs to lock epochs; window " + std::to_string(w.id) +
                                    " has none open but " + open + ", which complete their operations");
}

// An epoch with a peer a watchdog report found dead could only wait out the watchdog again.
Result refuse_gone_peers(const Window &w, const std::vector<int> &peers, const char *call) {
  const std::string gone = gone_peer_among(w, peers);
  if (gone.empty()) return ok();
  return fail(MPI_ERR_OTHER, std::string(call) + ": " + gone + " (a watchdog report found it); no epoch with it can "
                                                             "complete");
}

Result post(Window &w, MPI_Group group, int assert_bits, void *stream, bool stream_mode) {
  if (w.exposure.mode != EpochMode::none)
    return fail(MPI_ERR_RMA_SYNC, "post while a previous exposure epoch is still open (missing wait)");
  if (w.passive_epochs > 0)
    return inside_lock_epoch(w, stream_mode ? "MPIX_Win_post_stream" : "MPI_Win_post");
  std::vector<int> origins;
  if (Result r = translate_group(w, group, &origins)) return r;
  if (Result r = refuse_gone_peers(w, origins, stream_mode ? "MPIX_Win_post_stream" : "MPI_Win_post")) return r;
  ExposureEpoch &e = w.exposure;
  e.assert_bits = assert_bits;
  e.post_sends.clear();
  if (stream_mode) {
    bool captured = false;
    if (Result r = capturing(stream, &captured)) return r;
    if (captured)
      if (Result r = refuse_captured_origins("MPIX_Win_post_stream", w, origins)) return r;
    thread_local gpu::WorkList list;
    list.clear();
    remote::mirror(w, origins, list);
    std::vector<int> remote_origins;
    for (int o : origins) {
      if (w.peers[o].node_local) {
        uint64_t *sent = w.cursor(Window::kPostsSent, o);
        list.signals.push_back(signal_next(w.post_flag_at(o), sent));
        list.signals.push_back(advance(sent));
      } else {
        remote_origins.push_back(o);  // the network adds one to its post slot
      }
    }
    Result r = remote::post(w, remote_origins, list);
    if (!r) r = enqueue(w, stream, list, captured);
    if (r) return r;
  } else {
    if (Result r = remote::mirror_now(w, origins)) return r;
    // NOCHECK is given on a post exactly when its matching starts give it: no notification.
    if (!(assert_bits & MPI_MODE_NOCHECK)) notify(w, origins, kTagPost, &e.post_sends);
  }
  e.mode = stream_mode ? EpochMode::stream : EpochMode::host;
  e.origins = std::move(origins);
  return ok();
}

Result start(Window &w, MPI_Group group, int assert_bits) {
  if (w.access.mode != EpochMode::none)
    return fail(MPI_ERR_RMA_SYNC, "MPI_Win_start while a previous access epoch is still open (missing complete)");
  // A fence only opens an epoch if RMA calls follow it, so only lock epochs are in the way here.
  if (w.passive_epochs > 0) return inside_lock_epoch(w, "MPI_Win_start");
  std::vector<int> targets;
  if (Result r = translate_group(w, group, &targets)) return r;
  if (Result r = refuse_gone_peers(w, targets, "MPI_Win_start")) return r;
  AccessEpoch &a = w.access;
  const bool stream_mode = assert_bits & kModeStream;
  a.mode = stream_mode ? EpochMode::stream : EpochMode::host;
  a.assert_bits = assert_bits;
  a.in_group.assign(w.size, 0);
  a.via_fabric.assign(w.size, 0);
  a.fabric_ranges.assign(w.size, 0);
  a.line_put.assign(stream_mode && Window::has_line_areas(w.size) ? w.size : 0, AccessEpoch::kNoLinePut);
  for (int t : targets) {
    a.in_group[t] = 1;
    a.via_fabric[t] = w.completes_via_fabric(t);
  }
  a.targets = std::move(targets);
  a.ops.clear();
  a.remote_ops.clear();
  a.fabric_ops = 0;
  return ok();
}

Result complete(Window &w, void *stream, bool stream_mode) {
  AccessEpoch &a = w.access;
  if (Result r = check_closing(a.mode, stream_mode, kAccessNames)) return r;
  const bool nocheck = a.assert_bits & MPI_MODE_NOCHECK;
  thread_local gpu::WorkList list;
  list.clear();
  list.ops = a.ops;
  if (stream_mode) {
    bool captured = false;
    if (Result r = capturing(stream, &captured)) return r;
    if (captured) {
      for (int t : a.targets)
        if (a.via_fabric[t]) return refuse_capture("MPIX_Win_complete_stream", w, t, "is reached through the network");
      if (!a.remote_ops.empty())
        return refuse_capture("MPIX_Win_complete_stream", w, a.remote_ops.front().target,
                              "is the target of an operation that goes through the network");
    }
    thread_local std::vector<uint8_t> lined;
    use_line_puts(w, list, &lined);
    std::vector<int> remote_targets;
    for (int t : a.targets) {
      // MPIX_Win_post_stream has no assert argument, so the target always signals: a NOCHECK
      // epoch still counts the post (it just does not wait), keeping later epochs in step.
      uint64_t *posts = w.cursor(Window::kPostsExpected, t);
      if (!nocheck) list.waits.push_back(wait_next(w.post_flag_from(t), posts, t, work::kWaitPost));
      list.signals.push_back(advance(posts));
      // Every complete counts, whichever way it travels: an epoch whose accumulate goes through
      // the network signals by a network add to the same slot later local stores continue.
      uint64_t *sent = w.cursor(Window::kCompletesSent, t);
      if (a.via_fabric[t]) remote_targets.push_back(t);  // the network adds one to its complete slot
      else if (!lined[t]) list.signals.push_back(signal_next(w.complete_flag_at(t), sent));  // lines signal themselves
      list.signals.push_back(advance(sent));
    }
    Result r = remote::complete(w, remote_targets, list);
    if (!r) r = enqueue(w, stream, list, captured);
    if (r) return r;
  } else {
    if (!nocheck)
      if (Result r = await(w, a.targets, kTagPost, "the targets' MPI_Win_post")) return r;
    stamp(list, w);
    place_pair_lists_on_device(list, false);
    gpu::Backend &be = gpu::backend();
    if (!list.ops.empty() && be.execute(list))
      return fail(MPI_ERR_OTHER, std::string("RMA data transfer failed: ") + be.last_error());
    if (w.remote)
      if (Result r = remote::complete_now(w)) return r;
    reap_sends(w.complete_sends);
    notify(w, a.targets, kTagComplete, &w.complete_sends);
  }
  a = AccessEpoch{};
  return ok();
}

Result wait(Window &w, void *stream, bool stream_mode) {
  ExposureEpoch &e = w.exposure;
  if (Result r = check_closing(e.mode, stream_mode, kExposureNames)) return r;
  if (stream_mode) {
    bool captured = false;
    if (Result r = capturing(stream, &captured)) return r;
    if (captured)
      if (Result r = refuse_captured_origins("MPIX_Win_wait_stream", w, e.origins)) return r;
    thread_local gpu::WorkList list;
    list.clear();
    for (int o : e.origins) {
      uint64_t *expected = w.cursor(Window::kCompletesExpected, o);
      const work::Item wait = wait_next(w.complete_flag_from(o), expected, o, work::kWaitComplete);
      if (lines_from(w, o)) {  // the origin may put lines instead of storing the flag
        work::Item two[2];
        wait_lines_items(wait, w.line_area(w.flags, o), w.base, w.bytes, two);
        list.waits.insert(list.waits.end(), two, two + 2);
      } else {
        list.waits.push_back(wait);
      }
      list.signals.push_back(advance(expected));
    }
    remote::wait(w, e.origins, list);
    if (Result r = enqueue(w, stream, list, captured)) return r;
  } else {
    expect_completions(w);
    if (Result r = wait_requests(e.complete_recvs, "the origins' MPI_Win_complete")) {
      e.completes_posted = false;  // the watchdog cancelled them: a later call posts them again
      return r;
    }
    return finish_host_exposure(w);
  }
  e = ExposureEpoch{};
  return ok();
}

Result test(Window &w, int *flag) {
  ExposureEpoch &e = w.exposure;
  *flag = 0;
  EpochNames names = kExposureNames;
  names.host_close = "MPI_Win_test";
  if (Result r = check_closing(e.mode, false, names)) return r;
  expect_completions(w);
  int done = 1;
  if (!e.complete_recvs.empty())
    PMPI_Testall(static_cast<int>(e.complete_recvs.size()), e.complete_recvs.data(), &done, MPI_STATUSES_IGNORE);
  if (!done) return ok();
  if (Result r = finish_host_exposure(w)) return r;
  *flag = 1;
  return ok();
}

Result drain_notifications(Window &w) {
  if (Result r = wait_requests(w.complete_sends, "completion notifications to the targets")) return r;
  w.complete_sends.clear();
  return ok();
}

// For a report: whether the peer waited for is a process on this host that no longer runs.
std::string peer_state(uint32_t window_id, int peer) {
  const Window *w = find_window_by_id(window_id);
  if (!w || peer < 0 || peer >= w->size || peer == w->rank || !w->peers[peer].node_local) return "";
  return process_gone(w->peers[peer].pid) ? "; " + note_gone_peer(*w, peer) : "";
}

// For a report on a wait for a peer on another node, or for the network's completion of this
// rank's own operations (a wait that names the rank itself): this rank's side of the network path
// (a doorbell not rung or not forwarded, a signal not completed here, rule out this side).
std::string network_state_of(uint32_t window_id, int peer) {
  Window *w = find_window_by_id(window_id);
  if (!w || peer < 0 || peer >= w->size) return "";
  if (w->peers[peer].node_local && !(peer == w->rank && w->remote)) return "";
  const std::string state = remote::network_state(*w);
  return state.empty() ? "" : "; on this rank: " + state;
}

Result take_watchdog_error(uint32_t window_id, const void *stream) {
  gpu::WatchdogReport rep;
  if (!gpu::backend().take_watchdog_report(&rep, window_id, stream)) return ok();
  if (rep.reason == work::kFreedWindow)
    return fail(MPI_ERR_WIN, "a graph holding captured stream work of window " + std::to_string(rep.window_id) +
                                 " (or of a communicator's two-sided messages) was replayed after MPI_Win_free "
                                 "(MPI_Comm_free) of it; the replayed work did nothing (free such graphs first)");
  if (rep.reason == work::kWaitCollective)
    return fail(MPI_ERR_OTHER, "watchdog: a stream collective (communicator " + std::to_string(rep.window_id) +
                                   ") gave up after " + std::to_string(config().watchdog_ns / 1000000) +
                                   " ms waiting for round " + std::to_string(rep.expected) + " from rank " +
                                   std::to_string(rep.peer) + " (the flag holds " + std::to_string(rep.observed) +
                                   "); the rest of the call was skipped, its results are undefined");
  // Most telling first: Open MPI's MPI_Error_string keeps 255 characters.
  return fail(MPI_ERR_OTHER, "watchdog: a stream wait on window " + std::to_string(rep.window_id) + " for " +
                                 (rep.reason == work::kWaitPost ? "post" : "complete") + " #" +
                                 std::to_string(rep.expected) + " from window rank " + std::to_string(rep.peer) +
                                 (rep.after_fault ? std::string(" ended at once behind an earlier report")
                                                  : " gave up after " + std::to_string(config().watchdog_ns / 1000000) +
                                                        " ms") +
                                 " (flag " +
                                 std::to_string(rep.observed) + ")" + peer_state(rep.window_id, rep.peer) +
                                 network_state_of(rep.window_id, rep.peer) + "; its data and signals were skipped" +
                                 (rep.more ? " (and " + std::to_string(rep.more) +
                                                 " later epochs of the window ended at once behind it)"
                                           : ""));
}

}  // namespace mpix::core
