// Stream collectives in plans: communicators made (duplicates, splits, and MPICH's enqueue spelling
// on an MPIX_Stream) and freed, collectives of every kind with random counts, types, operators,
// roots and MPI_IN_PLACE, eager or captured into the open graph, and calls with one wrong argument
// made the same on every rank (so every rank refuses it and none waits for the others).
#include <algorithm>

#include "plan.h"

namespace rt {

namespace {
Call call(Op op) {
  Call c;
  c.op = op;
  return c;
}
Call expect(Call c, int cls, const std::string &why) {
  c.expect = cls;
  c.why = why;
  return c;
}
// The reduction types of the man pages.
const int kReduceElems[] = {eInt8, eUint8, eInt, eUnsigned, eInt32, eUint32, eLong, eLongLong, eInt64, eUint64,
                            eFloat, eDouble};
}  // namespace

Step Generator::comm_create() {
  int live = 0;
  for (const CommM &c : m.comms) live += c.alive;
  if (live >= 4) return Step{};
  const uint64_t d = rng_.below(100);
  if (d < 25 && allow("enqueue")) {
    // An MPIX_Stream over one host stream per rank (not one a capture uses), and a communicator
    // bound to it.
    MStreamM ms;
    ms.alive = true;
    ms.stream.assign(static_cast<size_t>(m.n), -1);
    for (int r = 0; r < m.n; ++r) {
      ms.stream[r] = live_stream(r);
      if (ms.stream[r] < 0) return Step{};
    }
    const int mid = static_cast<int>(m.mstreams.size());
    CommM cm;
    cm.alive = true;
    cm.kind = 2;
    cm.mstream = mid;
    for (int r = 0; r < m.n; ++r) cm.members.push_back(r);
    cm.pending.resize(static_cast<size_t>(m.n));
    const int cid = static_cast<int>(m.comms.size());
    Step s = begin("communicator c" + std::to_string(cid) + " bound to the MPIX_Stream m" + std::to_string(mid));
    for (int r = 0; r < m.n; ++r) {
      Call a = call(Op::MStreamCreate);
      a.mstream = mid;
      a.stream = ms.stream[r];
      s.calls[r].push_back(a);
      Call b = call(Op::CommCreate);
      b.comm = cid;
      b.mstream = mid;
      s.calls[r].push_back(b);
      ++m.streams[r][ms.stream[r]].bound;
    }
    ms.comms = 1;
    m.mstreams.push_back(ms);
    m.comms.push_back(cm);
    return s;
  }
  if (d < 60 || m.n < 2) {
    CommM cm;
    cm.alive = true;
    cm.kind = 0;
    for (int r = 0; r < m.n; ++r) cm.members.push_back(r);
    cm.pending.resize(static_cast<size_t>(m.n));
    const int cid = static_cast<int>(m.comms.size());
    m.comms.push_back(cm);
    Step s = begin("communicator c" + std::to_string(cid) + " (MPI_Comm_dup of MPI_COMM_WORLD)");
    for (int r = 0; r < m.n; ++r) {
      Call b = call(Op::CommCreate);
      b.comm = cid;
      s.calls[r].push_back(b);
    }
    return s;
  }
  // A split into two colours, ranks reordered by key.
  std::vector<int> color(static_cast<size_t>(m.n)), keyv(static_cast<size_t>(m.n));
  for (int r = 0; r < m.n; ++r) {
    color[r] = static_cast<int>(rng_.below(2));
    keyv[r] = static_cast<int>(rng_.below(4));
  }
  const int base = static_cast<int>(m.comms.size());
  Step s = begin("communicators c" + std::to_string(base) + ", c" + std::to_string(base + 1) +
                 " (MPI_Comm_split of MPI_COMM_WORLD, two colours)");
  for (int col = 0; col < 2; ++col) {
    CommM cm;
    cm.alive = true;
    cm.kind = 1;
    cm.color = col;
    for (int r = 0; r < m.n; ++r)
      if (color[r] == col) cm.members.push_back(r);
    std::stable_sort(cm.members.begin(), cm.members.end(), [&](int a, int b) { return keyv[a] < keyv[b]; });
    cm.pending.resize(static_cast<size_t>(m.n));
    if (cm.members.empty()) cm.alive = false;
    m.comms.push_back(cm);
  }
  for (int r = 0; r < m.n; ++r) {
    Call b = call(Op::CommCreate);
    b.comm = base + color[r];
    b.root = color[r];
    b.disp = keyv[r];
    s.calls[r].push_back(b);
  }
  return s;
}

Step Generator::comm_free() {
  std::vector<int> ok;
  for (size_t c = 0; c < m.comms.size(); ++c)
    if (m.comms[c].alive && m.comms[c].graphs.empty()) ok.push_back(static_cast<int>(c));
  if (ok.empty()) return Step{};
  // Communicators whose collectives were replayed are freed first more often (their drain counts
  // replays too).
  std::vector<int> replayed;
  for (int k : ok)
    if (m.comms[k].replayed) replayed.push_back(k);
  const int c = !replayed.empty() && rng_.chance(60) ? rng_.pick(replayed) : rng_.pick(ok);
  CommM &cm = m.comms[c];
  // Launched graphs' collectives are not waited for by MPI_Comm_free: synchronise first.
  for (int r : cm.members)
    for (const auto &p : cm.pending[r])
      if (p.second || (cm.replayed && !allow("comm_free_after_replay"))) return sync_step(true, true);
  Step s = begin("free c" + std::to_string(c) + " (its collectives may still be queued)");
  const bool free_mstream = cm.kind == 2 && rng_.chance(70);
  for (int r : cm.members) {
    Call k = call(Op::CommFree);
    k.comm = c;
    s.calls[r].push_back(k);
    if (cm.kind == 2) {
      Call f = call(Op::MStreamFree);
      f.mstream = cm.mstream;
      if (!free_mstream) {
        // Not freed while a communicator is bound ... which it no longer is: it is freed.
      }
      if (free_mstream) s.calls[r].push_back(f);
    }
  }
  for (auto &p : cm.pending) p.clear();  // MPI_Comm_free waits for the enqueued collectives
  cm.alive = false;
  if (cm.kind == 2) {
    MStreamM &ms = m.mstreams[cm.mstream];
    --ms.comms;
    if (free_mstream) {
      ms.alive = false;
      for (int r = 0; r < m.n; ++r) --m.streams[r][ms.stream[r]].bound;
    }
  }
  return s;
}

Step Generator::coll_step() {
  std::vector<int> ok;
  for (size_t c = 0; c < m.comms.size(); ++c)
    if (m.comms[c].alive) ok.push_back(static_cast<int>(c));
  if (ok.empty()) return comm_create();
  const int c = rng_.pick(ok);
  CommM &cm = m.comms[c];
  const int p = static_cast<int>(cm.members.size());
  const bool enqueue = cm.kind == 2;
  const bool captured = !enqueue && m.capturing && allow("graphs") && rng_.chance(40);
  std::vector<int> strm(static_cast<size_t>(m.n), -1);
  for (int r : cm.members) {
    strm[r] = stream_for_comm(c, r, captured);
    if (strm[r] < 0) return sync_step(true, true);
  }
  // The collective.
  Coll kind;
  const uint64_t d = rng_.below(100);
  kind = d < 35 ? Coll::allreduce : d < 50 ? Coll::reduce : d < 70 ? Coll::bcast : d < 85 ? Coll::allgather : Coll::alltoall;
  if (enqueue && kind == Coll::reduce) kind = Coll::allreduce;  // no reduce in the enqueue spelling
  const bool reduction = kind == Coll::allreduce || kind == Coll::reduce;
  int elem, op = oSum;
  if (reduction) {
    elem = kReduceElems[rng_.below(12)];
    const uint64_t od = rng_.below(100);
    op = od < 40 ? oSum : od < 50 ? oProd : od < 65 ? oMax : od < 80 ? oMin : od < 87 ? oBand : od < 94 ? oBor : oBxor;
    if (elem_float(elem) && op >= oBand) op = oSum;
  } else {
    static const int elems[] = {eByte, eChar, eShort, eInt, eDouble, eUint8, eLongLong};
    elem = elems[rng_.below(7)];
  }
  const int es = elem_size(elem);
  int64_t count;
  const uint64_t cd = rng_.below(100);
  count = cd < 5 ? 0 : cd < 60 ? rng_.range(1, 64) : cd < 92 ? rng_.range(65, 4096) : rng_.range(4097, 65536 / es);
  if (kind == Coll::alltoall || kind == Coll::allgather) count = std::min<int64_t>(count, 65536 / es / p + 1);
  const int root = static_cast<int>(rng_.below(static_cast<uint64_t>(p)));

  // One wrong argument, the same on every rank: every rank refuses the call, nothing is enqueued.
  int bad = -1;
  if (allow("illegal") && cm.set_up && !captured && rng_.chance(12)) bad = static_cast<int>(rng_.below(enqueue ? 6 : 8));
  if (bad == 7 && (!allow("enqueue") || kind == Coll::reduce)) bad = 6;

  const bool first = !cm.set_up;
  Step s = begin(std::string(captured ? "captured " : "") + coll_name(kind) + " on c" + std::to_string(c) + " (" +
                 std::to_string(p) + " ranks)" + (first ? ", its first collective" : "") +
                 (bad >= 0 ? ", refused on every rank" : ""));
  CollEffect e;
  e.coll = kind;
  e.members = cm.members;
  e.count = static_cast<int>(count);
  e.elem = elem;
  e.op = op;
  e.root = root;
  e.send.assign(static_cast<size_t>(p), -1);
  e.recv.assign(static_cast<size_t>(p), -1);
  e.in_place.assign(static_cast<size_t>(p), 0);
  const int64_t blocks = (kind == Coll::allgather || kind == Coll::alltoall) ? p : 1;
  std::vector<int> owned;
  for (int i = 0; i < p; ++i) {
    const int r = cm.members[i];
    const uint64_t k = key(cfg_.seed, 0xc011, static_cast<uint64_t>(index_), static_cast<uint64_t>(r));
    Call call_ = call(Op::Coll);
    call_.coll = kind;
    call_.comm = c;
    call_.stream = strm[r];
    call_.ocount = static_cast<int>(count);
    call_.otype = elem;
    call_.mop = op;
    call_.root = root;
    if (enqueue) call_.flags |= fEnqueue;
    if (first) call_.flags |= fFirstColl;
    // Inputs: small values (products stay small); the receive buffer starts as a pattern.
    const int64_t in_elems = count * (kind == Coll::alltoall ? p : 1);
    std::vector<uint8_t> in = clean_values(elem, in_elems, k);
    if (op == oProd)
      for (size_t b = 0; b < in.size(); b += static_cast<size_t>(es)) {
        std::vector<uint8_t> one = clean_values(elem, 1, key(k, b));
        // values -3..3 (0..3 unsigned), written in the element's type
        int64_t v = static_cast<int64_t>(key(k, b, 1) % 7) - 3;
        if (!elem_signed(elem)) v = v < 0 ? -v : v;
        if (elem == eFloat) { float f = static_cast<float>(v); std::memcpy(&in[b], &f, 4); }
        else if (elem == eDouble) { double f = static_cast<double>(v); std::memcpy(&in[b], &f, 8); }
        else std::memcpy(&in[b], &v, static_cast<size_t>(es));  // little-endian: the low bytes
        (void)one;
      }
    const size_t recv_bytes = static_cast<size_t>(count * es * blocks);
    std::vector<uint8_t> out = pattern(recv_bytes + 8, key(k, 2));
    bool in_place = false;
    if (count > 0 && rng_.chance(25)) {
      if (kind == Coll::allreduce || kind == Coll::alltoall) in_place = true;
      if (kind == Coll::reduce && i == root) in_place = true;
      if (kind == Coll::allgather) in_place = true;
    }
    int sb = -1, rb = -1;
    if (kind == Coll::bcast) {
      if (i == root) std::copy(in.begin(), in.end(), out.begin());
      rb = m.new_buf(r, out, true);
    } else if (in_place) {
      if (kind == Coll::allgather) std::copy(in.begin(), in.end(), out.begin() + static_cast<long>(i * count * es));
      else std::copy(in.begin(), in.end(), out.begin());
      rb = m.new_buf(r, out, true);
      call_.flags |= fInPlace;
    } else {
      sb = m.new_buf(r, in, false);
      rb = m.new_buf(r, out, true);  // at a reduce's other ranks: untouched
    }
    call_.buf = sb;
    call_.buf2 = rb;
    e.send[i] = sb;
    e.recv[i] = rb;
    e.in_place[i] = in_place;
    if (sb >= 0) owned.push_back(sb);
    owned.push_back(rb);
    if (bad >= 0) {
      // The same wrong argument on every rank.
      switch (bad) {
        case 0:
          call_.ocount = -1 - static_cast<int>(k % 3 == 0);
          call_ = expect(call_, MPI_ERR_COUNT, "a negative count");
          break;
        case 1:
          call_.flags |= fNullTypeArg;
          call_ = expect(call_, MPI_ERR_TYPE, "MPI_DATATYPE_NULL");
          break;
        case 2:
          if (reduction) {
            call_.otype = eShort;
            call_ = expect(call_, MPI_ERR_TYPE, "a type the reductions do not take");
          } else {
            call_.ocount = -5;
            call_ = expect(call_, MPI_ERR_COUNT, "a negative count");
          }
          break;
        case 3:
          if (count == 0 && kind != Coll::bcast) {  // buffer checks apply to counts above 0
            call_.ocount = -4;
            call_ = expect(call_, MPI_ERR_COUNT, "a negative count");
          } else if (reduction) {
            call_.mop = elem_float(elem) ? oBand : oNull;
            call_ = expect(call_, MPI_ERR_OP, "an operator the reductions do not take for the type");
          } else {
            call_.root = p + 3;
            call_ = expect(call_, kind == Coll::bcast ? MPI_ERR_ROOT : MPI_ERR_BUFFER, "");
            if (kind != Coll::bcast) {  // the other data-moving calls: the receive buffer MPI_IN_PLACE
              call_.root = root;
              call_.flags |= fRecvInPlace;
              call_.flags &= ~fInPlace;
              call_ = expect(call_, MPI_ERR_BUFFER, "MPI_IN_PLACE as the receive buffer");
            } else {
              call_.why = "the root is not a rank of the communicator";
            }
          }
          break;
        case 4:
          if (kind == Coll::bcast || kind == Coll::reduce || count == 0) {
            call_.ocount = -2;
            call_ = expect(call_, MPI_ERR_COUNT, "a negative count");
          } else {
            call_.flags |= fSameBuffers;
            call_.flags &= ~fInPlace;
            if (call_.buf < 0) call_.buf = call_.buf2;
            call_ = expect(call_, MPI_ERR_BUFFER, "the send buffer is the receive buffer");
          }
          break;
        case 5:
          if (enqueue) {
            call_.ocount = -3;
            call_ = expect(call_, MPI_ERR_COUNT, "a negative count");
          } else {
            call_.stream = kNullRef;
            call_ = expect(call_, MPI_ERR_ARG, "the stream is NULL");
          }
          break;
        case 6:
          call_.stream = kNullRef;
          call_ = expect(call_, MPI_ERR_ARG, "the stream is NULL");
          break;
        default:  // MPICH's enqueue spelling on a communicator no MPIX_Stream is bound to
          call_.flags |= fEnqueue;
          call_ = expect(call_, MPI_ERR_COMM, "no stream is bound to the communicator");
          break;
      }
    } else if (captured && first) {
      call_ = expect(call_, MPI_ERR_UNSUPPORTED_OPERATION,
                     "the first collective on a communicator cannot be captured");
    }
    // Sometimes the stream is busy for a while first, so what follows (a free, say) meets the
    // call still queued.
    if (bad < 0 && !captured && !enqueue && allow("delays") && rng_.chance(15)) {
      Call d = call(Op::Delay);
      d.stream = strm[r];
      d.len = rng_.range(5, 40);
      s.calls[r].push_back(d);
    }
    s.calls[r].push_back(call_);
  }
  const bool refused = bad >= 0 || (captured && first);
  if (refused) {
    for (int b : owned) m.bufs[b].graph = -2;  // untouched: checked, then freed
    return s;
  }
  cm.set_up = true;
  Effect ef;
  ef.kind = Effect::coll;
  ef.c = e;
  if (captured) {
    GraphM &g = m.graphs[m.capture_graph];
    g.effects.push_back(ef);
    g.comms.insert(c);
    cm.graphs.insert(m.capture_graph);
    for (int b : owned) {
      m.bufs[b].graph = m.capture_graph;
      g.bufs.push_back(b);
    }
    for (int r : cm.members) g.calls[r].push_back(s.calls[r].back());
  } else {
    m.apply(ef);
    for (int r : cm.members) mark_pending(cm.pending, r, strm[r], false);
  }
  return s;
}

}  // namespace rt
