// Derived datatypes in MPI_Put / MPI_Get / MPI_Accumulate, to node-local peers and (--remote,
// with MPIX_ST_VNODE_SIZE=1) to peers on other nodes, reached through libfabric.
//
// Property test: seeded random nested datatypes (contiguous, vector, hvector with negative
// strides, indexed and hindexed in shuffled order, indexed_block, struct, subarray in C and Fortran
// order, resized with negative lower bounds, dup; depth <= 4; counts > 1) on origin and target,
// in random epochs of both modes on both window kinds. Every rank draws the same plan, builds
// every type and computes the expected contents of its window and get buffers with MPI_Pack and
// MPI_Unpack: a put is the origin packed and unpacked into the target; an accumulate (MPI_SUM on
// MPI_INT or MPI_DOUBLE, small integer values, so any order sums exactly) adds the packed origin to
// the packed target and unpacks the sum; a get is the reverse of a put. Types live for three
// epochs (the library's cached pair lists are reused) and are freed right after the last epoch is
// recorded, before its stream work runs.
//
// Then: signature mismatches and out-of-window target types refused (MPI_ERR_TYPE,
// MPI_ERR_RMA_RANGE); a type freed and another one made with the same handle value moves data by
// its own layout; an epoch captured into a graph, replayed after its types were freed.
//
// --remote: the same property test (no capture: remote epochs cannot be captured) and refusals,
// then an operation whose pieces exceed the triggered-operation budget (run with
// MPIX_ST_TRIGGERED_OPS_MAX=2048) is refused with the resource class, in both modes, and the
// epoch goes on. --staged (also MPIX_ST_OFI_STAGING=1, MPIX_ST_STAGED_GET_ACCUMULATE=1): smaller
// types, as a staged window takes at most 64 pieces of puts and accumulates per target and epoch;
// one more is refused with MPI_ERR_UNSUPPORTED_OPERATION. --list-limit: the memory bound of the
// cached lists (MPIX_ST_DTYPE_LIST_MIB), alone (list_limit, below).
#include <algorithm>
#include <random>

#include "test_common.h"

using namespace mt;

namespace {

constexpr size_t kRegion = 16 * 1024;  // window: a put region per origin, then accumulate and get regions

size_t put_region(int origin) { return kRegion * static_cast<size_t>(origin); }
size_t acc_region() { return kRegion * static_cast<size_t>(g_size); }
size_t get_region() { return kRegion * static_cast<size_t>(g_size + 1); }
size_t window_bytes() { return kRegion * static_cast<size_t>(g_size + 2); }

// ---- random datatypes ---------------------------------------------------------------------------

// Builds types holding exactly n elements of `elem`, whose data lies inside [lb, lb + extent) and
// never overlaps, with displacements that are multiples of the element size.
struct TypeGen {
  std::mt19937_64 &rng;
  MPI_Datatype elem;
  MPI_Aint esize;
  int made = 0;

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
  MPI_Datatype done(MPI_Datatype t) {
    MPI_Type_commit(&t);
    ++made;
    return t;
  }
  void release(MPI_Datatype t) {
    if (t != elem) MPI_Type_free(&t);
  }
  // Splits n into k > 0 positive parts.
  std::vector<int> split(int n, int k) {
    std::vector<int> parts(static_cast<size_t>(k), 1);
    for (int i = k; i < n; ++i) ++parts[static_cast<size_t>(pick(0, k - 1))];
    return parts;
  }
  // Displacements (in units) of blocks of the given lengths: increasing with gaps, then shuffled.
  std::vector<int> place(const std::vector<int> &lens, std::vector<size_t> *order) {
    std::vector<int> disp(lens.size());
    int at = pick(0, 2);
    for (size_t i = 0; i < lens.size(); ++i) {
      disp[i] = at;
      at += lens[i] + (chance(0.5) ? pick(1, 2) : 0);
    }
    order->resize(lens.size());
    for (size_t i = 0; i < lens.size(); ++i) (*order)[i] = i;
    std::shuffle(order->begin(), order->end(), rng);
    return disp;
  }
  MPI_Datatype maybe_wrap(MPI_Datatype t) {
    if (chance(0.3)) {  // a lower bound further down (negative for most), a longer extent
      MPI_Aint lb, ext;
      MPI_Type_get_extent(t, &lb, &ext);
      const MPI_Aint a = pick(0, 3) * esize, b = pick(0, 2) * esize;
      MPI_Datatype r;
      MPI_Type_create_resized(t, lb - a - esize, ext + a + b + esize, &r);
      release(t);
      t = done(r);
    }
    if (chance(0.1)) {
      MPI_Datatype d;
      MPI_Type_dup(t, &d);
      release(t);
      t = done(d);
    }
    return t;
  }
  MPI_Datatype leaf(int n) {
    if (n == 1 && chance(0.5)) return elem;
    MPI_Datatype t;
    const int how = pick(0, 2);
    if (how == 0) {
      MPI_Type_contiguous(n, elem, &t);
    } else {
      const std::vector<int> lens = split(n, pick(1, std::min(n, 4)));
      std::vector<size_t> order;
      const std::vector<int> disp = place(lens, &order);
      std::vector<int> bl, di;
      std::vector<MPI_Aint> hd;
      const int shift = pick(0, 6);  // hindexed: some displacements negative
      for (size_t i : order) {
        bl.push_back(lens[i]);
        di.push_back(disp[i]);
        hd.push_back((disp[i] - shift) * esize);
      }
      const int k = static_cast<int>(bl.size());
      if (how == 1) MPI_Type_indexed(k, bl.data(), di.data(), elem, &t);
      else MPI_Type_create_hindexed(k, bl.data(), hd.data(), elem, &t);
    }
    return maybe_wrap(done(t));
  }
  MPI_Datatype make(int n, int depth) {
    if (depth == 0 || n == 1 || chance(0.25)) return leaf(n);
    std::vector<int> divisors;
    for (int d = 1; d <= n; ++d)
      if (n % d == 0) divisors.push_back(d);
    const int d = divisors[static_cast<size_t>(pick(0, static_cast<int>(divisors.size()) - 1))];
    MPI_Datatype child = make(n / d, depth - 1), t;
    MPI_Aint clb, cext;
    MPI_Type_get_extent(child, &clb, &cext);
    switch (pick(0, 6)) {
      case 0: MPI_Type_contiguous(d, child, &t); break;
      case 1:
      case 2: {  // vector or hvector: c blocks of b, stride >= b, sometimes negative
        std::vector<int> ds;
        for (int x = 1; x <= d; ++x)
          if (d % x == 0) ds.push_back(x);
        const int b = ds[static_cast<size_t>(pick(0, static_cast<int>(ds.size()) - 1))], c = d / b;
        const int sign = chance(0.3) ? -1 : 1;
        const int stride = sign * (b + pick(0, 2));
        if (chance(0.5)) MPI_Type_vector(c, b, stride, child, &t);
        else MPI_Type_create_hvector(c, b, stride * cext + sign * pick(0, 2) * esize * (c > 1), child, &t);
        break;
      }
      case 3: {  // indexed_block or indexed, shuffled blocks
        const std::vector<int> lens = chance(0.5) ? std::vector<int>(static_cast<size_t>(d), 1) : split(d, pick(1, std::min(d, 4)));
        std::vector<size_t> order;
        const std::vector<int> disp = place(lens, &order);
        std::vector<int> bl, di;
        for (size_t i : order) bl.push_back(lens[i]), di.push_back(disp[i]);
        const int k = static_cast<int>(bl.size());
        if (std::all_of(bl.begin(), bl.end(), [&](int x) { return x == bl[0]; })) {
          if (chance(0.5)) {
            MPI_Type_create_indexed_block(k, bl[0], di.data(), child, &t);
          } else {
            std::vector<MPI_Aint> hd;
            for (int x : di) hd.push_back(x * cext);
            MPI_Type_create_hindexed_block(k, bl[0], hd.data(), child, &t);
          }
        } else {
          MPI_Type_indexed(k, bl.data(), di.data(), child, &t);
        }
        break;
      }
      case 4: {  // struct of blocks of the child and of a dup of it
        const std::vector<int> lens = split(d, pick(1, std::min(d, 3)));
        std::vector<size_t> order;
        const std::vector<int> disp = place(lens, &order);
        MPI_Datatype twin;
        MPI_Type_dup(child, &twin);
        std::vector<int> bl;
        std::vector<MPI_Aint> bd;
        std::vector<MPI_Datatype> ty;
        for (size_t i : order) {
          bl.push_back(lens[i]);
          bd.push_back(disp[i] * cext);
          ty.push_back(chance(0.5) ? child : twin);
        }
        MPI_Type_create_struct(static_cast<int>(bl.size()), bl.data(), bd.data(), ty.data(), &t);
        MPI_Type_free(&twin);
        break;
      }
      default: {  // subarray of 2 or 3 dimensions holding d children
        const int nd = pick(2, 3);
        std::vector<int> sub(static_cast<size_t>(nd), 1), sizes(static_cast<size_t>(nd)), starts(static_cast<size_t>(nd));
        int left = d;
        for (int k = 0; k < nd; ++k) {  // d = product of subsizes
          std::vector<int> ds;
          for (int x = 1; x <= left; ++x)
            if (left % x == 0) ds.push_back(x);
          sub[static_cast<size_t>(k)] = k == nd - 1 ? left : ds[static_cast<size_t>(pick(0, static_cast<int>(ds.size()) - 1))];
          left /= sub[static_cast<size_t>(k)];
        }
        for (int k = 0; k < nd; ++k) {
          const int extra = pick(0, 2);
          sizes[static_cast<size_t>(k)] = sub[static_cast<size_t>(k)] + extra;
          starts[static_cast<size_t>(k)] = pick(0, extra);
        }
        MPI_Type_create_subarray(nd, sizes.data(), sub.data(), starts.data(), chance(0.5) ? MPI_ORDER_C : MPI_ORDER_FORTRAN,
                                 child, &t);
        break;
      }
    }
    release(child);  // the parent keeps what it needs
    return maybe_wrap(done(t));
  }
};

// Bytes [lo, hi) that `count` instances touch, relative to the buffer pointer.
void span(MPI_Datatype t, int count, MPI_Aint *lo, MPI_Aint *hi) {
  MPI_Aint lb, ext, tlb, text;
  MPI_Type_get_extent(t, &lb, &ext);
  MPI_Type_get_true_extent(t, &tlb, &text);
  const MPI_Aint reps = static_cast<MPI_Aint>(count - 1) * ext;
  *lo = tlb + std::min<MPI_Aint>(0, reps);
  *hi = tlb + text + std::max<MPI_Aint>(0, reps);
}

int pack_size(MPI_Datatype t, int count) {
  int n = 0;
  MPI_Pack_size(count, t, MPI_COMM_SELF, &n);
  return n;
}
std::vector<uint8_t> pack(const uint8_t *at, MPI_Datatype t, int count) {
  std::vector<uint8_t> out(static_cast<size_t>(pack_size(t, count)));
  int pos = 0;
  MT_OK(MPI_Pack(at, count, t, out.data(), static_cast<int>(out.size()), &pos, MPI_COMM_SELF));
  out.resize(static_cast<size_t>(pos));
  return out;
}
void unpack(const std::vector<uint8_t> &in, uint8_t *at, MPI_Datatype t, int count) {
  int pos = 0;
  MT_OK(MPI_Unpack(in.data(), static_cast<int>(in.size()), &pos, at, count, t, MPI_COMM_SELF));
}

// ---- the plan ------------------------------------------------------------------------------------

enum Kind { kPut, kGet, kAcc };
const char *kind_text(int k) { return k == kPut ? "put" : k == kGet ? "get" : "accumulate"; }

struct Op {
  int kind, o, t;
  MPI_Datatype elem;
  MPI_Datatype otype, ttype;  // may be the element type itself (predefined)
  int ocount, tcount;
  MPI_Aint disp;              // target displacement (bytes)
  MPI_Aint olo, ohi;          // origin span
};

struct Plan {
  std::vector<Op> ops;
  int types = 0;
};

// Every rank draws the same plan and builds every type (a target computes its expected window).
// Target types hold at most max_elems elements, times counts up to max_count.
Plan make_plan(std::mt19937_64 &rng, bool self_ok, int max_elems = 12, int max_count = 3) {
  Plan p;
  std::uniform_real_distribution<double> u(0, 1);
  // Accumulates of several origins overlap in the accumulate region: MPI requires them to use one
  // basic type there (an MPI_INT and an MPI_DOUBLE accumulate on the same bytes would give a
  // result that depends on their order).
  const MPI_Datatype acc_elem = u(rng) < 0.5 ? MPI_INT : MPI_DOUBLE;
  for (int o = 0; o < g_size; ++o)
    for (int t = 0; t < g_size; ++t) {
      if ((o == t && !self_ok) || u(rng) < 0.3) continue;
      for (int kind : {kPut, kGet, kAcc}) {
        if (u(rng) < 0.35) continue;
        for (int attempt = 0;; ++attempt) {
          Op op{};
          op.kind = kind;
          op.o = o;
          op.t = t;
          op.elem = kind == kAcc ? acc_elem : u(rng) < 0.6 ? (u(rng) < 0.5 ? MPI_INT : MPI_DOUBLE) : MPI_DOUBLE;
          MPI_Aint esize = op.elem == MPI_INT ? 4 : 8;
          TypeGen g{rng, op.elem, esize};
          const int tn = g.pick(1, max_elems);
          op.tcount = g.pick(1, max_count);
          const int total = tn * op.tcount;
          op.ttype = g.chance(0.15) ? op.elem : g.make(tn, g.pick(1, 4));
          if (op.ttype == op.elem) op.tcount = total;
          std::vector<int> ds;
          for (int x = 1; x <= total; ++x)
            if (total % x == 0) ds.push_back(x);
          op.ocount = ds[static_cast<size_t>(g.pick(0, static_cast<int>(ds.size()) - 1))];
          op.otype = (g.chance(0.2) && op.ttype != op.elem) ? op.elem : g.make(total / op.ocount, g.pick(1, 4));
          if (op.otype == op.elem) op.ocount = total;
          p.types += g.made;
          MPI_Aint tlo, thi;
          span(op.ttype, op.tcount, &tlo, &thi);
          span(op.otype, op.ocount, &op.olo, &op.ohi);
          const MPI_Aint room = static_cast<MPI_Aint>(kRegion) - (thi - tlo);
          if (room < 0 || op.ohi - op.olo > static_cast<MPI_Aint>(kRegion)) {
            g.release(op.otype);
            g.release(op.ttype);
            continue;  // too sparse for a region: draw again
          }
          const size_t region = kind == kPut ? put_region(o) : kind == kAcc ? acc_region() : get_region();
          const MPI_Aint slack = g.pick(0, static_cast<int>(room / esize)) * esize;
          op.disp = static_cast<MPI_Aint>(region) - tlo + slack;
          if (op.disp < 0) {  // MPI takes non-negative target displacements only: draw again
            g.release(op.otype);
            g.release(op.ttype);
            continue;
          }
          p.ops.push_back(op);
          break;
        }
      }
    }
  return p;
}

void free_plan(Plan &p) {
  for (Op &op : p.ops) {
    if (op.otype != op.elem) MPI_Type_free(&op.otype);
    if (op.ttype != op.elem) MPI_Type_free(&op.ttype);
  }
  p.ops.clear();
}

// Origin data: put data as a byte pattern, accumulate operands as small integers (exact sums).
std::vector<uint8_t> origin_bytes(const Op &op, uint64_t k) {
  const size_t n = static_cast<size_t>(op.ohi - op.olo);
  if (op.kind == kPut) return pattern(n, k);
  if (op.kind == kGet) return std::vector<uint8_t>(n, 0xee);
  std::vector<uint8_t> v(n, 0);
  for (size_t i = 0; i * (op.elem == MPI_INT ? 4 : 8) < n; ++i) {
    const int x = static_cast<int>(mix(k ^ i) % 201) - 100;
    if (op.elem == MPI_INT) std::memcpy(&v[i * 4], &x, 4);
    else {
      const double d = x;
      std::memcpy(&v[i * 8], &d, 8);
    }
  }
  return v;
}

template <typename T>
void add_packed(std::vector<uint8_t> &acc, const std::vector<uint8_t> &in) {
  for (size_t i = 0; i + sizeof(T) <= acc.size(); i += sizeof(T)) {
    T a, b;
    std::memcpy(&a, &acc[i], sizeof(T));
    std::memcpy(&b, &in[i], sizeof(T));
    a += b;
    std::memcpy(&acc[i], &a, sizeof(T));
  }
}

uint64_t get_key(uint64_t gen, int owner) { return key(0xd7e, gen, static_cast<uint64_t>(owner)); }

struct Counts {
  long ops[3] = {0, 0, 0};
  long epochs = 0, types = 0;
};

class Runner {
 public:
  Runner(Mode mode, WinKind kind, void *s) : mode_(mode), s_(s) {
    w_ = make_window(kind, window_bytes());
    model_.assign(window_bytes(), 0);
    set_get_region(0);
  }
  ~Runner() { free_window(w_); }

  void set_get_region(uint64_t gen) {
    gen_ = gen;
    auto g = pattern(kRegion, get_key(gen, g_rank));
    to_device(w_.base + get_region(), g.data(), kRegion);
    std::copy(g.begin(), g.end(), model_.begin() + static_cast<ptrdiff_t>(get_region()));
  }

  // Runs (host) or enqueues (stream) one epoch of the plan; `k` names its data. Returns the
  // origin buffers of my ops, with what each must hold once the epoch ran.
  struct Mine {
    std::vector<DevBuf> bufs;
    std::vector<std::vector<uint8_t>> want;
  };
  Mine epoch(const Plan &p, uint64_t k, Counts *c) {
    std::vector<int> targets, origins;
    for (const Op &op : p.ops) {
      if (op.o == g_rank && std::find(targets.begin(), targets.end(), op.t) == targets.end()) targets.push_back(op.t);
      if (op.t == g_rank && std::find(origins.begin(), origins.end(), op.o) == origins.end()) origins.push_back(op.o);
    }
    Mine m;
    Group og(origins), tg(targets);
    if (!origins.empty()) MT_POST(mode_, og, w_.win, s_);
    if (!targets.empty()) {
      MT_START(mode_, tg, w_.win);
      for (size_t i = 0; i < p.ops.size(); ++i) {
        const Op &op = p.ops[i];
        if (op.o != g_rank) continue;
        const uint64_t dk = key(k, i);
        auto bytes = origin_bytes(op, dk);
        DevBuf b(bytes.size());
        b.upload(bytes);
        uint8_t *origin = b.p - op.olo;
        int rc = MPI_SUCCESS;
        if (op.kind == kPut)
          rc = MPI_Put(origin, op.ocount, op.otype, op.t, op.disp, op.tcount, op.ttype, w_.win);
        else if (op.kind == kGet)
          rc = MPI_Get(origin, op.ocount, op.otype, op.t, op.disp, op.tcount, op.ttype, w_.win);
        else
          rc = MPI_Accumulate(origin, op.ocount, op.otype, op.t, op.disp, op.tcount, op.ttype, MPI_SUM, w_.win);
        MT_CHECKF(rc == MPI_SUCCESS, "%s %zu to rank %d: %s", kind_text(op.kind), i, op.t, error_string(rc).c_str());
        ++c->ops[op.kind];
        if (op.kind == kGet) {  // the target's get region, packed by the target type, unpacked here
          std::vector<uint8_t> win(window_bytes(), 0);
          auto g = pattern(kRegion, get_key(gen_, op.t));
          std::copy(g.begin(), g.end(), win.begin() + static_cast<ptrdiff_t>(get_region()));
          unpack(pack(win.data() + op.disp, op.ttype, op.tcount), bytes.data() - op.olo, op.otype, op.ocount);
        }
        m.want.push_back(std::move(bytes));
        m.bufs.push_back(std::move(b));
      }
      MT_COMPLETE(mode_, w_.win, s_);
    }
    if (!origins.empty()) MT_WAIT(mode_, w_.win, s_);
    // My window: puts and accumulates of my origins.
    for (size_t i = 0; i < p.ops.size(); ++i) {
      const Op &op = p.ops[i];
      if (op.t != g_rank || op.kind == kGet) continue;
      auto src = origin_bytes(op, key(k, i));
      auto in = pack(src.data() - op.olo, op.otype, op.ocount);
      uint8_t *at = model_.data() + op.disp;
      if (op.kind == kAcc) {
        auto cur = pack(at, op.ttype, op.tcount);
        if (op.elem == MPI_INT) add_packed<int32_t>(cur, in);
        else add_packed<double>(cur, in);
        in = std::move(cur);
      }
      unpack(in, at, op.ttype, op.tcount);
    }
    ++c->epochs;
    return m;
  }

  void check(const Mine &m, const std::string &what) {
    for (size_t i = 0; i < m.bufs.size(); ++i) {
      auto got = m.bufs[i].download();
      MT_SAME_BYTES(got.data(), m.want[i].data(), got.size(), fmt("%s: origin buffer %zu", what.c_str(), i));
    }
    auto got = read_device(w_.base, window_bytes());
    MT_SAME_BYTES(got.data(), model_.data(), window_bytes(), what + ": my window");
  }

  TestWin &win() { return w_; }

 private:
  Mode mode_;
  void *s_;
  TestWin w_;
  std::vector<uint8_t> model_;
  uint64_t gen_ = 0;
};

// ---- refusals and handle reuse -------------------------------------------------------------------

void refusals(Mode mode, void *s) {
  g_context = fmt("refusals, %s", mode_name(mode));
  TestWin w = make_window(WinKind::allocate, 4096);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group to(std::vector<int>{right}), from(std::vector<int>{left});
  DevBuf buf(4096);
  MPI_Datatype vec, cont, mixed, huge;
  MPI_Type_vector(4, 2, 8, MPI_DOUBLE, &vec);
  MPI_Type_contiguous(7, MPI_DOUBLE, &cont);
  int bl[2] = {1, 1};
  MPI_Aint bd[2] = {0, 8};
  MPI_Datatype bt[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, bl, bd, bt, &mixed);
  MPI_Type_vector(2, 1, 1000, MPI_DOUBLE, &huge);  // spans 8008 bytes: beyond the window
  for (MPI_Datatype *t : {&vec, &cont, &mixed, &huge}) MPI_Type_commit(t);
  MT_POST(mode, from, w.win, s);
  MT_START(mode, to, w.win);
  std::string m = MT_EXPECT_ERROR(MPI_Put(buf.p, 1, vec, right, 0, 1, cont, w.win), MPI_ERR_TYPE);
  MT_CHECKF(contains(m, "vector(count=4, blocklength=2, stride=8) of MPI_DOUBLE") &&
                contains(m, "contiguous(7) of MPI_DOUBLE"),
            "the message should describe both types: %s", m.c_str());
  MT_EXPECT_ERROR(MPI_Get(buf.p, 2, vec, right, 0, 15, MPI_DOUBLE, w.win), MPI_ERR_TYPE);
  MT_EXPECT_ERROR(MPI_Put(buf.p, 1, mixed, right, 0, 1, vec, w.win), MPI_ERR_TYPE);  // int then double vs doubles
  m = MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 1, mixed, right, 0, 1, mixed, MPI_SUM, w.win), MPI_ERR_TYPE);
  MT_CHECKF(contains(m, "one basic type"), "accumulate of a struct mixing types: %s", m.c_str());
  m = MT_EXPECT_ERROR(MPI_Put(buf.p, 2, MPI_DOUBLE, right, 0, 1, huge, w.win), MPI_ERR_RMA_RANGE);
  MT_CHECKF(contains(m, "outside rank"), "range: %s", m.c_str());
  MT_EXPECT_ERROR(MPI_Put(buf.p, 8, MPI_DOUBLE, right, 4096 - 100, 1, vec, w.win), MPI_ERR_RMA_RANGE);
  MT_OK(MPI_Put(buf.p, 1, mixed, right, 0, 1, mixed, w.win));  // put/get of mixed structs are fine
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  for (MPI_Datatype *t : {&vec, &cont, &mixed, &huge}) MPI_Type_free(t);
  free_window(w);
}

// A type freed, then new types until the MPI hands out the same handle value: the new one's layout
// moves the data, not a flattening cached for the old one.
bool handle_reuse(Mode mode, void *s) {
  g_context = fmt("handle reuse, %s", mode_name(mode));
  TestWin w = make_window(WinKind::allocate, 4096);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group to(std::vector<int>{right}), from(std::vector<int>{left});
  auto src = pattern(512, key(0x7e5, static_cast<uint64_t>(g_rank)));
  DevBuf buf(512);
  buf.upload(src);
  MPI_Datatype a;
  MPI_Type_vector(4, 1, 4, MPI_INT, &a);  // ints 0, 4, 8, 12
  MPI_Type_commit(&a);
  const MPI_Datatype old = a;
  MT_POST(mode, from, w.win, s);
  MT_START(mode, to, w.win);
  MT_OK(MPI_Put(buf.p, 16, MPI_BYTE, right, 0, 1, a, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  MPI_Type_free(&a);
  MPI_Datatype b = MPI_DATATYPE_NULL;
  std::vector<MPI_Datatype> spare;
  for (int i = 0; i < 64; ++i) {
    MPI_Type_vector(2, 2, 5, MPI_INT, &b);  // ints 0, 1, 5, 6
    MPI_Type_commit(&b);
    if (b == old) break;
    spare.push_back(b);
  }
  const bool reused = b == old;
  MT_POST(mode, from, w.win, s);
  MT_START(mode, to, w.win);
  MT_OK(MPI_Put(buf.p + 16, 16, MPI_BYTE, right, 1024, 1, b, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  MPI_Type_free(&b);
  for (MPI_Datatype &t : spare) MPI_Type_free(&t);
  std::vector<uint8_t> want(4096, 0);
  const auto from_left = pattern(512, key(0x7e5, static_cast<uint64_t>(left)));
  for (int i = 0; i < 4; ++i) std::memcpy(&want[static_cast<size_t>(16 * i)], &from_left[static_cast<size_t>(4 * i)], 4);
  const int bi[4] = {0, 1, 5, 6};
  for (int i = 0; i < 4; ++i) std::memcpy(&want[1024 + static_cast<size_t>(4 * bi[i])], &from_left[16 + static_cast<size_t>(4 * i)], 4);
  auto got = read_device(w.base, 4096);
  MT_SAME_BYTES(got.data(), want.data(), 4096, g_context + (reused ? " (same handle value)" : " (new handle value)"));
  free_window(w);
  return reused;
}

// An epoch with derived types captured into a graph, its types freed, replayed: each replay moves
// the origin buffer's data of that moment by the captured layout.
void captured(void *s) {
  g_context = "captured epoch";
  TestWin w = make_window(WinKind::allocate, 4096);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group to(std::vector<int>{right}), from(std::vector<int>{left});
  MPI_Datatype vec, idx, ref_vec, ref_idx;
  MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &vec);
  const int bl[3] = {1, 2, 3}, di[3] = {10, 0, 5};
  MPI_Type_indexed(3, bl, di, MPI_DOUBLE, &idx);
  MPI_Type_commit(&vec);
  MPI_Type_commit(&idx);
  MPI_Type_dup(vec, &ref_vec);  // for the reference: the originals are freed after the capture
  MPI_Type_dup(idx, &ref_idx);
  DevBuf src(256);
  xdev::stream_begin_capture(s);
  MT_OK(MPIX_Win_post_stream(from, w.win, s));
  MT_OK(MPI_Win_start(to, MPIX_MODE_STREAM, w.win));
  MT_OK(MPI_Put(src.p, 1, vec, right, 64, 1, idx, w.win));
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
  void *graph = xdev::stream_end_capture(s);
  MPI_Type_free(&vec);
  MPI_Type_free(&idx);
  for (int r = 0; r < 3; ++r) {
    src.upload(pattern(256, key(0xca9, static_cast<uint64_t>(r), static_cast<uint64_t>(g_rank))));
    MPI_Barrier(MPI_COMM_WORLD);
    xdev::graph_launch(graph, s);
    MT_SYNC(s);
    std::vector<uint8_t> want(4096, 0);
    unpack(pack(pattern(256, key(0xca9, static_cast<uint64_t>(r), static_cast<uint64_t>(left))).data(), ref_vec, 1),
           want.data() + 64, ref_idx, 1);
    auto got = read_device(w.base, 4096);
    MT_SAME_BYTES(got.data(), want.data(), 4096, fmt("replay %d", r));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  xdev::graph_destroy(graph);
  MPI_Type_free(&ref_vec);
  MPI_Type_free(&ref_idx);
  free_window(w);
}

// Pair lists larger than one 256 KiB chunk of list memory and of no whole number of 64-byte
// lines (11,001 pairs of 24 bytes), then more lists: Faces' large case on 4 ranks copied its
// second list past the end of such a chunk. One epoch per type, each checked byte-exact.
void long_lists(Mode mode, void *s) {
  g_context = fmt("long pair lists, %s", mode_name(mode));
  const int pieces[] = {11001, 5003, 11001, 7};
  constexpr size_t kBytes = 12 * 11001;  // the widest stride (3 ints) times the most pieces
  TestWin w = make_window(WinKind::allocate, kBytes);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group to(std::vector<int>{right}), from(std::vector<int>{left});
  DevBuf buf(kBytes);
  std::vector<uint8_t> want(kBytes, 0);
  for (size_t round = 0; round < sizeof(pieces) / sizeof(pieces[0]); ++round) {
    const int n = pieces[round];
    // Rounds 0 and 2 share a size but not a stride, so each round builds a list of its own.
    const int stride = round == 2 ? 3 : 2;
    MPI_Datatype t;
    MPI_Type_vector(n, 1, stride, MPI_INT, &t);
    MPI_Type_commit(&t);
    const auto mine = pattern(kBytes / 2, key(0x10a6, round, static_cast<uint64_t>(g_rank)));
    buf.upload(mine);
    MT_POST(mode, from, w.win, s);
    MT_START(mode, to, w.win);
    MT_OK(MPI_Put(buf.p, n, MPI_INT, right, 0, 1, t, w.win));
    MT_COMPLETE(mode, w.win, s);
    MT_WAIT(mode, w.win, s);
    if (mode == Mode::stream) MT_SYNC(s);
    const auto theirs = pattern(kBytes / 2, key(0x10a6, round, static_cast<uint64_t>(left)));
    for (int i = 0; i < n; ++i)
      std::memcpy(&want[static_cast<size_t>(4 * stride * i)], &theirs[static_cast<size_t>(4 * i)], 4);
    auto got = read_device(w.base, kBytes);
    MT_SAME_BYTES(got.data(), want.data(), kBytes, fmt("%s, round %zu (%d pieces)", g_context.c_str(), round, n));
    MPI_Barrier(MPI_COMM_WORLD);  // the left rank's next put lands after this check
    MPI_Type_free(&t);
  }
  free_window(w);
}

// MPIX_ST_VNODE_SIZE=1: every other rank is on another (virtual) node. Pieces of a put or get
// share a triggered operation up to the provider's vector limit (at most 8): 20,000 of them (ints
// at a stride of 2) never fit a budget of 2,048, and are refused when recorded, with the resource
// class; the epoch then goes on, and the 100-piece put after the refusal lands. Staged
// (--staged): 65 pieces to one target are refused, 64 land.
void remote_limits(Mode mode, void *s, bool staged) {
  g_context = fmt("remote limits, %s", mode_name(mode));
  constexpr size_t kBytes = 256 * 1024;
  TestWin w = make_window(WinKind::allocate, kBytes);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group to(std::vector<int>{right}), from(std::vector<int>{left});
  const int fit = staged ? 64 : 100, refused = staged ? 65 : 20000;
  MPI_Datatype many, some;
  MPI_Type_vector(refused, 1, 2, MPI_INT, &many);
  MPI_Type_vector(fit, 1, 2, MPI_INT, &some);
  MPI_Type_commit(&many);
  MPI_Type_commit(&some);
  auto src = pattern(kBytes, key(0x11a, static_cast<uint64_t>(g_rank), static_cast<uint64_t>(mode)));
  DevBuf buf(kBytes);
  buf.upload(src);
  MT_POST(mode, from, w.win, s);
  MT_START(mode, to, w.win);
  std::string m;
  if (staged) {
    m = MT_EXPECT_ERROR(MPI_Put(buf.p, refused, MPI_INT, right, 0, 1, many, w.win), MPI_ERR_UNSUPPORTED_OPERATION);
    MT_CHECKF(contains(m, "staged") && contains(m, "contiguous piece"), "staged piece limit: %s", m.c_str());
  } else {
    m = MT_EXPECT_ERROR(MPI_Put(buf.p, refused, MPI_INT, right, 0, 1, many, w.win), MPIX_St_error_class_resource());
    MT_CHECKF(contains(m, "MPIX_ST_TRIGGERED_OPS_MAX") && contains(m, "20000 contiguous pieces"), "budget: %s",
              m.c_str());
    MT_EXPECT_ERROR(MPI_Get(buf.p, 1, many, right, 0, refused, MPI_INT, w.win), MPIX_St_error_class_resource());
  }
  // What fits still goes: the ints land at even positions of the target's first half.
  MT_OK(MPI_Put(buf.p, fit, MPI_INT, right, 0, 1, some, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  std::vector<uint8_t> want(kBytes, 0);
  const auto from_left = pattern(kBytes, key(0x11a, static_cast<uint64_t>(left), static_cast<uint64_t>(mode)));
  for (int i = 0; i < fit; ++i) std::memcpy(&want[static_cast<size_t>(8 * i)], &from_left[static_cast<size_t>(4 * i)], 4);
  auto got = read_device(w.base, kBytes);
  MT_SAME_BYTES(got.data(), want.data(), kBytes, g_context);
  MPI_Type_free(&many);
  MPI_Type_free(&some);
  free_window(w);
}

// --list-limit (run with MPIX_ST_DTYPE_LIST_MIB=1): pair lists live as long as the process, in
// memory bounded by that setting. Target types of 4,000 irregularly spaced ints (uneven gaps, so
// few pieces join into runs) are put one per stream epoch, each a list of its own, until the memory is
// spent: that put is refused with the resource class and a message naming the setting, its epoch
// goes on, and a list made before (cached) still serves puts in both modes, landing exactly.
constexpr int kLimitInts = 4000;
int limit_offset(int i) { return 4 * i + static_cast<int>((static_cast<unsigned>(i) * 2654435761u) >> 30); }
MPI_Datatype limit_type(int variant) {
  std::vector<int> lengths(kLimitInts, 1), offsets(kLimitInts);
  for (int i = 0; i < kLimitInts; ++i) offsets[i] = limit_offset(i) + variant;  // another place: another list
  MPI_Datatype t;
  MPI_Type_indexed(kLimitInts, lengths.data(), offsets.data(), MPI_INT, &t);
  MPI_Type_commit(&t);
  return t;
}
void list_limit(void *s) {
  constexpr int kTries = 64;  // 1 MiB held 16 such lists on the host backend (the 17th refused)
  constexpr size_t kBytes = 4 * (4 * kLimitInts + 4 + kTries);
  TestWin w = make_window(WinKind::allocate, kBytes);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group to(std::vector<int>{right}), from(std::vector<int>{left});
  DevBuf buf(4 * kLimitInts);
  std::vector<uint8_t> want(kBytes, 0);
  // One epoch of `mode` putting this rank's pattern `tag` with target type `t`; returns the put's code.
  auto epoch = [&](Mode mode, MPI_Datatype t, uint64_t tag) {
    const auto mine = pattern(4 * kLimitInts, key(0x1157, tag, static_cast<uint64_t>(g_rank)));
    buf.upload(mine);
    MT_POST(mode, from, w.win, s);
    MT_START(mode, to, w.win);
    const int rc = MPI_Put(buf.p, kLimitInts, MPI_INT, right, 0, 1, t, w.win);
    MT_COMPLETE(mode, w.win, s);
    MT_WAIT(mode, w.win, s);
    if (mode == Mode::stream) MT_SYNC(s);
    return rc;
  };
  auto expect_landed = [&](int variant, uint64_t tag, const std::string &what) {
    const auto theirs = pattern(4 * kLimitInts, key(0x1157, tag, static_cast<uint64_t>(left)));
    for (int i = 0; i < kLimitInts; ++i)
      std::memcpy(&want[static_cast<size_t>(4 * (limit_offset(i) + variant))], &theirs[static_cast<size_t>(4 * i)], 4);
    auto got = read_device(w.base, kBytes);
    MT_SAME_BYTES(got.data(), want.data(), kBytes, what);
    MPI_Barrier(MPI_COMM_WORLD);  // the left rank's next put lands after this check
  };
  MPI_Datatype first = limit_type(0);
  int refused_at = -1;
  for (int k = 0; k < kTries && refused_at < 0; ++k) {
    g_context = fmt("list limit, type %d", k);
    MPI_Datatype t = k == 0 ? first : limit_type(k);
    const int rc = epoch(Mode::stream, t, static_cast<uint64_t>(k));
    if (rc == MPI_SUCCESS) {
      expect_landed(k, static_cast<uint64_t>(k), g_context);
    } else {
      const std::string m = MT_EXPECT_ERROR(rc, MPIX_St_error_class_resource());
      MT_CHECKF(contains(m, "MPIX_ST_DTYPE_LIST_MIB"), "refusal: \"%s\"", m.c_str());
      refused_at = k;
      MPI_Barrier(MPI_COMM_WORLD);
    }
    if (k != 0) MPI_Type_free(&t);
  }
  // Every rank spends its list memory alike, so all are refused at the same type.
  int lowest = refused_at, highest = refused_at;
  MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MT_CHECKF(lowest >= 2 && lowest == highest, "refused at type %d (lowest %d, highest %d of %d tried)", refused_at,
            lowest, highest, kTries);
  // The list of the first type is cached: it still serves, in both modes.
  uint64_t tag = 1000;
  for (Mode mode : kAllModes) {
    g_context = fmt("list limit, cached type after the refusal, %s", mode_name(mode));
    MT_OK(epoch(mode, first, ++tag));
    expect_landed(0, tag, g_context);
  }
  MPI_Type_free(&first);
  free_window(w);
  note("datatypes --list-limit: the list of type %d of %d refused", refused_at, kTries);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "datatypes");
  uint64_t seed = 20260301;
  bool remote = false, staged = false;
  int rounds = 4;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--seed=", 7) == 0) seed = std::strtoull(argv[i] + 7, nullptr, 10);
    if (std::strncmp(argv[i], "--rounds=", 9) == 0) rounds = std::atoi(argv[i] + 9);
    if (std::strcmp(argv[i], "--remote") == 0) remote = true;
    if (std::strcmp(argv[i], "--staged") == 0) remote = staged = true;
    if (std::strcmp(argv[i], "--list-limit") == 0) {
      void *s = stream_create();
      list_limit(s);
      stream_destroy(s);
      return finish();
    }
  }
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  note("datatypes: seed %llu (--seed=N to replay)", static_cast<unsigned long long>(seed));
  const double t0 = now_s();
  void *s = stream_create();
  std::mt19937_64 rng(seed);
  Counts c;
  constexpr int kEpochsPerPlan = 3;  // the same types for several epochs: cached pair lists reused
  for (Mode mode : kAllModes) {
    for (WinKind kind : kAllKinds) {
      Runner run(mode, kind, s);
      for (int round = 0; round < rounds; ++round) {
        // Staged: at most 2 x 8 pieces per origin and target (64 allowed), for several origins.
        Plan p = staged ? make_plan(rng, mode == Mode::stream, 8, 1) : make_plan(rng, mode == Mode::stream);
        c.types += p.types;
        std::vector<Runner::Mine> pending;
        for (int e = 0; e < kEpochsPerPlan; ++e) {
          g_context = fmt("%s, %s, round %d, epoch %d", mode_name(mode), kind_name(kind), round, e);
          pending.push_back(run.epoch(p, key(0xda7a, static_cast<uint64_t>(round), static_cast<uint64_t>(e)), &c));
        }
        free_plan(p);  // before the stream ran the epochs: their lists outlive the types
        if (mode == Mode::stream) MT_SYNC(s);
        for (size_t e = 0; e < pending.size(); ++e)
          run.check(pending[e], fmt("%s, %s, round %d, epoch %zu", mode_name(mode), kind_name(kind), round, e));
        MPI_Barrier(MPI_COMM_WORLD);  // every rank read its gets before the get regions change
        run.set_get_region(static_cast<uint64_t>(round + 1));
        MPI_Barrier(MPI_COMM_WORLD);
      }
    }
  }
  if (!remote) captured(s);
  int reused = 0;
  for (Mode mode : kAllModes) {
    refusals(mode, s);
    reused += handle_reuse(mode, s) ? 1 : 0;
    if (!remote) long_lists(mode, s);
    if (remote) remote_limits(mode, s, staged);
  }
  stream_destroy(s);
  note("datatypes%s: %ld puts, %ld gets, %ld accumulates in %ld epochs, %ld types built on rank 0; "
       "handle value reused in %d of 2 reuse cases; %.2f s",
       staged ? " --staged" : remote ? " --remote" : "", c.ops[kPut], c.ops[kGet], c.ops[kAcc], c.epochs, c.types, reused, now_s() - t0);
  return finish();
}
