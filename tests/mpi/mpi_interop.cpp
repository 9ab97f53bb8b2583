// Fence and lock epochs of the underlying MPI on the library's windows (host backend: the MPI
// window is over the same memory), before, between and after active-target epochs of both modes;
// both window kinds. RMA calls inside fence and lock epochs go to the underlying MPI.
//  - fence(0) ... fence(MPI_MODE_NOSUCCEED), then active-target epochs;
//  - MPI_Win_lock / unlock and MPI_Win_lock_all / unlock_all, then active-target epochs.
// fence(0) ... fence(0) followed by active-target epochs: fence_then_start.
#include "test_common.h"

using namespace mt;

namespace {

constexpr size_t kN = 1024;

void run(WinKind kind, void *s) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  TestWin w = make_window(kind, kN);
  DevBuf src(kN);
  src.upload(pattern(kN, key(0xfe, static_cast<uint64_t>(g_rank))));
  if (!mpi_creates_windows()) {  // no window of the underlying MPI: refused, active-target works
    g_context = fmt("%s, fence epoch on the MPI's stand-in", kind_name(kind));
    expect_stand_in_refusal(w, src.p, right);
    pscw_ring(Mode::stream, w, s, 0xa1, 64);
    pscw_ring(Mode::host, w, s, 0xa2, 128);
    free_window(w);
    return;
  }

  g_context = fmt("%s, fence epoch", kind_name(kind));
  MT_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win));
  MT_OK(MPI_Put(src.p, 64, MPI_BYTE, right, 0, 64, MPI_BYTE, w.win));
  MT_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
  {
    auto want = pattern(64, key(0xfe, static_cast<uint64_t>(left)));
    auto got = read_device(w.base, 64);
    MT_SAME_BYTES(got.data(), want.data(), 64, "put in a fence epoch");
  }
  g_context = fmt("%s, active-target epochs after a fence epoch", kind_name(kind));
  pscw_ring(Mode::stream, w, s, 0xa1, 64);
  pscw_ring(Mode::host, w, s, 0xa2, 128);

  g_context = fmt("%s, lock epochs", kind_name(kind));
  MT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w.win));
  MT_OK(MPI_Put(src.p + 64, 64, MPI_BYTE, right, 192, 64, MPI_BYTE, w.win));
  MT_OK(MPI_Win_unlock(right, w.win));
  MT_OK(MPI_Win_lock_all(0, w.win));
  MT_OK(MPI_Put(src.p + 128, 64, MPI_BYTE, right, 256, 64, MPI_BYTE, w.win));
  MT_OK(MPI_Win_unlock_all(w.win));
  MPI_Barrier(MPI_COMM_WORLD);
  {
    auto want = pattern(kN, key(0xfe, static_cast<uint64_t>(left)));
    auto got = read_device(w.base + 192, 128);
    MT_SAME_BYTES(got.data(), want.data() + 64, 128, "puts in lock and lock_all epochs");
  }
  g_context = fmt("%s, active-target epochs after lock epochs", kind_name(kind));
  pscw_ring(Mode::stream, w, s, 0xa3, 320);
  pscw_ring(Mode::host, w, s, 0xa4, 384);

  free_window(w);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "mpi_interop");
  {
    void *s = stream_create();
    for (WinKind kind : kAllKinds) run(kind, s);
    stream_destroy(s);
  }
  return finish();
}
