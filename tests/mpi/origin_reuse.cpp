// Origin buffers freed and allocated again at the same address between epochs (the case a
// registration cache must not get wrong: the registration of the old memory must not serve the
// new one). Run across virtual nodes (MPIX_ST_VNODE_SIZE=1): every put, get and accumulate goes
// through the network with a registered origin buffer. Each round maps a buffer (mmap, at the
// address of the previous round's where the kernel allows), fills it with new data, runs a
// stream-triggered and a host-driven ring epoch (put, accumulate, then get back), checks every byte,
// and unmaps it. Sizes change from round to round, smaller and larger than before.
#include <sys/mman.h>

#include "test_common.h"

using namespace mt;

int main(int argc, char **argv) {
  init(&argc, &argv, "origin_reuse");
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  void *s = stream_create();
  {
  constexpr size_t kMax = 1 << 20;
  TestWin w = make_window(WinKind::allocate, kMax + 4096);
  Group to_right({right}), from_left({left});
  const size_t sizes[] = {65536, 4096, 1 << 20, 12345, 300000, 64, 65536, 1 << 20};
  void *previous = nullptr;
  int same_address = 0, rounds = 0;
  for (int round = 0; round < 16; ++round) {
    const size_t n = sizes[round % 8];
    const size_t mapped = (n + 4095) / 4096 * 4096 + 4096;  // room for the got-back copy's 8 bytes
    void *hint = previous;
    void *mem = mmap(hint, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    MT_CHECKF(mem != MAP_FAILED, "mmap failed");
    if (mem == MAP_FAILED) break;
    same_address += mem == previous;
    auto *buf = static_cast<uint8_t *>(mem);
    for (Mode mode : kAllModes) {
      g_context = fmt("round %d (%zu bytes, %s)", round, n, mode_name(mode));
      const uint64_t tag = key(0x0e05e, static_cast<uint64_t>(round), static_cast<uint64_t>(mode));
      fill_pattern(buf, n, key(tag, static_cast<uint64_t>(g_rank)));
      int64_t addend = 1000 * round + g_rank;
      std::memcpy(buf + mapped - 4096, &addend, 8);
      xdev::fill(w.base, 0, kMax + 4096);
      MPI_Barrier(MPI_COMM_WORLD);
      MT_POST(mode, from_left, w.win, s);
      MT_START(mode, to_right, w.win);
      MT_OK(MPI_Put(buf, static_cast<int>(n), MPI_BYTE, right, 0, static_cast<int>(n), MPI_BYTE, w.win));
      MT_OK(MPI_Accumulate(buf + mapped - 4096, 1, MPI_INT64_T, right, static_cast<MPI_Aint>(kMax), 1, MPI_INT64_T,
                           MPI_SUM, w.win));
      MT_COMPLETE(mode, w.win, s);
      MT_WAIT(mode, w.win, s);
      if (mode == Mode::stream) MT_SYNC(s);
      auto want = pattern(n, key(tag, static_cast<uint64_t>(left)));
      auto got = read_device(w.base, n);
      MT_SAME_BYTES(got.data(), want.data(), n, "put from a buffer mapped again");
      int64_t sum = 0;
      xdev::copy_to_host(&sum, w.base + kMax, 8);
      MT_CHECKF(sum == 1000 * round + left, "accumulate: got %lld, want %lld", static_cast<long long>(sum),
                static_cast<long long>(1000 * round + left));
      // Get the neighbour's window (which holds what this rank put) back into the buffer.
      std::memset(buf, 0, n);
      MPI_Barrier(MPI_COMM_WORLD);
      MT_POST(mode, from_left, w.win, s);
      MT_START(mode, to_right, w.win);
      MT_OK(MPI_Get(buf, static_cast<int>(n), MPI_BYTE, right, 0, static_cast<int>(n), MPI_BYTE, w.win));
      MT_COMPLETE(mode, w.win, s);
      MT_WAIT(mode, w.win, s);
      if (mode == Mode::stream) MT_SYNC(s);
      auto mine = pattern(n, key(tag, static_cast<uint64_t>(g_rank)));
      MT_SAME_BYTES(buf, mine.data(), n, "get into a buffer mapped again");
      MPI_Barrier(MPI_COMM_WORLD);
    }
    munmap(mem, mapped);
    previous = mem;
    ++rounds;
  }
  note("origin_reuse: %d rounds, %d mapped at the previous round's address", rounds, same_address);
  free_window(w);
  }
  stream_destroy(s);
  return finish();
}
