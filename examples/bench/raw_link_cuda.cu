#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "raw_link.h"

namespace raw {
namespace {
void check(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "raw link: %s: %s\n", what, cudaGetErrorString(e));
  std::abort();
}

struct Handles {
  cudaIpcMemHandle_t flag, buffer;
};

struct State {
  uint64_t *flag_alloc;
  void *peer_flag_base;
  void *peer_buffer_base;
};

__global__ void hop_kernel(const uint64_t *mine, uint64_t *peers, uint64_t wait_value, uint64_t signal_value) {
  if (wait_value) {
    uint64_t v;
    do {
      asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(mine) : "memory");
    } while (v < wait_value);
  }
  if (signal_value) asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(peers), "l"(signal_value) : "memory");
}
__global__ void relative_hop_kernel(const uint64_t *mine, uint64_t *peers, uint64_t *counter, int wait_offset,
                                    int signal_offset, int advance) {
  const uint64_t c = *counter;
  if (wait_offset >= 0) {
    uint64_t v;
    do {
      asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(mine) : "memory");
    } while (v < c + wait_offset);
  }
  if (signal_offset >= 0)
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(peers), "l"(c + signal_offset) : "memory");
  *counter = c + advance;
}
}  // namespace

Link connect(MPI_Comm comm, void *buffer, size_t) {
  auto *st = new State{};
  // kSlots flags the peer stores into, then kSlots private counters.
  check(cudaMalloc(&st->flag_alloc, 2 * kSlots * sizeof(uint64_t)), "flag alloc");
  check(cudaMemset(st->flag_alloc, 0, 2 * kSlots * sizeof(uint64_t)), "flag clear");
  Handles mine, theirs;
  check(cudaIpcGetMemHandle(&mine.flag, st->flag_alloc), "flag handle");
  check(cudaIpcGetMemHandle(&mine.buffer, buffer), "buffer handle");
  int rank;
  MPI_Comm_rank(comm, &rank);
  MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, 1 - rank, 0, &theirs, sizeof theirs, MPI_BYTE, 1 - rank, 0, comm,
               MPI_STATUS_IGNORE);
  check(cudaIpcOpenMemHandle(&st->peer_flag_base, theirs.flag, cudaIpcMemLazyEnablePeerAccess), "flag open");
  check(cudaIpcOpenMemHandle(&st->peer_buffer_base, theirs.buffer, cudaIpcMemLazyEnablePeerAccess), "buffer open");
  Link link;
  link.mine = st->flag_alloc;
  link.counters = st->flag_alloc + kSlots;
  link.peers = static_cast<uint64_t *>(st->peer_flag_base);
  link.peer_buffer = st->peer_buffer_base;
  link.state = st;
  MPI_Barrier(comm);
  return link;
}

void disconnect(Link &link) {
  auto *st = static_cast<State *>(link.state);
  cudaIpcCloseMemHandle(st->peer_flag_base);
  cudaIpcCloseMemHandle(st->peer_buffer_base);
  cudaFree(st->flag_alloc);
  delete st;
  link = Link{};
}

void enqueue_hop(void *stream, const Link &link, int wait_slot, uint64_t wait_value, int signal_slot,
                 uint64_t signal_value) {
  hop_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(link.mine + wait_slot, link.peers + signal_slot,
                                                              wait_value, signal_value);
}

namespace {
template <typename Fn>
Fn driver_entry(const char *name) {
  void *f = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &q) != cudaSuccess) return nullptr;
  return reinterpret_cast<Fn>(f);
}
}  // namespace

bool enqueue_memop_hop(void *stream, const Link &link, int wait_slot, uint64_t wait_value, int signal_slot,
                       uint64_t signal_value) {
  using WaitFn = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
  using WriteFn = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
  static WaitFn wait = driver_entry<WaitFn>("cuStreamWaitValue64");
  static WriteFn write = driver_entry<WriteFn>("cuStreamWriteValue64");
  if (!wait || !write) return false;
  CUstream s = static_cast<CUstream>(stream);
  if (wait_value &&
      wait(s, reinterpret_cast<CUdeviceptr>(link.mine + wait_slot), wait_value, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS)
    return false;
  if (signal_value && write(s, reinterpret_cast<CUdeviceptr>(link.peers + signal_slot), signal_value,
                            CU_STREAM_WRITE_VALUE_DEFAULT) != CUDA_SUCCESS)
    return false;
  return true;
}

bool enqueue_peer_copy(void *stream, const Link &link, const void *src, size_t bytes) {
  check(cudaMemcpyAsync(link.peer_buffer, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)),
        "peer copy");
  return true;
}

void enqueue_relative_hop(void *stream, const Link &link, int counter, int wait_slot, int wait_offset, int signal_slot,
                          int signal_offset, int advance) {
  relative_hop_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(
      link.mine + wait_slot, link.peers + signal_slot, link.counters + counter, wait_offset, signal_offset, advance);
  check(cudaGetLastError(), "relative hop launch");
}

}  // namespace raw
