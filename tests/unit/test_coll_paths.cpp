// kernels/coll/paths.h: path_of, which picks both the host schedule and the device kernel
// (kernels/coll/kernel_<path>.cu) of a call, so a call must land on the path whose steps run its
// algorithm: a reduction on a path without it would run another algorithm's steps.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "kernels/coll/paths.h"

using namespace mpix::coll;

namespace {
Path path(uint8_t kind, uint8_t algo, uint8_t proto = kSimple, int size = 4) {
  Args a{};
  a.kind = kind;
  a.algo = algo;
  a.proto = proto;
  a.size = size;
  return path_of(a);
}
}  // namespace

TEST_CASE("ll calls take the ll paths, two-shot apart") {
  CHECK(path(kAllreduce, kOneShot, kLL) == Path::kLines);
  CHECK(path(kReduce, kOneShot, kLL) == Path::kLines);
  CHECK(path(kBcast, kOneShot, kLL) == Path::kLines);
  CHECK(path(kAllgather, kOneShot, kLL) == Path::kLines);
  CHECK(path(kAlltoall, kOneShot, kLL) == Path::kLines);
  CHECK(path(kAllreduce, kTwoShot, kLL) == Path::kTwoShotLines);
  CHECK(path(kReduce, kTwoShot, kLL) == Path::kTwoShotLines);
}

TEST_CASE("simple reductions take the path of their algorithm") {
  CHECK(path(kAllreduce, kTwoShot) == Path::kTwoShot);
  CHECK(path(kReduce, kTwoShot) == Path::kTwoShot);
  CHECK(path(kAllreduce, kRing) == Path::kRing);
  CHECK(path(kAllreduce, kRing, kSimple, 1) == Path::kOneShot);  // a ring of one rank is a copy
  CHECK(path(kReduce, kChain) == Path::kChainReduce);
  CHECK(path(kAllreduce, kOneShot) == Path::kOneShot);
  CHECK(path(kReduce, kOneShot) == Path::kOneShot);
  CHECK(path(kAllreduce, kGsb) == Path::kReduce);
  CHECK(path(kAllreduce, kBtb) == Path::kReduce);
  CHECK(path(kLocalReduce, kOneShot) == Path::kReduce);
}

TEST_CASE("calls that reduce nothing take the moves path") {
  for (uint8_t algo : {kOneShot, kChain, kBinomial}) CHECK(path(kBcast, algo) == Path::kMoves);
  CHECK(path(kAllgather, kOneShot) == Path::kMoves);
  CHECK(path(kAllgather, kRing) == Path::kMoves);
  CHECK(path(kAlltoall, kOneShot) == Path::kMoves);
  CHECK(path(kLocalCopy, kOneShot) == Path::kMoves);
}

TEST_CASE("with_path calls its function for the path it is given, every path") {
  for (Path p : kPaths) CHECK(with_path(p, [](auto path) { return decltype(path)::value; }) == p);
}
