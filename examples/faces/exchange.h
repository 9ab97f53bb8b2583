// One way of exchanging the shared copies (a benchmark mode). An Exchange is built once per
// niface pass (its buffers, windows, communicators) and then runs blocks of exchanges.
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <string>

#include "plan.h"

namespace faces {

struct Context {
  const Plan &plan;
  double *field;   // device memory
  void *stream;    // the rank's stream (cudaStream_t or MPIX_Host_stream)
  MPI_Comm comm;   // ranks of the grid
  bool interior;   // run the interior sum in every exchange (nshare > 0)
  int sync_every;  // st: synchronise the stream every this many exchanges (0: at the end only)
  bool graph;      // st, nccl: replay a captured block (--graph); queue and enqueue are skipped
  bool datatypes;  // rma, st: put each region from the field through a derived type (--datatypes)
  int st_windows;  // st: 1 or 2 windows (--st-windows)
};

// A block of exchanges, enqueued eagerly or captured once into a graph (CUDA graph;
// MPIX_Host_graph on the host backend) and replayed at each run of that many exchanges. Declare it after what the captured
// work uses (windows, communicators), so it is destroyed first.
class CapturedBlock {
 public:
  CapturedBlock() = default;
  CapturedBlock(const CapturedBlock &) = delete;
  CapturedBlock &operator=(const CapturedBlock &) = delete;
  ~CapturedBlock();
  // Runs `count` exchanges and returns with the stream synchronised: with `capture`, replays the
  // graph of `count` exchanges, or, the first time, runs them eagerly and then records the graph;
  // otherwise enqueues them eagerly.
  void run(void *stream, int count, bool capture, const std::function<void(int)> &enqueue);

 private:
  void *graph_ = nullptr;
  int count_ = -1;
};

// Stream operations enqueued by the eager runs that precede captures (see CapturedBlock::run), so
// far: not part of any captured block.
struct PrimingOps {
  unsigned long long library = 0, faces = 0;  // MPIX_St_stream_ops_enqueued, Faces kernel launches
};
PrimingOps priming_ops();

class Exchange {
 public:
  virtual ~Exchange() = default;
  // Runs `count` exchanges; returns once the field holds their result (stream synchronised).
  virtual void run(int count) = 0;
  // How this mode moves data here, e.g. "staged through host memory"; reported beside timings.
  virtual std::string detail() const { return ""; }
};

// Device buffers every mode uses: its copies going out and coming in, one slot per direction.
// Modes that put from the field (--datatypes) need no send buffer.
struct Buffers {
  double *send = nullptr;
  double *recv = nullptr;
  explicit Buffers(const Plan &plan, bool with_send = true);
  ~Buffers();
  Buffers(const Buffers &) = delete;
  Buffers &operator=(const Buffers &) = delete;
};

// The work before the data moves (interior sum, pack) and after (unpack and add), on the stream.
// With `send` null (puts that read the field through derived types) nothing is packed.
void enqueue_before_transfer(const Context &c, double *send);
void enqueue_after_transfer(const Context &c, const double *recv);

// Exchange::detail() suffixes for --datatypes: what rma and st do with it; that the other modes
// still pack. Empty without it.
std::string datatypes_detail(const Context &c);
std::string packs_detail(const Context &c);

std::unique_ptr<Exchange> make_p2p_exchange(const Context &c);
std::unique_ptr<Exchange> make_rma_exchange(const Context &c);
std::unique_ptr<Exchange> make_st_exchange(const Context &c);
// Two-sided messages on the stream (two_sided.h says when they can run):
std::unique_ptr<Exchange> make_queue_exchange(const Context &c);
// Only where mpix-st defines MPICH's stream calls (MPIX_ST_DEFINES_MPIX_STREAM):
std::unique_ptr<Exchange> make_enqueue_exchange(const Context &c);
// Only where NCCL was found:
std::unique_ptr<Exchange> make_nccl_exchange(const Context &c);
std::string nccl_library_version();

}  // namespace faces
