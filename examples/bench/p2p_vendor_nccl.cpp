// NCCL as p2p_bench's vendor peer: ncclSend / ncclRecv on one communicator of both ranks. NCCL takes
// one rank per GPU, so where the ranks share one, or its start fails, p2p_bench reports it skipped.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <vector>

#include "nccl_check.h"
#include "p2p_vendor.h"

namespace p2p_bench {
namespace {

void check(ncclResult_t r, const char *what) { xdev::nccl_check(r, "p2p_bench", what); }

std::string failure(const char *what, ncclResult_t r) {
  std::string why = std::string(what) + ": " + ncclGetErrorString(r);
  const char *last = ncclGetLastError(nullptr);
  if (last && *last) why += " (" + std::string(last) + ")";
  return why;
}

// Why NCCL cannot take these ranks' GPUs (empty: it can): NCCL refuses a communicator in which two
// ranks have one GPU (under MPS too), so find that before it fails or hangs in ncclCommInitRank.
std::string shared_device(MPI_Comm comm) {
  int device = 0, size = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    std::memset(&prop.uuid, 0, sizeof prop.uuid);  // unknown: left to ncclCommInitRank to judge
  MPI_Comm_size(comm, &size);
  std::vector<cudaUUID_t> all(static_cast<size_t>(size));
  MPI_Allgather(&prop.uuid, sizeof prop.uuid, MPI_BYTE, all.data(), sizeof prop.uuid, MPI_BYTE, comm);
  static const cudaUUID_t unknown{};
  for (int a = 0; a < size; ++a)
    for (int b = a + 1; b < size; ++b)
      if (std::memcmp(&all[a], &all[b], sizeof all[a]) == 0 && std::memcmp(&all[a], &unknown, sizeof unknown) != 0)
        return "NCCL takes one rank per GPU, and ranks " + std::to_string(a) + " and " + std::to_string(b) +
               " share one " + prop.name;
  return {};
}

class Nccl final : public Vendor {
 public:
  explicit Nccl(ncclComm_t comm) : comm_(comm) {}
  ~Nccl() override { ncclCommDestroy(comm_); }
  Nccl(const Nccl &) = delete;
  Nccl &operator=(const Nccl &) = delete;

  // A communicator of every rank of `comm`, or null with *why set (on every rank: init is collective).
  static Nccl *start(MPI_Comm comm, std::string *why) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ncclUniqueId id{};
    ncclResult_t r = rank == 0 ? ncclGetUniqueId(&id) : ncclSuccess;
    MPI_Bcast(&r, sizeof r, MPI_BYTE, 0, comm);
    if (r != ncclSuccess) {
      *why = failure("ncclGetUniqueId", r);
      return nullptr;
    }
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
    ncclComm_t nc = nullptr;
    r = ncclCommInitRank(&nc, size, id, rank);
    int mine = r == ncclSuccess, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm);
    if (all) return new Nccl(nc);
    *why = mine ? std::string("ncclCommInitRank failed on another rank") : failure("ncclCommInitRank", r);
    if (mine) ncclCommAbort(nc);
    return nullptr;
  }

  std::string name() const override {
    int v = 0;
    ncclGetVersion(&v);
    return "nccl " + std::to_string(v);
  }
  // NCCL's calls (grouped ones too) can be captured since 2.9.
  bool capturable() const override { return NCCL_VERSION_CODE >= NCCL_VERSION(2, 9, 0); }

  void send(const void *buf, size_t bytes, int count, int peer, void *stream) override {
    check(ncclGroupStart(), "ncclGroupStart");
    for (int k = 0; k < count; ++k)
      check(ncclSend(buf, bytes, ncclChar, peer, comm_, static_cast<cudaStream_t>(stream)), "ncclSend");
    check(ncclGroupEnd(), "ncclGroupEnd");
  }
  void recv(void *buf, size_t bytes, int count, int peer, void *stream) override {
    check(ncclGroupStart(), "ncclGroupStart");
    for (int k = 0; k < count; ++k)
      check(ncclRecv(static_cast<char *>(buf) + k * bytes, bytes, ncclChar, peer, comm_,
                     static_cast<cudaStream_t>(stream)),
            "ncclRecv");
    check(ncclGroupEnd(), "ncclGroupEnd");
  }

 private:
  ncclComm_t comm_ = nullptr;
};

}  // namespace

VendorChoice make_vendor(MPI_Comm comm) {
  VendorChoice c;
  c.built = true;
  c.skipped = shared_device(comm);
  if (c.skipped.empty()) c.vendor = Nccl::start(comm, &c.skipped);
  return c;
}

}  // namespace p2p_bench
