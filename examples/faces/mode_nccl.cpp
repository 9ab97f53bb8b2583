// nccl: the vendor peer. One NCCL group of ncclSend / ncclRecv per exchange, all on the stream.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "exchange.h"
#include "xdev.h"

namespace faces {
namespace {

void check(ncclResult_t r, const char *what) {
  if (r == ncclSuccess) return;
  std::fprintf(stderr, "faces: %s: %s\n", what, ncclGetErrorString(r));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

class NcclExchange final : public Exchange {
 public:
  explicit NcclExchange(const Context &c) : c_(c), buffers_(c.plan) {
    int rank = 0, size = 0;
    MPI_Comm_rank(c.comm, &rank);
    MPI_Comm_size(c.comm, &size);
    ncclUniqueId id;
    if (rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, c.comm);
    check(ncclCommInitRank(&comm_, size, id, rank), "ncclCommInitRank");
    // NCCL connects peers at their first send and receive, with allocations that stream capture
    // forbids: connect them before a block is captured, into scratch, leaving the field alone.
    if (capture_) {
      void *scratch = xdev::alloc(static_cast<size_t>(c.plan.buffer_doubles) * sizeof(double));
      group(buffers_.send, static_cast<double *>(scratch));
      xdev::stream_sync(c.stream);
      xdev::free(scratch);
    }
  }

  ~NcclExchange() override { ncclCommDestroy(comm_); }

  std::string detail() const override {
    if (capture_)
      return "ncclGroupStart / ncclSend / ncclRecv / ncclGroupEnd captured into one graph per block, replayed" +
             packs_detail(c_);
    return std::string("ncclGroupStart / ncclSend / ncclRecv / ncclGroupEnd") +
           (c_.graph ? "; eager (captured NCCL send/recv hung on the test machine: FACES_NCCL_GRAPH=1 captures)" : "") +
           packs_detail(c_);
  }

  void run(int count) override { block_.run(c_.stream, count, capture_, [this](int n) { enqueue(n); }); }

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
        check(ncclSend(send + out->offset, out->count, ncclDouble, out->peer, comm_, stream), "ncclSend");
      if (const Link *in = c_.plan.link(opposite(j)))
        check(ncclRecv(recv + in->offset, in->count, ncclDouble, in->peer, comm_, stream), "ncclRecv");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
  }

  Context c_;
  // Replays of captured NCCL send/recv groups hung on the GPU test machine (NCCL 2.28.3, two H200s,
  // every capture mode): with --graph this mode stays eager unless FACES_NCCL_GRAPH=1.
  const bool capture_ = c_.graph && std::getenv("FACES_NCCL_GRAPH") && std::string(std::getenv("FACES_NCCL_GRAPH")) == "1";
  Buffers buffers_;
  ncclComm_t comm_ = nullptr;
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
