// Misuse, synchronisation and handles: MPI_WIN_NULL and freed windows in every epoch call and RMA
// call (the MPI may not notice a freed handle itself), calls in the wrong epoch state (complete
// without start, double wait, nested epochs, RMA outside an epoch, fence or free inside one),
// unknown assert bits, bad groups (NULL, ranks outside the window, a process named twice), and
// partners that never come (start without post, post without start): with MPIX_ST_WATCHDOG_MS
// these end in an error instead of a hang. Each case checks the error class and a message
// substring; the window is checked to work afterwards wherever MPI allows it (after a watchdog
// timeout the epoch counts of the pair are out of step, so a new window is checked instead).
#include "misuse_common.h"

using namespace mt;

namespace {

int g_right = 0, g_left = 0;

void null_window(void *s) {
  g_context = "MPI_WIN_NULL";
  Group self({g_rank});
  DevBuf buf(8);
  const char *why = "MPI_WIN_NULL";
  MU_ERROR(MPIX_Win_post_stream(self, MPI_WIN_NULL, s), MPI_ERR_WIN, why);
  MU_ERROR(MPIX_Win_complete_stream(MPI_WIN_NULL, s), MPI_ERR_WIN, why);
  MU_ERROR(MPIX_Win_wait_stream(MPI_WIN_NULL, s), MPI_ERR_WIN, why);
  MU_ERROR(MPI_Win_start(self, MPIX_MODE_STREAM, MPI_WIN_NULL), MPI_ERR_WIN, why);
  MU_ERROR(MPI_Win_start(self, 0, MPI_WIN_NULL), MPI_ERR_WIN, why);
  MU_ERROR(MPI_Win_post(self, 0, MPI_WIN_NULL), MPI_ERR_WIN, why);
  MU_ERROR(MPI_Win_complete(MPI_WIN_NULL), MPI_ERR_WIN, why);
  MU_ERROR(MPI_Win_wait(MPI_WIN_NULL), MPI_ERR_WIN, why);
  MU_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, 0, 0, 1, MPI_BYTE, MPI_WIN_NULL), MPI_ERR_WIN, why);
  MU_ERROR(MPI_Get(buf.p, 1, MPI_BYTE, 0, 0, 1, MPI_BYTE, MPI_WIN_NULL), MPI_ERR_WIN, why);
  MU_ERROR(MPI_Accumulate(buf.p, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, MPI_WIN_NULL), MPI_ERR_WIN, why);
  MPI_Win null = MPI_WIN_NULL;
  MU_ERROR(MPI_Win_free(&null), MPI_ERR_WIN, why);
  MU_ERROR(MPI_Win_free(nullptr), MPI_ERR_ARG, "win is NULL");
  MT_OK(MPIX_St_check(MPI_WIN_NULL));  // nothing pending
  // A window the library does not manage.
  TestWin plain = make_window(WinKind::allocate, 64, 1, MPI_COMM_WORLD, 0, {{"mpix_st", "false"}});
  MU_ERROR(MPIX_St_check(plain.win), MPI_ERR_WIN, "not managed");
  MU_ERROR(MPIX_Win_post_stream(self, plain.win, s), MPI_ERR_WIN, "not managed");
  free_window(plain);
}

// Every call on a handle freed before: managed windows of each kind, and one the library does not
// manage (info mpix_st=false), where MPICH 4.0 itself accepts MPI_Win_post on the freed handle.
void freed_window(WinKind kind, bool managed, void *s) {
  g_context = fmt("freed %s window of %s", managed ? "managed" : "unmanaged", kind_name(kind));
  TestWin w = managed ? make_window(kind, 64) : make_window(kind, 64, 1, MPI_COMM_WORLD, 0, {{"mpix_st", "false"}});
  const MPI_Win stale = w.win;
  free_window(w);
  MT_CHECKF(w.win == MPI_WIN_NULL, "MPI_Win_free left the handle set");
  Group self({g_rank});
  DevBuf buf(8);
  const char *why = "was freed";
  MPI_Win copy = stale;
  if (managed) {
    MU_ERROR(MPIX_Win_post_stream(self, stale, s), MPI_ERR_WIN, why);
    MU_ERROR(MPIX_Win_complete_stream(stale, s), MPI_ERR_WIN, why);
    MU_ERROR(MPIX_Win_wait_stream(stale, s), MPI_ERR_WIN, why);
    MU_ERROR(MPI_Win_start(self, MPIX_MODE_STREAM, stale), MPI_ERR_WIN, why);
    MU_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, 0, 0, 1, MPI_BYTE, stale), MPI_ERR_WIN, why);
    MU_ERROR(MPI_Get(buf.p, 1, MPI_BYTE, 0, 0, 1, MPI_BYTE, stale), MPI_ERR_WIN, why);
    MU_ERROR(MPI_Accumulate(buf.p, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, stale), MPI_ERR_WIN, why);
    MU_ERROR(MPI_Win_complete(stale), MPI_ERR_WIN, why);
    MU_ERROR(MPI_Win_wait(stale), MPI_ERR_WIN, why);
    MU_ERROR(MPI_Win_fence(0, stale), MPI_ERR_WIN, why);
    MU_ERROR(MPI_Win_lock_all(0, stale), MPI_ERR_WIN, why);
    MU_ERROR(MPIX_St_check(stale), MPI_ERR_WIN, why);
  }
  MU_ERROR(MPI_Win_post(self, 0, stale), MPI_ERR_WIN, why);
  MU_ERROR(MPI_Win_start(self, 0, stale), MPI_ERR_WIN, why);
  MU_ERROR(MPI_Win_free(&copy), MPI_ERR_WIN, why);
  // The MPI may hand the same handle out again: then it is a window like any other.
  TestWin again = make_window(kind, 64);
  if (again.win == stale) note("  (the MPI handed the freed handle out again)");
  mu::window_still_works(again, s, 0x6100 + static_cast<uint64_t>(kind) * 2 + managed);
  free_window(again);
}

void epoch_order(TestWin &w, void *s) {
  g_context = fmt("%s: epoch order", kind_name(w.kind));
  Group to_right({g_right}), from_left({g_left}), self({g_rank});
  DevBuf buf(64);
  xdev::fill(buf.p, 0, 64);
  MU_ERROR(MPIX_Win_complete_stream(w.win, s), MPI_ERR_RMA_SYNC, "missing MPI_Win_start");
  MU_ERROR(MPI_Win_complete(w.win), MPI_ERR_RMA_SYNC, "missing MPI_Win_start");
  MU_ERROR(MPIX_Win_wait_stream(w.win, s), MPI_ERR_RMA_SYNC, "missing post");
  MU_ERROR(MPI_Win_wait(w.win), MPI_ERR_RMA_SYNC, "missing post");
  MU_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, g_right, 0, 1, MPI_BYTE, w.win), MPI_ERR_RMA_SYNC, "outside an access epoch");
  MU_ERROR(MPI_Get(buf.p, 1, MPI_BYTE, g_right, 0, 1, MPI_BYTE, w.win), MPI_ERR_RMA_SYNC, "outside an access epoch");
  MU_ERROR(MPI_Accumulate(buf.p, 1, MPI_INT, g_right, 0, 1, MPI_INT, MPI_SUM, w.win), MPI_ERR_RMA_SYNC,
           "outside an access epoch");
  for (Mode mode : kAllModes) {
    g_context = fmt("%s: epoch order, %s", kind_name(w.kind), mode_name(mode));
    const Mode other = mode == Mode::stream ? Mode::host : Mode::stream;
    MT_OK(post_rc(mode, from_left, w.win, s));
    // An exposure epoch alone is no access epoch; a second post nests.
    MU_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, g_right, 0, 1, MPI_BYTE, w.win), MPI_ERR_RMA_SYNC, "outside an access epoch");
    MU_ERROR(post_rc(mode, from_left, w.win, s), MPI_ERR_RMA_SYNC, "still open");
    MU_ERROR(post_rc(other, from_left, w.win, s), MPI_ERR_RMA_SYNC, "still open");
    MT_OK(start_rc(mode, to_right, w.win));
    MU_ERROR(start_rc(mode, to_right, w.win), MPI_ERR_RMA_SYNC, "still open");
    MU_ERROR(MPI_Win_fence(0, w.win), MPI_ERR_RMA_SYNC, "inside an active-target epoch");
    MU_ERROR(complete_rc(other, w.win, s), MPI_ERR_RMA_SYNC, "close it with");
    MU_ERROR(MPI_Win_free(&w.win), MPI_ERR_RMA_SYNC, "access epoch still open");
    MT_COMPLETE(mode, w.win, s);
    MU_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, g_right, 0, 1, MPI_BYTE, w.win), MPI_ERR_RMA_SYNC, "outside an access epoch");
    MU_ERROR(complete_rc(mode, w.win, s), MPI_ERR_RMA_SYNC, "without an access epoch");  // double complete
    MU_ERROR(wait_rc(other, w.win, s), MPI_ERR_RMA_SYNC, "close it with");
    MT_WAIT(mode, w.win, s);
    MU_ERROR(wait_rc(mode, w.win, s), MPI_ERR_RMA_SYNC, "without an exposure epoch");  // double wait
    if (mode == Mode::stream) MT_SYNC(s);
  }
  // Lock epochs of the underlying MPI and active-target epochs do not nest.
  g_context = fmt("%s: lock epoch", kind_name(w.kind));
  MT_OK(MPI_Win_lock_all(0, w.win));
  MU_ERROR(MPI_Win_start(self, MPIX_MODE_STREAM, w.win), MPI_ERR_RMA_SYNC, "inside a lock epoch");
  MU_ERROR(MPI_Win_start(self, 0, w.win), MPI_ERR_RMA_SYNC, "inside a lock epoch");
  MT_OK(MPI_Win_unlock_all(w.win));
  MPI_Barrier(MPI_COMM_WORLD);
  mu::window_still_works(w, s, 0x6200 + static_cast<uint64_t>(w.kind));
}

void asserts(TestWin &w, void *s) {
  g_context = fmt("%s: assert bits", kind_name(w.kind));
  Group self({g_rank});
  MU_ERROR(MPI_Win_post(self, MPIX_MODE_STREAM, w.win), MPI_ERR_ASSERT, "MPIX_Win_post_stream");
  MU_ERROR(MPI_Win_post(self, MPI_MODE_NOPRECEDE, w.win), MPI_ERR_ASSERT, "unknown assert bits");
  MU_ERROR(MPI_Win_start(self, 1 << 30, w.win), MPI_ERR_ASSERT, "unknown assert bits");
  MU_ERROR(MPI_Win_start(self, MPIX_MODE_STREAM | MPI_MODE_NOSUCCEED, w.win), MPI_ERR_ASSERT, "unknown assert bits");
  // The assert bits MPI defines for them are taken.
  MT_OK(MPI_Win_post(self, MPI_MODE_NOSTORE | MPI_MODE_NOPUT, w.win));
  MT_OK(MPI_Win_start(self, 0, w.win));
  MT_OK(MPI_Win_complete(w.win));
  MT_OK(MPI_Win_wait(w.win));
  mu::window_still_works(w, s, 0x6300 + static_cast<uint64_t>(w.kind));
}

// MPI_Group_incl naming a rank twice: some MPIs refuse to build such a group (then there is
// nothing for the library to check), MPICH 4.0 builds it.
MPI_Group twice(int rank) {
  MPI_Group all, g = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &all);
  const int ranks[2] = {rank, rank};
  if (MPI_Group_incl(all, 2, ranks, &g) != MPI_SUCCESS) g = MPI_GROUP_NULL;
  MPI_Group_free(&all);
  return g;
}

void groups(TestWin &w, void *s) {
  g_context = fmt("%s: groups", kind_name(w.kind));
  for (Mode mode : kAllModes) {
    MU_ERROR(post_rc(mode, MPI_GROUP_NULL, w.win, s), MPI_ERR_GROUP, "MPI_GROUP_NULL");
    MU_ERROR(start_rc(mode, MPI_GROUP_NULL, w.win), MPI_ERR_GROUP, "MPI_GROUP_NULL");
  }
  // Ranks outside the window: a window of this rank alone, groups naming other processes.
  TestWin solo = make_window(w.kind, 64, 1, MPI_COMM_SELF);
  Group other({g_right}), both({g_rank, g_right});
  for (Mode mode : kAllModes) {
    MU_ERROR(post_rc(mode, other, solo.win, s), MPI_ERR_GROUP, "not in the window's communicator");
    MU_ERROR(start_rc(mode, both, solo.win), MPI_ERR_GROUP, "not in the window's communicator");
  }
  free_window(solo);
  // A process named twice: once as the peer on the other side, once as this rank itself (a rank
  // on both sides of its own epoch).
  MPI_Group right2 = twice(g_right), self2 = twice(g_rank);
  if (right2 == MPI_GROUP_NULL || self2 == MPI_GROUP_NULL) {
    note("  (this MPI refuses groups that name a rank twice: those cases are not run)");
  } else {
    for (Mode mode : kAllModes) {
      MU_ERROR(post_rc(mode, right2, w.win, s), MPI_ERR_GROUP, "same process");
      MU_ERROR(start_rc(mode, right2, w.win), MPI_ERR_GROUP, "same process");
      MU_ERROR(post_rc(mode, self2, w.win, s), MPI_ERR_GROUP, "same process");
      MU_ERROR(start_rc(mode, self2, w.win), MPI_ERR_GROUP, "same process");
    }
  }
  if (right2 != MPI_GROUP_NULL) MPI_Group_free(&right2);
  if (self2 != MPI_GROUP_NULL) MPI_Group_free(&self2);
  mu::window_still_works(w, s, 0x6400 + static_cast<uint64_t>(w.kind));
}

// Partners that do not come, ranks 0 and 1 (the others watch); the watchdog of this program is
// short. Host-driven: the timed-out call leaves its epoch open and may be called again once the
// partner arrives, so the late partner then comes and the window works on. Stream-triggered: the
// stream skips the epoch, and the pair's epoch counts are out of step (MPI does not promise to
// survive that), so the window is freed and a new one checked.
void missing_partner(WinKind kind, Mode mode, void *s) {
  Group to1({1}), from0({0});
  DevBuf src(64);
  const auto data = pattern(64, key(0x6500, static_cast<uint64_t>(mode), static_cast<uint64_t>(kind)));
  src.upload(data);
  std::vector<uint8_t> zeros(64, 0);
  {
    g_context = fmt("%s: %s start without a post", kind_name(kind), mode_name(mode));
    TestWin w = make_window(kind, 64);
    if (g_rank == 0) {
      MT_START(mode, to1, w.win);
      MT_OK(MPI_Put(src.p, 64, MPI_BYTE, 1, 0, 64, MPI_BYTE, w.win));
      if (mode == Mode::host) {
        MU_ERROR(MPI_Win_complete(w.win), MPI_ERR_OTHER, "the targets' MPI_Win_post");
      } else {
        MT_OK(MPIX_Win_complete_stream(w.win, s));
        MU_ERROR(stream_sync_rc(s), MPI_ERR_OTHER, "for post #");
        MU_ERROR(MPIX_Win_complete_stream(w.win, s), MPI_ERR_RMA_SYNC, "without an access epoch");
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    auto got = read_device(w.base, 64);
    MT_SAME_BYTES(got.data(), zeros.data(), 64, "window of a target that has not posted");
    if (mode == Mode::host) {  // the target comes late; the origin completes again
      if (g_rank == 1) MT_OK(MPI_Win_post(from0, 0, w.win));
      if (g_rank == 0) MT_OK(MPI_Win_complete(w.win));
      if (g_rank == 1) MT_OK(MPI_Win_wait(w.win));
      got = read_device(w.base, 64);
      if (g_rank == 1) MT_SAME_BYTES(got.data(), data.data(), 64, "data of the completed epoch");
      xdev::fill(w.base, 0, 64);
      MPI_Barrier(MPI_COMM_WORLD);
      mu::window_still_works(w, s, 0x6600 + static_cast<uint64_t>(kind));
    }
    free_window(w);
  }
  {
    g_context = fmt("%s: %s post without a start", kind_name(kind), mode_name(mode));
    TestWin w = make_window(kind, 64);
    if (g_rank == 1) {
      MT_POST(mode, from0, w.win, s);
      if (mode == Mode::host) {
        MU_ERROR(MPI_Win_wait(w.win), MPI_ERR_OTHER, "the origins' MPI_Win_complete");
      } else {
        MT_OK(MPIX_Win_wait_stream(w.win, s));
        MU_ERROR(stream_sync_rc(s), MPI_ERR_OTHER, "for complete #");
        MU_ERROR(MPIX_Win_wait_stream(w.win, s), MPI_ERR_RMA_SYNC, "without an exposure epoch");
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (mode == Mode::host) {  // the origin comes late; the target waits again
      if (g_rank == 0) {
        MT_OK(MPI_Win_start(to1, 0, w.win));
        MT_OK(MPI_Put(src.p, 64, MPI_BYTE, 1, 0, 64, MPI_BYTE, w.win));
        MT_OK(MPI_Win_complete(w.win));
      }
      if (g_rank == 1) {
        MT_OK(MPI_Win_wait(w.win));
        auto got = read_device(w.base, 64);
        MT_SAME_BYTES(got.data(), data.data(), 64, "data of the late origin's epoch");
      }
      xdev::fill(w.base, 0, 64);
      MPI_Barrier(MPI_COMM_WORLD);
      mu::window_still_works(w, s, 0x6700 + static_cast<uint64_t>(kind));
    }
    free_window(w);
  }
  if (mode == Mode::stream) {  // a new window works
    TestWin w = make_window(kind, 64);
    mu::window_still_works(w, s, 0x6800 + static_cast<uint64_t>(kind));
    free_window(w);
  }
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "misuse_sync");
  g_right = (g_rank + 1) % g_size;
  g_left = (g_rank + g_size - 1) % g_size;
  {
    void *s = stream_create();
    null_window(s);
    for (WinKind kind : kAllKinds) {
      freed_window(kind, true, s);
      freed_window(kind, false, s);
      TestWin w = make_window(kind, 64);
      epoch_order(w, s);
      asserts(w, s);
      groups(w, s);
      free_window(w);
      for (Mode mode : kAllModes) missing_partner(kind, mode, s);
    }
    stream_destroy(s);
  }
  return mu::finish("misuse_sync");
}
