// The vendor library beside mpix-st in p2p_bench: NCCL's send and receive where it is built
// (p2p_vendor_nccl.cpp), nothing elsewhere (p2p_vendor_none.cpp).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <string>

namespace p2p_bench {

class Vendor {
 public:
  virtual ~Vendor() = default;
  virtual std::string name() const = 0;
  // Enqueue on `stream`, as one group so that they may be in flight together: `count` messages of
  // `bytes` to `peer`, all read from `buf` (a sender may reuse its buffer) ...
  virtual void send(const void *buf, size_t bytes, int count, int peer, void *stream) = 0;
  // ... and `count` messages of `bytes` from `peer`, message k written to buf + k * bytes (receive
  // buffers in flight together must not overlap).
  virtual void recv(void *buf, size_t bytes, int count, int peer, void *stream) = 0;
  // Whether its calls can be captured into a graph and replayed (--graph times them replayed too).
  virtual bool capturable() const = 0;
};

// What the build offers, after a collective attempt to start it on `comm`.
struct VendorChoice {
  Vendor *vendor = nullptr;  // null: none built in, or it could not start
  bool built = false;        // a vendor library is built in
  std::string skipped;       // why a built-in vendor is not used (set on every rank; rank 0 prints its own)
};

VendorChoice make_vendor(MPI_Comm comm);

}  // namespace p2p_bench
