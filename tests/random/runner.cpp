// The runner of the model-based random test: draws the plan of a seed step by step (the same on
// every rank), makes each rank's calls, compares every return code's error class with the model's,
// and at every check compares window memory and result buffers byte for byte. A per-step deadline
// ends a step that does not finish (a hang) with the seed and the step. Every failure prints the
// seed, the step, the rank, the call and the command that replays it.
//
//   test_random_model --seed S [--steps N] [--avoid f,g] [--with f,g] [--illegal P] [--deadline SEC]
//                     [--verbose] [--print-plan [--ranks N]]
//
// Run under mpiexec with MPIX_ST_BACKEND=host (tests/random/run-seeds.sh runs many seeds and checks
// /dev/shm after each job); --print-plan prints the plan without running it (one process).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "plan.h"
#include "tests/common/error_text.h"

namespace rt {
std::string class_name_of(int cls);
}

using namespace rt;

namespace {

int g_rank = 0, g_size = 1;
Config g_cfg;
std::string g_exe, g_replay_flags;
int g_deadline_s = 60;
bool g_verbose = false;

// ---- the per-step deadline ------------------------------------------------------------------------
std::atomic<long long> g_progress_ns{0};
std::atomic<bool> g_stop{false};
std::mutex g_where_mu;
std::string g_where;  // the step and call being run

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string replay_command(int step) {
  const int steps = step + 1 > g_cfg.steps ? g_cfg.steps : step + 1;
  const char *wd = std::getenv("MPIX_ST_WATCHDOG_MS");
  std::string cmd = "MPIX_ST_BACKEND=host";
  if (wd) cmd += std::string(" MPIX_ST_WATCHDOG_MS=") + wd;
  const char *mpiexec = std::getenv("MPIX_RANDOM_MPIEXEC");
  cmd += std::string(" ") + (mpiexec ? mpiexec : "mpiexec") + " -n " + std::to_string(g_size) + " " + g_exe + " --seed " + std::to_string(g_cfg.seed) + " --steps " +
         std::to_string(steps) + g_replay_flags;
  return cmd;
}

std::string plan_command(int step) {
  const int steps = step + 1 > g_cfg.steps ? g_cfg.steps : step + 1;
  return g_exe + " --print-plan --ranks " + std::to_string(g_size) + " --seed " + std::to_string(g_cfg.seed) +
         " --steps " + std::to_string(steps) + g_replay_flags;
}

int g_step = 0;

// Reports go to stderr and, where MPIX_RANDOM_REPORT names a path, to <path>.<rank> (a job that
// aborts may lose what its ranks printed last).
void report(const std::string &text) {
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  if (const char *path = std::getenv("MPIX_RANDOM_REPORT"); path && *path) {
    const std::string file = std::string(path) + "." + std::to_string(g_rank);
    if (FILE *f = std::fopen(file.c_str(), "a")) {
      std::fputs(text.c_str(), f);
      std::fclose(f);
    }
  }
}

void watchdog() {
  while (!g_stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const long long idle = now_ns() - g_progress_ns.load();
    if (idle > static_cast<long long>(g_deadline_s) * 1000000000LL) {
      std::string where;
      {
        std::lock_guard<std::mutex> lock(g_where_mu);
        where = g_where;
      }
      char head[256];
      std::snprintf(head, sizeof head, "\nRANDOM-TEST HANG: seed %llu, %d ranks, rank %d made no progress for %d s in ",
                    static_cast<unsigned long long>(g_cfg.seed), g_size, g_rank, g_deadline_s);
      report(head + where + "\n  replay: " + replay_command(g_step) + "\n  plan:   " + plan_command(g_step) + "\n");
      // MPIX_RANDOM_GDB=1: every thread's stack of this process, to see where it waits.
      if (const char *e = std::getenv("MPIX_RANDOM_GDB"); e && std::strcmp(e, "1") == 0) {
        const std::string cmd = "gdb -p " + std::to_string(getpid()) +
                                " -batch -ex 'thread apply all bt 25' 2>/dev/null | grep -E '^(Thread|#)' 1>&2";
        if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "(gdb failed)\n");
      }
      _exit(124);
    }
  }
}

void progress(const std::string &where) {
  g_progress_ns.store(now_ns());
  std::lock_guard<std::mutex> lock(g_where_mu);
  g_where = where;
}

[[noreturn]] void fail(const std::string &what) {
  char head[256];
  std::snprintf(head, sizeof head, "\nRANDOM-TEST FAILURE: seed %llu, %d ranks, step %d, rank %d:\n  ",
                static_cast<unsigned long long>(g_cfg.seed), g_size, g_step, g_rank);
  report(head + what + "\n  replay: " + replay_command(g_step) + "\n  plan:   " + plan_command(g_step) + "\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // lets the launcher forward stderr
  MPI_Abort(MPI_COMM_WORLD, 1);
  _exit(1);
}

// ---- what this rank holds --------------------------------------------------------------------------

struct WinRt {
  MPI_Win win = MPI_WIN_NULL, handle = MPI_WIN_NULL;  // handle: kept after MPI_Win_free
  uint8_t *local = nullptr;                           // this rank's window memory
  void *owned = nullptr;                              // memory this program allocated for it
  size_t bytes = 0;
  std::vector<MPI_Aint> addr;  // dynamic windows: every rank's attached memory
  bool alive = false;
};

struct Rt {
  std::vector<WinRt> wins;
  std::vector<MPIX_Host_stream> streams;
  std::vector<char> stream_alive;
  std::vector<MPIX_Host_graph> graphs;
  std::vector<char> graph_alive;
  std::vector<MPI_Comm> comms;
  std::vector<MPIX_Stream> mstreams, mstream_copy;
  std::vector<uint8_t *> bufs;
};

Rt g;

// A stream task that rewrites a put's origin buffer with the next generation of its pattern.
struct StampTask {
  uint8_t *dst;
  size_t n;
  uint64_t key, gen;
};
std::map<int, StampTask *> g_stamps;
void stamp_task(void *arg) {
  auto *t = static_cast<StampTask *>(arg);
  fill_pattern(t->dst, t->n, key(t->key, ++t->gen));
}
long g_calls = 0, g_refused = 0, g_checks = 0;

template <typename T>
T &slot(std::vector<T> &v, int i) {
  if (static_cast<int>(v.size()) <= i) v.resize(static_cast<size_t>(i) + 1);
  return v[static_cast<size_t>(i)];
}
// Communicators: new entries are MPI_COMM_NULL (the fill is no argument, so that no reference
// returned can be taken for one to a temporary).
MPI_Comm &comm_slot(std::vector<MPI_Comm> &v, int i) {
  if (static_cast<int>(v.size()) <= i) v.resize(static_cast<size_t>(i) + 1, MPI_COMM_NULL);
  return v[static_cast<size_t>(i)];
}

// Memory this program hands the library (origin and result buffers, MPI_Win_create and dynamic
// window memory) lies between two guard zones of a known pattern, checked at every check and at
// the free: a byte the library writes outside what the calls allow is reported.
constexpr size_t kGuard = 256;
std::map<const uint8_t *, size_t> g_guarded;  // user pointer -> bytes

uint8_t guard_byte(size_t i) { return static_cast<uint8_t>(0xa5 ^ (i * 7)); }

uint8_t *guarded_alloc(size_t bytes) {
  const size_t n = (bytes + 63) / 64 * 64;
  auto *raw = static_cast<uint8_t *>(std::aligned_alloc(64, n + 2 * kGuard));
  for (size_t i = 0; i < kGuard; ++i) raw[i] = raw[kGuard + n + i] = guard_byte(i);
  std::memset(raw + kGuard, 0, n);
  g_guarded[raw + kGuard] = n;
  return raw + kGuard;
}

// "" or what is wrong with the guards of p.
std::string guard_damage(const uint8_t *p) {
  auto it = g_guarded.find(p);
  if (it == g_guarded.end()) return "";
  const size_t n = it->second;
  for (size_t i = 0; i < kGuard; ++i) {
    if (p[-static_cast<long>(kGuard) + static_cast<long>(i)] != guard_byte(i))
      return "a byte " + std::to_string(kGuard - i) + " bytes before the memory was written";
    if (p[n + i] != guard_byte(i)) return "a byte " + std::to_string(i) + " bytes after the memory's end (rounded to 64) was written";
  }
  return "";
}

void guarded_free(uint8_t *p) {
  if (!p) return;
  g_guarded.erase(p);
  std::free(p - kGuard);
}

uint8_t *buffer(const Model &m, int id) {
  uint8_t *&p = slot(g.bufs, id);
  if (!p) {
    const std::vector<uint8_t> &init = m.bufs[id].init;
    p = guarded_alloc(init.size() + 1);
    if (!init.empty()) std::memcpy(p, init.data(), init.size());
  }
  return p;
}

MPIX_Host_stream stream_of(int id) {
  if (id == kNullRef || id < 0) return nullptr;
  return slot(g.streams, id);
}

MPI_Group group_of(const std::vector<int> &ranks) {
  MPI_Group world, grp;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &grp);
  MPI_Group_free(&world);
  return grp;
}

std::string hex_diff(const uint8_t *got, const uint8_t *want, size_t n) {
  size_t first = n, count = 0, last = 0;
  for (size_t i = 0; i < n; ++i) {
    if (got[i] == want[i]) continue;
    if (first == n) first = i;
    last = i;
    ++count;
  }
  if (!count) return "";
  char msg[256];
  std::snprintf(msg, sizeof msg, "%zu of %zu bytes differ (bytes %zu..%zu); first at byte %zu: got 0x%02x, the model has 0x%02x",
                count, n, first, last, first, got[first], want[first]);
  std::string out = msg;
  const size_t from = first & ~size_t{15}, to = std::min(n, from + 32);
  out += "\n    bytes " + std::to_string(from) + "..: got   ";
  for (size_t i = from; i < to; ++i) {
    std::snprintf(msg, sizeof msg, "%02x%s", got[i], (i & 3) == 3 ? " " : "");
    out += msg;
  }
  out += "\n    bytes " + std::to_string(from) + "..: model ";
  for (size_t i = from; i < to; ++i) {
    std::snprintf(msg, sizeof msg, "%02x%s", want[i], (i & 3) == 3 ? " " : "");
    out += msg;
  }
  return out;
}

// Where else the model has `n` bytes like these (a diagnosis of wrong data: whose bytes arrived).
std::string whose_bytes(const Model &m, const uint8_t *p, size_t n) {
  if (n < 8) return "";
  std::string out;
  int found = 0;
  auto look = [&](const std::vector<uint8_t> &v, const std::string &what) {
    if (v.size() < n || found >= 3) return;
    for (size_t i = 0; i + n <= v.size(); ++i)
      if (std::memcmp(v.data() + i, p, n) == 0) {
        out += "\n    these bytes are at byte " + std::to_string(i) + " of " + what;
        ++found;
        return;
      }
  };
  for (size_t b = 0; b < m.bufs.size(); ++b) {
    const BufM &bm = m.bufs[b];
    const std::string what = "b" + std::to_string(b) + " (rank " + std::to_string(bm.owner) + ", made in step " +
                             std::to_string(bm.step) + ")";
    look(bm.init, what + " as made");
    look(bm.bytes, what + " in the model now");
  }
  for (size_t w = 0; w < m.wins.size(); ++w)
    for (size_t r = 0; r < m.wins[w].r.size(); ++r) {
      look(m.wins[w].r[r].img, "w" + std::to_string(w) + " of rank " + std::to_string(r) + " in the model now");
      look(pattern(static_cast<size_t>(m.wins[w].r[r].bzone),
                   key(m.cfg.seed, 0x57a7, static_cast<uint64_t>(w), static_cast<uint64_t>(r))),
           "w" + std::to_string(w) + " of rank " + std::to_string(r) + " as created");
    }
  return out.empty() ? "\n    (the model holds these bytes nowhere)" : out;
}

// A stale handle the MPI may have handed out again: then it is a live window, not a freed one.
bool handle_reused(MPI_Win h) {
  for (const WinRt &w : g.wins)
    if (w.alive && w.win == h) return true;
  return false;
}

// ---- one call ------------------------------------------------------------------------------------------

int run_call(const Call &c, Model &m, bool *skipped) {
  *skipped = false;
  MPI_Win win = MPI_WIN_NULL;
  if (c.win >= 0) {
    WinRt &w = slot(g.wins, c.win);
    win = (c.flags & fStaleWin) ? w.handle : w.win;
    if ((c.flags & fStaleWin) && handle_reused(win)) {
      *skipped = true;
      return MPI_SUCCESS;
    }
  }
  MPIX_Host_stream s = stream_of(c.stream);
  if (c.flags & fDeadStream) {
    for (size_t i = 0; i < g.streams.size(); ++i)
      if (g.stream_alive[i] && g.streams[i] == s) {  // the pointer was handed out again
        *skipped = true;
        return MPI_SUCCESS;
      }
  }
  switch (c.op) {
    case Op::WinCreate: {
      WinRt &w = slot(g.wins, c.win);
      const WinM &wm = m.wins[c.win];
      MPI_Info info;
      MPI_Info_create(&info);
      const bool unmanaged =
          c.kind == WinKind::create_unmanaged || (c.kind == WinKind::create_mixed_info && g_rank == 0);
      if (unmanaged) MPI_Info_set(info, "mpix_st", "false");
      int rc = MPI_SUCCESS;
      const MPI_Aint size = static_cast<MPI_Aint>(c.size);
      switch (c.kind) {
        case WinKind::allocate: rc = MPI_Win_allocate(size, c.unit, info, MPI_COMM_WORLD, &w.local, &w.win); break;
        case WinKind::create:
        case WinKind::create_unmanaged:
        case WinKind::create_mixed_info:
          w.owned = guarded_alloc(static_cast<size_t>(c.size > 0 ? c.size : 0) + 1);
          w.local = static_cast<uint8_t *>(w.owned);
          rc = MPI_Win_create(w.local, size, c.unit, info, MPI_COMM_WORLD, &w.win);
          break;
        case WinKind::allocate_shared:
          rc = MPI_Win_allocate_shared(size, c.unit, info, MPI_COMM_WORLD, &w.local, &w.win);
          break;
        case WinKind::dynamic:
          rc = MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &w.win);
          if (rc == MPI_SUCCESS) {
            w.owned = guarded_alloc(static_cast<size_t>(c.size) + 1);
            w.local = static_cast<uint8_t *>(w.owned);
            if (c.size > 0) MPI_Win_attach(w.win, w.local, size);
            MPI_Aint mine = 0;
            MPI_Get_address(w.local, &mine);
            w.addr.assign(static_cast<size_t>(g_size), 0);
            MPI_Allgather(&mine, 1, MPI_AINT, w.addr.data(), 1, MPI_AINT, MPI_COMM_WORLD);
          }
          break;
      }
      MPI_Info_free(&info);
      if (rc != MPI_SUCCESS) {
        if (w.owned) guarded_free(static_cast<uint8_t *>(w.owned));
        w.owned = nullptr;
        w.local = nullptr;
        w.win = MPI_WIN_NULL;
        return rc;
      }
      MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);
      w.alive = true;
      w.handle = w.win;
      w.bytes = static_cast<size_t>(c.size);
      const std::vector<uint8_t> &img = wm.r[g_rank].img;
      if (!img.empty()) std::memcpy(w.local, img.data(), img.size());
      return rc;
    }
    case Op::WinFree: {
      WinRt &w = slot(g.wins, c.win);
      const bool dynamic = m.wins[c.win].kind == WinKind::dynamic;
      if (dynamic && c.expect == MPI_SUCCESS && w.bytes > 0 && !(c.flags & fStaleWin)) MPI_Win_detach(w.win, w.local);
      MPI_Win h = win;
      const int rc = MPI_Win_free(&h);
      if (rc == MPI_SUCCESS && !(c.flags & fStaleWin)) {
        w.win = MPI_WIN_NULL;
        w.alive = false;
        if (w.owned) guarded_free(static_cast<uint8_t *>(w.owned));
        w.owned = nullptr;
        w.local = nullptr;
      }
      return rc;
    }
    case Op::Post:
    case Op::PostStream:
    case Op::Start: {
      MPI_Group grp = group_of(c.group);
      int rc;
      if (c.op == Op::Post) rc = MPI_Win_post(grp, c.assert_bits, win);
      else if (c.op == Op::PostStream) rc = MPIX_Win_post_stream(grp, win, s);
      else rc = MPI_Win_start(grp, c.assert_bits, win);
      MPI_Group_free(&grp);
      return rc;
    }
    case Op::Complete: return MPI_Win_complete(win);
    case Op::CompleteStream: return MPIX_Win_complete_stream(win, s);
    case Op::Wait: return MPI_Win_wait(win);
    case Op::WaitStream: return MPIX_Win_wait_stream(win, s);
    case Op::TestLoop: {
      for (;;) {
        int flag = 0;
        const int rc = MPI_Win_test(win, &flag);
        if (rc != MPI_SUCCESS || flag) return rc;
        sched_yield();
      }
    }
    case Op::Fence: return MPI_Win_fence(c.assert_bits, win);
    case Op::LockAll: return MPI_Win_lock_all(0, win);
    case Op::UnlockAll: return MPI_Win_unlock_all(win);
    case Op::Delay: {
      static long ms_store[64];
      static int next = 0;
      long *ms = &ms_store[next++ % 64];
      *ms = static_cast<long>(c.len);
      return MPIX_Host_stream_enqueue(
          s, [](void *p) { std::this_thread::sleep_for(std::chrono::milliseconds(*static_cast<long *>(p))); }, ms);
    }
    case Op::Stamp: {
      StampTask *&t = g_stamps[c.buf];
      if (!t) t = new StampTask{buffer(m, c.buf), m.bufs[c.buf].init.size(), m.bufs[c.buf].stamp_key, 0};
      return MPIX_Host_stream_enqueue(s, stamp_task, t);
    }
    case Op::FetchOp: {
      int *p = reinterpret_cast<int *>(buffer(m, c.buf) + c.buf_off);
      return MPI_Fetch_and_op(p, p + 1, MPI_INT, c.target, 0, MPI_SUM, win);
    }
    case Op::Put:
    case Op::Get:
    case Op::Acc: {
      void *origin = (c.flags & fNullOrigin) ? nullptr : buffer(m, c.buf) + c.buf_off;
      MPI_Datatype ot = m.types.build(c.otype, !(c.flags & fUncommitted));
      MPI_Datatype tt = m.types.build(c.ttype, true);
      const int target = c.target == kProcNull ? MPI_PROC_NULL : c.target;
      MPI_Aint disp = static_cast<MPI_Aint>(c.disp);
      if ((c.flags & fDynamic) && target >= 0 && target < g_size) disp += slot(g.wins, c.win).addr[target];
      int rc;
      if (c.op == Op::Put) rc = MPI_Put(origin, c.ocount, ot, target, disp, c.tcount, tt, win);
      else if (c.op == Op::Get) rc = MPI_Get(origin, c.ocount, ot, target, disp, c.tcount, tt, win);
      else rc = MPI_Accumulate(origin, c.ocount, ot, target, disp, c.tcount, tt, op_handle(c.mop), win);
      if (!m.types.is_named(c.otype)) MPI_Type_free(&ot);
      if (!m.types.is_named(c.ttype)) MPI_Type_free(&tt);
      return rc;
    }
    case Op::StreamCreate: {
      MPIX_Host_stream &h = slot(g.streams, c.stream);
      const int rc = MPIX_Host_stream_create(&h);
      if (rc == MPI_SUCCESS) slot(g.stream_alive, c.stream) = 1;
      return rc;
    }
    case Op::StreamDestroy: {
      const int rc = MPIX_Host_stream_destroy(s);
      if (rc == MPI_SUCCESS && c.stream >= 0) slot(g.stream_alive, c.stream) = 0;
      return rc;
    }
    case Op::StreamSync: return MPIX_Host_stream_synchronize(s);
    case Op::CaptureBegin: return MPIX_Host_stream_begin_capture(s);
    case Op::CaptureEnd: {
      MPIX_Host_graph graph = nullptr;
      const int rc = MPIX_Host_stream_end_capture(s, &graph);
      if (rc == MPI_SUCCESS && c.graph >= 0) {
        slot(g.graphs, c.graph) = graph;
        slot(g.graph_alive, c.graph) = 1;
      }
      return rc;
    }
    case Op::GraphLaunch: return MPIX_Host_graph_launch(slot(g.graphs, c.graph), s);
    case Op::GraphDestroy: {
      const int rc = MPIX_Host_graph_destroy(slot(g.graphs, c.graph));
      if (rc == MPI_SUCCESS) slot(g.graph_alive, c.graph) = 0;
      return rc;
    }
    case Op::CommCreate: {
      MPI_Comm &nc = comm_slot(g.comms, c.comm);
      const CommM &cm = m.comms[c.comm];
      int rc;
      if (cm.kind == 0) rc = MPI_Comm_dup(MPI_COMM_WORLD, &nc);
      else if (cm.kind == 1) rc = MPI_Comm_split(MPI_COMM_WORLD, c.root, static_cast<int>(c.disp), &nc);
      else rc = MPIX_Stream_comm_create(MPI_COMM_WORLD, slot(g.mstreams, c.mstream), &nc);
      if (rc == MPI_SUCCESS) MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN);
      return rc;
    }
    case Op::CommFree: return MPI_Comm_free(&comm_slot(g.comms, c.comm));
    case Op::MStreamCreate: {
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "type", "MPIX_Host_stream");
      MPIX_Host_stream h = s;
      MPIX_Info_set_hex(info, "value", &h, sizeof h);
      MPIX_Stream &ms = slot(g.mstreams, c.mstream);
      const int rc = MPIX_Stream_create(info, &ms);
      MPI_Info_free(&info);
      slot(g.mstream_copy, c.mstream) = ms;
      return rc;
    }
    case Op::MStreamFree: {
      // A refused free leaves the handle; a second free of a freed stream uses the old value.
      MPIX_Stream copy = slot(g.mstream_copy, c.mstream);
      if (c.expect != MPI_SUCCESS) return MPIX_Stream_free(&copy);
      return MPIX_Stream_free(&slot(g.mstreams, c.mstream));
    }
    case Op::Coll: {
      MPI_Comm comm = comm_slot(g.comms, c.comm);
      void *rb = (c.flags & fRecvInPlace) ? MPI_IN_PLACE : buffer(m, c.buf2);
      const void *sb = (c.flags & fInPlace) ? MPI_IN_PLACE : (c.flags & fSameBuffers) ? rb : c.buf >= 0 ? buffer(m, c.buf) : nullptr;
      const MPI_Datatype t = (c.flags & fNullTypeArg) ? MPI_DATATYPE_NULL : elem_type(c.otype);
      const MPI_Op op = op_handle(c.mop);
      void *strm = s;
      if (c.flags & fEnqueue) {
        switch (c.coll) {
          case Coll::allreduce: return MPIX_Allreduce_enqueue(sb, rb, c.ocount, t, op, comm);
          case Coll::bcast: return MPIX_Bcast_enqueue(rb, c.ocount, t, c.root, comm);
          case Coll::allgather: return MPIX_Allgather_enqueue(sb, c.ocount, t, rb, c.ocount, t, comm);
          case Coll::alltoall: return MPIX_Alltoall_enqueue(sb, c.ocount, t, rb, c.ocount, t, comm);
          case Coll::reduce: break;
        }
        fail("no reduce in the enqueue spelling");
      }
      switch (c.coll) {
        case Coll::allreduce: return MPIX_Allreduce_stream(sb, rb, c.ocount, t, op, comm, strm);
        case Coll::reduce: return MPIX_Reduce_stream(sb, rb, c.ocount, t, op, c.root, comm, strm);
        case Coll::bcast: return MPIX_Bcast_stream(rb, c.ocount, t, c.root, comm, strm);
        case Coll::allgather: return MPIX_Allgather_stream(sb, c.ocount, t, rb, c.ocount, t, comm, strm);
        case Coll::alltoall: return MPIX_Alltoall_stream(sb, c.ocount, t, rb, c.ocount, t, comm, strm);
      }
      return MPI_ERR_OTHER;
    }
    case Op::HostWrite: {
      WinRt &w = slot(g.wins, c.win);
      std::memcpy(w.local + c.offset, m.bufs[c.buf].init.data(), static_cast<size_t>(c.len));
      return MPI_SUCCESS;
    }
    case Op::Barrier: return MPI_Barrier(MPI_COMM_WORLD);
    case Op::Check: {
      ++g_checks;
      for (int wid : c.check_wins) {
        const WinRt &w = slot(g.wins, wid);
        const std::vector<uint8_t> &want = m.wins[wid].r[g_rank].img;
        const std::string d = hex_diff(w.local, want.data(), want.size());
        if (!d.empty()) {
          size_t first = 0;
          while (w.local[first] == want[first]) ++first;
          fail("window w" + std::to_string(wid) + " (" + win_kind_name(m.wins[wid].kind) + ") of this rank: " + d +
               whose_bytes(m, w.local + first, std::min<size_t>(16, want.size() - first)));
        }
      }
      for (int b : c.check_bufs) {
        const std::vector<uint8_t> &want = m.bufs[b].bytes;
        const uint8_t *got = buffer(m, b);
        const std::string d = hex_diff(got, want.data(), want.size());
        if (!d.empty()) {
          size_t first = 0;
          while (got[first] == want[first]) ++first;
          fail("buffer b" + std::to_string(b) + " (made in step " + std::to_string(m.bufs[b].step) + "): " + d +
               whose_bytes(m, got + first, std::min<size_t>(16, want.size() - first)));
        }
      }
      for (const WinRt &w : g.wins)
        if (w.alive && w.owned)
          if (const std::string d = guard_damage(static_cast<const uint8_t *>(w.owned)); !d.empty())
            fail("the memory of a window this rank gave MPI_Win_create or MPI_Win_attach: " + d);
      for (size_t b = 0; b < g.bufs.size(); ++b)
        if (g.bufs[b] && m.bufs[b].owner == g_rank)
          if (const std::string d = guard_damage(g.bufs[b]); !d.empty())
            fail("buffer b" + std::to_string(b) + " (an origin or result buffer): " + d);
      for (int b : c.free_bufs) {
        if (auto it = g_stamps.find(b); it != g_stamps.end()) {
          delete it->second;
          g_stamps.erase(it);
        }
        uint8_t *&p = slot(g.bufs, b);
        guarded_free(p);
        p = nullptr;
      }
      return MPI_SUCCESS;
    }
    default: break;
  }
  fail(std::string("the runner does not know the call ") + op_name_of(c.op));
}

std::map<std::string, std::pair<int, double>> g_profile;  // MPIX_RANDOM_PROFILE=1: time by kind of step

// MPIX_RANDOM_WATCH=w,offset: after every call, this rank's byte of window w and the model's, when
// either changed (a diagnosis aid; the model's value is the one after the whole step).
void watch(const Step &st, Model &m, int call) {
  if (const char *e = std::getenv("MPIX_RANDOM_WATCH")) {
    int wid = -1;
    long off = -1;
    if (std::sscanf(e, "%d,%ld", &wid, &off) == 2 && wid >= 0 && wid < static_cast<int>(g.wins.size()) &&
        g.wins[wid].alive && off >= 0 && static_cast<size_t>(off) < g.wins[wid].bytes) {
      static int last_got = -1, last_want = -1;
      const int got = g.wins[wid].local[off], want = m.wins[wid].r[g_rank].img[static_cast<size_t>(off)];
      if (got != last_got || want != last_want)
        std::fprintf(stderr, "[rank %d] after step %d (%s), call %d: w%d byte %ld: got 0x%02x, model 0x%02x\n", g_rank,
                     st.index, st.title.c_str(), call, wid, off, got, want);
      last_got = got;
      last_want = want;
    }
  }
}

void run_step(const Step &st, Model &m) {
  g_step = st.index;
  struct Timer {
    const Step &st;
    double t0 = MPI_Wtime();
    ~Timer() {
      std::string kind = st.title.substr(0, st.title.find_first_of(" :["));
      auto &p = g_profile[kind];
      ++p.first;
      p.second += MPI_Wtime() - t0;
    }
  } timer{st};
  const std::vector<Call> &calls = st.calls[static_cast<size_t>(g_rank)];
  if (g_verbose && g_rank == 0) {
    std::printf("%s", describe_step(st, m).c_str());
    std::fflush(stdout);
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call &c = calls[i];
    progress("step " + std::to_string(st.index) + " (" + st.title + "), call " + std::to_string(i) + ": " +
             describe(c, m));
    bool skipped = false;
    const int rc = run_call(c, m, &skipped);
    ++g_calls;
    watch(st, m, static_cast<int>(i));
    if (skipped) continue;
    int cls = rc;
    if (rc != MPI_SUCCESS && MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = -1;
    if (cls == c.expect || (c.expect_alt >= 0 && cls == c.expect_alt)) {
      if (rc != MPI_SUCCESS) {
        ++g_refused;
        // MPIX_RANDOM_ERRORS=1: the message of every refusal the model expected.
        if (const char *e = std::getenv("MPIX_RANDOM_ERRORS"); e && std::strcmp(e, "1") == 0)
          std::fprintf(stderr, "[rank %d] step %d call %zu: %s\n    -> %s\n", g_rank, st.index, i, describe(c, m).c_str(),
                       mpix_test::error_text(rc).c_str());
      }
      continue;
    }
    std::string what = "call " + std::to_string(i) + ": " + describe(c, m) + "\n  returned " + class_name_of(cls);
    if (rc != MPI_SUCCESS) what += " \"" + mpix_test::error_text(rc) + "\"";
    what += "; the model expects " + class_name_of(c.expect);
    if (c.expect_alt >= 0) what += " or " + class_name_of(c.expect_alt);
    if (!c.why.empty()) what += " (" + c.why + ")";
    fail(what);
  }
  watch(st, m, -1);
  // MPIX_RANDOM_DUMP=N: after step N, every window of this rank against the model (a diagnosis aid:
  // the windows need not be synchronised there).
  if (const char *e = std::getenv("MPIX_RANDOM_DUMP"); e && std::atoi(e) == st.index)
    for (size_t wid = 0; wid < g.wins.size(); ++wid) {
      const WinRt &w = g.wins[wid];
      if (!w.alive) continue;
      const std::vector<uint8_t> &want = m.wins[wid].r[g_rank].img;
      const std::string d = hex_diff(w.local, want.data(), want.size());
      std::fprintf(stderr, "[rank %d] after step %d, w%zu: %s\n", g_rank, st.index, wid, d.empty() ? "as the model" : d.c_str());
    }
}

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    size_t e = s.find(',', at);
    if (e == std::string::npos) e = s.size();
    if (e > at) out.push_back(s.substr(at, e - at));
    at = e + 1;
  }
  return out;
}

void usage() {
  std::fprintf(stderr,
               "usage: test_random_model --seed S [--steps N] [--avoid f,g] [--with f,g] [--illegal PERCENT]\n"
               "                         [--deadline SEC] [--verbose] [--print-plan [--ranks N]] [--list-features]\n");
}

}  // namespace

int main(int argc, char **argv) {
  g_exe = argv[0];
  bool print_plan = false, list = false;
  int ranks = 0;
  for (const std::string &f : default_off_features()) g_cfg.features.off.insert(f);
  std::string avoid_arg, with_arg;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seed") g_cfg.seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--steps") g_cfg.steps = std::atoi(value().c_str());
    else if (a == "--avoid") avoid_arg = value();
    else if (a == "--with") with_arg = value();
    else if (a == "--illegal") g_cfg.illegal_percent = std::atoi(value().c_str());
    else if (a == "--deadline") g_deadline_s = std::atoi(value().c_str());
    else if (a == "--verbose") g_verbose = true;
    else if (a == "--print-plan") print_plan = true;
    else if (a == "--ranks") ranks = std::atoi(value().c_str());
    else if (a == "--list-features") list = true;
    else {
      usage();
      return 2;
    }
  }
  for (const std::string &f : split(avoid_arg)) g_cfg.features.off.insert(f);
  for (const std::string &f : split(with_arg)) g_cfg.features.off.erase(f);
  for (const std::string &f : g_cfg.features.off) {
    bool known = false;
    for (const std::string &k : all_features()) known = known || k == f;
    if (!known) {
      std::fprintf(stderr, "unknown feature \"%s\" (--list-features)\n", f.c_str());
      return 2;
    }
  }
  if (!avoid_arg.empty()) g_replay_flags += " --avoid " + avoid_arg;
  if (!with_arg.empty()) g_replay_flags += " --with " + with_arg;
  if (g_cfg.illegal_percent != Config{}.illegal_percent) g_replay_flags += " --illegal " + std::to_string(g_cfg.illegal_percent);
  if (list) {
    for (const std::string &f : all_features())
      std::printf("%s%s\n", f.c_str(), g_cfg.features.on(f) ? "" : " (off unless --with)");
    return 0;
  }

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  g_cfg.nranks = print_plan && ranks > 0 ? ranks : g_size;

  if (print_plan) {
    if (g_rank == 0) {
      Generator gen(g_cfg);
      std::printf("plan of seed %llu for %d ranks, %d steps before the teardown\n",
                  static_cast<unsigned long long>(g_cfg.seed), g_cfg.nranks, g_cfg.steps);
      while (!gen.done()) {
        Step st = gen.next();
        std::printf("%s", describe_step(st, gen.m).c_str());
      }
    }
    MPI_Finalize();
    return 0;
  }

  if (std::strcmp(MPIX_St_backend_name(), "host") != 0) {
    if (g_rank == 0) std::fprintf(stderr, "the random test runs on the host backend (MPIX_ST_BACKEND=host)\n");
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
  std::printf("RANDOM-TEST-PID %d %d\n", g_rank, static_cast<int>(getpid()));
  std::fflush(stdout);

  g_progress_ns.store(now_ns());
  std::thread dog(watchdog);
  const double t0 = MPI_Wtime();
  uint64_t plan_hash = 0;
  {
    Generator gen(g_cfg);
    while (!gen.done()) {
      Step st = gen.next();
      plan_hash = key(plan_hash, std::hash<std::string>{}(describe_step(st, gen.m)));
      run_step(st, gen.m);
    }
    g_step = gen.made();
  }
  progress("the end: comparing the plans of the ranks");
  unsigned long long mine[2] = {plan_hash, ~plan_hash}, all[2] = {0, 0};
  MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (all[0] != plan_hash || all[1] != ~plan_hash) fail("the ranks drew different plans (the generator is not deterministic)");
  long totals[3] = {g_calls, g_refused, g_checks}, sums[3];
  MPI_Reduce(totals, sums, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  g_stop.store(true);
  dog.join();
  if (const char *e = std::getenv("MPIX_RANDOM_PROFILE"); e && std::strcmp(e, "1") == 0 && g_rank == 0)
    for (const auto &[kind, p] : g_profile) std::printf("  %-12s %5d steps %8.3f s\n", kind.c_str(), p.first, p.second);
  if (g_rank == 0)
    std::printf("random test seed %llu, %d ranks, %d steps: PASSED (%ld calls, %ld refused as the model expects, %ld "
                "checks; %.1f s)\n",
                static_cast<unsigned long long>(g_cfg.seed), g_size, g_step, sums[0], sums[1], sums[2], MPI_Wtime() - t0);
  MPI_Finalize();
  return 0;
}
