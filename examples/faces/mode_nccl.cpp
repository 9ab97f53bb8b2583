// nccl: the vendor peer. One NCCL group of ncclSend / ncclRecv per exchange, all on the stream.
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "exchange.h"
#include "nccl_check.h"
#include "xdev.h"

namespace faces {
namespace {

void check(ncclResult_t r, const char *what) { xdev::nccl_check(r, "faces", what); }

// The NCCL communicator of a run: a member of NcclExchange declared before its captured block, so
// the block's graph is destroyed first. Destroyed while such a graph still existed (in the
// exchange's destructor body), ncclCommDestroy never returned, after every replay had completed
// (traced on 2 H200s, NCCL 2.28.3).
class NcclComm {
 public:
  explicit NcclComm(MPI_Comm comm) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ncclUniqueId id;
    if (rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
    check(ncclCommInitRank(&comm_, size, id, rank), "ncclCommInitRank");
  }
  ~NcclComm() { ncclCommDestroy(comm_); }
  NcclComm(const NcclComm &) = delete;
  NcclComm &operator=(const NcclComm &) = delete;
  ncclComm_t get() const { return comm_; }

 private:
  ncclComm_t comm_ = nullptr;
};

class NcclExchange final : public Exchange {
 public:
  explicit NcclExchange(const Context &c) : c_(c), buffers_(c.plan), comm_(c.comm) {
    // NCCL connects peers at their first send and receive, with allocations that stream capture
    // forbids: connect them before a block is captured, into scratch, leaving the field alone.
    if (c_.graph) {
      void *scratch = xdev::alloc(static_cast<size_t>(c.plan.buffer_doubles) * sizeof(double));
      group(buffers_.send, static_cast<double *>(scratch));
      xdev::stream_sync(c.stream);
      xdev::free(scratch);
    }
  }

  std::string detail() const override {
    if (c_.graph)
      return "ncclGroupStart / ncclSend / ncclRecv / ncclGroupEnd captured into one graph per block, replayed" +
             packs_detail(c_);
    return std::string("ncclGroupStart / ncclSend / ncclRecv / ncclGroupEnd") + packs_detail(c_);
  }

  void run(int count) override { block_.run(c_.stream, count, c_.graph, [this](int n) { enqueue(n); }); }

 private:
  void enqueue(int count) {
    for (int it = 0; it < count; ++it) {
      enqueue_before_transfer(c_, buffers_.send);
      group(buffers_.send, buffers_.recv);
      enqueue_after_transfer(c_, buffers_.recv);
    }
  }

  // One exchange's sends and receives as one NCCL group on the stream. NCCL matches the
  // operations between two ranks in issue order: walking the directions in the same order on every
  // rank pairs the send towards j with the receive from opposite(j) at the peer, also where one
  // peer neighbours us in several directions.
  void group(const double *send, double *recv) {
    const cudaStream_t stream = static_cast<cudaStream_t>(c_.stream);
    check(ncclGroupStart(), "ncclGroupStart");
    for (int j = 0; j < kDirections; ++j) {
      if (const Link *out = c_.plan.link(j))
        check(ncclSend(send + out->offset, out->count, ncclDouble, out->peer, comm_.get(), stream), "ncclSend");
      if (const Link *in = c_.plan.link(opposite(j)))
        check(ncclRecv(recv + in->offset, in->count, ncclDouble, in->peer, comm_.get(), stream), "ncclRecv");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
  }

  Context c_;
  Buffers buffers_;
  NcclComm comm_;
  CapturedBlock block_;  // last: its graph goes before the communicator
};

}  // namespace

std::unique_ptr<Exchange> make_nccl_exchange(const Context &c) { return std::make_unique<NcclExchange>(c); }

std::string nccl_library_version() {
  int v = 0;
  ncclGetVersion(&v);
  // Codes are major*10000 + minor*100 + patch since NCCL 2.9.
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

}  // namespace faces
