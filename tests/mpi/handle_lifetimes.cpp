// Lifetimes of the library's handles (host backend): host streams, host graphs and MPICH-spelled
// MPIX_Stream objects used after they were destroyed, destroyed twice, destroyed while a capture
// is open or work is queued, and destroyed or synchronised from a task running on the stream
// itself. Every refused call must give its error class through MPI_COMM_SELF's error handler
// (counted here by a handler of the test's own) with a message naming the call, never a crash
// or a hang; handle values are never handed out again, so a stale handle cannot reach a newer
// object. Where the sequence is legal the data is checked (tasks run, graph replays count).
//   --only=NAME  runs one section (names: see main)
#include <atomic>
#include <set>
#include <thread>

#include "misuse_common.h"

using namespace mt;

namespace {

std::atomic<int> g_handler_calls{0};

void count_errors(MPI_Comm *, int *, ...) { ++g_handler_calls; }

// The call must fail with class `cls`, a message naming `call` and containing `part`, and go through
// MPI_COMM_SELF's error handler exactly once.
struct Refusal {
  int before;
  Refusal() : before(g_handler_calls.load()) {}
  void check(int rc, int cls, const char *call, const char *part, const char *what, const char *file, int line) const {
    const std::string m = mu::expect_at(rc, cls, part, what, file, line);
    if (rc != MPI_SUCCESS && !contains(m, call)) report(file, line, "%s: message \"%s\" does not name %s", what, m.c_str(), call);
    const int calls = g_handler_calls.load() - before;
    if (rc != MPI_SUCCESS && calls != 1)
      report(file, line, "%s: MPI_COMM_SELF's error handler ran %d times (expected once)", what, calls);
  }
};
#define REFUSED(expr, cls, call, part) Refusal().check((expr), (cls), (call), (part), #expr, __FILE__, __LINE__)

MPIX_Host_stream make_stream() {
  MPIX_Host_stream s = nullptr;
  MT_OK(MPIX_Host_stream_create(&s));
  return s;
}

void add_one(void *p) { static_cast<std::atomic<int> *>(p)->fetch_add(1); }

// ---- host graphs ----------------------------------------------------------------------------

void graphs() {
  g_context = "host graphs";
  MPIX_Host_stream s = make_stream();
  std::atomic<int> ran{0};
  MT_OK(MPIX_Host_stream_begin_capture(s));
  MT_OK(MPIX_Host_stream_enqueue(s, add_one, &ran));
  MPIX_Host_graph g = nullptr;
  MT_OK(MPIX_Host_stream_end_capture(s, &g));
  for (int i = 0; i < 3; ++i) MT_OK(MPIX_Host_graph_launch(g, s));
  MT_OK(MPIX_Host_stream_synchronize(s));
  MT_CHECKF(ran == 3, "three replays ran the captured task %d times", ran.load());
  MT_OK(MPIX_Host_graph_destroy(g));
  // Destroyed twice, launched after destroy: refused, nothing runs.
  REFUSED(MPIX_Host_graph_destroy(g), MPI_ERR_ARG, "MPIX_Host_graph_destroy", "destroyed");
  REFUSED(MPIX_Host_graph_launch(g, s), MPI_ERR_ARG, "MPIX_Host_graph_launch", "destroyed");
  MT_OK(MPIX_Host_stream_synchronize(s));
  MT_CHECKF(ran == 3, "a launch of a destroyed graph ran %d tasks", ran.load() - 3);
  // A pointer that never was a graph, and NULL.
  int not_a_graph = 0;
  REFUSED(MPIX_Host_graph_launch(reinterpret_cast<MPIX_Host_graph>(&not_a_graph), s), MPI_ERR_ARG,
          "MPIX_Host_graph_launch", "never created");
  REFUSED(MPIX_Host_graph_destroy(reinterpret_cast<MPIX_Host_graph>(&not_a_graph)), MPI_ERR_ARG,
          "MPIX_Host_graph_destroy", "never created");
  REFUSED(MPIX_Host_graph_destroy(nullptr), MPI_ERR_ARG, "MPIX_Host_graph_destroy", "NULL");
  // A graph outlives the stream it was captured on, and runs on another one.
  MPIX_Host_stream t = make_stream();
  MT_OK(MPIX_Host_stream_begin_capture(t));
  MT_OK(MPIX_Host_stream_enqueue(t, add_one, &ran));
  MPIX_Host_graph g2 = nullptr;
  MT_OK(MPIX_Host_stream_end_capture(t, &g2));
  MT_OK(MPIX_Host_stream_destroy(t));
  MT_OK(MPIX_Host_graph_launch(g2, s));
  REFUSED(MPIX_Host_graph_launch(g2, t), MPI_ERR_ARG, "MPIX_Host_graph_launch", "destroyed");
  MT_OK(MPIX_Host_stream_synchronize(s));
  MT_CHECKF(ran == 4, "the graph of a destroyed stream ran %d times on another (expected 1)", ran.load() - 3);
  // Destroying a graph whose launch is still queued: the launch runs.
  std::atomic<bool> gate{false};
  MT_OK(MPIX_Host_stream_enqueue(
      s, [](void *p) { while (!static_cast<std::atomic<bool> *>(p)->load()) std::this_thread::yield(); }, &gate));
  MT_OK(MPIX_Host_graph_launch(g2, s));
  MT_OK(MPIX_Host_graph_destroy(g2));
  gate = true;
  MT_OK(MPIX_Host_stream_synchronize(s));
  MT_CHECKF(ran == 5, "a launch queued before its graph was destroyed ran %d tasks (expected 1)", ran.load() - 4);
  // Handle values are not handed out again: 200 graphs made and destroyed, each old handle refused.
  std::set<MPIX_Host_graph> seen;
  std::vector<MPIX_Host_graph> old;
  for (int i = 0; i < 200; ++i) {
    MT_OK(MPIX_Host_stream_begin_capture(s));
    MPIX_Host_graph h = nullptr;
    MT_OK(MPIX_Host_stream_end_capture(s, &h));
    MT_CHECKF(seen.insert(h).second, "graph handle %p handed out twice", static_cast<void *>(h));
    MT_OK(MPIX_Host_graph_destroy(h));
    old.push_back(h);
  }
  for (MPIX_Host_graph h : old) REFUSED(MPIX_Host_graph_destroy(h), MPI_ERR_ARG, "MPIX_Host_graph_destroy", "destroyed");
  MT_OK(MPIX_Host_stream_destroy(s));
}

// ---- host streams ---------------------------------------------------------------------------

void streams_after_destroy() {
  g_context = "host streams after destroy";
  MPIX_Host_stream gone = make_stream();
  MT_OK(MPIX_Host_stream_destroy(gone));
  MPIX_Host_stream s = make_stream();
  REFUSED(MPIX_Host_stream_destroy(gone), MPI_ERR_ARG, "MPIX_Host_stream_destroy", "destroyed");
  REFUSED(MPIX_Host_stream_enqueue(gone, add_one, nullptr), MPI_ERR_ARG, "MPIX_Host_stream_enqueue", "destroyed");
  REFUSED(MPIX_Host_stream_synchronize(gone), MPI_ERR_ARG, "MPIX_Host_stream_synchronize", "destroyed");
  REFUSED(MPIX_Host_stream_begin_capture(gone), MPI_ERR_ARG, "MPIX_Host_stream_begin_capture", "destroyed");
  MPIX_Host_graph g = nullptr;
  REFUSED(MPIX_Host_stream_end_capture(gone, &g), MPI_ERR_ARG, "MPIX_Host_stream_end_capture", "destroyed");
  MT_CHECK(g == nullptr);
  // A graph launched on a destroyed stream.
  std::atomic<int> ran{0};
  MT_OK(MPIX_Host_stream_begin_capture(s));
  MT_OK(MPIX_Host_stream_enqueue(s, add_one, &ran));
  MT_OK(MPIX_Host_stream_end_capture(s, &g));
  REFUSED(MPIX_Host_graph_launch(g, gone), MPI_ERR_ARG, "MPIX_Host_graph_launch", "destroyed");
  MT_OK(MPIX_Host_graph_launch(g, s));
  MT_OK(MPIX_Host_stream_synchronize(s));
  MT_CHECKF(ran == 1, "the captured task ran %d times (expected 1)", ran.load());
  MT_OK(MPIX_Host_graph_destroy(g));
  // A stray pointer.
  int not_a_stream = 0;
  auto *stray = reinterpret_cast<MPIX_Host_stream>(&not_a_stream);
  REFUSED(MPIX_Host_stream_begin_capture(stray), MPI_ERR_ARG, "MPIX_Host_stream_begin_capture", "never created");
  REFUSED(MPIX_Host_stream_destroy(stray), MPI_ERR_ARG, "MPIX_Host_stream_destroy", "never created");
  // Handle values are not handed out again: 200 streams made and destroyed, each old handle refused
  // while the new ones work.
  std::set<MPIX_Host_stream> seen{s, gone};
  std::vector<MPIX_Host_stream> old{gone};
  for (int i = 0; i < 200; ++i) {
    MPIX_Host_stream h = make_stream();
    MT_CHECKF(seen.insert(h).second, "stream handle %p handed out twice", static_cast<void *>(h));
    MT_OK(MPIX_Host_stream_enqueue(h, add_one, &ran));
    MT_OK(MPIX_Host_stream_destroy(h));
    old.push_back(h);
  }
  MT_CHECKF(ran == 201, "tasks on 200 streams destroyed right after: %d ran (expected 200)", ran.load() - 1);
  for (MPIX_Host_stream h : old)
    REFUSED(MPIX_Host_stream_synchronize(h), MPI_ERR_ARG, "MPIX_Host_stream_synchronize", "destroyed");
  MT_OK(MPIX_Host_stream_destroy(s));
}

void streams_in_capture() {
  g_context = "host stream destroyed with a capture open";
  MPIX_Host_stream s = make_stream();
  std::atomic<int> ran{0};
  MT_OK(MPIX_Host_stream_begin_capture(s));
  MT_OK(MPIX_Host_stream_enqueue(s, add_one, &ran));
  REFUSED(MPIX_Host_stream_destroy(s), MPI_ERR_OTHER, "MPIX_Host_stream_destroy", "captur");
  REFUSED(MPIX_Host_stream_begin_capture(s), MPI_ERR_OTHER, "MPIX_Host_stream_begin_capture", "already");
  // The stream is still there and its capture still open.
  MPIX_Host_graph g = nullptr;
  MT_OK(MPIX_Host_stream_end_capture(s, &g));
  MT_OK(MPIX_Host_graph_launch(g, s));
  MT_OK(MPIX_Host_graph_launch(g, s));
  MT_OK(MPIX_Host_stream_synchronize(s));
  MT_CHECKF(ran == 2, "two replays ran %d tasks", ran.load());
  MT_OK(MPIX_Host_graph_destroy(g));
  MT_OK(MPIX_Host_stream_destroy(s));
}

struct OwnTask {
  MPIX_Host_stream s = nullptr;
  int destroy_rc = MPI_SUCCESS, sync_rc = MPI_SUCCESS, enqueue_rc = -1;
  // Read at once: two errors of one class share a code, whose message is the latest one's.
  std::string destroy_msg, sync_msg;
  std::atomic<int> ran{0};
};

void streams_own_task() {
  g_context = "host stream destroyed or synchronised from its own task";
  OwnTask t;
  t.s = make_stream();
  const int before = g_handler_calls.load();
  MT_OK(MPIX_Host_stream_enqueue(
      t.s,
      [](void *p) {
        auto *o = static_cast<OwnTask *>(p);
        o->destroy_rc = MPIX_Host_stream_destroy(o->s);
        o->destroy_msg = error_string(o->destroy_rc);
        o->sync_rc = MPIX_Host_stream_synchronize(o->s);
        o->sync_msg = error_string(o->sync_rc);
        o->enqueue_rc = MPIX_Host_stream_enqueue(o->s, add_one, &o->ran);  // legal: runs after this task
      },
      &t));
  MT_OK(MPIX_Host_stream_synchronize(t.s));
  const int calls = g_handler_calls.load() - before;
  MT_CHECKF(calls == 2, "MPI_COMM_SELF's error handler ran %d times for the two refused calls", calls);
  mu::expect_at(t.destroy_rc, MPI_ERR_OTHER, "own task", "MPIX_Host_stream_destroy from the stream's task", __FILE__,
                __LINE__);
  mu::expect_at(t.sync_rc, MPI_ERR_OTHER, "own task", "MPIX_Host_stream_synchronize from the stream's task", __FILE__,
                __LINE__);
  MT_CHECKF(contains(t.destroy_msg, "MPIX_Host_stream_destroy"), "message: %s", t.destroy_msg.c_str());
  MT_CHECKF(contains(t.sync_msg, "MPIX_Host_stream_synchronize"), "message: %s", t.sync_msg.c_str());
  MT_OK(t.enqueue_rc);
  // The stream survived its task's attempt: the task that task enqueued and one more run before
  // destroy returns.
  MT_OK(MPIX_Host_stream_enqueue(t.s, add_one, &t.ran));
  MT_OK(MPIX_Host_stream_destroy(t.s));
  MT_CHECKF(t.ran == 2, "2 tasks enqueued after the refused calls, %d ran", t.ran.load());
}

// Work still queued: destroy waits for it; what it reports comes back from destroy.
void streams_with_work() {
  g_context = "host stream destroyed with work queued";
  MPIX_Host_stream s = make_stream();
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i)
    MT_OK(MPIX_Host_stream_enqueue(
        s,
        [](void *p) {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          add_one(p);
        },
        &ran));
  MT_OK(MPIX_Host_stream_destroy(s));
  MT_CHECKF(ran == 50, "destroy returned with %d of 50 tasks run", ran.load());
  REFUSED(MPIX_Host_stream_enqueue(s, add_one, &ran), MPI_ERR_ARG, "MPIX_Host_stream_enqueue", "destroyed");
  // A stream epoch that times out (its peer never starts one; MPIX_ST_WATCHDOG_MS is short here)
  // is still queued at destroy: destroy reports the timeout.
  if (g_size < 2) return;
  TestWin w = make_window(WinKind::allocate, 64);
  MPIX_Host_stream e = make_stream();
  if (g_rank == 0) {
    MPI_Group one = group_of({1});
    MT_OK(MPIX_Win_post_stream(one, w.win, e));
    MT_OK(MPIX_Win_wait_stream(w.win, e));
    MPI_Group_free(&one);
    REFUSED(MPIX_Host_stream_destroy(e), MPI_ERR_OTHER, "MPIX_Host_stream_destroy", "watchdog");
  } else {
    MT_OK(MPIX_Host_stream_destroy(e));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free_window(w);
}

// ---- MPICH's spelling: MPIX_Stream ----------------------------------------------------------

MPIX_Stream wrapped(MPIX_Host_stream hs) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", "MPIX_Host_stream");
  MT_OK(MPIX_Info_set_hex(info, "value", &hs, sizeof hs));
  MPIX_Stream st = MPIX_STREAM_NULL;
  MT_OK(MPIX_Stream_create(info, &st));
  MPI_Info_free(&info);
  return st;
}

void mpich_streams() {
  g_context = "MPIX_Stream";
  MPIX_Host_stream hs = make_stream();
  MPIX_Stream st = wrapped(hs);
  MPIX_Stream copy = st;
  MT_OK(MPIX_Stream_free(&st));
  MT_CHECK(st == MPIX_STREAM_NULL);
  REFUSED(MPIX_Stream_free(&st), MPI_ERR_ARG, "MPIX_Stream_free", "freed");
  REFUSED(MPIX_Stream_free(&copy), MPI_ERR_ARG, "MPIX_Stream_free", "freed");
  MPI_Comm comm = MPI_COMM_NULL;
  REFUSED(MPIX_Stream_comm_create(MPI_COMM_WORLD, copy, &comm), MPI_ERR_ARG, "MPIX_Stream_comm_create", "freed");
  MT_CHECK(comm == MPI_COMM_NULL);
  // A new stream does not take the freed one's handle value.
  std::set<MPIX_Stream> seen{copy};
  for (int i = 0; i < 50; ++i) {
    MPIX_Stream n = wrapped(hs);
    MT_CHECKF(seen.insert(n).second, "MPIX_Stream handle %p handed out twice", static_cast<void *>(n));
    MT_OK(MPIX_Stream_free(&n));
  }
  REFUSED(MPIX_Stream_free(&copy), MPI_ERR_ARG, "MPIX_Stream_free", "freed");
  // Bound to a communicator: not freed while bound; the enqueue calls work, and refuse a wrapped
  // host stream that was destroyed.
  MPIX_Stream bound = wrapped(hs);
  MT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, bound, &comm));
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  REFUSED(MPIX_Stream_free(&bound), MPI_ERR_OTHER, "MPIX_Stream_free", "bound");
  int in = g_rank + 1, out = 0;
  MT_OK(MPIX_Allreduce_enqueue(&in, &out, 1, MPI_INT, MPI_SUM, comm));
  MT_OK(MPIX_Host_stream_synchronize(hs));
  MT_CHECKF(out == g_size * (g_size + 1) / 2, "allreduce on the bound stream gave %d", out);
  MT_OK(MPI_Comm_free(&comm));
  MT_OK(MPIX_Stream_free(&bound));
  MPIX_Stream orphan = wrapped(hs);
  MT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, orphan, &comm));
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MT_OK(MPIX_Host_stream_destroy(hs));
  // The wrapped stream is gone: refused on every rank alike, before anything is enqueued.
  const std::string m = expect_error_at(MPIX_Allreduce_enqueue(&in, &out, 1, MPI_INT, MPI_SUM, comm), MPI_ERR_ARG,
                                        "allreduce on a destroyed wrapped stream", __FILE__, __LINE__);
  MT_CHECKF(contains(m, "MPIX_Allreduce_enqueue") && contains(m, "destroyed"), "message: %s", m.c_str());
  MT_OK(MPI_Comm_free(&comm));
  MT_OK(MPIX_Stream_free(&orphan));
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "handle_lifetimes");
  std::string only;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--only=", 7) == 0) only = argv[i] + 7;
  MPI_Errhandler h;
  MPI_Comm_create_errhandler(count_errors, &h);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, h);
  struct Section {
    const char *name;
    void (*fn)();
  };
  for (const Section &sec : {Section{"graphs", graphs}, Section{"after_destroy", streams_after_destroy},
                             Section{"capture", streams_in_capture}, Section{"own_task", streams_own_task},
                             Section{"work_queued", streams_with_work}, Section{"mpich", mpich_streams}}) {
    if (!only.empty() && only != sec.name) continue;
    sec.fn();
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&h);
  return mu::finish("handle_lifetimes");
}
