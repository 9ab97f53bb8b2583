// Flattening of MPI datatypes into contiguous byte segments and type signatures, for RMA
// operations with derived datatypes on managed windows (README, "Derived datatypes").
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "result.h"

namespace mpix::core {

// Bytes [offset, offset + bytes) relative to the buffer pointer (negative where lb < 0).
struct Segment {
  int64_t offset;
  uint64_t bytes;
};

// `count` consecutive elements of one basic (named) type in the type signature.
struct SignatureRun {
  MPI_Datatype basic;
  uint64_t count;
};

// One instance of a datatype. Segments are in type-map (signature) order, adjacent ones merged;
// no segment is empty.
struct Flat {
  std::vector<Segment> segments;
  std::vector<SignatureRun> signature;  // consecutive runs of one type merged
  uint64_t size = 0;                    // bytes of data (MPI_Type_size)
  int64_t extent = 0;                   // stride between repetitions (MPI_Type_get_extent)
  // The one basic type of the signature, MPI_DATATYPE_NULL when it mixes several (or is empty).
  MPI_Datatype element = MPI_DATATYPE_NULL;
  std::string description;  // e.g. "vector(count=4, blocklength=2, stride=8) of MPI_DOUBLE"
};
using FlatRef = std::shared_ptr<const Flat>;

// The flattening of `type`. Predefined types are built on the spot (nothing cached); derived
// ones are cached by handle until MPI_Type_free (forget_datatype). MPI_ERR_TYPE for constructors
// that are not supported, naming the combiner.
Result flatten(MPI_Datatype type, FlatRef *out);

// Whether `type` is a named (predefined) datatype.
bool is_named(MPI_Datatype type);

// Drops the cached flattening of `type` (MPI_Type_free, before the MPI may reuse the handle).
void forget_datatype(MPI_Datatype type);

// Whether `count` instances of a and `count_b` instances of b have the same type signature
// (MPI: the same sequence of basic types; a side that is only MPI_BYTE or MPI_PACKED matches
// any signature of as many bytes).
bool same_signature(const Flat &a, uint64_t count_a, const Flat &b, uint64_t count_b);

// "3 x vector(...) of MPI_DOUBLE", or the description alone for one instance.
std::string describe(const Flat &f, uint64_t count);

}  // namespace mpix::core
