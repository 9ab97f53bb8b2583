// The vendor library beside mpix-st in coll_bench: NCCL where it is built (coll_vendor_nccl.cpp),
// nothing elsewhere (coll_vendor_none.cpp).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <string>

namespace coll_bench {

enum class Coll { allreduce, reduce, bcast, allgather, alltoall };

class Vendor {
 public:
  virtual ~Vendor() = default;
  virtual std::string name() const = 0;
  // Enqueues one collective on float data (`count`: elements of the vector, or of one rank's block).
  virtual void enqueue(Coll c, const void *send, void *recv, size_t count, int root, void *stream) = 0;
  // Whether its calls can be captured into a graph and replayed (--graph times them replayed too).
  virtual bool capturable() const = 0;
};

// nullptr where no vendor library is built in.
Vendor *make_vendor(MPI_Comm comm);

}  // namespace coll_bench
