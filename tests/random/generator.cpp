// The generator: draws the next step of a plan from the model's state, so every step is legal
// where it is meant to be (epochs matched across ranks, no conflicting accesses in one epoch, no
// cycle of waits between streams, stream work of a window on one stream at a time) and illegal
// where it is meant to be, with the error class the man pages give. Its effects go into the model
// as it is drawn.
//
// Rules that keep legal plans free of deadlock: every step is one global unit that every rank
// enqueues in the same order (a round's calls: posts, starts, operations, completes, waits, each
// phase before the next on every rank), so every stream runs the steps in plan order and a step's
// waits depend only on the same step's signals; a window's (and a communicator's) stream work stays
// on one stream of a rank until that stream is synchronised; host-driven epochs on a window wait
// until no stream work of the window is pending on any rank (the handbook: "neither origin buffers
// nor the window may be reused for other purposes before the stream has passed the epoch").
#include <algorithm>
#include <cstdio>

#include "plan.h"

namespace rt {

const std::vector<std::string> &all_features() {
  static const std::vector<std::string> f = {
      "host_epochs",      // host-driven rounds (MPI_Win_post/start/complete/wait, MPI_Win_test)
      "stream_epochs",    // stream-triggered rounds
      "multi_window",     // rounds over two windows at once
      "gets",             // MPI_Get
      "accumulates",      // MPI_Accumulate
      "dtypes",           // derived datatypes
      "proc_null",        // operations to MPI_PROC_NULL
      "unmanaged",        // windows the library does not manage: mpix_st=false, allocate_shared, dynamic
      "graphs",           // capture, replay, destroy of host graphs
      "collectives",      // stream collectives and their communicators
      "enqueue",          // MPICH's enqueue spelling (MPIX_Stream, MPIX_*_enqueue)
      "streams",          // host streams created and destroyed during the run
      "win_lifecycle",    // windows created and freed during the run
      "host_write",       // the host rewrites window memory between epochs
      "illegal",          // illegal calls inside steps (epoch order, arguments)
      "probes",           // steps of illegal calls on handles: NULL, freed, destroyed
      "free_in_epoch",    // MPI_Win_free on every rank while epochs are open
      "stamps",           // stream tasks (MPIX_Host_stream_enqueue) that rewrite put sources before epochs
      "delays",           // stream tasks that sleep a few ms, so later calls meet work still queued
      "eager_replay",     // a rank runs a graph's captured epochs eagerly where the others launch it
      "eager_replay_coll", // the same for graphs that hold collectives
      "replay_freed",     // graphs launched after their window was freed (MPI_ERR_WIN at synchronisation)
      "create_refused",   // window creation with a bad argument on one rank
      "nocheck",          // MPI_MODE_NOCHECK epochs
      "handle_lifetimes", // destroyed streams and graphs used again (issue 47, item 3)
      "mixed_close",      // the other form's close of an exposure epoch: refused, then the right one
      "lock_in_epoch",    // MPI_Win_lock_all inside an open stream epoch (issue 47, item 4)
      "uninterposed_rma", // MPI_Fetch_and_op inside a stream epoch (issue 47, item 4)
      "uncommitted_type", // an uncommitted datatype (issue 47, item 5)
      "fence",            // fence and lock_all epochs of the underlying MPI, on windows of every kind
      "fence_after_stream", // ... on a managed window whose stream epochs are still queued (issue 47 item 4)
      "comm_free_after_replay", // MPI_Comm_free with eager collectives queued, after replays of captured ones
  };
  return f;
}

const std::vector<std::string> &default_off_features() {
  static const std::vector<std::string> f = {};
  return f;
}

namespace {

Call call(Op op) {
  Call c;
  c.op = op;
  return c;
}

Call expect(Call c, int cls, const std::string &why, int alt = -1) {
  c.expect = cls;
  c.expect_alt = alt;
  c.why = why;
  return c;
}

}  // namespace

Generator::Generator(const Config &cfg) : m(cfg), cfg_(cfg), rng_(key(cfg.seed, 0x7a11)) { setup(); }

Step Generator::begin(const std::string &title) {
  m.step = index_;
  Step s;
  s.title = title;
  s.calls.resize(static_cast<size_t>(m.n));
  return s;
}

Step Generator::next() {
  if (queued_.empty()) {
    if (index_ < cfg_.steps) {
      Step s = random_step();
      s.index = index_++;
      return s;
    }
    if (!torn_down_) {
      torn_down_ = true;
      teardown();
    }
  }
  if (queued_.empty()) {
    done_ = true;
    Step s = begin("end");
    s.index = index_++;
    return s;
  }
  Step s = std::move(queued_.front());
  queued_.erase(queued_.begin());
  s.index = index_++;
  if (queued_.empty() && torn_down_) done_ = true;
  return s;
}

// ---- set-up and teardown ------------------------------------------------------------------------------

void Generator::setup() {
  Step s = begin("set-up: two host streams per rank");
  for (int r = 0; r < m.n; ++r)
    for (int i = 0; i < 2; ++i) {
      Call c = call(Op::StreamCreate);
      c.stream = static_cast<int>(m.streams[r].size());
      m.streams[r].push_back(StreamM{});
      m.streams[r].back().alive = true;
      s.calls[r].push_back(c);
    }
  queued_.push_back(std::move(s));
  queued_.push_back(win_create());
}

void Generator::teardown() {
  if (m.capturing) queued_.push_back(capture_end());
  queued_.push_back(sync_step(true, true));
  for (size_t g = 0; g < m.graphs.size(); ++g) {
    if (!m.graphs[g].alive) continue;
    Step s = begin("teardown: destroy g" + std::to_string(g));
    for (int r = 0; r < m.n; ++r) {
      Call c = call(Op::GraphDestroy);
      c.graph = static_cast<int>(g);
      s.calls[r].push_back(c);
    }
    m.graphs[g].alive = false;
    for (WinM &w : m.wins) w.graphs.erase(static_cast<int>(g));
    for (CommM &cm : m.comms) cm.graphs.erase(static_cast<int>(g));
    m.retire_graph_buffers(static_cast<int>(g));
    queued_.push_back(std::move(s));
  }
  for (size_t w = 0; w < m.wins.size(); ++w) {
    if (!m.wins[w].alive) continue;
    Step s = begin("teardown: free w" + std::to_string(w));
    for (int r = 0; r < m.n; ++r) {
      Call c = call(Op::WinFree);
      c.win = static_cast<int>(w);
      s.calls[r].push_back(c);
    }
    m.wins[w].alive = false;
    queued_.push_back(std::move(s));
  }
  for (size_t c = 0; c < m.comms.size(); ++c) {
    if (!m.comms[c].alive) continue;
    Step s = begin("teardown: free c" + std::to_string(c));
    for (int r : m.comms[c].members) {
      Call k = call(Op::CommFree);
      k.comm = static_cast<int>(c);
      s.calls[r].push_back(k);
    }
    m.comms[c].alive = false;
    if (m.comms[c].mstream >= 0) --m.mstreams[m.comms[c].mstream].comms;
    queued_.push_back(std::move(s));
  }
  for (size_t i = 0; i < m.mstreams.size(); ++i) {
    if (!m.mstreams[i].alive) continue;
    Step s = begin("teardown: free m" + std::to_string(i));
    for (int r = 0; r < m.n; ++r) {
      Call k = call(Op::MStreamFree);
      k.mstream = static_cast<int>(i);
      s.calls[r].push_back(k);
      --m.streams[r][m.mstreams[i].stream[r]].bound;
    }
    m.mstreams[i].alive = false;
    queued_.push_back(std::move(s));
  }
  Step s = begin("teardown: destroy the streams, final check");
  for (int r = 0; r < m.n; ++r) {
    for (size_t i = 0; i < m.streams[r].size(); ++i) {
      if (!m.streams[r][i].alive) continue;
      Call c = call(Op::StreamDestroy);
      c.stream = static_cast<int>(i);
      s.calls[r].push_back(c);
      m.streams[r][i].alive = false;
    }
    s.calls[r].push_back(check_call(r, true));
  }
  queued_.push_back(std::move(s));
}

// ---- helpers ------------------------------------------------------------------------------------------

int Generator::live_stream(int r, int avoid) {
  std::vector<int> ok;
  for (size_t i = 0; i < m.streams[r].size(); ++i)
    if (m.streams[r][i].alive && !m.streams[r][i].capturing && static_cast<int>(i) != avoid)
      ok.push_back(static_cast<int>(i));
  return ok.empty() ? -1 : rng_.pick(ok);
}

int Generator::stream_for_window(int w, int r, bool captured) {
  if (captured) return m.capture_stream[r];
  const auto &p = m.wins[w].pending[r];
  if (p.size() > 1) return -1;
  if (p.size() == 1) return p.begin()->first;
  return live_stream(r);
}

int Generator::stream_for_comm(int c, int r, bool captured) {
  if (captured) return m.capture_stream[r];
  const CommM &cm = m.comms[c];
  if (cm.kind == 2) return m.mstreams[cm.mstream].stream[r];
  const auto &p = cm.pending[r];
  if (p.size() > 1) return -1;
  if (p.size() == 1) return p.begin()->first;
  return live_stream(r);
}

void Generator::mark_pending(std::vector<std::map<int, bool>> &pending, int r, int s, bool graph) {
  bool &g = pending[r][s];
  g = g || graph;
}

int Generator::pick_live_window(bool managed_only) {
  std::vector<int> ok;
  for (size_t w = 0; w < m.wins.size(); ++w)
    if (m.wins[w].alive && (!managed_only || m.wins[w].managed)) ok.push_back(static_cast<int>(w));
  return ok.empty() ? -1 : rng_.pick(ok);
}

// A derived datatype over `elem` whose one instance spans at most max_bytes; `align`: byte
// displacements are multiples of it (accumulates need elements at multiples of their size).
int Generator::new_type(int elem, int depth, int64_t max_bytes) {
  const int es = elem_size(elem);
  const int align = elem_float(elem) || acc_elem_ok(elem) ? es : 1;
  if (max_bytes < es) return m.types.named(elem);
  int child = m.types.named(elem);
  if (depth > 0 && rng_.chance(40)) child = new_type(elem, depth - 1, max_bytes / 3);
  LayoutP cl = m.types.layout(child, 1);
  if (!cl) return m.types.named(elem);
  // The child's extent as MPI gives it (what constructors step by).
  MPI_Datatype ct = m.types.build(child, true);
  MPI_Aint clb = 0, cext = 0;
  MPI_Type_get_extent(ct, &clb, &cext);
  if (!m.types.is_named(child)) MPI_Type_free(&ct);
  const int64_t ce = cext;
  TypeDesc d;
  d.elem = elem;
  d.child = child;
  auto gap = [&] { return static_cast<int64_t>(rng_.range(0, 3)) * align; };
  switch (rng_.below(9)) {
    case 0:
      d.kind = TypeDesc::contiguous;
      d.count = static_cast<int>(rng_.range(1, 4));
      break;
    case 1:
      d.kind = TypeDesc::vector;
      d.count = static_cast<int>(rng_.range(1, 4));
      d.blocklen = static_cast<int>(rng_.range(1, 3));
      d.stride = d.blocklen + rng_.range(0, 3);
      break;
    case 2:
      d.kind = TypeDesc::hvector;
      d.count = static_cast<int>(rng_.range(1, 4));
      d.blocklen = static_cast<int>(rng_.range(1, 3));
      d.stride = d.blocklen * ce + gap();
      break;
    case 3: {
      d.kind = TypeDesc::indexed;
      const int k = static_cast<int>(rng_.range(1, 4));
      int64_t at = rng_.range(0, 2);
      for (int i = 0; i < k; ++i) {
        d.blens.push_back(static_cast<int>(rng_.range(0, 3)));
        d.disps.push_back(at);
        at += d.blens.back() + rng_.range(0, 2);
      }
      break;
    }
    case 4: {
      d.kind = TypeDesc::indexed_block;
      d.blocklen = static_cast<int>(rng_.range(1, 3));
      const int k = static_cast<int>(rng_.range(1, 4));
      int64_t at = rng_.range(0, 2);
      for (int i = 0; i < k; ++i) {
        d.disps.push_back(at);
        at += d.blocklen + rng_.range(0, 2);
      }
      break;
    }
    case 5:
    case 6: {
      d.kind = rng_.chance(50) ? TypeDesc::hindexed : TypeDesc::structure;
      const int k = static_cast<int>(rng_.range(1, 4));
      int64_t at = gap();
      for (int i = 0; i < k; ++i) {
        d.blens.push_back(static_cast<int>(rng_.range(1, 3)));
        d.disps.push_back(at);
        at += d.blens.back() * ce + gap();
      }
      break;
    }
    case 7: {
      d.kind = TypeDesc::resized;
      MPI_Datatype t = m.types.build(child, true);
      MPI_Aint tlb = 0, text = 0;
      MPI_Type_get_true_extent(t, &tlb, &text);
      if (!m.types.is_named(child)) MPI_Type_free(&t);
      d.lb = tlb - static_cast<int64_t>(rng_.range(0, 2)) * align;  // lower bounds below the data included
      d.extent = (tlb + text - d.lb) + gap();
      break;
    }
    default: {
      if (!m.types.is_named(child)) {
        d.kind = TypeDesc::contiguous;
        d.count = 2;
        break;
      }
      d.kind = TypeDesc::subarray;
      d.sizes[0] = static_cast<int>(rng_.range(1, 5));
      d.sizes[1] = static_cast<int>(rng_.range(1, 5));
      for (int i = 0; i < 2; ++i) {
        d.subsizes[i] = static_cast<int>(rng_.range(1, d.sizes[i]));
        d.starts[i] = static_cast<int>(rng_.range(0, d.sizes[i] - d.subsizes[i]));
      }
      d.order = rng_.chance(50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
      break;
    }
  }
  const int id = m.types.add(d);
  LayoutP l = m.types.layout(id, 1);
  if (!l || l->bytes() == 0 || l->hi - std::min<int64_t>(0, l->lo) > max_bytes) return child;
  return id;
}

bool Generator::needs_sync_for_launch(int g) { return g < 0; }

// ---- the random part ----------------------------------------------------------------------------------

Step Generator::random_step() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    const uint64_t d = rng_.below(1000);
    if (d < 420) return round();
    if (d < 500) return sync_step(rng_.chance(85), true);
    if (d < 540) {
      if (allow("host_write")) return host_write();
      continue;
    }
    // Window creation costs the MPI's own (about 0.1-0.4 s on 3 ranks here): a few per plan.
    if (d < 565) {
      if (allow("win_lifecycle")) return win_create();
      continue;
    }
    if (d < 590) {
      if (allow("win_lifecycle")) {
        Step s = win_free();
        if (!s.title.empty()) return s;
      }
      continue;
    }
    if (d < 630) return round();
    if (d < 660) {
      if (allow("streams")) return stream_step();
      continue;
    }
    if (d < 740) {
      if (!allow("graphs")) continue;
      if (!m.capturing) {
        std::vector<int> live;
        for (size_t g = 0; g < m.graphs.size(); ++g)
          if (m.graphs[g].alive) live.push_back(static_cast<int>(g));
        if (live.empty() || rng_.chance(30)) {
          Step s = capture_begin();
          if (!s.title.empty()) return s;
          continue;
        }
        if (rng_.chance(65)) return graph_launch();
        return graph_destroy();
      }
      if (rng_.chance(40)) return capture_end();
      continue;
    }
    if (d < 850) {
      if (!allow("collectives")) continue;
      Step s = coll_step();
      if (!s.title.empty()) return s;
      continue;
    }
    if (d < 880) {
      if (!allow("collectives")) continue;
      Step s = rng_.chance(60) ? comm_create() : comm_free();
      if (!s.title.empty()) return s;
      continue;
    }
    if (d < 950) {
      if (!allow("probes")) continue;
      Step s = probe();
      if (!s.title.empty()) return s;
      continue;
    }
    if (allow("fence")) {
      Step s = fence_round();
      if (!s.title.empty()) return s;
    }
  }
  return sync_step(true, true);
}

// ---- synchronisation and checks ----------------------------------------------------------------------

Step Generator::sync_step(bool all, bool check) {
  Step s = begin(all ? "synchronise every stream, check" : "synchronise some streams");
  for (int r = 0; r < m.n; ++r) {
    bool every = true;
    for (size_t i = 0; i < m.streams[r].size(); ++i) {
      StreamM &st = m.streams[r][i];
      if (!st.alive || st.capturing) continue;
      if (!all && rng_.chance(50)) {
        every = false;
        continue;
      }
      Call c = call(Op::StreamSync);
      c.stream = static_cast<int>(i);
      if (st.pending_error != MPI_SUCCESS) c = expect(c, st.pending_error, "a replay of a freed window's graph");
      st.pending_error = MPI_SUCCESS;
      s.calls[r].push_back(c);
      m.sync_stream(r, static_cast<int>(i));
    }
    if (every && check) s.calls[r].push_back(check_call(r, false));
  }
  return s;
}

// A check of rank r: its windows and the buffers that hold results; the buffers whose work is over
// are freed afterwards (eager operations' buffers, and those of destroyed graphs).
Call Generator::check_call(int r, bool everything) {
  Call c = call(Op::Check);
  for (size_t w = 0; w < m.wins.size(); ++w)
    if (m.wins[w].alive) c.check_wins.push_back(static_cast<int>(w));
  for (size_t b = 0; b < m.bufs.size(); ++b) {
    BufM &bm = m.bufs[b];
    if (bm.owner != r || !bm.alive) continue;
    if (bm.check) c.check_bufs.push_back(static_cast<int>(b));
    if (everything || bm.graph < 0) {
      c.free_bufs.push_back(static_cast<int>(b));
      bm.alive = false;
    }
  }
  return c;
}

Step Generator::host_write() {
  Step s = begin("the host rewrites window memory");
  for (int r = 0; r < m.n; ++r) {
    if (!rng_.chance(60)) continue;
    std::vector<int> ok;
    for (size_t w = 0; w < m.wins.size(); ++w)
      if (m.wins[w].alive && m.wins[w].pending[r].empty() && m.wins[w].r[r].size > 0) ok.push_back(static_cast<int>(w));
    if (ok.empty()) continue;
    const int w = rng_.pick(ok);
    WinRank &wr = m.wins[w].r[r];
    Call c = call(Op::HostWrite);
    c.win = w;
    c.data_key = key(cfg_.seed, 0x4857, static_cast<uint64_t>(index_), static_cast<uint64_t>(r));
    std::vector<uint8_t> bytes;
    if (wr.azone > 0 && (wr.bzone == 0 || rng_.chance(40))) {
      const int es = elem_size(m.wins[w].acc_elem);
      const int64_t n = rng_.range(1, wr.azone / es);
      const int64_t at = rng_.range(0, wr.azone / es - n);
      c.offset = wr.bzone + at * es;
      bytes = clean_values(m.wins[w].acc_elem, n, c.data_key);
    } else {
      c.len = rng_.size_upto(wr.bzone);
      c.offset = rng_.range(0, wr.bzone - c.len);
      bytes = pattern(static_cast<size_t>(c.len), c.data_key);
    }
    c.len = static_cast<int64_t>(bytes.size());
    c.buf = m.new_buf(r, bytes, false);  // the bytes to write
    m.bufs[c.buf].graph = -2;           // freed at the next full synchronisation
    std::copy(bytes.begin(), bytes.end(), wr.img.begin() + c.offset);
    s.calls[r].push_back(c);
  }
  return s;
}

// ---- windows --------------------------------------------------------------------------------------------

Step Generator::win_create() {
  int live = 0;
  for (const WinM &w : m.wins) live += w.alive;
  if (live >= 5) return round();
  WinM w;
  const uint64_t d = rng_.below(100);
  w.kind = d < 45 ? WinKind::allocate : d < 80 ? WinKind::create : WinKind::allocate;
  if (allow("unmanaged") && d >= 80)
    w.kind = d < 86 ? WinKind::create_unmanaged : d < 90 ? WinKind::create_mixed_info
           : d < 95 ? WinKind::allocate_shared : WinKind::dynamic;
  w.managed = kind_managed(w.kind);
  static const int acc_elems[] = {eInt, eInt32, eLong, eLongLong, eInt64, eFloat, eDouble};
  w.acc_elem = acc_elems[rng_.below(7)];
  const int id = static_cast<int>(m.wins.size());
  // Creation refused: a bad argument on one rank fails the call on every rank (library-managed kinds).
  const bool refuse = allow("create_refused") && kind_managed(w.kind) && index_ > 2 && rng_.chance(8);
  const int bad_rank = static_cast<int>(rng_.below(static_cast<uint64_t>(m.n)));
  const bool bad_size = rng_.chance(50);
  w.r.resize(static_cast<size_t>(m.n));
  w.pending.resize(static_cast<size_t>(m.n));
  Step s = begin(std::string(refuse ? "refused " : "") + "window w" + std::to_string(id) + ": " + win_kind_name(w.kind) +
                 ", accumulates in " + elem_name(w.acc_elem));
  for (int r = 0; r < m.n; ++r) {
    WinRank &wr = w.r[r];
    static const int64_t bsizes[] = {0, 64, 200, 1024, 4096, 16384};
    static const int64_t asizes[] = {0, 64, 256, 1024};
    wr.bzone = rng_.chance(10) ? 0 : bsizes[1 + rng_.below(rng_.chance(10) ? 5 : 4)];
    wr.bzone = wr.bzone / 8 * 8;
    wr.azone = rng_.chance(25) ? 0 : asizes[rng_.below(4)];
    if (w.kind == WinKind::dynamic) wr.unit = 1;
    else wr.unit = static_cast<int>(1 << rng_.below(4));  // 1, 2, 4, 8
    wr.size = wr.bzone + wr.azone;
    wr.img = pattern(static_cast<size_t>(wr.bzone), key(cfg_.seed, 0x57a7, static_cast<uint64_t>(id), static_cast<uint64_t>(r)));
    std::vector<uint8_t> acc = clean_values(w.acc_elem, wr.azone / elem_size(w.acc_elem),
                                            key(cfg_.seed, 0xacc, static_cast<uint64_t>(id), static_cast<uint64_t>(r)));
    wr.img.insert(wr.img.end(), acc.begin(), acc.end());
    Call c = call(Op::WinCreate);
    c.win = id;
    c.kind = w.kind;
    c.size = wr.size;
    c.unit = wr.unit;
    c.target = r == 0 ? 1 : 0;  // create_mixed_info: rank 0 says mpix_st=false
    if (refuse) {
      if (r == bad_rank) {
        if (bad_size) {
          c.size = -1;
          c = expect(c, MPI_ERR_SIZE, "negative size on this rank");
        } else {
          c.unit = 0;
          c = expect(c, MPI_ERR_DISP, "displacement unit 0 on this rank");
        }
      } else {
        c = expect(c, MPI_ERR_ARG, "another rank passed a bad argument");
      }
    }
    s.calls[r].push_back(c);
  }
  if (!refuse) {
    w.alive = w.created = true;
  }
  m.wins.push_back(std::move(w));
  return s;
}

Step Generator::win_free() {
  std::vector<int> ok;
  for (size_t w = 0; w < m.wins.size(); ++w) {
    const WinM &wm = m.wins[w];
    if (!wm.alive) continue;
    // Graphs must be destroyed before their windows are freed; where "replay_freed" is drawn, a
    // window whose graphs hold its epochs alone may go first, and the graphs turn stale. Not a
    // graph still being captured: it could take other windows' epochs and collectives after the
    // free, which a launch runs (only the freed window's epochs do nothing).
    bool ok_graphs = true;
    for (int g : wm.graphs) {
      const GraphM &gm = m.graphs[g];
      ok_graphs = ok_graphs && allow("replay_freed") && gm.wins.size() == 1 && gm.comms.empty() &&
                  g != m.capture_graph;
    }
    if (!wm.graphs.empty() && (!ok_graphs || !rng_.chance(30))) continue;
    ok.push_back(static_cast<int>(w));
  }
  if (ok.empty()) return Step{};
  const int w = rng_.pick(ok);
  // Launched graphs' work is not waited for by MPI_Win_free (graph-capture.md): synchronise first.
  for (int r = 0; r < m.n; ++r)
    for (const auto &p : m.wins[w].pending[r])
      if (p.second) return sync_step(true, true);
  Step s = begin("free w" + std::to_string(w) + " (stream work may still be queued)");
  for (int r = 0; r < m.n; ++r) {
    Call c = call(Op::WinFree);
    c.win = w;
    s.calls[r].push_back(c);
  }
  // The library's MPI_Win_free lets the window's queued stream work run first.
  for (auto &p : m.wins[w].pending) p.clear();
  m.wins[w].alive = false;
  for (int g : m.wins[w].graphs) {
    m.graphs[g].stale = true;
    s.title += ", g" + std::to_string(g) + " stale";
  }
  return s;
}

// ---- streams and graphs ----------------------------------------------------------------------------------

Step Generator::stream_step() {
  Step s = begin("streams created and destroyed");
  for (int r = 0; r < m.n; ++r) {
    int alive = 0;
    for (const StreamM &st : m.streams[r]) alive += st.alive && !st.capturing;
    if (alive < 4 && (alive < 3 || rng_.chance(50))) {
      Call c = call(Op::StreamCreate);
      c.stream = static_cast<int>(m.streams[r].size());
      m.streams[r].push_back(StreamM{});
      m.streams[r].back().alive = true;
      s.calls[r].push_back(c);
    } else {
      std::vector<int> ok;
      for (size_t i = 0; i < m.streams[r].size(); ++i) {
        const StreamM &st = m.streams[r][i];
        if (st.alive && !st.capturing && st.bound == 0 && st.pending_error == MPI_SUCCESS) ok.push_back(static_cast<int>(i));
      }
      if (ok.empty() || alive <= 2) continue;
      const int i = rng_.pick(ok);
      Call c = call(Op::StreamDestroy);
      c.stream = i;
      c.why = "drains its queued work";
      s.calls[r].push_back(c);
      m.streams[r][i].alive = false;
      m.sync_stream(r, i);  // destroy waits for everything enqueued
    }
  }
  return s;
}

Step Generator::capture_begin() {
  // Every rank captures one stream with no queued work of any window or communicator, and keeps
  // another one for eager work.
  std::vector<int> chosen(static_cast<size_t>(m.n), -1);
  for (int r = 0; r < m.n; ++r) {
    std::vector<int> ok;
    int alive = 0;
    for (size_t i = 0; i < m.streams[r].size(); ++i) {
      const StreamM &st = m.streams[r][i];
      if (!st.alive) continue;
      ++alive;
      bool idle = st.bound == 0 && st.pending_error == MPI_SUCCESS;
      for (const WinM &w : m.wins)
        if (!w.pending.empty() && w.pending[r].count(static_cast<int>(i))) idle = false;
      for (const CommM &c : m.comms)
        if (!c.pending.empty() && c.pending[r].count(static_cast<int>(i))) idle = false;
      if (idle) ok.push_back(static_cast<int>(i));
    }
    if (ok.empty() || alive < 2) return Step{};
    chosen[r] = rng_.pick(ok);
  }
  const int g = static_cast<int>(m.graphs.size());
  m.graphs.push_back(GraphM{});
  m.graphs.back().calls.resize(static_cast<size_t>(m.n));
  Step s = begin("capture g" + std::to_string(g) + " begins");
  for (int r = 0; r < m.n; ++r) {
    Call c = call(Op::CaptureBegin);
    c.stream = chosen[r];
    c.graph = g;
    s.calls[r].push_back(c);
    m.streams[r][chosen[r]].capturing = true;
  }
  m.capturing = true;
  m.capture_graph = g;
  m.capture_stream = chosen;
  return s;
}

Step Generator::capture_end() {
  const int g = m.capture_graph;
  Step s = begin("capture g" + std::to_string(g) + " ends (" + std::to_string(m.graphs[g].effects.size()) +
                 " captured steps)");
  for (int r = 0; r < m.n; ++r) {
    Call c = call(Op::CaptureEnd);
    c.stream = m.capture_stream[r];
    c.graph = g;
    s.calls[r].push_back(c);
    m.streams[r][m.capture_stream[r]].capturing = false;
  }
  m.graphs[g].alive = true;
  m.capturing = false;
  m.capture_graph = -1;
  m.capture_stream.assign(static_cast<size_t>(m.n), -1);
  return s;
}

Step Generator::graph_launch() {
  std::vector<int> live;
  for (size_t g = 0; g < m.graphs.size(); ++g)
    if (m.graphs[g].alive) live.push_back(static_cast<int>(g));
  if (live.empty()) return sync_step(true, true);
  const int g = rng_.pick(live);
  GraphM &gm = m.graphs[g];
  // Each rank launches on a stream that holds every queued work of the graph's windows and
  // communicators (one stream per window at a time); where they lie on two streams, synchronise first.
  std::vector<int> chosen(static_cast<size_t>(m.n), -1);
  for (int r = 0; r < m.n; ++r) {
    std::set<int> need;
    for (int w : gm.wins)
      for (const auto &p : m.wins[w].pending[r]) need.insert(p.first);
    for (int c : gm.comms) {
      for (const auto &p : m.comms[c].pending[r]) need.insert(p.first);
      if (m.comms[c].kind == 2) need.insert(m.mstreams[m.comms[c].mstream].stream[r]);
    }
    if (need.size() > 1) return sync_step(true, true);
    chosen[r] = need.empty() ? live_stream(r) : *need.begin();
    if (chosen[r] < 0) return sync_step(true, true);
  }
  if (gm.stale) {
    // Its window was freed: every rank's launch does nothing, and the stream's next
    // synchronisation reports MPI_ERR_WIN (graph-capture.md, "Free graphs before their windows").
    Step s = begin("launch g" + std::to_string(g) + " after its window was freed");
    for (int r = 0; r < m.n; ++r)  // before any rank's stream takes an error of this launch
      if (m.streams[r][chosen[r]].pending_error != MPI_SUCCESS) return sync_step(true, true);
    for (int r = 0; r < m.n; ++r) {
      Call c = call(Op::GraphLaunch);
      c.graph = g;
      c.stream = chosen[r];
      // Only a rank whose part of the graph holds epoch calls of the freed window has something
      // to report; the others captured none of its epochs (a round without them, or refused).
      const bool holds = std::any_of(gm.calls[r].begin(), gm.calls[r].end(), [&](const Call &x) {
        return x.op != Op::Stamp && x.win >= 0 && !m.wins[x.win].alive;
      });
      c.why = holds ? "its window was freed: does nothing, the synchronisation reports MPI_ERR_WIN"
                    : "its window was freed; this rank captured none of its epochs: does nothing";
      s.calls[r].push_back(c);
      if (holds) m.streams[r][chosen[r]].pending_error = MPI_ERR_WIN;
    }
    // The graph's own stream tasks (not epochs) still run.
    for (const Effect &e : gm.effects) {
      Effect tasks;
      for (const RmaEffect &x : e.rma)
        if (x.kind == 3) tasks.rma.push_back(x);
      if (!tasks.rma.empty()) m.apply(tasks);
    }
    return s;
  }
  const int times = rng_.chance(20) ? 2 : 1;
  // A rank may make the captured calls again itself, eagerly, instead of launching the graph:
  // each replay of captured epochs is the window's next epoch, as an eager one is.
  std::vector<char> eager(static_cast<size_t>(m.n), 0);
  for (int r = 0; r < m.n; ++r)
    eager[r] = allow("eager_replay") && (gm.comms.empty() || allow("eager_replay_coll")) && rng_.chance(25);
  Step s = begin("launch g" + std::to_string(g) + (times > 1 ? " twice" : ""));
  for (int t = 0; t < times; ++t) {
    for (int r = 0; r < m.n; ++r) {
      if (eager[r]) {
        for (Call c : gm.calls[r]) {
          if (c.op == Op::PostStream || c.op == Op::CompleteStream || c.op == Op::WaitStream || c.op == Op::Coll ||
              c.op == Op::Stamp)
            c.stream = chosen[r];
          c.why = "eagerly, as g" + std::to_string(g) + " holds it";
          s.calls[r].push_back(c);
        }
        continue;
      }
      Call c = call(Op::GraphLaunch);
      c.graph = g;
      c.stream = chosen[r];
      s.calls[r].push_back(c);
    }
    for (const Effect &e : gm.effects) m.apply(e);
  }
  for (int r = 0; r < m.n; ++r) {
    for (int w : gm.wins) mark_pending(m.wins[w].pending, r, chosen[r], true);
    for (int c : gm.comms) {
      mark_pending(m.comms[c].pending, r, chosen[r], true);
      m.comms[c].replayed = true;
    }
  }
  return s;
}

Step Generator::graph_destroy() {
  std::vector<int> live;
  for (size_t g = 0; g < m.graphs.size(); ++g)
    if (m.graphs[g].alive) live.push_back(static_cast<int>(g));
  if (live.empty()) return sync_step(true, true);
  const int g = rng_.pick(live);
  Step s = begin("destroy g" + std::to_string(g) + " (its launches may still be queued)");
  for (int r = 0; r < m.n; ++r) {
    Call c = call(Op::GraphDestroy);
    c.graph = g;
    s.calls[r].push_back(c);
  }
  m.graphs[g].alive = false;
  for (WinM &w : m.wins) w.graphs.erase(g);
  for (CommM &c : m.comms) c.graphs.erase(g);
  m.retire_graph_buffers(g);
  return s;
}

}  // namespace rt
