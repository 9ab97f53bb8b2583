// The datatype flattener (src/core/datatype_flatten.h) in one MPI rank: segments in type-map
// order with adjacent runs merged, signatures, descriptions, refusals, and the per-handle cache.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "core/datatype_flatten.h"

using mpix::core::Flat;
using mpix::core::FlatRef;
using mpix::core::Segment;

namespace {

FlatRef flat(MPI_Datatype t) {
  FlatRef f;
  mpix::core::Result r = mpix::core::flatten(t, &f);
  REQUIRE_MESSAGE(!r, r.message);
  return f;
}

std::vector<std::pair<long, unsigned long>> segs(const Flat &f) {
  std::vector<std::pair<long, unsigned long>> v;
  for (const Segment &s : f.segments) v.push_back({static_cast<long>(s.offset), static_cast<unsigned long>(s.bytes)});
  return v;
}

using Segs = std::vector<std::pair<long, unsigned long>>;

struct Type {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  ~Type() {
    if (t != MPI_DATATYPE_NULL) {
      mpix::core::forget_datatype(t);
      MPI_Type_free(&t);
    }
  }
  MPI_Datatype commit() {
    MPI_Type_commit(&t);
    return t;
  }
};

}  // namespace

TEST_CASE("predefined types are one segment and one signature run") {
  FlatRef f = flat(MPI_DOUBLE);
  CHECK(segs(*f) == Segs{{0, 8}});
  CHECK(f->element == MPI_DOUBLE);
  CHECK(f->description == "MPI_DOUBLE");
}

TEST_CASE("vector: blocks at strides, described") {
  Type v;
  MPI_Type_vector(4, 2, 8, MPI_DOUBLE, &v.t);
  FlatRef f = flat(v.commit());
  CHECK(segs(*f) == Segs{{0, 16}, {64, 16}, {128, 16}, {192, 16}});
  CHECK(f->size == 64);
  CHECK(f->element == MPI_DOUBLE);
  CHECK(f->description == "vector(count=4, blocklength=2, stride=8) of MPI_DOUBLE");
  Type c;
  MPI_Type_contiguous(8, MPI_DOUBLE, &c.t);
  FlatRef g = flat(c.commit());
  CHECK(mpix::core::same_signature(*f, 2, *g, 2));
  CHECK(!mpix::core::same_signature(*f, 1, *g, 2));
  CHECK(!mpix::core::same_signature(*f, 1, *flat(MPI_LONG_LONG), 8));  // same bytes, other type
  CHECK(mpix::core::same_signature(*f, 1, *flat(MPI_BYTE), 64));      // bytes match anything as large
}

TEST_CASE("adjacent runs merge; shuffled blocks keep type-map order") {
  Type v, c;
  MPI_Type_vector(2, 1, 1, MPI_INT, &v.t);
  MPI_Type_commit(&v.t);
  MPI_Type_contiguous(3, v.t, &c.t);
  CHECK(segs(*flat(c.commit())) == Segs{{0, 24}});
  Type h;
  int bl[3] = {1, 2, 1};
  MPI_Aint d[3] = {16, 0, -8};
  MPI_Type_create_hindexed(3, bl, d, MPI_INT, &h.t);
  FlatRef f = flat(h.commit());
  CHECK(segs(*f) == Segs{{16, 4}, {0, 8}, {-8, 4}});
}

TEST_CASE("resized keeps the data where it is and changes the repetition stride") {
  Type v, r;
  MPI_Type_vector(2, 1, 3, MPI_INT, &v.t);
  MPI_Type_commit(&v.t);
  MPI_Type_create_resized(v.t, -8, 40, &r.t);
  FlatRef f = flat(r.commit());
  CHECK(segs(*f) == Segs{{0, 4}, {12, 4}});
  CHECK(f->extent == 40);
  CHECK(f->description == "resized(lb=-8, extent=40) of vector(count=2, blocklength=1, stride=3) of MPI_INT");
}

TEST_CASE("subarray in C and Fortran order") {
  int sizes[2] = {4, 3}, subs[2] = {2, 2}, starts[2] = {1, 1};
  Type c, f;
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &c.t);
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &f.t);
  CHECK(segs(*flat(c.commit())) == Segs{{16, 8}, {28, 8}});  // rows 1, 2; columns 1, 2 of 3
  CHECK(segs(*flat(f.commit())) == Segs{{20, 8}, {36, 8}});  // columns of 4, the first dimension fastest
}

TEST_CASE("struct: one basic type, or mixed (no single element)") {
  int bl[2] = {1, 1};
  MPI_Aint d[2] = {0, 8};
  MPI_Datatype same[2] = {MPI_DOUBLE, MPI_DOUBLE}, mixed[2] = {MPI_INT, MPI_DOUBLE};
  Type s, m;
  MPI_Type_create_struct(2, bl, d, same, &s.t);
  MPI_Type_create_struct(2, bl, d, mixed, &m.t);
  FlatRef fs = flat(s.commit()), fm = flat(m.commit());
  CHECK(segs(*fs) == Segs{{0, 16}});
  CHECK(fs->element == MPI_DOUBLE);
  CHECK(segs(*fm) == Segs{{0, 4}, {8, 8}});
  CHECK(fm->element == MPI_DATATYPE_NULL);
  CHECK(fm->signature.size() == 2);
}

TEST_CASE("darray is refused by name; MPI_DATATYPE_NULL too") {
  int gsizes[1] = {8}, distribs[1] = {MPI_DISTRIBUTE_BLOCK}, dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG}, psizes[1] = {1};
  Type t;
  MPI_Type_create_darray(1, 0, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t.t);
  FlatRef f;
  mpix::core::Result r = mpix::core::flatten(t.commit(), &f);
  CHECK(r.mpi_class == MPI_ERR_TYPE);
  CHECK(r.message.find("darray") != std::string::npos);
  r = mpix::core::flatten(MPI_DATATYPE_NULL, &f);
  CHECK(r.mpi_class == MPI_ERR_TYPE);
}

TEST_CASE("derived types are cached per handle until forgotten") {
  Type v;
  MPI_Type_vector(3, 1, 2, MPI_INT, &v.t);
  MPI_Datatype t = v.commit();
  FlatRef a = flat(t), b = flat(t);
  CHECK(a.get() == b.get());
  mpix::core::forget_datatype(t);
  FlatRef c = flat(t);
  CHECK(c.get() != a.get());
  CHECK(segs(*c) == segs(*a));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  doctest::Context ctx(argc, argv);
  const int rc = ctx.run();
  MPI_Finalize();
  return rc;
}
