// MPI_MODE_NOCHECK, both epoch modes, both window kinds, ring (rank r puts to r+1).
//  1. NOCHECK epochs used as the standard says: the target's post has completed (stream mode: its
//     stream ran the post) before the origin's MPI_Win_start, here ensured by a barrier.
//  2. NOCHECK epochs followed by ordinary (checked) epochs: a checked epoch must wait for the
//     target's new post. The target (rank 1) writes its window locally before posting (legal: the
//     window is not exposed then), after a delay; the origin's (rank 0) put must land after it.
#include <chrono>
#include <thread>

#include "test_common.h"

using namespace mt;

namespace {

constexpr size_t kN = 4096;

void nocheck_epoch(Mode mode, TestWin &w, void *s, MPI_Group from_left, MPI_Group to_right, int right, DevBuf &src) {
  MT_OK(post_rc(mode, from_left, w.win, s, MPI_MODE_NOCHECK));
  if (mode == Mode::stream) MT_SYNC(s);  // the post has completed
  MPI_Barrier(MPI_COMM_WORLD);
  MT_OK(start_rc(mode, to_right, w.win, MPI_MODE_NOCHECK));
  MT_OK(MPI_Put(src.p, static_cast<int>(kN), MPI_BYTE, right, 0, static_cast<int>(kN), MPI_BYTE, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
}

void run(Mode mode, WinKind kind, void *s) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group to_right({right}), from_left({left});
  TestWin w = make_window(kind, kN);
  DevBuf src(kN);

  // 1. NOCHECK epochs only.
  for (int e = 0; e < 5; ++e) {
    g_context = fmt("%s, %s, NOCHECK epoch %d", mode_name(mode), kind_name(kind), e);
    src.upload(pattern(kN, key(0x7c, static_cast<uint64_t>(e), static_cast<uint64_t>(g_rank))));
    nocheck_epoch(mode, w, s, from_left, to_right, right, src);
    auto want = pattern(kN, key(0x7c, static_cast<uint64_t>(e), static_cast<uint64_t>(left)));
    auto got = read_device(w.base, kN);
    MT_SAME_BYTES(got.data(), want.data(), kN, "window after a NOCHECK epoch");
  }

  // 2. Then ordinary epochs from rank 0 to rank 1 (the ring's direction): rank 0 starts, puts and
  //    completes at once; rank 1 waits, writes its window locally, and only then posts.
  Group zero({0}), one({1});
  for (int e = 0; e < 2; ++e) {
    g_context = fmt("%s, %s, checked epoch %d after NOCHECK epochs", mode_name(mode), kind_name(kind), e);
    MPI_Barrier(MPI_COMM_WORLD);
    const auto put_data = pattern(kN, key(0x7d, static_cast<uint64_t>(e), 0));
    const auto local = pattern(kN, key(0x7e, static_cast<uint64_t>(e), 1));
    if (g_rank == 0) {
      src.upload(put_data);
      MT_START(mode, one, w.win);
      MT_OK(MPI_Put(src.p, static_cast<int>(kN), MPI_BYTE, 1, 0, static_cast<int>(kN), MPI_BYTE, w.win));
      MT_COMPLETE(mode, w.win, s);  // must not move data before rank 1's post
      if (mode == Mode::stream) MT_SYNC(s);
    } else if (g_rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      to_device(w.base, local.data(), kN);
      MT_POST(mode, zero, w.win, s);
      MT_WAIT(mode, w.win, s);
      if (mode == Mode::stream) MT_SYNC(s);
      auto got = read_device(w.base, kN);
      if (!MT_SAME_BYTES(got.data(), put_data.data(), kN, "rank 1's window after a checked epoch from rank 0")) {
        if (got == local)
          report(__FILE__, __LINE__,
                 "the window holds rank 1's own local write, made before its MPI_Win_post: rank 0's put ran "
                 "before that post, i.e. the checked epoch did not wait for it (post/start matching out of step "
                 "after the NOCHECK epochs)");
      }
    }
  }
  free_window(w);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "nocheck");
  {
    void *s = stream_create();
    for (Mode mode : kAllModes)
      for (WinKind kind : kAllKinds) run(mode, kind, s);
    stream_destroy(s);
  }
  return finish();
}
