// fence(0) ... fence(0) (no MPI_MODE_NOSUCCEED), then active-target epochs, on the library's windows
// (host backend), both kinds. Valid MPI: a fence starts an epoch only if RMA calls follow it, and
// MPICH itself accepts MPI_Win_start there.
#include "test_common.h"

using namespace mt;

namespace {

constexpr size_t kN = 1024;

void run(WinKind kind, void *s) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  TestWin w = make_window(kind, kN);
  DevBuf src(kN);
  src.upload(pattern(kN, key(0xfe, static_cast<uint64_t>(g_rank))));
  g_context = fmt("%s, active-target epochs after fence(0) ... fence(0)", kind_name(kind));
  const bool full = mpi_creates_windows();  // else the MPI's window is a stand-in: no RMA in fences
  if (!full) expect_stand_in_refusal(w, src.p, right);
  MT_OK(MPI_Win_fence(0, w.win));
  if (full) MT_OK(MPI_Put(src.p + 192, 64, MPI_BYTE, right, 448, 64, MPI_BYTE, w.win));
  MT_OK(MPI_Win_fence(0, w.win));
  if (full) {
    auto want = pattern(kN, key(0xfe, static_cast<uint64_t>(left)));
    auto got = read_device(w.base + 448, 64);
    MT_SAME_BYTES(got.data(), want.data() + 192, 64, "put between fence(0) calls");
  }
  const int rc = MPI_Win_start(MPI_GROUP_EMPTY, MPIX_MODE_STREAM, w.win);
  MT_CHECKF(rc == MPI_SUCCESS,
            "MPI_Win_start after fence(0) ... fence(0) (no RMA call after the last fence) failed: %s (%s)",
            class_name(error_class(rc)), error_string(rc).c_str());
  if (rc == MPI_SUCCESS) {
    MT_OK(MPIX_Win_complete_stream(w.win, s));
    MT_SYNC(s);
  } else {
    MT_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));  // recover: end the fence sequence explicitly
  }
  MPI_Barrier(MPI_COMM_WORLD);
  pscw_ring(Mode::stream, w, s, 0xa5, 512);
  pscw_ring(Mode::host, w, s, 0xa6, 576);
  free_window(w);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "fence_then_start");
  {
    void *s = stream_create();
    for (WinKind kind : kAllKinds) run(kind, s);
    stream_destroy(s);
  }
  return finish();
}
