// NCCL as coll_bench's vendor peer (NVLS stays off: NCCL_NVLS_ENABLE=0 is set by the scripts).
#include <cuda_runtime.h>
#include <nccl.h>

#include "coll_vendor.h"
#include "nccl_check.h"

namespace coll_bench {
namespace {

void check(ncclResult_t r, const char *what) { xdev::nccl_check(r, "coll_bench", what); }

class Nccl final : public Vendor {
 public:
  explicit Nccl(MPI_Comm comm) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_ = size;
    rank_ = rank;
    ncclUniqueId id;
    if (rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
    check(ncclCommInitRank(&comm_, size, id, rank), "ncclCommInitRank");
  }
  ~Nccl() override { ncclCommDestroy(comm_); }
  std::string name() const override {
    int v = 0;
    ncclGetVersion(&v);
    return "nccl " + std::to_string(v);
  }
  // NCCL's calls (grouped ones too) can be captured since 2.9; nccl-tests replays them the same way.
  bool capturable() const override { return NCCL_VERSION_CODE >= NCCL_VERSION(2, 9, 0); }
  void enqueue(Coll c, const void *send, void *recv, size_t count, int root, void *stream) override {
    auto s = static_cast<cudaStream_t>(stream);
    switch (c) {
      case Coll::allreduce: check(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm_, s), "ncclAllReduce"); break;
      case Coll::reduce: check(ncclReduce(send, recv, count, ncclFloat, ncclSum, root, comm_, s), "ncclReduce"); break;
      case Coll::bcast: check(ncclBroadcast(send, recv, count, ncclFloat, root, comm_, s), "ncclBroadcast"); break;
      case Coll::allgather: check(ncclAllGather(send, recv, count, ncclFloat, comm_, s), "ncclAllGather"); break;
      case Coll::alltoall: {
        // NCCL has no alltoall: grouped send/recv, as nccl-tests does.
        const size_t block = count * sizeof(float);
        check(ncclGroupStart(), "ncclGroupStart");
        for (int q = 0; q < size_; ++q) {
          check(ncclSend(static_cast<const char *>(send) + q * block, count, ncclFloat, q, comm_, s), "ncclSend");
          check(ncclRecv(static_cast<char *>(recv) + q * block, count, ncclFloat, q, comm_, s), "ncclRecv");
        }
        check(ncclGroupEnd(), "ncclGroupEnd");
        break;
      }
    }
  }

 private:
  ncclComm_t comm_ = nullptr;
  int size_ = 1, rank_ = 0;
};

}  // namespace

Vendor *make_vendor(MPI_Comm comm) { return new Nccl(comm); }

}  // namespace coll_bench
