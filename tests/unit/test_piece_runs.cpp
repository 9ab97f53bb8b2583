// src/core/piece_runs.h: a derived datatype's pieces as runs of evenly spaced pieces. Expanding the
// runs (work::piece_of) must give back every piece, in order; evenly spaced pieces must join (a
// point-major face is 910 runs, not 26,208 pieces); nothing joins across a change of length or
// spacing, beyond 32-bit strides, or past work::kRunMaxPieces pieces or work::kRunMaxBytes. The
// walker's group width (work::run_group_shift) stays within a warp.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "src/core/piece_runs.h"

using mpix::core::to_runs;
using mpix::work::Pair;
using mpix::work::Run;

namespace {

std::vector<Pair> expand(const std::vector<Run> &runs) {
  std::vector<Pair> out;
  for (const Run &r : runs) {
    REQUIRE(r.count >= 1);
    if (r.count > 1) {
      REQUIRE(r.count <= mpix::work::kRunMaxPieces);
      REQUIRE(uint64_t(r.bytes) * r.count <= mpix::work::kRunMaxBytes);
    }
    for (uint64_t k = 0; k < r.count; ++k) out.push_back(mpix::work::piece_of(r, k));
  }
  return out;
}

// The pieces come back whole: equal where no piece was cut, and covering the same bytes in the
// same order where long pieces were.
void check_same(const std::vector<Pair> &pieces, const std::vector<Pair> &back) {
  size_t j = 0;
  for (const Pair &p : pieces) {
    uint64_t done = 0;
    while (done < p.bytes) {
      REQUIRE(j < back.size());
      CHECK(back[j].dst == p.dst + int64_t(done));
      CHECK(back[j].src == p.src + int64_t(done));
      done += back[j].bytes;
      ++j;
    }
    CHECK(done == p.bytes);
  }
  CHECK(j == back.size());
}

}  // namespace

TEST_CASE("a point-major face joins into runs of 32 pieces") {
  // Faces' x face of 14 x 13 elements of 12^3 points: per element 144 doubles 96 bytes apart on
  // the origin, packed one after the other on the target; elements 15 x 13,824 bytes apart (the
  // 15 elements of x lie between them).
  std::vector<Pair> pieces;
  for (int e = 0; e < 14 * 13; ++e)
    for (int p = 0; p < 144; ++p) pieces.push_back({int64_t(e) * 144 * 8 + p * 8, int64_t(e) * 15 * 13824 + p * 96, 8});
  const std::vector<Run> runs = to_runs(pieces.data(), pieces.size(), true);
  CHECK(runs.size() == 182 * 5);  // 144 pieces an element: 32, 32, 32, 32, 16
  CHECK(runs[0].count == 32);
  CHECK(runs[4].count == 16);
  CHECK(runs[5].src == 15 * 13824);
  CHECK(runs[0].dst_stride == 8);
  CHECK(runs[0].src_stride == 96);
  check_same(pieces, expand(runs));
  // Without joining, a run a piece.
  const std::vector<Run> apart = to_runs(pieces.data(), pieces.size(), false);
  CHECK(apart.size() == pieces.size());
  check_same(pieces, expand(apart));
}

TEST_CASE("negative strides and lower bounds join too") {
  std::vector<Pair> pieces;
  for (int k = 0; k < 20; ++k) pieces.push_back({-1000 - 24 * int64_t(k), 5000 - 40 * int64_t(k), 16});
  const std::vector<Run> runs = to_runs(pieces.data(), pieces.size(), true);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].dst_stride == -24);
  CHECK(runs[0].src_stride == -40);
  check_same(pieces, expand(runs));
}

TEST_CASE("nothing joins across a change of length or spacing") {
  const std::vector<Pair> pieces = {{0, 0, 8},    {16, 32, 8},  {32, 64, 8},   // one run, strides 16 / 32
                                    {48, 100, 8},                              // src spacing changes: a new run
                                    {64, 132, 8},  {80, 164, 8},               // which these join (16 / 32)
                                    {96, 196, 16},                             // length changes
                                    {200, 300, 16}};                           // joins at strides 104 / 104
  const std::vector<Run> runs = to_runs(pieces.data(), pieces.size(), true);
  REQUIRE(runs.size() == 3);
  CHECK(runs[0].count == 3);
  CHECK(runs[1].count == 3);
  CHECK(runs[1].src_stride == 32);
  CHECK(runs[2].count == 2);
  CHECK(runs[2].dst_stride == 104);
  check_same(pieces, expand(runs));
}

TEST_CASE("strides beyond 32 bits, long pieces, long runs") {
  const int64_t far = int64_t(1) << 33;
  const std::vector<Pair> spaced = {{0, 0, 8}, {far, 8, 8}, {2 * far, 16, 8}};
  const std::vector<Run> a = to_runs(spaced.data(), spaced.size(), true);
  CHECK(a.size() == 3);
  check_same(spaced, expand(a));
  const std::vector<Pair> long_ones = {{0, 64, (uint64_t(5) << 30) + 24}, {int64_t(6) << 30, 0, uint64_t(1) << 31}};
  const std::vector<Run> b = to_runs(long_ones.data(), long_ones.size(), true);
  check_same(long_ones, expand(b));
  for (const Run &r : b) CHECK(r.bytes <= 2 * mpix::work::kRunPieceCut - 1);
  // A strided put of 64-byte blocks: runs of kRunMaxBytes; of 8-byte ones: runs of kRunMaxPieces;
  // of 1 KiB ones: a run a block.
  for (const uint64_t piece : {uint64_t(64), uint64_t(8), uint64_t(1024)}) {
    std::vector<Pair> many;
    for (int64_t k = 0; k < 5000; ++k) many.push_back({k * int64_t(piece), k * int64_t(piece) * 2, piece});
    const std::vector<Run> c = to_runs(many.data(), many.size(), true);
    const uint64_t per_run = piece >= mpix::work::kRunMaxBytes
                                 ? 1
                                 : std::min<uint64_t>(mpix::work::kRunMaxPieces, mpix::work::kRunMaxBytes / piece);
    CHECK(c.size() == (5000 + per_run - 1) / per_run);
    check_same(many, expand(c));
  }
}

TEST_CASE("random piece lists expand back exactly") {
  std::mt19937_64 rng(20261128);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<Pair> pieces;
    int64_t dst = int64_t(rng() % 4096) - 2048, src = int64_t(rng() % 4096) - 2048;
    const int segments = 1 + int(rng() % 8);
    for (int s = 0; s < segments; ++s) {
      const uint64_t bytes = 1 + rng() % 64;
      const int64_t ds = int64_t(rng() % 256) - 64, ss = int64_t(rng() % 256) - 64;
      const int n = 1 + int(rng() % 40);
      for (int k = 0; k < n; ++k) {
        pieces.push_back({dst, src, bytes});
        dst += ds, src += ss;
      }
      dst += int64_t(rng() % 1000), src += int64_t(rng() % 1000);
    }
    const std::vector<Run> runs = to_runs(pieces.data(), pieces.size(), true);
    CHECK(runs.size() <= pieces.size());
    check_same(pieces, expand(runs));
  }
}

// The walker (kernels/epoch_kernel.cu, walk_runs) splits the grid into groups of 1 << shift
// threads; a group never outgrows a warp, so every group lies inside one 512-thread block.
TEST_CASE("run groups: one thread for the shortest runs, a warp at most") {
  using mpix::work::run_group_shift;
  CHECK(run_group_shift(0, 0) == 0);
  CHECK(run_group_shift(8 * 910, 910) == 0);     // runs of one 8-byte piece each
  CHECK(run_group_shift(26208 * 8, 910) == 5);   // a point-major face: runs of 32 pieces of 8 bytes
  CHECK(run_group_shift(16 * 10, 10) == 0);      // two elements
  CHECK(run_group_shift(17 * 10, 10) == 3);
  CHECK(run_group_shift(128 * 10, 10) == 3);
  CHECK(run_group_shift(129 * 10, 10) == 5);
  CHECK(run_group_shift(mpix::work::kRunMaxBytes * 7, 7) == 5);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t runs = 1 + rng() % 100000, bytes = runs * (1 + rng() % mpix::work::kRunMaxBytes);
    CHECK(run_group_shift(bytes, runs) <= 5);
  }
}
