// Rounds: active-target epochs on one or two windows, stream-triggered or host-driven (or captured
// into the open graph), with puts, gets and accumulates of random sizes and datatypes, and illegal
// calls placed before, inside and after the epochs. Also the probe steps: illegal calls on handles
// that are NULL, freed or destroyed.
#include <algorithm>
#include <cstdio>

#include "plan.h"

namespace rt {

namespace {

bool conflicts(const std::vector<Claim> &claims, const Claim &c) {
  for (const Claim &o : claims) {
    if (o.hi <= c.lo || c.hi <= o.lo) continue;
    if (o.kind == 1 && c.kind == 1) continue;
    if (o.kind == 2 && c.kind == 2 && (o.origin == c.origin || (o.op == c.op && o.op != oReplace))) continue;
    return true;
  }
  return false;
}

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

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// One window's part of a round.
struct Part {
  int w = -1;
  bool stream = false, captured = false, nocheck = false;
  std::vector<std::vector<int>> targets, origins;  // by rank
  std::vector<int> s;                             // by rank: the stream
  std::vector<char> access, exposure;             // by rank: opens the epoch (empty groups included)
  std::vector<char> test_close, mixed_close;
  std::vector<std::vector<Claim>> claims;  // by target
};

}  // namespace

std::pair<int, int64_t> Generator::origin_buf(int owner, const Layout &l, bool get, int elem, bool clean, int graph) {
    const int64_t lo = std::min<int64_t>(0, l.lo);
    const int64_t pad = clean ? elem_size(elem) * rng_.range(0, 2) : rng_.range(0, 7);
    const int64_t size = pad - lo + std::max<int64_t>(l.hi, 0) + 8;
    const uint64_t k = key(cfg_.seed, 0xb0f, static_cast<uint64_t>(index_), static_cast<uint64_t>(owner),
                           static_cast<uint64_t>(++bufs_drawn_));
    std::vector<uint8_t> bytes = pattern(static_cast<size_t>(size), k);
    const int64_t off = pad - lo;
    if (clean) {
      const int es = elem_size(elem);
      std::vector<uint8_t> vals = clean_values(elem, l.bytes() / es, k);
      for (int64_t i = 0; i < l.bytes(); ++i) bytes[static_cast<size_t>(off + l.off[static_cast<size_t>(i)])] = vals[static_cast<size_t>(i)];
    }
    const int b = m.new_buf(owner, bytes, get);
    if (graph >= 0) {
      m.bufs[b].graph = graph;
      m.graphs[graph].bufs.push_back(b);
    }
    return std::make_pair(b, off);
}


// One operation from origin o to target t of window w, placed clear of the round's claims on t:
// 1 with its effect, 0 for an operation with nothing to move (count 0), -1 where none fits.
int Generator::draw_rma(int w, int o, int t, std::vector<Claim> &claims, int graph, Call *out, RmaEffect *eff) {
  WinM &W = m.wins[w];
  const bool dynamic = W.kind == WinKind::dynamic;
  WinRank &T = W.r[t];
  int kind = 0;
  const uint64_t kd = rng_.below(100);
  if (kd < 25 && allow("gets")) kind = 1;
  else if (kd < 50 && allow("accumulates") && T.azone > 0) kind = 2;
  Call c = call(kind == 0 ? Op::Put : kind == 1 ? Op::Get : Op::Acc);
  c.win = w;
  c.target = t;
  if (dynamic) c.flags |= fDynamic;
  RmaEffect e;
  e.kind = kind;
  e.win = w;
  e.origin = o;
  e.target = t;
  // Zone and element type.
  const int64_t zlo = kind == 2 ? T.bzone : 0, zhi = kind == 2 ? T.size : kind == 1 ? T.size : T.bzone;
  int elem;
  if (kind == 2) {
    elem = W.acc_elem;
  } else {
    static const int elems[] = {eByte, eByte, eChar, eShort, eInt, eFloat, eDouble, eLongLong};
    elem = elems[rng_.below(8)];
  }
  const int es = elem_size(elem);
  if (zhi - zlo < es) {  // nothing fits: a zero-count operation
    c.ocount = c.tcount = 0;
    c.otype = c.ttype = m.types.named(elem);
    if (kind == 2) c.mop = oSum;
    const auto ob = origin_buf(o, Layout{}, kind == 1, elem, false, graph);
    c.buf = ob.first;
    c.buf_off = ob.second;
    c.why = "zero count";
    *out = c;
    return 0;
  }
  // The target side.
  int ttype = m.types.named(elem), tcount = 0;
  LayoutP tl;
  const bool derived = allow("dtypes") && rng_.chance(30);
  if (derived) {
    ttype = new_type(elem, 2, zhi - zlo);
    tcount = static_cast<int>(rng_.range(1, 2));
    tl = m.types.layout(ttype, tcount);
    if (!tl || tl->hi - std::min<int64_t>(0, tl->lo) > zhi - zlo) {
      tcount = 1;
      tl = m.types.layout(ttype, 1);
    }
  }
  if (!tl || tl->bytes() == 0) {
    ttype = m.types.named(elem);
    const int64_t most = std::min<int64_t>((zhi - zlo) / es, kind == 2 ? 64 : 1 << 20);
    tcount = static_cast<int>(rng_.size_upto(most));
    tl = m.types.layout(ttype, tcount);
  }
  // The displacement: every byte in the zone; accumulates at multiples of the element size.
  const int unit = T.unit;
  int64_t dlo = std::max<int64_t>(0, ceil_div(zlo - tl->lo, unit)), dhi = floor_div(zhi - tl->hi, unit);
  bool placed = false;
  for (int tries = 0; tries < 6 && dlo <= dhi && !placed; ++tries) {
    int64_t disp = rng_.range(dlo, dhi);
    if (kind == 2)
      while (disp >= dlo && (disp * unit) % es) --disp;
    if (disp < dlo) continue;
    Claim cl{disp * unit + tl->lo, disp * unit + tl->hi, kind, o, oSum};
    if (kind == 2) {
      const uint64_t od = rng_.below(100);
      cl.op = od < 40 ? oSum : od < 60 ? oMax : od < 80 ? oMin : oReplace;
    }
    if (conflicts(claims, cl)) continue;
    claims.push_back(cl);
    c.disp = disp;
    c.mop = cl.op;
    placed = true;
  }
  if (!placed) return -1;
  c.ttype = ttype;
  c.tcount = tcount;
  // The origin side: the same signature.
  const int64_t elems = tl->bytes() / es;
  const uint64_t od = rng_.below(100);
  if (derived && od < 40) {
    c.otype = ttype;
    c.ocount = tcount;
  } else if (kind != 2 && od < 60 && elem != eByte) {
    c.otype = m.types.named(eByte);
    c.ocount = static_cast<int>(tl->bytes());
  } else if (derived && od < 80) {
    // Another layout of as many elements: a vector of blocks of one element.
    TypeDesc v;
    v.kind = TypeDesc::vector;
    v.elem = elem;
    v.child = m.types.named(elem);
    v.count = static_cast<int>(elems);
    v.blocklen = 1;
    v.stride = rng_.range(1, 3);
    c.otype = m.types.add(v);
    c.ocount = 1;
  } else {
    c.otype = m.types.named(elem);
    c.ocount = static_cast<int>(elems);
  }
  LayoutP ol = m.types.layout(c.otype, c.ocount);
  if (!ol) {
    c.otype = m.types.named(elem);
    c.ocount = static_cast<int>(elems);
    ol = m.types.layout(c.otype, c.ocount);
  }
  const auto ob = origin_buf(o, *ol, kind == 1, elem, kind == 2, graph);
  c.buf = ob.first;
  c.buf_off = ob.second;
  if (dynamic) c.disp = c.disp * unit;  // an address offset
  e.buf = c.buf;
  e.buf_off = c.buf_off;
  e.ol = ol;
  e.tl = tl;
  e.toff = (dynamic ? c.disp : c.disp * unit);
  e.elem = elem;
  e.op = c.mop;
  *out = c;
  *eff = e;
  return 1;
}

Step Generator::round() {
  const bool host_ok = allow("host_epochs"), stream_ok = allow("stream_epochs");
  if (!host_ok && !stream_ok) return sync_step(true, true);
  std::vector<int> ws;
  const int w1 = pick_live_window(false);
  if (w1 < 0) return win_create();
  ws.push_back(w1);
  if (allow("multi_window") && rng_.chance(20)) {
    const int w2 = pick_live_window(false);
    if (w2 >= 0 && w2 != w1) ws.push_back(w2);
  }
  std::vector<Part> parts;
  bool any_nocheck = false;
  for (int w : ws) {
    WinM &W = m.wins[w];
    Part p;
    p.w = w;
    if (!W.managed) {
      if (!host_ok) continue;
      p.stream = false;
    } else {
      p.stream = stream_ok && (!host_ok || rng_.chance(60));
    }
    if (!p.stream && !m.quiescent(w)) return sync_step(true, true);  // host epochs after stream work
    p.captured = p.stream && m.capturing && rng_.chance(50);
    p.s.assign(static_cast<size_t>(m.n), -1);
    if (p.stream)
      for (int r = 0; r < m.n; ++r) {
        p.s[r] = stream_for_window(w, r, p.captured);
        if (p.s[r] < 0) return sync_step(true, true);
      }
    // MPI_MODE_NOCHECK: every post is made before any start (a barrier between them), on a window
    // no stream work is queued for.
    p.nocheck = allow("nocheck") && !p.captured && W.managed && m.quiescent(w) && rng_.chance(10);
    any_nocheck = any_nocheck || p.nocheck;
    // Who accesses whom.
    const int n = m.n;
    std::vector<std::pair<int, int>> edges;
    const uint64_t shape = rng_.below(4);
    const bool self_ok = rng_.chance(40);
    if (shape == 0) {
      std::vector<int> members;
      for (int r = 0; r < n; ++r)
        if (rng_.chance(75)) members.push_back(r);
      for (size_t i = members.size(); i > 1; --i) std::swap(members[i - 1], members[rng_.below(i)]);
      for (size_t i = 0; i < members.size(); ++i) {
        const int o = members[i], t = members[(i + 1) % members.size()];
        if (o != t || self_ok) edges.push_back({o, t});
      }
    } else if (shape == 3) {
      const int o = static_cast<int>(rng_.below(n)), t = static_cast<int>(rng_.below(n));
      if (o != t || self_ok) edges.push_back({o, t});
    } else {
      const int density = shape == 1 ? 30 : 65;
      for (int o = 0; o < n; ++o)
        for (int t = 0; t < n; ++t)
          if ((o != t || self_ok) && rng_.chance(density)) edges.push_back({o, t});
    }
    p.targets.assign(static_cast<size_t>(n), {});
    p.origins.assign(static_cast<size_t>(n), {});
    for (auto [o, t] : edges) {
      p.targets[o].push_back(t);
      p.origins[t].push_back(o);
    }
    p.access.assign(static_cast<size_t>(n), 0);
    p.exposure.assign(static_cast<size_t>(n), 0);
    p.test_close.assign(static_cast<size_t>(n), 0);
    p.mixed_close.assign(static_cast<size_t>(n), 0);
    for (int r = 0; r < n; ++r) {
      // A rank with an empty group may skip the epoch or open it with the empty group.
      p.access[r] = !p.targets[r].empty() || rng_.chance(40);
      p.exposure[r] = !p.origins[r].empty() || rng_.chance(40);
      if (p.nocheck) p.access[r] = p.exposure[r] = 1;  // every rank takes part (NOCHECK starts need their posts)
      p.test_close[r] = !p.stream && rng_.chance(25);
      p.mixed_close[r] = W.managed && !p.captured && allow("mixed_close") && rng_.chance(3);
    }
    p.claims.assign(static_cast<size_t>(n), {});
    parts.push_back(std::move(p));
  }
  if (parts.empty()) return sync_step(true, true);

  std::string title = "round";
  for (const Part &p : parts)
    title += std::string(" [w") + std::to_string(p.w) + " " + (p.captured ? "captured stream" : p.stream ? "stream" : "host") +
             (p.nocheck ? " nocheck" : "") + "]";
  Step st = begin(title);
  const int n = m.n;
  std::vector<std::vector<Call>> stamps(n), pre(n), posts(n), starts(n), mid(n), ops(n), completes(n), waits(n), post_(n);
  std::vector<RmaEffect> effects_by_part[2];
  int opnum = 0;

  auto new_origin_buf = [&](int owner, const Layout &l, bool get, int elem, bool clean, Part &p) {
    return origin_buf(owner, l, get, elem, clean, p.captured ? m.capture_graph : -1);
  };

  for (size_t pi = 0; pi < parts.size(); ++pi) {
    Part &p = parts[pi];
    for (int o = 0; o < n; ++o) {
      if (!p.access[o]) continue;
      std::vector<int> order = p.targets[o];
      for (int t : order) {
        const uint64_t d = rng_.below(100);
        const int nops = d < 20 ? 0 : d < 65 ? 1 : d < 90 ? 2 : 3;
        for (int k = 0; k < nops; ++k) {
          ++opnum;
          Call c;
          RmaEffect e;
          const int r = draw_rma(p.w, o, t, p.claims[t], p.captured ? m.capture_graph : -1, &c, &e);
          if (r < 0) continue;
          if (r == 1) effects_by_part[pi].push_back(e);
          ops[o].push_back(c);
        }
      }
      // Operations to MPI_PROC_NULL do nothing; a get's buffer stays as it was.
      if (allow("proc_null") && rng_.chance(15)) {
        ++opnum;
        const int kind = rng_.below(3) == 0 && allow("gets") ? 1 : 0;
        Call c = call(kind == 1 ? Op::Get : Op::Put);
        c.win = p.w;
        c.target = kProcNull;
        c.otype = c.ttype = m.types.named(eInt);
        c.ocount = c.tcount = static_cast<int>(rng_.range(1, 64));
        c.disp = rng_.range(0, 1 << 20);
        LayoutP l = m.types.layout(c.otype, c.ocount);
        const auto ob = new_origin_buf(o, *l, kind == 1, eInt, false, p);
        c.buf = ob.first;
        c.buf_off = ob.second;
        c.why = "does nothing";
        ops[o].push_back(c);
      }
    }
    // Some put sources are rewritten by a stream task enqueued before the epoch (the pack kernel of
    // a real program): each run, eager or replayed, writes the buffer's next generation, and the
    // put moves what the buffer holds when the stream reaches the complete.
    if (p.stream && allow("stamps"))
      for (int o = 0; o < n; ++o)
        for (const Call &c : ops[o]) {
          if (c.win != p.w || c.op != Op::Put || c.buf < 0 || c.ocount <= 0 || !rng_.chance(20)) continue;
          BufM &b = m.bufs[c.buf];
          if (b.stamp_key) continue;
          b.stamp_key = key(cfg_.seed, 0x57a, static_cast<uint64_t>(c.buf));
          b.check = true;
          Call k = call(Op::Stamp);
          k.win = p.w;
          k.stream = p.s[o];
          k.buf = c.buf;
          stamps[o].push_back(k);
          RmaEffect e;
          e.kind = 3;
          e.win = p.w;
          e.buf = c.buf;
          effects_by_part[pi].push_back(e);
        }
    // Epoch calls.
    for (int r = 0; r < n; ++r) {
      if (p.exposure[r]) {
        Call c = call(p.stream ? Op::PostStream : Op::Post);
        c.win = p.w;
        c.group = p.origins[r];
        c.stream = p.s[r];
        if (p.nocheck && !p.stream) c.assert_bits = MPI_MODE_NOCHECK;
        posts[r].push_back(c);
        Call wc = call(p.stream ? Op::WaitStream : p.test_close[r] ? Op::TestLoop : Op::Wait);
        wc.win = p.w;
        wc.stream = p.s[r];
        if (p.mixed_close[r]) {
          // The man pages (MPIX_Win_post_stream(3), MPIX_Win_wait_stream(3)): an exposure epoch is
          // closed by the form that opened it; the other form is refused and the epoch stays open.
          Call bad = wc;
          bad.flags |= fMixedClose;
          bad.op = p.stream ? Op::Wait : Op::WaitStream;
          if (!p.stream) bad.stream = live_stream(r);
          if (p.stream || bad.stream >= 0)
            waits[r].push_back(expect(bad, MPI_ERR_RMA_SYNC, "closes the other form's exposure epoch"));
        }
        waits[r].push_back(wc);
      }
      if (p.access[r]) {
        Call c = call(Op::Start);
        c.win = p.w;
        c.group = p.targets[r];
        c.assert_bits = (p.stream ? MPIX_MODE_STREAM : 0) | (p.nocheck ? MPI_MODE_NOCHECK : 0);
        starts[r].push_back(c);
        Call cc = call(p.stream ? Op::CompleteStream : Op::Complete);
        cc.win = p.w;
        cc.stream = p.s[r];
        completes[r].push_back(cc);
      }
    }
  }

  // Illegal calls: each leaves everything as it was.
  if (allow("illegal")) {
    for (int r = 0; r < n; ++r) {
      if (!rng_.chance(cfg_.illegal_percent)) continue;
      Part &p = parts[rng_.below(parts.size())];
      WinM &W = m.wins[p.w];
      const int any_stream = live_stream(r);
      const uint64_t where = rng_.below(3);
      if (!W.managed) {
        // The stream calls refuse windows the library does not manage.
        const uint64_t d = rng_.below(4);
        Call c = call(d == 0 ? Op::PostStream : d == 1 ? Op::Start : d == 2 ? Op::CompleteStream : Op::WaitStream);
        c.win = p.w;
        c.stream = any_stream;
        if (c.op == Op::Start) c.assert_bits = MPIX_MODE_STREAM;
        if (c.stream < 0 && c.op != Op::Start) continue;
        c = expect(c, MPI_ERR_WIN, "a window the library does not manage");
        pre[r].push_back(c);
        continue;
      }
      if (where == 0) {
        const uint64_t d = rng_.below(5);
        if (d == 0) {
          Call c = call(rng_.chance(50) && any_stream >= 0 ? Op::CompleteStream : Op::Complete);
          c.win = p.w;
          c.stream = any_stream;
          pre[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "no access epoch is open"));
        } else if (d == 1) {
          Call c = call(rng_.chance(50) && any_stream >= 0 ? Op::WaitStream : Op::Wait);
          c.win = p.w;
          c.stream = any_stream;
          pre[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "no exposure epoch is open"));
        } else if (d == 2) {
          Call c = call(Op::Put);
          c.win = p.w;
          c.target = static_cast<int>(rng_.below(n));
          c.otype = c.ttype = m.types.named(eByte);
          c.ocount = c.tcount = 1;
          LayoutP l = m.types.layout(c.otype, 1);
          const auto ob = new_origin_buf(r, *l, false, eByte, false, p);
          c.buf = ob.first;
          c.buf_off = ob.second;
          pre[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "outside an access epoch"));
        } else if (d == 3 && any_stream >= 0) {
          Call c = call(Op::PostStream);
          c.win = p.w;
          c.group = {r};
          c.stream = kNullRef;
          pre[r].push_back(expect(c, MPI_ERR_ARG, "the stream is NULL"));
        } else if (any_stream >= 0 && allow("handle_lifetimes")) {
          int dead = -1;
          for (size_t i = 0; i < m.streams[r].size(); ++i)
            if (!m.streams[r][i].alive) dead = static_cast<int>(i);
          if (dead < 0) continue;
          Call c = call(Op::PostStream);
          c.win = p.w;
          c.group = {r};
          c.stream = dead;
          c.flags |= fDeadStream;
          pre[r].push_back(expect(c, MPI_ERR_ARG, "the stream was destroyed"));
        }
        continue;
      }
      if (where == 1 && (p.access[r] || p.exposure[r])) {
        const uint64_t d = rng_.below(12);
        const bool acc = p.access[r];
        if (d == 0 && p.exposure[r]) {
          Call c = call(any_stream >= 0 && rng_.chance(50) ? Op::PostStream : Op::Post);
          c.stream = any_stream;
          c.win = p.w;
          c.group = p.origins[r];
          mid[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "an exposure epoch is still open"));
        } else if (d == 1 && acc) {
          Call c = call(Op::Start);
          c.win = p.w;
          c.group = p.targets[r];
          c.assert_bits = rng_.chance(50) ? MPIX_MODE_STREAM : 0;
          mid[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "an access epoch is still open"));
        } else if (d == 2) {
          Call c = call(Op::Fence);
          c.win = p.w;
          mid[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "a fence inside an active-target epoch"));
        } else if (d == 3 && acc && (p.stream || any_stream >= 0)) {
          Call c = call(p.stream ? Op::Complete : Op::CompleteStream);
          c.win = p.w;
          c.stream = any_stream;
          mid[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "the access epoch was opened in the other mode"));
        } else if (d == 4 && acc && p.stream) {
          Call c = call(Op::CompleteStream);
          c.win = p.w;
          c.stream = kNullRef;
          mid[r].push_back(expect(c, MPI_ERR_ARG, "the stream is NULL"));
        } else if (d == 5 && acc && p.stream && allow("lock_in_epoch")) {
          Call c = call(Op::LockAll);
          c.win = p.w;
          mid[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "a lock epoch inside an open stream epoch (issue 47 item 4)"));
        } else if (d == 6 && acc && p.stream && allow("uninterposed_rma")) {
          Call c = call(Op::FetchOp);
          c.win = p.w;
          c.target = p.targets[r].empty() ? r : p.targets[r][0];
          LayoutP l = m.types.layout(m.types.named(eInt), 2);
          const auto ob = new_origin_buf(r, *l, false, eInt, false, p);
          c.buf = ob.first;
          c.buf_off = ob.second;
          mid[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "an RMA call the library does not record in its epochs",
                                  MPI_ERR_UNSUPPORTED_OPERATION));
        } else if (acc) {
          // Arguments: one thing wrong each.
          Call c = call(Op::Put);
          c.win = p.w;
          c.otype = c.ttype = m.types.named(eInt);
          c.ocount = c.tcount = 2;
          const int t = p.targets[r].empty() ? -1 : p.targets[r][rng_.below(p.targets[r].size())];
          c.target = t;
          c.disp = 0;
          const uint64_t e = rng_.below(t >= 0 ? 11 : 2);
          std::vector<int> outside;
          for (int q = 0; q < n; ++q)
            if (std::find(p.targets[r].begin(), p.targets[r].end(), q) == p.targets[r].end()) outside.push_back(q);
          if (e == 0) {
            c.target = rng_.chance(50) ? n : -7;
            c = expect(c, MPI_ERR_RANK, "the target rank is not in the window");
          } else if (e == 1) {
            if (outside.empty()) continue;
            c.target = rng_.pick(outside);
            c = expect(c, MPI_ERR_RMA_SYNC, "the target is not in the group of MPI_Win_start");
          } else if (e == 2) {
            const WinRank &T = W.r[t];
            c.disp = (T.size + T.unit - 1) / T.unit;
            if (W.kind == WinKind::dynamic) continue;
            c = expect(c, MPI_ERR_RMA_RANGE, "past the end of the target's window");
          } else if (e == 3) {
            if (W.kind == WinKind::dynamic) continue;
            c.disp = -1 - static_cast<int64_t>(rng_.below(64));
            c = expect(c, MPI_ERR_DISP, "a negative displacement");
          } else if (e == 4) {
            c.ocount = c.tcount = -1 - static_cast<int>(rng_.below(3));
            c = expect(c, MPI_ERR_COUNT, "a negative count");
          } else if (e == 5) {
            c.flags |= fNullOrigin;
            c = expect(c, MPI_ERR_BUFFER, "a NULL origin buffer");
          } else if (e == 6) {
            c.otype = m.types.named(eByte);
            c.ocount = 3;
            c.tcount = 1;
            c = expect(c, MPI_ERR_TYPE, "origin and target describe different byte counts");
          } else if (e == 7) {
            if (W.r[t].azone < 16) continue;
            c.op = Op::Acc;
            c.otype = c.ttype = m.types.named(W.acc_elem);
            c.disp = W.r[t].bzone / W.r[t].unit;
            c.mop = rng_.chance(50) ? oProd : oNull;
            c = expect(c, MPI_ERR_OP, "an operator accumulates do not take");
          } else if (e == 8) {
            if (W.r[t].azone < 16) continue;
            c.op = Op::Acc;
            c.otype = c.ttype = m.types.named(rng_.chance(50) ? eUnsigned : eShort);
            c.disp = W.r[t].bzone / W.r[t].unit;
            c.mop = oSum;
            c = expect(c, MPI_ERR_TYPE, "an element type accumulates do not take");
          } else if (e == 9) {
            if (W.r[t].azone < 16) continue;
            c.op = Op::Acc;
            c.otype = m.types.named(eInt32);
            c.ttype = m.types.named(eInt64);
            c.ocount = 2;
            c.tcount = 1;
            c.disp = W.r[t].bzone / W.r[t].unit;
            c.mop = oSum;
            c = expect(c, MPI_ERR_TYPE, "origin and target element types differ");
          } else {
            if (!allow("uncommitted_type")) continue;
            TypeDesc v;
            v.kind = TypeDesc::contiguous;
            v.elem = eInt;
            v.child = m.types.named(eInt);
            v.count = 2;
            c.otype = m.types.add(v);
            c.ocount = 1;
            c.flags |= fUncommitted;
            c = expect(c, MPI_ERR_TYPE, "an uncommitted datatype (issue 47 item 5)");
          }
          if (W.kind == WinKind::dynamic) c.flags |= fDynamic;
          LayoutP l = m.types.layout(m.types.named(eInt), 4);
          const auto ob = new_origin_buf(r, *l, false, eInt, false, p);
          c.buf = ob.first;
          c.buf_off = ob.second;
          mid[r].push_back(c);
        }
        continue;
      }
      // After the epochs: they are closed.
      const uint64_t d = rng_.below(3);
      if (d == 0 && p.access[r]) {
        Call c = call(p.stream ? Op::CompleteStream : Op::Complete);
        c.win = p.w;
        c.stream = p.stream ? any_stream : -1;
        if (p.stream && c.stream < 0) continue;
        post_[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "the access epoch is closed already"));
      } else if (d == 1 && p.exposure[r]) {
        Call c = call(p.stream ? Op::WaitStream : Op::Wait);
        c.win = p.w;
        c.stream = p.stream ? any_stream : -1;
        if (p.stream && c.stream < 0) continue;
        post_[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "the exposure epoch is closed already"));
      } else {
        Call c = call(Op::Get);
        c.win = p.w;
        c.target = static_cast<int>(rng_.below(n));
        c.otype = c.ttype = m.types.named(eByte);
        c.ocount = c.tcount = 4;
        LayoutP l = m.types.layout(c.otype, 4);
        const auto ob = new_origin_buf(r, *l, false, eByte, false, p);
        c.buf = ob.first;
        c.buf_off = ob.second;
        post_[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "outside an access epoch"));
      }
    }
  }

  // MPI_Win_free on every rank while some rank has an epoch open: refused on every rank (the ranks
  // agree), and the window works on.
  const Part &p0 = parts[0];
  bool open_somewhere = false;
  for (int r = 0; r < n; ++r) open_somewhere = open_somewhere || p0.access[r] || p0.exposure[r];
  const bool free_probe = allow("free_in_epoch") && m.wins[p0.w].managed && open_somewhere && rng_.chance(3);

  bool unmanaged_host = false;
  for (const Part &p : parts) unmanaged_host = unmanaged_host || !m.wins[p.w].managed;
  // Assemble each rank's calls: phases in order, the windows' calls shuffled within a phase.
  auto shuffled = [&](std::vector<Call> v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng_.below(i)]);
    return v;
  };
  for (int r = 0; r < n; ++r) {
    std::vector<Call> &out = st.calls[r];
    for (const Part &p : parts)
      if (p.stream && !p.captured && (p.access[r] || p.exposure[r]) && allow("delays") && rng_.chance(5)) {
        Call d = call(Op::Delay);
        d.stream = p.s[r];
        d.len = rng_.range(5, 40);
        out.push_back(d);
      }
    for (const Call &c : stamps[r]) out.push_back(c);
    for (const Call &c : pre[r]) out.push_back(c);
    for (const Call &c : shuffled(posts[r])) out.push_back(c);
    if (any_nocheck) out.push_back(call(Op::Barrier));
    for (const Call &c : shuffled(starts[r])) out.push_back(c);
    if (free_probe) {
      Call c = call(Op::WinFree);
      c.win = p0.w;
      out.push_back(expect(c, MPI_ERR_RMA_SYNC, "an epoch is open on some rank"));
    }
    for (const Call &c : mid[r]) out.push_back(c);
    // Operations in program order per window (accumulates of one origin keep their order), the
    // windows interleaved.
    for (const Call &c : ops[r]) out.push_back(c);
    for (const Call &c : shuffled(completes[r])) out.push_back(c);
    for (const Call &c : shuffled(waits[r])) out.push_back(c);
    for (const Call &c : post_[r]) out.push_back(c);
    // MPICH 4.0.2's own active-target epochs (windows the library does not manage) hang when a
    // post of the next epoch reaches an origin still in MPI_Win_start of this one
    // (notes/random_findings.md): a barrier ends such rounds.
    if (unmanaged_host) {
      Call b = call(Op::Barrier);
      b.why = "MPICH's own PSCW: no post of the next epoch before this one ends";
      out.push_back(b);
    }
    // The captured calls, for a rank that later runs them eagerly instead of launching the graph.
    for (const Call &c : out) {
      bool captured = false;
      for (const Part &p : parts) captured = captured || (p.captured && p.w == c.win);
      const bool stream_work = c.op == Op::PostStream || c.op == Op::Start || c.op == Op::Put || c.op == Op::Get ||
                               c.op == Op::Acc || c.op == Op::CompleteStream || c.op == Op::WaitStream ||
                               c.op == Op::Stamp;
      if (captured && stream_work && c.expect == MPI_SUCCESS && c.expect_alt < 0)
        m.graphs[m.capture_graph].calls[r].push_back(c);
    }
  }

  // Effects: applied now, or recorded into the open capture.
  for (size_t pi = 0; pi < parts.size(); ++pi) {
    const Part &p = parts[pi];
    Effect e;
    e.kind = Effect::round;
    e.rma = effects_by_part[pi];
    if (p.captured) {
      GraphM &g = m.graphs[m.capture_graph];
      g.effects.push_back(e);
      g.wins.insert(p.w);
      m.wins[p.w].graphs.insert(m.capture_graph);
    } else {
      m.apply(e);
      for (int r = 0; r < n; ++r) {
        const bool stream_calls = p.stream && (p.access[r] || p.exposure[r]);
        if (stream_calls && p.s[r] >= 0) mark_pending(m.wins[p.w].pending, r, p.s[r], false);
      }
    }
  }
  return st;
}

// ---- probes ----------------------------------------------------------------------------------------------

Step Generator::probe() {
  Step s = begin("probes: illegal calls on handles");
  int made = 0;
  for (int r = 0; r < m.n; ++r) {
    const int k = static_cast<int>(rng_.range(1, 3));
    for (int i = 0; i < k; ++i) {
      const uint64_t d = rng_.below(13);
      const int any_stream = live_stream(r);
      if (d == 0) {
        static const Op ops[] = {Op::PostStream, Op::CompleteStream, Op::WaitStream, Op::Start, Op::Post,
                                 Op::Complete,   Op::Wait,           Op::Put,        Op::Fence};
        Call c = call(ops[rng_.below(9)]);
        c.win = kNullRef;
        c.stream = any_stream;
        c.group = {r};
        if (c.op == Op::Put) {
          LayoutP l = m.types.layout(m.types.named(eByte), 8);
          c.buf = m.new_buf(r, std::vector<uint8_t>(16, 0), false);
          c.otype = c.ttype = m.types.named(eByte);
          c.ocount = c.tcount = 8;
        }
        if ((c.op == Op::PostStream || c.op == Op::CompleteStream || c.op == Op::WaitStream) && any_stream < 0) continue;
        s.calls[r].push_back(expect(c, MPI_ERR_WIN, "MPI_WIN_NULL"));
      } else if (d == 1 || d == 2) {
        // A freed window's handle (the library refuses it; the MPI may hand it out again, which
        // the runner notices and then skips the call).
        std::vector<int> freed;
        for (size_t w = 0; w < m.wins.size(); ++w)
          if (m.wins[w].created && !m.wins[w].alive && kind_managed(m.wins[w].kind)) freed.push_back(static_cast<int>(w));
        if (freed.empty()) continue;
        static const Op ops[] = {Op::PostStream, Op::CompleteStream, Op::WaitStream, Op::Start, Op::Put,
                                 Op::Complete,   Op::Wait,           Op::Fence,      Op::WinFree};
        Call c = call(ops[rng_.below(9)]);
        c.win = rng_.pick(freed);
        c.flags |= fStaleWin;
        c.stream = any_stream;
        c.group = {r};
        if (c.op == Op::Start) c.assert_bits = MPIX_MODE_STREAM;
        if (c.op == Op::Put) {
          c.buf = m.new_buf(r, std::vector<uint8_t>(16, 0), false);
          c.otype = c.ttype = m.types.named(eByte);
          c.ocount = c.tcount = 8;
        }
        if ((c.op == Op::PostStream || c.op == Op::CompleteStream || c.op == Op::WaitStream) && any_stream < 0) continue;
        s.calls[r].push_back(expect(c, MPI_ERR_WIN, "the window was freed"));
      } else if (d == 3 || d == 4) {
        // Closing calls and RMA with no epoch open, between rounds.
        const int w = pick_live_window(true);
        if (w < 0) continue;
        static const Op ops[] = {Op::Complete, Op::Wait, Op::CompleteStream, Op::WaitStream, Op::Put, Op::Get};
        Call c = call(ops[rng_.below(6)]);
        c.win = w;
        c.stream = any_stream;
        if ((c.op == Op::CompleteStream || c.op == Op::WaitStream) && any_stream < 0) continue;
        if (c.op == Op::Put || c.op == Op::Get) {
          c.buf = m.new_buf(r, std::vector<uint8_t>(16, 0), false);
          c.otype = c.ttype = m.types.named(eByte);
          c.ocount = c.tcount = 8;
          c.target = static_cast<int>(rng_.below(m.n));
        }
        s.calls[r].push_back(expect(c, MPI_ERR_RMA_SYNC, "no epoch is open"));
      } else if (d == 5) {
        const int w = pick_live_window(false);
        if (w < 0 || m.wins[w].managed || any_stream < 0) continue;
        Call c = call(rng_.chance(50) ? Op::PostStream : Op::WaitStream);
        c.win = w;
        c.stream = any_stream;
        c.group = {r};
        s.calls[r].push_back(expect(c, MPI_ERR_WIN, "a window the library does not manage"));
      } else if (d == 6) {
        // NULL streams.
        Call c = call(rng_.chance(50) ? Op::StreamSync : Op::StreamDestroy);
        c.stream = kNullRef;
        s.calls[r].push_back(expect(c, MPI_ERR_ARG, "the stream is NULL"));
      } else if (d == 7 && allow("handle_lifetimes")) {
        int dead = -1;
        for (size_t i = 0; i < m.streams[r].size(); ++i)
          if (!m.streams[r][i].alive) dead = static_cast<int>(i);
        if (dead < 0) continue;
        static const Op ops[] = {Op::StreamSync, Op::StreamDestroy, Op::CaptureBegin};
        Call c = call(ops[rng_.below(3)]);
        c.stream = dead;
        c.flags |= fDeadStream;
        s.calls[r].push_back(expect(c, MPI_ERR_ARG, "the stream was destroyed"));
      } else if (d == 8 && allow("handle_lifetimes") && allow("graphs")) {
        int dead = -1;
        for (size_t g = 0; g < m.graphs.size(); ++g)
          if (!m.graphs[g].alive && !(m.capturing && m.capture_graph == static_cast<int>(g))) dead = static_cast<int>(g);
        if (dead < 0 || any_stream < 0) continue;
        Call c = call(rng_.chance(50) ? Op::GraphDestroy : Op::GraphLaunch);
        c.graph = dead;
        c.stream = any_stream;
        c.flags |= fDeadGraph;
        s.calls[r].push_back(expect(c, MPI_ERR_ARG, "the graph was destroyed"));
      } else if (d == 9 && m.capturing && allow("graphs")) {
        // A capturing stream: no synchronisation, no nested capture, no launch onto it.
        const int cs = m.capture_stream[r];
        const uint64_t e = rng_.below(3);
        Call c = call(e == 0 ? Op::StreamSync : e == 1 ? Op::CaptureBegin : Op::GraphLaunch);
        c.stream = cs;
        if (c.op == Op::GraphLaunch) {
          int live = -1;
          for (size_t g = 0; g < m.graphs.size(); ++g)
            if (m.graphs[g].alive) live = static_cast<int>(g);
          if (live < 0) continue;
          c.graph = live;
        }
        s.calls[r].push_back(expect(c, MPI_ERR_OTHER, "the stream is capturing"));
      } else if (d == 10 && allow("graphs")) {
        const int ns = any_stream;
        if (ns < 0) continue;
        Call c = call(Op::CaptureEnd);
        c.stream = ns;
        c.graph = -1;
        s.calls[r].push_back(expect(c, MPI_ERR_OTHER, "the stream is not capturing"));
      } else if (d == 12 && allow("enqueue")) {
        // MPIX_Stream_free of a stream still bound to a communicator, or of one freed already.
        int bound = -1, freed = -1;
        for (size_t i = 0; i < m.mstreams.size(); ++i) {
          if (m.mstreams[i].alive && m.mstreams[i].comms > 0) bound = static_cast<int>(i);
          if (!m.mstreams[i].alive) freed = static_cast<int>(i);
        }
        Call c = call(Op::MStreamFree);
        if (bound >= 0 && (freed < 0 || rng_.chance(50))) {
          c.mstream = bound;
          c = expect(c, MPI_ERR_OTHER, "a communicator is still bound to it");
        } else if (freed >= 0) {
          c.mstream = freed;
          c = expect(c, MPI_ERR_ARG, "freed already");
        } else {
          continue;
        }
        s.calls[r].push_back(c);
      } else if (d == 11 && m.capturing && allow("graphs") && allow("handle_lifetimes")) {
        Call c = call(Op::StreamDestroy);
        c.stream = m.capture_stream[r];
        s.calls[r].push_back(expect(c, MPI_ERR_OTHER, "the stream is capturing"));
      } else {
        continue;
      }
      ++made;
    }
  }
  if (!made) return Step{};
  return s;
}

// ---- not yet drawn ------------------------------------------------------------------------------------------

// Fence and lock epochs of the underlying MPI on a window (managed or not) that no stream work is
// queued for: fence(0 or MPI_MODE_NOPRECEDE), operations, fence(MPI_MODE_NOSUCCEED); or
// MPI_Win_lock_all, operations, MPI_Win_unlock_all and a barrier. The operations go to the MPI
// (rma-epochs.md: "Fence and lock epochs on managed windows go to the underlying MPI").
Step Generator::fence_round() {
  const int w = pick_live_window(false);
  if (w < 0) return Step{};
  // MPICH 4.0.2 places a rank's part of an MPI_Win_allocate window at a 16-byte boundary but
  // addresses its RMA as if the parts were packed (notes/random_findings.md, F4): the MPI's own RMA
  // is drawn on such windows only where every part is a multiple of 16 bytes.
  if (m.wins[w].kind == WinKind::allocate)
    for (const WinRank &wr : m.wins[w].r)
      if (wr.size % 16) return Step{};
  // A fence or lock epoch after stream epochs still queued: the library lets them run first
  // (rma-epochs.md); replays are the program's to synchronise.
  bool queued = false;
  for (const auto &p : m.wins[w].pending)
    for (const auto &q : p) {
      if (q.second) return sync_step(true, true);
      queued = true;
    }
  if (queued && (!allow("fence_after_stream") || !m.wins[w].managed)) return sync_step(true, true);
  const bool lock = rng_.chance(40);
  Step s = begin(std::string(lock ? "lock_all epoch" : "fence epoch") + " on w" + std::to_string(w));
  std::vector<std::vector<Claim>> claims(static_cast<size_t>(m.n));
  std::vector<RmaEffect> effects;
  for (int r = 0; r < m.n; ++r) {
    Call open = call(lock ? Op::LockAll : Op::Fence);
    open.win = w;
    open.assert_bits = !lock && !queued && rng_.chance(50) ? MPI_MODE_NOPRECEDE : 0;
    if (queued) open.why = "after stream epochs still queued, which run first";
    s.calls[r].push_back(open);
    // Each rank's MPI_Win_lock_all lets its own queued epochs run, and nothing orders a lock
    // epoch after another rank's earlier epochs (a target may still be in MPI_Win_wait for a
    // host-driven put when an origin's lock_all returns): every rank's lock_all has returned
    // before any operation.
    if (lock) s.calls[r].push_back(call(Op::Barrier));
  }
  for (int o = 0; o < m.n; ++o) {
    if (!rng_.chance(70)) continue;
    const int k = static_cast<int>(rng_.range(1, 3));
    for (int i = 0; i < k; ++i) {
      const int t = static_cast<int>(rng_.below(static_cast<uint64_t>(m.n)));
      Call c;
      RmaEffect e;
      const int rc = draw_rma(w, o, t, claims[t], -1, &c, &e);
      if (rc < 0) continue;
      if (rc == 1) effects.push_back(e);
      s.calls[o].push_back(c);
    }
  }
  for (int r = 0; r < m.n; ++r) {
    Call close = call(lock ? Op::UnlockAll : Op::Fence);
    close.win = w;
    close.assert_bits = lock ? 0 : MPI_MODE_NOSUCCEED;
    s.calls[r].push_back(close);
    if (lock) s.calls[r].push_back(call(Op::Barrier));  // every origin's unlock_all has returned
  }
  Effect e;
  e.kind = Effect::round;
  e.rma = effects;
  m.apply(e);
  for (auto &p : m.wins[w].pending) p.clear();  // the window's queued epochs ran first
  return s;
}


}  // namespace rt
