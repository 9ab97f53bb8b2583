// The reference model: what every rank's windows and buffers hold after each step. RMA follows MPI
// (the target's bytes at the target type map's places take the origin's bytes in type-map order;
// accumulates combine element by element), collectives follow MPI's definitions. The generator
// keeps every step within what MPI defines (no conflicting accesses in one epoch, accumulates that
// overlap use one commutative operator), so the order in which the library moves the bytes of one
// epoch does not change the result.
#include <cstdio>
#include <cstring>

#include "plan.h"

namespace rt {

const char *win_kind_name(WinKind k) {
  switch (k) {
    case WinKind::allocate: return "MPI_Win_allocate";
    case WinKind::create: return "MPI_Win_create";
    case WinKind::create_unmanaged: return "MPI_Win_create(info mpix_st=false)";
    case WinKind::create_mixed_info: return "MPI_Win_create(info mpix_st=false on one rank)";
    case WinKind::allocate_shared: return "MPI_Win_allocate_shared";
    case WinKind::dynamic: return "MPI_Win_create_dynamic";
  }
  return "?";
}

const char *coll_name(Coll c) {
  switch (c) {
    case Coll::allreduce: return "allreduce";
    case Coll::reduce: return "reduce";
    case Coll::bcast: return "bcast";
    case Coll::allgather: return "allgather";
    case Coll::alltoall: return "alltoall";
  }
  return "?";
}

const char *op_name_of(Op op) {
  switch (op) {
    case Op::WinCreate: return "win-create";
    case Op::WinFree: return "MPI_Win_free";
    case Op::Post: return "MPI_Win_post";
    case Op::PostStream: return "MPIX_Win_post_stream";
    case Op::Start: return "MPI_Win_start";
    case Op::Complete: return "MPI_Win_complete";
    case Op::CompleteStream: return "MPIX_Win_complete_stream";
    case Op::Wait: return "MPI_Win_wait";
    case Op::WaitStream: return "MPIX_Win_wait_stream";
    case Op::TestLoop: return "MPI_Win_test (until done)";
    case Op::Fence: return "MPI_Win_fence";
    case Op::Put: return "MPI_Put";
    case Op::Get: return "MPI_Get";
    case Op::Acc: return "MPI_Accumulate";
    case Op::FetchOp: return "MPI_Fetch_and_op";
    case Op::LockAll: return "MPI_Win_lock_all";
    case Op::UnlockAll: return "MPI_Win_unlock_all";
    case Op::Stamp: return "MPIX_Host_stream_enqueue";
    case Op::Delay: return "MPIX_Host_stream_enqueue (a delay)";
    case Op::StreamCreate: return "MPIX_Host_stream_create";
    case Op::StreamDestroy: return "MPIX_Host_stream_destroy";
    case Op::StreamSync: return "MPIX_Host_stream_synchronize";
    case Op::CaptureBegin: return "MPIX_Host_stream_begin_capture";
    case Op::CaptureEnd: return "MPIX_Host_stream_end_capture";
    case Op::GraphLaunch: return "MPIX_Host_graph_launch";
    case Op::GraphDestroy: return "MPIX_Host_graph_destroy";
    case Op::CommCreate: return "comm-create";
    case Op::CommFree: return "MPI_Comm_free";
    case Op::MStreamCreate: return "MPIX_Stream_create";
    case Op::MStreamFree: return "MPIX_Stream_free";
    case Op::Coll: return "collective";
    case Op::HostWrite: return "host-write";
    case Op::Check: return "check";
    case Op::Barrier: return "MPI_Barrier";
  }
  return "?";
}

// ---- values ---------------------------------------------------------------------------------------

int64_t clean_span(int elem) { return elem_float(elem) ? 64 : 1000; }

namespace {
template <typename T>
void store(uint8_t *p, T v) {
  std::memcpy(p, &v, sizeof v);
}
template <typename T>
T load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
}  // namespace

std::vector<uint8_t> clean_values(int elem, int64_t count, uint64_t k) {
  const int es = elem_size(elem);
  std::vector<uint8_t> out(static_cast<size_t>(count * es));
  Rng r(k);
  const int64_t span = clean_span(elem);
  for (int64_t i = 0; i < count; ++i) {
    uint8_t *p = out.data() + i * es;
    int64_t v = r.range(elem_signed(elem) ? -span : 0, span);
    if (es == 1 && !elem_signed(elem)) v = r.range(0, 15);
    else if (es == 1) v = r.range(-7, 7);
    switch (elem) {
      case eFloat: store<float>(p, static_cast<float>(v)); break;
      case eDouble: store<double>(p, static_cast<double>(v)); break;
      default:
        if (es == 1) store<int8_t>(p, static_cast<int8_t>(v));
        else if (es == 2) store<int16_t>(p, static_cast<int16_t>(v));
        else if (es == 4) store<int32_t>(p, static_cast<int32_t>(v));
        else store<int64_t>(p, v);
    }
  }
  return out;
}

namespace {

// dst = dst (op) src for one element of type `elem`.
template <typename T>
T combine(T a, T b, int op) {
  switch (op) {
    case oSum: return static_cast<T>(a + b);
    case oProd: return static_cast<T>(a * b);
    case oMax: return a > b ? a : b;
    case oMin: return a < b ? a : b;
    case oReplace: return b;
    default: return a;
  }
}
template <typename U>
U combine_bits(U a, U b, int op) {
  switch (op) {
    case oSum: return static_cast<U>(a + b);
    case oProd: return static_cast<U>(a * b);
    case oBand: return a & b;
    case oBor: return a | b;
    case oBxor: return a ^ b;
    case oReplace: return b;
    default: return a;
  }
}

void combine_elem(uint8_t *dst, const uint8_t *src, int elem, int op) {
  const int es = elem_size(elem);
  if (elem == eFloat) return store<float>(dst, combine(load<float>(dst), load<float>(src), op));
  if (elem == eDouble) return store<double>(dst, combine(load<double>(dst), load<double>(src), op));
  // Integers: sums and products wrap (in unsigned arithmetic), max and min compare as the type.
  const bool bits = op == oSum || op == oProd || op == oBand || op == oBor || op == oBxor || op == oReplace;
  if (es == 1) {
    if (bits) return store<uint8_t>(dst, combine_bits(load<uint8_t>(dst), load<uint8_t>(src), op));
    if (elem_signed(elem)) return store<int8_t>(dst, combine(load<int8_t>(dst), load<int8_t>(src), op));
    return store<uint8_t>(dst, combine(load<uint8_t>(dst), load<uint8_t>(src), op));
  }
  if (es == 2) {
    if (bits) return store<uint16_t>(dst, combine_bits(load<uint16_t>(dst), load<uint16_t>(src), op));
    return store<int16_t>(dst, combine(load<int16_t>(dst), load<int16_t>(src), op));
  }
  if (es == 4) {
    if (bits) return store<uint32_t>(dst, combine_bits(load<uint32_t>(dst), load<uint32_t>(src), op));
    if (elem_signed(elem)) return store<int32_t>(dst, combine(load<int32_t>(dst), load<int32_t>(src), op));
    return store<uint32_t>(dst, combine(load<uint32_t>(dst), load<uint32_t>(src), op));
  }
  if (bits) return store<uint64_t>(dst, combine_bits(load<uint64_t>(dst), load<uint64_t>(src), op));
  if (elem_signed(elem)) return store<int64_t>(dst, combine(load<int64_t>(dst), load<int64_t>(src), op));
  return store<uint64_t>(dst, combine(load<uint64_t>(dst), load<uint64_t>(src), op));
}

}  // namespace

// ---- the model ----------------------------------------------------------------------------------------

Model::Model(const Config &c) : cfg(c), n(c.nranks) {
  streams.resize(static_cast<size_t>(n));
  capture_stream.assign(static_cast<size_t>(n), -1);
}

int Model::new_buf(int owner, std::vector<uint8_t> init, bool check) {
  BufM b;
  b.owner = owner;
  b.bytes = init;
  b.init = std::move(init);
  b.check = check;
  b.step = step;
  bufs.push_back(std::move(b));
  return static_cast<int>(bufs.size()) - 1;
}

void Model::apply_rma(const std::vector<RmaEffect> &ops) {
  // Stream tasks that rewrite put sources run first (they are enqueued before the epoch).
  for (const RmaEffect &e : ops) {
    if (e.kind != 3) continue;
    BufM &b = bufs[e.buf];
    fill_pattern(b.bytes.data(), b.bytes.size(), key(b.stamp_key, ++b.gen));
  }
  // Gets read what the epoch started with (the generator keeps their bytes apart from its writes).
  for (const RmaEffect &e : ops) {
    if (e.kind != 1) continue;
    const std::vector<uint8_t> &img = wins[e.win].r[e.target].img;
    std::vector<uint8_t> &dst = bufs[e.buf].bytes;
    for (size_t i = 0; i < e.tl->off.size(); ++i)
      dst[static_cast<size_t>(e.buf_off + e.ol->off[i])] = img[static_cast<size_t>(e.toff + e.tl->off[i])];
  }
  for (const RmaEffect &e : ops) {
    if (e.kind == 1 || e.kind == 3) continue;
    std::vector<uint8_t> &img = wins[e.win].r[e.target].img;
    const std::vector<uint8_t> &src = bufs[e.buf].bytes;
    if (e.kind == 0) {
      for (size_t i = 0; i < e.tl->off.size(); ++i)
        img[static_cast<size_t>(e.toff + e.tl->off[i])] = src[static_cast<size_t>(e.buf_off + e.ol->off[i])];
    } else {
      const size_t es = static_cast<size_t>(elem_size(e.elem));
      for (size_t i = 0; i < e.tl->off.size(); i += es)
        combine_elem(&img[static_cast<size_t>(e.toff + e.tl->off[i])], &src[static_cast<size_t>(e.buf_off + e.ol->off[i])],
                     e.elem, e.op);
    }
  }
}

void Model::apply_coll(const CollEffect &c) {
  const int p = static_cast<int>(c.members.size());
  const size_t es = static_cast<size_t>(elem_size(c.elem)), bytes = es * static_cast<size_t>(c.count);
  auto input = [&](int i) -> std::vector<uint8_t> {  // member i's input block(s)
    const int b = c.in_place[i] ? c.recv[i] : c.send[i];
    return bufs[b].bytes;
  };
  if (bytes == 0) return;  // nothing moves (and memcpy must not see empty vectors' null data)
  switch (c.coll) {
    case Coll::allreduce:
    case Coll::reduce: {
      std::vector<uint8_t> acc = input(0);
      acc.resize(bytes);
      for (int i = 1; i < p; ++i) {
        std::vector<uint8_t> in = input(i);
        for (size_t k = 0; k < bytes; k += es) combine_elem(&acc[k], &in[k], c.elem, c.op);
      }
      for (int i = 0; i < p; ++i) {
        if (c.coll == Coll::reduce && i != c.root) continue;
        std::memcpy(bufs[c.recv[i]].bytes.data(), acc.data(), bytes);
      }
      break;
    }
    case Coll::bcast: {
      std::vector<uint8_t> root = bufs[c.recv[c.root]].bytes;
      for (int i = 0; i < p; ++i) std::memcpy(bufs[c.recv[i]].bytes.data(), root.data(), bytes);
      break;
    }
    case Coll::allgather: {
      std::vector<std::vector<uint8_t>> in(p);
      for (int i = 0; i < p; ++i) {
        if (c.in_place[i]) {
          in[i].assign(bufs[c.recv[i]].bytes.begin() + static_cast<long>(i * bytes),
                       bufs[c.recv[i]].bytes.begin() + static_cast<long>((i + 1) * bytes));
        } else {
          in[i] = bufs[c.send[i]].bytes;
          in[i].resize(bytes);
        }
      }
      for (int i = 0; i < p; ++i)
        for (int j = 0; j < p; ++j) std::memcpy(bufs[c.recv[i]].bytes.data() + j * bytes, in[j].data(), bytes);
      break;
    }
    case Coll::alltoall: {
      std::vector<std::vector<uint8_t>> in(p);
      for (int i = 0; i < p; ++i) in[i] = bufs[c.in_place[i] ? c.recv[i] : c.send[i]].bytes;
      for (int i = 0; i < p; ++i)
        for (int j = 0; j < p; ++j)
          std::memcpy(bufs[c.recv[i]].bytes.data() + j * bytes, in[j].data() + i * bytes, bytes);
      break;
    }
  }
}

void Model::apply(const Effect &e) {
  if (e.kind == Effect::round) apply_rma(e.rma);
  else apply_coll(e.c);
}

bool Model::quiescent(int w) const {
  for (const auto &p : wins[w].pending)
    if (!p.empty()) return false;
  return true;
}

void Model::sync_stream(int r, int s) {
  for (WinM &w : wins)
    if (!w.pending.empty()) w.pending[r].erase(s);
  for (CommM &c : comms)
    if (!c.pending.empty()) c.pending[r].erase(s);
}

void Model::retire_graph_buffers(int g) {
  for (int b : graphs[g].bufs) bufs[b].graph = -2;  // freed at the owner's next full synchronisation
}

// ---- printing ---------------------------------------------------------------------------------------

namespace {
std::string group_text(const std::vector<int> &g) {
  std::string s = "{";
  for (size_t i = 0; i < g.size(); ++i) s += (i ? "," : "") + std::to_string(g[i]);
  return s + "}";
}
std::string class_text(int cls) {
  switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_WIN: return "MPI_ERR_WIN";
    case MPI_ERR_RMA_SYNC: return "MPI_ERR_RMA_SYNC";
    case MPI_ERR_RMA_RANGE: return "MPI_ERR_RMA_RANGE";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_OP: return "MPI_ERR_OP";
    case MPI_ERR_RANK: return "MPI_ERR_RANK";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_DISP: return "MPI_ERR_DISP";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_SIZE: return "MPI_ERR_SIZE";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER";
    case MPI_ERR_COMM: return "MPI_ERR_COMM";
    case MPI_ERR_ASSERT: return "MPI_ERR_ASSERT";
    case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT";
    default: return "class " + std::to_string(cls);
  }
}
std::string ref(const char *prefix, int id) {
  if (id == kNullRef) return std::string(prefix) == "w" ? "MPI_WIN_NULL" : "NULL";
  return prefix + std::to_string(id);
}
std::string target_text(int t) { return t == kProcNull ? "MPI_PROC_NULL" : "rank " + std::to_string(t); }
}  // namespace

std::string class_name_of(int cls) { return class_text(cls); }

std::string describe(const Call &c, const Model &m) {
  std::string s;
  const std::string w = ref("w", c.win) + ((c.flags & fStaleWin) ? " (freed)" : "");
  const std::string st = ref("s", c.stream) + ((c.flags & fDeadStream) ? " (destroyed)" : "");
  auto type_count = [&](int count, int type) {
    return std::to_string(count) + " x " + ((c.flags & fNullTypeArg) ? std::string("MPI_DATATYPE_NULL") : m.types.describe(type));
  };
  switch (c.op) {
    case Op::WinCreate:
      s = std::string(win_kind_name(c.kind)) + " size " + std::to_string(c.size) + " unit " + std::to_string(c.unit) +
          " -> " + w;
      break;
    case Op::WinFree: s = "MPI_Win_free(" + w + ")"; break;
    case Op::Post: s = "MPI_Win_post(" + group_text(c.group) + ", " + w + ")"; break;
    case Op::PostStream: s = "MPIX_Win_post_stream(" + group_text(c.group) + ", " + w + ", " + st + ")"; break;
    case Op::Start:
      s = "MPI_Win_start(" + group_text(c.group) + ", " +
          ((c.assert_bits & MPIX_MODE_STREAM) ? std::string("MPIX_MODE_STREAM") : std::string("0")) +
          ((c.assert_bits & MPI_MODE_NOCHECK) ? "|MPI_MODE_NOCHECK" : "") + ", " + w + ")";
      break;
    case Op::Complete: s = "MPI_Win_complete(" + w + ")"; break;
    case Op::CompleteStream: s = "MPIX_Win_complete_stream(" + w + ", " + st + ")"; break;
    case Op::Wait: s = "MPI_Win_wait(" + w + ")"; break;
    case Op::WaitStream: s = "MPIX_Win_wait_stream(" + w + ", " + st + ")"; break;
    case Op::TestLoop: s = "MPI_Win_test(" + w + ") until the flag is set"; break;
    case Op::Fence: s = "MPI_Win_fence(" + std::to_string(c.assert_bits) + ", " + w + ")"; break;
    case Op::Put:
    case Op::Get:
    case Op::Acc:
      s = std::string(op_name_of(c.op)) + "(" + ((c.flags & fNullOrigin) ? std::string("NULL") : "b" + std::to_string(c.buf) + "+" + std::to_string(c.buf_off)) +
          ", " + type_count(c.ocount, c.otype) + ((c.flags & fUncommitted) ? " (not committed)" : "") + " -> " +
          target_text(c.target) + " disp " + std::to_string(c.disp) + ((c.flags & fDynamic) ? " (+ its base address)" : "") +
          ", " + type_count(c.tcount, c.ttype) + (c.op == Op::Acc ? std::string(", ") + op_name(c.mop) : "") + ", " + w + ")";
      break;
    case Op::FetchOp: s = "MPI_Fetch_and_op(MPI_INT, MPI_SUM, " + target_text(c.target) + ", " + w + ")"; break;
    case Op::LockAll: s = "MPI_Win_lock_all(0, " + w + ")"; break;
    case Op::UnlockAll: s = "MPI_Win_unlock_all(" + w + ")"; break;
    case Op::Stamp:
      s = "MPIX_Host_stream_enqueue(" + st + ", a task rewriting b" + std::to_string(c.buf) + " with its next generation)";
      break;
    case Op::Delay: s = "MPIX_Host_stream_enqueue(" + st + ", a task that sleeps " + std::to_string(c.len) + " ms)"; break;
    case Op::StreamCreate: s = "MPIX_Host_stream_create -> " + st; break;
    case Op::StreamDestroy: s = "MPIX_Host_stream_destroy(" + st + ")"; break;
    case Op::StreamSync: s = "MPIX_Host_stream_synchronize(" + st + ")"; break;
    case Op::CaptureBegin: s = "MPIX_Host_stream_begin_capture(" + st + ")"; break;
    case Op::CaptureEnd: s = "MPIX_Host_stream_end_capture(" + st + ") -> g" + std::to_string(c.graph); break;
    case Op::GraphLaunch:
      s = "MPIX_Host_graph_launch(g" + std::to_string(c.graph) + ((c.flags & fDeadGraph) ? " (destroyed)" : "") + ", " +
          st + ")";
      break;
    case Op::GraphDestroy:
      s = "MPIX_Host_graph_destroy(g" + std::to_string(c.graph) + ((c.flags & fDeadGraph) ? " (destroyed)" : "") + ")";
      break;
    case Op::CommCreate: {
      const CommM &cm = m.comms[c.comm];
      s = std::string(cm.kind == 0 ? "MPI_Comm_dup(MPI_COMM_WORLD)"
                      : cm.kind == 1 ? "MPI_Comm_split(MPI_COMM_WORLD, color " + std::to_string(c.root) + ")"
                                     : "MPIX_Stream_comm_create(MPI_COMM_WORLD, m" + std::to_string(c.mstream) + ")") +
          " -> c" + std::to_string(c.comm);
      break;
    }
    case Op::CommFree: s = "MPI_Comm_free(c" + std::to_string(c.comm) + ")"; break;
    case Op::MStreamCreate: s = "MPIX_Stream_create(" + st + ") -> m" + std::to_string(c.mstream); break;
    case Op::MStreamFree: s = "MPIX_Stream_free(m" + std::to_string(c.mstream) + ")"; break;
    case Op::Coll: {
      s = std::string((c.flags & fEnqueue) ? "MPIX_" : "MPIX_") + coll_name(c.coll) + ((c.flags & fEnqueue) ? "_enqueue(" : "_stream(");
      s += ((c.flags & fInPlace) ? std::string("MPI_IN_PLACE") : "b" + std::to_string(c.buf)) + ", " +
           ((c.flags & fRecvInPlace) ? std::string("MPI_IN_PLACE") : "b" + std::to_string(c.buf2)) + ", " +
           std::to_string(c.ocount) + " x " + ((c.flags & fNullTypeArg) ? "MPI_DATATYPE_NULL" : elem_name(c.otype));
      if (c.coll == Coll::allreduce || c.coll == Coll::reduce) s += std::string(", ") + op_name(c.mop);
      if (c.coll == Coll::reduce || c.coll == Coll::bcast) s += ", root " + std::to_string(c.root);
      s += ", c" + std::to_string(c.comm) + ((c.flags & fEnqueue) ? "" : ", " + st) + ")";
      if (c.flags & fFirstColl) s += " (first on the communicator)";
      break;
    }
    case Op::HostWrite:
      s = "host writes " + std::to_string(c.len) + " bytes at " + std::to_string(c.offset) + " of " + w;
      break;
    case Op::Check: s = "synchronised: check windows and buffers"; break;
    case Op::Barrier: s = "MPI_Barrier"; break;
  }
  if (c.expect != MPI_SUCCESS || c.expect_alt >= 0) {
    s += "  => " + class_text(c.expect);
    if (c.expect_alt >= 0) s += " or " + class_text(c.expect_alt);
    if (!c.why.empty()) s += " (" + c.why + ")";
  } else if (!c.why.empty()) {
    s += "  [" + c.why + "]";
  }
  return s;
}

std::string describe_step(const Step &st, const Model &m) {
  std::string s = "step " + std::to_string(st.index) + ": " + st.title + "\n";
  for (size_t r = 0; r < st.calls.size(); ++r)
    for (const Call &c : st.calls[r]) s += "  r" + std::to_string(r) + ": " + describe(c, m) + "\n";
  return s;
}

}  // namespace rt
