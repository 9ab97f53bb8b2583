// Puts and gets from 1 B to 16 MiB, odd sizes, unaligned origin and target offsets, in a ring
// (rank r puts to r+1 and gets back from it), both epoch modes, both window kinds; then many
// puts in one epoch, and windows whose displacement unit is not 1. Checked byte for byte, with
// margins around every transfer and the whole window at the end of each phase.
//
// --puts-only: no gets (the get-back epochs are left out), for windows whose inter-node path
// carries puts only (staged mode); every put and check is as without the option.
#include <algorithm>

#include "test_common.h"

using namespace mt;

namespace {

struct Case {
  size_t size, toff, soff, goff;
};

// Datatype of a transfer: the largest of double / int / byte that divides the size.
MPI_Datatype type_for(size_t size, int *count) {
  if (size % 8 == 0) return *count = static_cast<int>(size / 8), MPI_DOUBLE;
  if (size % 4 == 0) return *count = static_cast<int>(size / 4), MPI_INT;
  return *count = static_cast<int>(size), MPI_BYTE;
}

void check_region(const TestWin &w, const std::vector<uint8_t> &shadow, size_t off, size_t size, const char *what) {
  const size_t margin = 4096;
  const size_t lo = off > margin ? off - margin : 0, hi = std::min(w.bytes, off + size + margin);
  auto got = read_device(w.base + lo, hi - lo);
  MT_SAME_BYTES(got.data(), shadow.data() + lo, hi - lo,
                fmt("%s: window bytes [%zu, %zu) (transfer at %zu, %zu bytes)", what, lo, hi, off, size));
}

void check_whole(const TestWin &w, const std::vector<uint8_t> &shadow, const char *what) {
  auto got = read_device(w.base, w.bytes);
  MT_SAME_BYTES(got.data(), shadow.data(), w.bytes, fmt("%s: whole window", what));
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "put_get_sizes");
  bool puts_only = false;  // --puts-only: issue no MPI_Get
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--puts-only") == 0) puts_only = true;
  if (puts_only) note("put_get_sizes: puts only");
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  // clang-format off
  const size_t sizes[] = {1, 2, 3, 7, 8, 9, 63, 64, 65, 255, 1000, 4095, 4096, 4097, 65535, 65537,
                          (1u << 20) - 1, 1u << 20, (1u << 20) + 3, (4u << 20) + 5, 16u << 20};
  // clang-format on
  const size_t toffs[] = {0, 1, 3, 4093, 8191, 12288};
  const size_t kMax = 16u << 20, kWin = kMax + (16u << 10);
  std::vector<Case> cases;
  for (size_t i = 0; i < std::size(sizes); ++i)
    cases.push_back({sizes[i], toffs[i % std::size(toffs)], i % 7, (i * 3) % 11});

  {
    void *s = stream_create();
    Group to_right({right}), from_left({left});
    DevBuf src(kMax + 16), got(kMax + 32);
    DevBuf packed[2] = {DevBuf(4u << 20), DevBuf(4u << 20)};
    const double t0 = now_s();

    for (Mode mode : kAllModes) {
      for (WinKind kind : kAllKinds) {
        const uint64_t init_key = key(0x5157, static_cast<uint64_t>(mode), static_cast<uint64_t>(kind));
        TestWin w = make_window(kind, kWin, 1, MPI_COMM_WORLD, init_key);
        std::vector<uint8_t> shadow = pattern(kWin, key(init_key, static_cast<uint64_t>(g_rank)));
        for (size_t ci = 0; ci < cases.size(); ++ci) {
          const Case &c = cases[ci];
          g_context = fmt("%s, %s, case %zu: %zu bytes, target offset %zu, origin offset %zu", mode_name(mode),
                          kind_name(kind), ci, c.size, c.toff, c.soff);
          auto data_key = [&](int origin) {
            return key(0xda7a, ci, static_cast<uint64_t>(mode) * 2 + static_cast<uint64_t>(kind),
                       static_cast<uint64_t>(origin));
          };
          const auto mine = pattern(c.size, data_key(g_rank));
          src.upload(mine, c.soff);
          int count = 0;
          MPI_Datatype type = type_for(c.size, &count);

          // Epoch 1: put to the right neighbour.
          MT_POST(mode, from_left, w.win, s);
          MT_START(mode, to_right, w.win);
          MT_OK(MPI_Put(src.p + c.soff, count, type, right, static_cast<MPI_Aint>(c.toff), count, type, w.win));
          MT_COMPLETE(mode, w.win, s);
          MT_WAIT(mode, w.win, s);
          if (mode == Mode::stream) MT_SYNC(s);
          const auto theirs = pattern(c.size, data_key(left));
          std::copy(theirs.begin(), theirs.end(), shadow.begin() + static_cast<ptrdiff_t>(c.toff));
          check_region(w, shadow, c.toff, c.size, "after the put");

          // Epoch 2: get back what we put, to an unaligned local offset.
          if (puts_only) continue;
          xdev::fill(got.p, 0xee, c.size + 32);
          MT_POST(mode, from_left, w.win, s);
          MT_START(mode, to_right, w.win);
          MT_OK(MPI_Get(got.p + c.goff, count, type, right, static_cast<MPI_Aint>(c.toff), count, type, w.win));
          MT_COMPLETE(mode, w.win, s);
          MT_WAIT(mode, w.win, s);
          if (mode == Mode::stream) MT_SYNC(s);
          auto back = got.download(0, c.size + 32);
          std::vector<uint8_t> want(c.size + 32, 0xee);
          std::copy(mine.begin(), mine.end(), want.begin() + static_cast<ptrdiff_t>(c.goff));
          MT_SAME_BYTES(back.data(), want.data(), want.size(),
                        fmt("get of %zu bytes into offset %zu (0xee: untouched)", c.size, c.goff));
        }
        g_context = fmt("%s, %s, after all sizes", mode_name(mode), kind_name(kind));
        check_whole(w, shadow, "end of the size sweep");

        // Many puts of different sizes in one epoch, then a second such epoch enqueued before the
        // synchronisation (stream mode): it overwrites part of the first, and must win there.
        g_context = fmt("%s, %s, packed puts", mode_name(mode), kind_name(kind));
        for (int round = 0; round < 2; ++round) {
          DevBuf &buf = packed[round];  // a source buffer per epoch: neither changes before the stream ran
          std::vector<std::pair<size_t, size_t>> placed;  // (target offset, size)
          std::vector<uint8_t> all(buf.n, 0);
          size_t off = 5 + static_cast<size_t>(round) * 333, soff = 1;
          for (size_t size : sizes) {
            if (size > (1u << 20) + 3) continue;
            const auto part =
                pattern(size, key(0x9ac4, size, static_cast<uint64_t>(round), static_cast<uint64_t>(g_rank)));
            std::copy(part.begin(), part.end(), all.begin() + static_cast<ptrdiff_t>(soff));
            placed.push_back({off, size});
            off += size + 1;
            soff += size + 3;
          }
          buf.upload(all);
          MT_POST(mode, from_left, w.win, s);
          MT_START(mode, to_right, w.win);
          soff = 1;
          for (auto [toff, size] : placed) {
            MT_OK(MPI_Put(buf.p + soff, static_cast<int>(size), MPI_BYTE, right, static_cast<MPI_Aint>(toff),
                          static_cast<int>(size), MPI_BYTE, w.win));
            soff += size + 3;
          }
          MT_COMPLETE(mode, w.win, s);
          MT_WAIT(mode, w.win, s);
          for (auto [toff, size] : placed) {
            const auto part =
                pattern(size, key(0x9ac4, size, static_cast<uint64_t>(round), static_cast<uint64_t>(left)));
            std::copy(part.begin(), part.end(), shadow.begin() + static_cast<ptrdiff_t>(toff));
          }
          if (mode == Mode::stream && round == 0) continue;  // checked after round 1, one synchronisation
          if (mode == Mode::stream) MT_SYNC(s);
          check_whole(w, shadow, round == 0 ? "packed puts, epoch 1" : "packed puts, epoch 2");
        }
        free_window(w);
      }
    }

    // Small puts in a row, enqueued before one synchronisation: a target that took a one-line put
    // polls the next put's first line with its header (work_items.h, kLineHintWord); this order
    // passes that hint through each of its changes (one line, several lines, a put made directly,
    // an epoch without puts) with data arriving while the target polls.
    for (Mode mode : kAllModes) {
      for (WinKind kind : kAllKinds) {
        g_context = fmt("%s, %s, small puts in a row", mode_name(mode), kind_name(kind));
        const size_t row[] = {8, 1, 8, 5, 200, 8, 8, 4096, 3, 8, 0, 8, 16, 8, 256, 7};
        std::vector<size_t> at;  // each epoch's own source and target bytes, 8 apart
        size_t total = 0;
        for (size_t n : row) {
          at.push_back(total);
          total += n + 8;
        }
        auto epoch_bytes = [&](size_t i, int rank) {
          return pattern(row[i], key(0x11e5, i, static_cast<uint64_t>(rank)));
        };
        TestWin w = make_window(kind, total, 1);
        std::vector<uint8_t> shadow(total, 0), all(total, 0);
        for (size_t i = 0; i < std::size(row); ++i) {
          const auto mine = epoch_bytes(i, g_rank), theirs = epoch_bytes(i, left);
          std::copy(mine.begin(), mine.end(), all.begin() + static_cast<ptrdiff_t>(at[i]));
          std::copy(theirs.begin(), theirs.end(), shadow.begin() + static_cast<ptrdiff_t>(at[i]));
        }
        src.upload(all);
        for (size_t i = 0; i < std::size(row); ++i) {
          const int n = static_cast<int>(row[i]);
          MT_POST(mode, from_left, w.win, s);
          MT_START(mode, to_right, w.win);
          if (n) MT_OK(MPI_Put(src.p + at[i], n, MPI_BYTE, right, static_cast<MPI_Aint>(at[i]), n, MPI_BYTE, w.win));
          MT_COMPLETE(mode, w.win, s);
          MT_WAIT(mode, w.win, s);
        }
        if (mode == Mode::stream) MT_SYNC(s);
        check_whole(w, shadow, "small puts in a row");
        free_window(w);
      }
    }

    // Displacement units other than 1: target_disp counts units of the target's disp_unit.
    for (Mode mode : kAllModes) {
      for (WinKind kind : kAllKinds) {
        const int unit = 3 + g_rank % 2 * 5;  // 3 or 8: differs between neighbours
        const int right_unit = 3 + right % 2 * 5;
        g_context =
            fmt("%s, %s, disp_unit %d (right neighbour %d)", mode_name(mode), kind_name(kind), unit, right_unit);
        const size_t bytes = 3 * 8 * 1000;
        TestWin w = make_window(kind, bytes, unit);
        std::vector<uint8_t> shadow(bytes, 0);
        const auto data = pattern(1000, key(0xd15, static_cast<uint64_t>(g_rank)));
        src.upload(data);
        MT_POST(mode, from_left, w.win, s);
        MT_START(mode, to_right, w.win);
        for (int d : {0, 1, 7, 500}) MT_OK(MPI_Put(src.p + d, 5, MPI_BYTE, right, d, 5, MPI_BYTE, w.win));
        MT_COMPLETE(mode, w.win, s);
        MT_WAIT(mode, w.win, s);
        if (mode == Mode::stream) MT_SYNC(s);
        const auto theirs = pattern(1000, key(0xd15, static_cast<uint64_t>(left)));
        for (int d : {0, 1, 7, 500})
          std::copy(theirs.begin() + d, theirs.begin() + d + 5, shadow.begin() + d * unit);  // my unit: I am the target
        check_whole(w, shadow, "puts at unit displacements");
        free_window(w);
      }
    }

    stream_destroy(s);
    note("put_get_sizes: %.2f s", now_s() - t0);
  }
  return finish();
}
