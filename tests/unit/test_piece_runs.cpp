// runs_of (src/core/piece_runs.h): the pieces a list's runs give back are the pieces that went in,
// in order, and regular layouts fold into few runs.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "core/piece_runs.h"

using mpix::work::Piece;
using mpix::work::Run;

namespace {

std::vector<Piece> expand(const std::vector<Run> &runs) {
  std::vector<Piece> out;
  mpix::work::for_each_piece(runs.data(), runs.size(), [&](const Piece &p) { out.push_back(p); });
  return out;
}

bool same(const std::vector<Piece> &a, const std::vector<Piece> &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].dst != b[i].dst || a[i].src != b[i].src || a[i].bytes != b[i].bytes) return false;
  return true;
}

}  // namespace

TEST_CASE("a face of a point-major field whose elements follow each other: one run") {
  // 6 elements of 4 x 4 x 4 points in a row along z; the x = 3 face: 16 points per element at a
  // stride of 4 points, and the next element's first one 4 points after the last; received
  // contiguously.
  std::vector<Piece> pieces;
  int64_t at = 0;
  for (int e = 0; e < 6; ++e)
    for (int k = 0; k < 16; ++k) pieces.push_back({at++ * 8, (e * 64 + k * 4 + 3) * 8, 8});
  const std::vector<Run> runs = mpix::core::runs_of(pieces);
  CHECK(runs.size() == 1);
  CHECK(runs[0].count == 96);
  CHECK(runs[0].src_stride == 32);
  CHECK(runs[0].dst_stride == 8);
  CHECK(same(expand(runs), pieces));
}

TEST_CASE("elements apart by more than the in-element stride start new runs") {
  std::vector<Piece> pieces;
  int64_t at = 0;
  for (int e = 0; e < 5; ++e)
    for (int k = 0; k < 12; ++k) pieces.push_back({at++ * 8, (e * 1000 + k * 12) * 8, 8});
  const std::vector<Run> runs = mpix::core::runs_of(pieces);
  CHECK(runs.size() == 5);
  for (const Run &r : runs) CHECK(r.count == 12);
  CHECK(same(expand(runs), pieces));
}

TEST_CASE("pieces of other lengths, and strides that change, break runs") {
  const std::vector<Piece> pieces = {{0, 0, 8},    {8, 100, 8},  {16, 200, 8}, {24, 300, 16},
                                     {40, 400, 16}, {56, 401, 16}, {72, 402, 16}, {88, -50, 4}};
  const std::vector<Run> runs = mpix::core::runs_of(pieces);
  REQUIRE(runs.size() == 4);
  CHECK(runs[0].count == 3);
  CHECK(runs[1].count == 2);  // 300 -> 400: a stride of 100; 400 -> 401 is not
  CHECK(runs[2].count == 2);
  CHECK(runs[3].count == 1);
  CHECK(runs[3].dst_stride == 0);
  CHECK(same(expand(runs), pieces));
}

TEST_CASE("negative and zero strides") {
  const std::vector<Piece> pieces = {{0, 96, 8}, {8, 48, 8}, {16, 0, 8}, {24, -48, 8}, {24, -48, 8}};
  const std::vector<Run> runs = mpix::core::runs_of(pieces);
  CHECK(runs.size() == 2);
  CHECK(runs[0].src_stride == -48);
  CHECK(same(expand(runs), pieces));
}

TEST_CASE("random piece lists come back unchanged") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 500; ++round) {
    std::vector<Piece> pieces;
    const int n = static_cast<int>(rng() % 200);
    int64_t d = 0, s = 0;
    const int64_t ds = static_cast<int64_t>(rng() % 64) - 16, ss = static_cast<int64_t>(rng() % 64) - 16;
    for (int i = 0; i < n; ++i) {
      const uint64_t bytes = 1 + rng() % 3 * 8;
      if (rng() % 4 == 0) d += static_cast<int64_t>(rng() % 100) - 30;
      else d += ds;
      if (rng() % 4 == 0) s += static_cast<int64_t>(rng() % 100) - 30;
      else s += ss;
      pieces.push_back({d, s, bytes});
    }
    const std::vector<Run> runs = mpix::core::runs_of(pieces);
    REQUIRE(same(expand(runs), pieces));
    CHECK(runs.size() <= pieces.size());
    for (const Run &r : runs) CHECK(r.count >= 1);
  }
}

TEST_CASE("long runs of small pieces are cut into equal runs of at most the limit") {
  const std::vector<Run> one = {{0, 0, 8, 131072, 8, 16}};  // 1 MiB of 8-byte blocks at stride 16
  const std::vector<Run> cut = mpix::core::split_runs(one, 1024);
  CHECK(cut.size() == 1024);
  for (const Run &r : cut) CHECK(r.count * r.bytes <= 1024);
  CHECK(same(expand(cut), expand(one)));
  // 144 pieces of 8 bytes (1,152 bytes) against 1,024: two runs of 72, not 128 and 16.
  const std::vector<Run> face = mpix::core::split_runs({{0, 24, 8, 144, 8, 96}}, 1024);
  REQUIRE(face.size() == 2);
  CHECK(face[0].count == 72);
  CHECK(face[1].count == 72);
  // Large pieces, single pieces and short runs stay whole.
  const std::vector<Run> keep = {{0, 0, 8192, 10, 8192, 16384}, {0, 0, 4096, 1, 0, 0}, {0, 0, 8, 128, 8, 16}};
  CHECK(mpix::core::split_runs(keep, 1024).size() == 3);
}

TEST_CASE("random runs cut at random limits give back their pieces") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 300; ++round) {
    std::vector<Run> runs;
    for (int i = 0, n = static_cast<int>(rng() % 20); i < n; ++i)
      runs.push_back({static_cast<int64_t>(rng() % 1000), static_cast<int64_t>(rng() % 1000), 1 + rng() % 64,
                      1 + rng() % 300, static_cast<int64_t>(rng() % 200) - 100, static_cast<int64_t>(rng() % 200) - 100});
    const uint64_t limit = 1 + rng() % 4096;
    const std::vector<Run> cut = mpix::core::split_runs(runs, limit);
    REQUIRE(same(expand(cut), expand(runs)));
    for (const Run &r : cut) CHECK((r.count == 1 || r.count * r.bytes <= limit));
  }
}

TEST_CASE("group width follows the small runs' average length") {
  CHECK(mpix::work::run_group_width(0, 0) == 1);
  CHECK(mpix::work::run_group_width(16 * 100, 100) == 1);
  CHECK(mpix::work::run_group_width(96 * 100, 100) == 8);
  CHECK(mpix::work::run_group_width(576 * 100, 100) == 32);
}
