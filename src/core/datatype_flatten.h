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

// Most segments, and most signature runs, of one instance the library flattens: a type with more
// is refused with MPI_ERR_TYPE as soon as flattening passes the limit (flattening never builds
// more). One operation's pieces are bounded separately (pair_lists.h).
constexpr size_t kMaxSegments = size_t(1) << 22;
constexpr size_t kMaxSignatureRuns = size_t(1) << 22;

// One instance of a datatype. Segments are in type-map (signature) order, adjacent ones merged;
// no segment is empty.
struct Flat {
  std::vector<Segment> segments;
  // The type signature: `signature` (consecutive runs of one type merged) repeated
  // `signature_reps` times, so that many copies of a struct mixing types keep one period.
  std::vector<SignatureRun> signature;
  uint64_t signature_reps = 1;
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

// What the MPI says of a datatype without any flattening: read before an RMA operation's
// flattening, so that an operation refused on them (a range outside the window, byte counts
// that differ) costs no flattening work however many blocks its types have.
struct TypeFacts {
  uint64_t size = 0;                     // bytes of data (MPI_Type_size_x)
  int64_t lb = 0, extent = 0;            // MPI_Type_get_extent_x
  int64_t true_lb = 0, true_extent = 0;  // MPI_Type_get_true_extent_x: the bytes the data spans
};

// The facts of `type`; MPI_ERR_TYPE for MPI_DATATYPE_NULL, a freed handle, and a derived type
// that was never committed (the MPI has no query for that: the library asks MPI_Pack, which MPICH
// and Open MPI refuse for an uncommitted type, on a communicator of its own whose errors return).
// Derived types' facts are cached by handle until MPI_Type_free (forget_datatype). Messages
// read as the rest of a sentence about the type: "is not committed (...): vector(...)".
Result type_facts(MPI_Datatype type, TypeFacts *out);

// "3 x vector(...) of MPI_DOUBLE": `count` instances of `type` described from its constructors
// (MPI_Type_get_envelope/_get_contents), without flattening; the same words as Flat::description.
std::string describe_type(MPI_Datatype type, uint64_t count);

// Drops the cached flattening and facts of `type` (MPI_Type_free, before the MPI may reuse the
// handle).
void forget_datatype(MPI_Datatype type);

// Whether `count` instances of a and `count_b` instances of b have the same type signature
// (MPI: the same sequence of basic types; a side that is only MPI_BYTE or MPI_PACKED matches
// any signature of as many bytes).
bool same_signature(const Flat &a, uint64_t count_a, const Flat &b, uint64_t count_b);

// "3 x vector(...) of MPI_DOUBLE", or the description alone for one instance.
std::string describe(const Flat &f, uint64_t count);

}  // namespace mpix::core
