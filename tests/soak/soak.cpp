// Soak: N random epochs (default 10,000; --epochs=N), byte-exact. Several windows (3: two of
// MPI_Win_allocate, one of MPI_Win_create), each rank an origin to its right neighbour and a target
// of its left one. Every epoch is of one kind, drawn from a seed all ranks share: puts of mixed
// sizes (1 B .. 48 KiB, random offsets, several per epoch), gets of what this rank put earlier, or
// 64-bit accumulates (SUM) into counters. Streams run 16 epochs between synchronisations; one
// epoch in 8 is host-driven. Each rank keeps a model of the slot it writes in its right
// neighbour's window and of the slot its left neighbour writes in its own, and checks them (and
// every get) after each synchronisation. Run across virtual nodes with a small budget of
// triggered operations (MPIX_ST_VNODE_SIZE, MPIX_ST_TRIGGERED_OPS_MAX) to soak the throttle; with
// MPIX_ST_THROTTLE_REPORT=1 the budget's counters are printed at the end.
#include <algorithm>

#include "test_common.h"

using namespace mt;

namespace {

constexpr size_t kSlot = 128 * 1024;     // bytes each origin owns in each target window
constexpr size_t kData = kSlot - 64;     // puts land in [0, kData); 8 counters after it
constexpr size_t kMaxPut = 48 * 1024;
constexpr int kWindows = 3, kBatch = 16;

enum Kind { kPut, kGet, kAcc };

struct Op {
  Kind kind;
  size_t offset, bytes;  // put/get: a range of the slot; acc: counter index in offset
  uint64_t data_key;     // put: pattern of the data; acc: the addend
};

struct Epoch {
  int window;
  Mode mode;
  std::vector<Op> ops;
};

// The ops origin `origin` issues in epoch `e` (every rank can compute any origin's).
Epoch plan(uint64_t seed, long e, int origin) {
  uint64_t x = key(seed, static_cast<uint64_t>(e));  // shared by all origins: window, mode, kind
  Epoch ep;
  ep.window = static_cast<int>(x % kWindows);
  ep.mode = (x >> 8) % 8 == 0 ? Mode::host : Mode::stream;
  const Kind kind = static_cast<Kind>((x >> 16) % 3);
  uint64_t y = key(seed, static_cast<uint64_t>(e), static_cast<uint64_t>(origin) + 1);
  const int n = 1 + static_cast<int>(y % 4);
  for (int i = 0; i < n; ++i) {
    y = mix(y + static_cast<uint64_t>(i));
    Op op{kind, 0, 0, y};
    if (kind == kAcc) {
      op.offset = y % 8;
      op.bytes = 8;
      op.data_key = y % 1000;
    } else {
      // mixed sizes: mostly small, some large
      const uint64_t r = (y >> 20) % 100;
      op.bytes = r < 60 ? 1 + (y >> 32) % 256 : r < 90 ? 1 + (y >> 32) % 8192 : 1 + (y >> 32) % kMaxPut;
      op.offset = (y >> 40) % (kData - op.bytes + 1);
      if (kind == kGet) op.bytes = std::min<size_t>(op.bytes, 4096);
    }
    ep.ops.push_back(op);
  }
  // Puts of one origin in one epoch must not overlap (their order is not defined): keep disjoint ones.
  if (kind == kPut) {
    std::vector<Op> kept;
    for (const Op &op : ep.ops)
      if (std::none_of(kept.begin(), kept.end(), [&](const Op &k) {
            return k.offset < op.offset + op.bytes && op.offset < k.offset + k.bytes;
          }))
        kept.push_back(op);
    ep.ops = kept;
  }
  return ep;
}

// Applies origin's epoch to a model of its slot at the target.
void apply(const Epoch &ep, std::vector<uint8_t> &slot) {
  for (const Op &op : ep.ops) {
    if (op.kind == kPut) fill_pattern(slot.data() + op.offset, op.bytes, op.data_key);
    if (op.kind == kAcc) {
      int64_t v;
      std::memcpy(&v, slot.data() + kData + 8 * op.offset, 8);
      v += static_cast<int64_t>(op.data_key);
      std::memcpy(slot.data() + kData + 8 * op.offset, &v, 8);
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "soak");
  long epochs = 10000;
  uint64_t seed = 20261123;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--epochs=", 9) == 0) epochs = std::atol(argv[i] + 9);
    if (std::strncmp(argv[i], "--seed=", 7) == 0) seed = std::strtoull(argv[i] + 7, nullptr, 10);
  }
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  note("soak: %ld epochs, %d ranks, %d windows, seed %llu", epochs, g_size, kWindows,
       static_cast<unsigned long long>(seed));
  const double t0 = now_s();
  void *s = stream_create();
  {
    std::vector<TestWin> wins;
    for (int i = 0; i < kWindows; ++i)
      wins.push_back(make_window(i == 2 ? WinKind::create : WinKind::allocate, kSlot * g_size));
    // Models: my slot in my right neighbour's windows, my left neighbour's slot in mine.
    std::vector<std::vector<uint8_t>> at_right(kWindows, std::vector<uint8_t>(kSlot, 0)),
        from_left(kWindows, std::vector<uint8_t>(kSlot, 0));
    Group to_right({right}), from_left_g({left});
    // Per batch: origin data and get landing space for each epoch.
    std::vector<DevBuf> src, dst;
    for (int i = 0; i < kBatch; ++i) {
      src.emplace_back(4 * kMaxPut + 64);
      dst.emplace_back(4 * 4096);
    }
    struct PendingGet {
      int slot;
      size_t at;
      std::vector<uint8_t> want;
    };
    long done = 0;
    while (done < epochs) {
      const int batch = static_cast<int>(std::min<long>(kBatch, epochs - done));
      std::vector<PendingGet> gets;
      for (int b = 0; b < batch; ++b) {
        const long e = done + b;
        g_context = fmt("epoch %ld", e);
        const Epoch mine = plan(seed, e, g_rank), theirs = plan(seed, e, left);
        TestWin &w = wins[mine.window];
        // Origin data, staged into this epoch's buffer.
        std::vector<uint8_t> host(src[b].n, 0);
        size_t at = 0, get_at = 0;
        std::vector<size_t> where;
        for (const Op &op : mine.ops) {
          where.push_back(at);
          if (op.kind == kPut) fill_pattern(host.data() + at, op.bytes, op.data_key);
          if (op.kind == kAcc) {
            const int64_t v = static_cast<int64_t>(op.data_key);
            std::memcpy(host.data() + at, &v, 8);
          }
          at += op.bytes;
        }
        src[b].upload(host.data(), at);
        if (mine.mode == Mode::host && b > 0) MT_SYNC(s);  // host epochs follow the stream's
        MT_POST(mine.mode, from_left_g, w.win, s);
        MT_START(mine.mode, to_right, w.win);
        for (size_t i = 0; i < mine.ops.size(); ++i) {
          const Op &op = mine.ops[i];
          const MPI_Aint disp = static_cast<MPI_Aint>(kSlot * g_rank + (op.kind == kAcc ? kData + 8 * op.offset : op.offset));
          if (op.kind == kPut)
            MT_OK(MPI_Put(src[b].p + where[i], static_cast<int>(op.bytes), MPI_BYTE, right, disp,
                          static_cast<int>(op.bytes), MPI_BYTE, w.win));
          else if (op.kind == kAcc)
            MT_OK(MPI_Accumulate(src[b].p + where[i], 1, MPI_INT64_T, right, disp, 1, MPI_INT64_T, MPI_SUM, w.win));
          else {
            MT_OK(MPI_Get(dst[b].p + get_at, static_cast<int>(op.bytes), MPI_BYTE, right, disp,
                          static_cast<int>(op.bytes), MPI_BYTE, w.win));
            gets.push_back({b, get_at,
                            std::vector<uint8_t>(at_right[mine.window].begin() + static_cast<long>(op.offset),
                                                 at_right[mine.window].begin() + static_cast<long>(op.offset + op.bytes))});
            get_at += op.bytes;
          }
        }
        MT_COMPLETE(mine.mode, w.win, s);
        MT_WAIT(mine.mode, w.win, s);
        apply(mine, at_right[mine.window]);
        apply(theirs, from_left[theirs.window]);
      }
      MT_SYNC(s);
      for (const PendingGet &g : gets) {
        auto got = dst[g.slot].download(g.at, g.want.size());
        MT_SAME_BYTES(got.data(), g.want.data(), g.want.size(), fmt("get in the batch from epoch %ld", done));
      }
      // My left neighbour's slot in each of my windows.
      for (int i = 0; i < kWindows; ++i) {
        auto got = read_device(wins[i].base + kSlot * left, kSlot);
        MT_SAME_BYTES(got.data(), from_left[i].data(), kSlot, fmt("window %d after epoch %ld", i, done + batch - 1));
      }
      done += batch;
      if (g_failures) break;
      if (done % 2000 == 0) note("soak: %ld epochs, %.1f s", done, now_s() - t0);
    }
    for (TestWin &w : wins) free_window(w);
  }
  stream_destroy(s);
  note("soak: %ld epochs in %.1f s", epochs, now_s() - t0);
  return finish();
}
