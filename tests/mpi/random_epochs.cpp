// Ring and all-to-all epochs over random subsets of ranks (seeded: every rank draws the same plan),
// both epoch modes, both window kinds. Each origin puts a random piece into its own slot of each
// target and gets a random piece of the target's "get region", which the target rewrites between
// epochs. Ranks without targets (origins) skip the access (exposure) epoch or open one with an
// empty group; some epochs add puts and gets to MPI_PROC_NULL. A second phase enqueues 20 epochs (4 times)
// (stream mode) with distinct buffers and synchronises once; a third mixes both modes on one window.
// Every window and every get buffer is checked byte for byte against a model.
//
// Self edges (a rank in its own start and post groups) are drawn in stream mode only: host-driven
// self epochs are covered by special_epochs.
//
// --puts-only: no MPI_Get at all (the plan is drawn as without it, its gets are then dropped), for
// windows whose inter-node path carries puts only (staged mode). The get buffers must stay
// untouched (0xee).
#include <algorithm>
#include <random>

#include "test_common.h"

using namespace mt;

namespace {

constexpr size_t kSlot = 4096 + 64;  // per origin: a piece of up to 4096 bytes at an offset below 64
constexpr size_t kGet = 2048;        // the get region, after the slots

bool g_puts_only = false;  // --puts-only: issue no MPI_Get

struct Edge {
  int o, t;
  size_t off, len;    // put: bytes [off, off + len) of t's slot o
  uint64_t k;         // put data pattern
  size_t goff, glen;  // get: bytes [goff, goff + glen) of t's get region (glen 0: no get)
};

struct Plan {
  std::vector<Edge> edges;
  std::vector<char> proc_null;   // by rank: also put/get to MPI_PROC_NULL
  std::vector<char> skip_empty;  // by rank: with no targets/origins, skip the epoch (else empty group)
};

Plan make_plan(std::mt19937_64 &rng, bool ring, bool self_ok, int size) {
  std::uniform_real_distribution<double> u(0, 1);
  auto pick = [&](size_t lo, size_t hi) { return std::uniform_int_distribution<size_t>(lo, hi)(rng); };
  Plan p;
  std::vector<std::pair<int, int>> pairs;
  if (ring) {
    std::vector<int> members;
    for (int r = 0; r < size; ++r)
      if (u(rng) < 0.75) members.push_back(r);
    std::shuffle(members.begin(), members.end(), rng);
    const int m = static_cast<int>(members.size());
    for (int i = 0; i < m; ++i) {
      const int o = members[i], t = members[(i + 1) % m];
      if (o == t && !self_ok) continue;
      pairs.push_back({o, t});
    }
  } else {
    for (int o = 0; o < size; ++o)
      for (int t = 0; t < size; ++t)
        if ((o != t || self_ok) && u(rng) < 0.5) pairs.push_back({o, t});
  }
  for (auto [o, t] : pairs) {
    Edge e{};
    e.o = o;
    e.t = t;
    e.len = u(rng) < 0.2 ? pick(1, 16) : pick(1, 4096);
    e.off = pick(0, 63);
    e.k = rng();
    if (u(rng) < 0.5) {
      e.goff = pick(0, kGet - 1);
      e.glen = pick(1, kGet - e.goff);
    }
    if (g_puts_only) e.goff = e.glen = 0;  // drawn all the same: the plan's puts stay as without the option
    p.edges.push_back(e);
  }
  p.proc_null.resize(size);
  p.skip_empty.resize(size);
  for (int r = 0; r < size; ++r) {
    p.proc_null[r] = u(rng) < 0.3;
    p.skip_empty[r] = u(rng) < 0.5;
  }
  return p;
}

uint64_t get_region_key(uint64_t gen, int owner) { return key(0x6e7, gen, static_cast<uint64_t>(owner)); }

struct Model {
  std::vector<uint8_t> win;  // what my window must hold
};

// Origin-side buffers of one epoch: put sources and get destinations, laid out one after another
// (each at an odd offset), plus a canary region for gets to MPI_PROC_NULL.
struct EpochBuffers {
  DevBuf src, dst;
  std::vector<size_t> src_at, dst_at;
};

class Runner {
 public:
  Runner(Mode mode, WinKind kind, void *stream) : mode_(mode), kind_(kind), s_(stream) {
    bytes_ = kSlot * static_cast<size_t>(g_size) + kGet;
    w_ = make_window(kind, bytes_);
    model_.win.assign(bytes_, 0);
    set_get_region(0);
  }
  ~Runner() { free_window(w_); }

  // Host-side rewrite of my get region (only between epochs, stream idle).
  void set_get_region(uint64_t gen) {
    gen_ = gen;
    auto g = pattern(kGet, get_region_key(gen, g_rank));
    to_device(w_.base + kSlot * static_cast<size_t>(g_size), g.data(), kGet);
    std::copy(g.begin(), g.end(), model_.win.begin() + static_cast<ptrdiff_t>(kSlot * static_cast<size_t>(g_size)));
  }

  // Enqueues (stream) or runs (host) one epoch of the plan; returns its buffers, to be checked
  // after the stream synchronised.
  EpochBuffers epoch(const Plan &p) { return epoch(p, mode_); }
  EpochBuffers epoch(const Plan &p, Mode mode) {
    std::vector<int> targets, origins;
    for (const Edge &e : p.edges) {
      if (e.o == g_rank) targets.push_back(e.t);
      if (e.t == g_rank) origins.push_back(e.o);
    }
    // Each pair appears once per plan: the groups have no duplicates.
    EpochBuffers b;
    size_t src_bytes = 8, dst_bytes = 8 + 64;
    for (const Edge &e : p.edges) {
      if (e.o != g_rank) continue;
      b.src_at.push_back(src_bytes);
      src_bytes += e.len + 3;
      b.dst_at.push_back(dst_bytes);
      dst_bytes += e.glen + 5;
    }
    b.src = DevBuf(src_bytes);
    b.dst = DevBuf(dst_bytes);
    std::vector<uint8_t> src(src_bytes, 0);
    size_t i = 0;
    for (const Edge &e : p.edges) {
      if (e.o != g_rank) continue;
      auto d = pattern(e.len, e.k);
      std::copy(d.begin(), d.end(), src.begin() + static_cast<ptrdiff_t>(b.src_at[i++]));
    }
    b.src.upload(src);
    std::vector<uint8_t> canary(dst_bytes, 0xee);  // not xdev::fill: no device-wide synchronisation here
    b.dst.upload(canary);

    const bool expose = !origins.empty() || !p.skip_empty[g_rank];
    const bool access = !targets.empty() || !p.skip_empty[g_rank] || p.proc_null[g_rank];
    Group og(origins), tg(targets);
    if (expose) MT_POST(mode, og, w_.win, s_);
    if (access) {
      MT_START(mode, tg, w_.win);
      i = 0;
      for (const Edge &e : p.edges) {
        if (e.o != g_rank) continue;
        MT_OK(MPI_Put(b.src.p + b.src_at[i], static_cast<int>(e.len), MPI_BYTE, e.t,
                      static_cast<MPI_Aint>(kSlot * static_cast<size_t>(g_rank) + e.off), static_cast<int>(e.len),
                      MPI_BYTE, w_.win));
        if (e.glen)
          MT_OK(MPI_Get(b.dst.p + b.dst_at[i], static_cast<int>(e.glen), MPI_BYTE, e.t,
                        static_cast<MPI_Aint>(kSlot * static_cast<size_t>(g_size) + e.goff), static_cast<int>(e.glen),
                        MPI_BYTE, w_.win));
        ++i;
      }
      if (p.proc_null[g_rank]) {
        MT_OK(MPI_Put(b.src.p, 8, MPI_BYTE, MPI_PROC_NULL, 0, 8, MPI_BYTE, w_.win));
        if (!g_puts_only)
          MT_OK(MPI_Get(b.dst.p, 8, MPI_BYTE, MPI_PROC_NULL, 0, 8, MPI_BYTE, w_.win));      // dst[0..8) stays 0xee
        MT_OK(MPI_Put(b.src.p, 8, MPI_BYTE, MPI_PROC_NULL, 1 << 30, 8, MPI_BYTE, w_.win));  // no range check
      }
      MT_COMPLETE(mode, w_.win, s_);
    }
    if (expose) MT_WAIT(mode, w_.win, s_);
    // The model of my window: puts of my origins, in plan order.
    for (const Edge &e : p.edges) {
      if (e.t != g_rank) continue;
      auto d = pattern(e.len, e.k);
      std::copy(d.begin(), d.end(),
                model_.win.begin() + static_cast<ptrdiff_t>(kSlot * static_cast<size_t>(e.o) + e.off));
    }
    return b;
  }

  // After the epoch ran: my gets read each target's get region of generation `gen`.
  void check_gets(const Plan &p, const EpochBuffers &b, uint64_t gen, const std::string &what) {
    auto got = b.dst.download();
    std::vector<uint8_t> want(got.size(), 0xee);
    size_t i = 0;
    for (const Edge &e : p.edges) {
      if (e.o != g_rank) continue;
      if (e.glen) {
        auto g = pattern(kGet, get_region_key(gen, e.t));
        std::copy(g.begin() + static_cast<ptrdiff_t>(e.goff), g.begin() + static_cast<ptrdiff_t>(e.goff + e.glen),
                  want.begin() + static_cast<ptrdiff_t>(b.dst_at[i]));
      }
      ++i;
    }
    MT_SAME_BYTES(got.data(), want.data(), got.size(), what + ": get buffers (0xee: untouched)");
  }

  void check_window(const std::string &what) {
    auto got = read_device(w_.base, bytes_);
    MT_SAME_BYTES(got.data(), model_.win.data(), bytes_, what + ": my window");
  }

  Mode mode() const { return mode_; }
  uint64_t gen() const { return gen_; }

 private:
  Mode mode_;
  WinKind kind_;
  void *s_;
  TestWin w_;
  size_t bytes_ = 0;
  Model model_;
  uint64_t gen_ = 0;
};

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "random_epochs");
  uint64_t seed = 20240611;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--seed=", 7) == 0) seed = std::strtoull(argv[i] + 7, nullptr, 10);
    if (std::strcmp(argv[i], "--puts-only") == 0) g_puts_only = true;
  }
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  note("random_epochs: seed %llu (--seed=N to replay)%s", static_cast<unsigned long long>(seed),
       g_puts_only ? ", puts only" : "");
  const double t0 = now_s();
  {
    void *s = stream_create();
    std::mt19937_64 rng(seed);
    const int iterations = 50;
    for (Mode mode : kAllModes) {
      for (WinKind kind : kAllKinds) {
        Runner run(mode, kind, s);
        for (int pattern_kind = 0; pattern_kind < 2; ++pattern_kind) {
          const bool ring = pattern_kind == 0;
          for (int it = 0; it < iterations; ++it) {
            const Plan p = make_plan(rng, ring, mode == Mode::stream, g_size);
            const std::string what =
                fmt("%s, %s, %s, iteration %d", mode_name(mode), kind_name(kind), ring ? "ring" : "all-to-all", it);
            g_context = what;
            EpochBuffers b = run.epoch(p);
            if (mode == Mode::stream) MT_SYNC(s);
            run.check_gets(p, b, run.gen(), what);
            run.check_window(what);
            // Every rank has checked its window and its gets: rewrite the get region for the next
            // epoch (no peer reads it before our next post).
            run.set_get_region(run.gen() + 1);
          }
        }
        if (mode != Mode::stream) continue;
        // 20 epochs in flight, one synchronisation: distinct buffers per epoch, get regions fixed.
        for (int batch = 0; batch < 4; ++batch) {
          std::vector<Plan> plans;
          std::vector<EpochBuffers> bufs;
          for (int it = 0; it < 20; ++it) {
            plans.push_back(make_plan(rng, (it + batch) % 2 == 0, true, g_size));
            g_context = fmt("%s, %s, deep batch %d, epoch %d", mode_name(mode), kind_name(kind), batch, it);
            bufs.push_back(run.epoch(plans.back()));
          }
          MT_SYNC(s);
          for (int it = 0; it < 20; ++it) {
            const std::string what =
                fmt("%s, %s, deep batch %d, epoch %d", mode_name(mode), kind_name(kind), batch, it);
            g_context = what;
            run.check_gets(plans[it], bufs[it], run.gen(), what);
          }
          g_context = fmt("%s, %s, deep batch %d", mode_name(mode), kind_name(kind), batch);
          run.check_window(g_context);
          MPI_Barrier(MPI_COMM_WORLD);  // every rank checked its gets before the get regions change
          run.set_get_region(run.gen() + 1);
        }
      }
    }
    // Both modes on one window: each epoch's mode drawn at random (the same on every rank);
    // stream-triggered epochs run ahead on the stream until a host-driven one synchronises it.
    for (WinKind kind : kAllKinds) {
      Runner run(Mode::stream, kind, s);
      std::vector<Plan> pending_plans;
      std::vector<EpochBuffers> pending;
      for (int it = 0; it < 2 * iterations; ++it) {
        const Mode mode = rng() % 2 ? Mode::stream : Mode::host;
        const Plan p = make_plan(rng, it % 2 == 0, mode == Mode::stream, g_size);
        const std::string what = fmt("mixed modes, %s, epoch %d (%s)", kind_name(kind), it, mode_name(mode));
        g_context = what;
        if (mode == Mode::host) {
          // A host-driven epoch after stream-triggered ones: the stream work must have run first
          // (the host-driven epoch moves data outside the stream), so synchronise and check them.
          MT_SYNC(s);
          for (size_t i = 0; i < pending.size(); ++i)
            run.check_gets(pending_plans[i], pending[i], run.gen(), what + ", earlier stream epoch");
          pending.clear();
          pending_plans.clear();
          MPI_Barrier(MPI_COMM_WORLD);  // every rank's streams are idle before host-driven data moves
          EpochBuffers b = run.epoch(p, mode);
          run.check_gets(p, b, run.gen(), what);
        } else {
          pending.push_back(run.epoch(p, mode));
          pending_plans.push_back(p);
        }
      }
      MT_SYNC(s);
      for (size_t i = 0; i < pending.size(); ++i)
        run.check_gets(pending_plans[i], pending[i], run.gen(), "mixed modes, last stream epochs");
      g_context = fmt("mixed modes, %s", kind_name(kind));
      run.check_window(g_context);
    }
    stream_destroy(s);
  }
  note("random_epochs: %.2f s", now_s() - t0);
  return finish();
}
