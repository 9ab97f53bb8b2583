// Info mpix_st=false on rank 0 only: the window is not managed on any rank (the library agrees
// on it collectively), and the standard calls work through the underlying MPI.
//   1. MPI_Win_create;  2. MPI_Win_allocate (runs last: see the failure it reproduces).
#include "test_common.h"

using namespace mt;

namespace {

void check_unmanaged(MPI_Win win, uint8_t *base, size_t n, void *s, const char *what) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  MT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  Group to_right({right}), from_left({left});
  MT_EXPECT_ERROR(MPIX_Win_post_stream(from_left, win, s), MPI_ERR_WIN);
  MT_EXPECT_ERROR(MPI_Win_start(to_right, MPIX_MODE_STREAM, win), MPI_ERR_WIN);
  std::vector<uint8_t> src = pattern(n, key(0x313, static_cast<uint64_t>(g_rank)));
  std::memset(base, 0, n);
  MPI_Barrier(MPI_COMM_WORLD);
  MT_OK(MPI_Win_post(from_left, 0, win));
  MT_OK(MPI_Win_start(to_right, 0, win));
  MT_OK(MPI_Put(src.data(), static_cast<int>(n), MPI_BYTE, right, 0, static_cast<int>(n), MPI_BYTE, win));
  MT_OK(MPI_Win_complete(win));
  MT_OK(MPI_Win_wait(win));
  auto want = pattern(n, key(0x313, static_cast<uint64_t>(left)));
  MT_SAME_BYTES(base, want.data(), n, fmt("%s: window after an MPI epoch", what));
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "mixed_info");
  {
    void *s = stream_create();
    const size_t n = 256;
    MPI_Info info;
    MPI_Info_create(&info);
    if (g_rank == 0) MPI_Info_set(info, "mpix_st", "false");

    g_context = "MPI_Win_create, mpix_st=false on rank 0 only";
    std::vector<uint8_t> mem(n);  // host memory: usable by the underlying MPI on every backend
    MPI_Win win;
    MT_OK(MPI_Win_create(mem.data(), n, 1, info, MPI_COMM_WORLD, &win));
    check_unmanaged(win, mem.data(), n, s, "MPI_Win_create");
    MT_OK(MPI_Win_free(&win));

    // Rank 0 passes MPI_Win_allocate to the underlying MPI while the other ranks allocate through
    // the library: their collective calls must still match.
    g_context = "MPI_Win_allocate, mpix_st=false on rank 0 only";
    note("mixed_info: MPI_Win_allocate with mpix_st=false on rank 0 only (a crash or hang here is the failure)");
    uint8_t *base = nullptr;
    MT_OK(MPI_Win_allocate(n, 1, info, MPI_COMM_WORLD, &base, &win));
    check_unmanaged(win, base, n, s, "MPI_Win_allocate");  // host memory on every backend here
    MT_OK(MPI_Win_free(&win));
    MPI_Info_free(&info);
    stream_destroy(s);
  }
  return finish();
}
