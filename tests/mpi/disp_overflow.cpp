// Target displacements whose byte offset (target_disp x disp_unit) does not fit in 64 bits must be
// MPI_ERR_RMA_RANGE, not wrap around into the window. Stream-triggered self epochs, both kinds.
#include "test_common.h"

using namespace mt;

namespace {

void displacement_overflow(WinKind kind, void *s) {
  g_context = fmt("%s: displacement overflow (disp_unit 8)", kind_name(kind));
  TestWin w = make_window(kind, 1024, 8);
  DevBuf buf(64);
  xdev::fill(buf.p, 0x5a, 64);
  Group self({g_rank});
  MT_OK(MPIX_Win_post_stream(self, w.win, s));
  MT_OK(MPI_Win_start(self, MPIX_MODE_STREAM, w.win));
  MT_EXPECT_ERROR(MPI_Put(buf.p, 8, MPI_BYTE, g_rank, 128, 8, MPI_BYTE, w.win), MPI_ERR_RMA_RANGE);  // 1024 + 8
  MT_OK(MPI_Put(buf.p, 8, MPI_BYTE, g_rank, 127, 8, MPI_BYTE, w.win));                               // last slot
  // 2^61 * 8 = 2^64: wraps to byte 0 if computed in 64 bits without a check.
  const MPI_Aint huge = static_cast<MPI_Aint>(1) << 61;
  MT_EXPECT_ERROR(MPI_Put(buf.p, 8, MPI_BYTE, g_rank, huge, 8, MPI_BYTE, w.win), MPI_ERR_RMA_RANGE);
  MT_EXPECT_ERROR(MPI_Put(buf.p, 8, MPI_BYTE, g_rank, huge + 1, 8, MPI_BYTE, w.win), MPI_ERR_RMA_RANGE);
  MT_EXPECT_ERROR(MPI_Get(buf.p, 8, MPI_BYTE, g_rank, huge + 2, 8, MPI_BYTE, w.win), MPI_ERR_RMA_RANGE);
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
  MT_SYNC(s);
  std::vector<uint8_t> want(1024, 0);
  std::fill(want.begin() + 1016, want.end(), 0x5a);
  auto got = read_device(w.base, 1024);
  MT_SAME_BYTES(got.data(), want.data(), 1024, "window: only the in-range put may land");
  free_window(w);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "disp_overflow");
  {
    void *s = stream_create();
    for (WinKind kind : kAllKinds) displacement_overflow(kind, s);
    stream_destroy(s);
  }
  return finish();
}
