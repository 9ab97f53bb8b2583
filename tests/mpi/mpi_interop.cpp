// Fence and lock epochs of the underlying MPI on the library's windows (host backend: the MPI
// window is over the same memory), before, between and after active-target epochs of both modes;
// both window kinds. RMA calls inside fence and lock epochs go to the underlying MPI.
//  - fence(0) ... fence(MPI_MODE_NOSUCCEED), then active-target epochs;
//  - MPI_Win_lock / unlock and MPI_Win_lock_all / unlock_all, then active-target epochs.
// fence(0) ... fence(0) followed by active-target epochs: fence_then_start.
// What programs that never call the library's extensions see of its windows (as MPICH's own RMA
// tests check): MPI_WIN_CREATE_FLAVOR says how the program made the window, and MPI_Win_test
// closes a host-driven exposure epoch as MPI_Win_wait does.
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

void flavor_and_test(WinKind kind) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  g_context = fmt("%s, MPI_WIN_CREATE_FLAVOR", kind_name(kind));
  TestWin w = make_window(kind, kN);
  int *flavor = nullptr, found = 0;
  MT_OK(MPI_Win_get_attr(w.win, MPI_WIN_CREATE_FLAVOR, &flavor, &found));
  MT_CHECK(found && flavor);
  const int want_flavor = kind == WinKind::allocate ? MPI_WIN_FLAVOR_ALLOCATE : MPI_WIN_FLAVOR_CREATE;
  MT_CHECKF(found && flavor && *flavor == want_flavor, "flavour %d, want %d", flavor ? *flavor : -1, want_flavor);

  g_context = fmt("%s, MPI_Win_test", kind_name(kind));
  int flag = 1;
  MT_EXPECT_ERROR(MPI_Win_test(w.win, &flag), MPI_ERR_RMA_SYNC);  // no exposure epoch
  MT_CHECKF(flag == 0, "MPI_Win_test outside an epoch set flag %d", flag);
  DevBuf src(64);
  src.upload(pattern(64, key(0x7e57, static_cast<uint64_t>(g_rank))));
  Group to_right({right}), from_left({left});
  MT_OK(MPI_Win_post(from_left, 0, w.win));
  // The origin waits for the target's first MPI_Win_test before completing, so a test that sees
  // the epoch open returns flag 0 at least once.
  int first = 0;
  MT_OK(MPI_Win_test(w.win, &first));
  MT_CHECKF(first == 0, "MPI_Win_test closed an epoch whose origin has not called MPI_Win_complete");
  MT_OK(MPI_Sendrecv(nullptr, 0, MPI_BYTE, left, 0x7e, nullptr, 0, MPI_BYTE, right, 0x7e, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE));
  MT_OK(MPI_Win_start(to_right, 0, w.win));
  MT_OK(MPI_Put(src.p, 64, MPI_BYTE, right, 0, 64, MPI_BYTE, w.win));
  MT_OK(MPI_Win_complete(w.win));
  for (flag = 0; !flag;) MT_OK(MPI_Win_test(w.win, &flag));
  auto want = pattern(64, key(0x7e57, static_cast<uint64_t>(left)));
  auto got = read_device(w.base, 64);
  MT_SAME_BYTES(got.data(), want.data(), 64, "put of an epoch closed by MPI_Win_test");
  MT_EXPECT_ERROR(MPI_Win_test(w.win, &flag), MPI_ERR_RMA_SYNC);  // closed: no epoch again
  free_window(w);
}

// MPI_Win_allocate without mpix_st_memory=device is the MPI's own allocate window (its flavour and
// its one-sided component, e.g. Open MPI's osc sm with its atomics); on the host backend the
// library manages it over the MPI's memory, so epochs of both modes move data through it.
void mpi_allocated_window(void *s) {
  g_context = "MPI_Win_allocate of the MPI's memory";
  TestWin w = make_window(WinKind::allocate, kN, 1, MPI_COMM_WORLD, 0, {{"mpix_st_memory", "host"}});
  int *flavor = nullptr, found = 0;
  MT_OK(MPI_Win_get_attr(w.win, MPI_WIN_CREATE_FLAVOR, &flavor, &found));
  MT_CHECKF(found && flavor && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "flavour %d", flavor ? *flavor : -1);
  pscw_ring(Mode::stream, w, s, 0xa5, 0);
  pscw_ring(Mode::host, w, s, 0xa6, 128);
  free_window(w);
}

// An allocation of library memory that fails on one rank only (more bytes than an address space)
// fails MPI_Win_allocate on every rank, none is left in the window's collectives; the ranks then
// create a window as usual.
void allocation_fails_on_one_rank() {
  g_context = "MPI_Win_allocate failing on rank 0 only";
  MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  const MPI_Aint huge = MPI_Aint(1) << 50;  // past any 48-bit address space
  void *base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  MPI_Info info;
  MT_OK(MPI_Info_create(&info));
  MT_OK(MPI_Info_set(info, "mpix_st_memory", "device"));  // the library's memory, not the MPI's
  const int rc = MPI_Win_allocate(g_rank == 0 ? huge : 4096, 1, info, MPI_COMM_WORLD, &base, &win);
  MT_OK(MPI_Info_free(&info));
  MT_CHECKF(rc != MPI_SUCCESS, "MPI_Win_allocate succeeded on rank %d", g_rank);
  if (rc == MPI_SUCCESS) MT_OK(MPI_Win_free(&win));
  if (g_rank == 0) {
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    MT_CHECKF(cls == MPI_ERR_NO_MEM, "rank 0: class %d, want MPI_ERR_NO_MEM", cls);
  }
  MT_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  TestWin w = make_window(WinKind::allocate, kN);
  free_window(w);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "mpi_interop");
  {
    void *s = stream_create();
    for (WinKind kind : kAllKinds) run(kind, s);
    for (WinKind kind : kAllKinds) flavor_and_test(kind);
    if (std::getenv("MPIX_ST_BACKEND") && std::string(std::getenv("MPIX_ST_BACKEND")) == "host") {
      mpi_allocated_window(s);
      allocation_fails_on_one_rank();
    }
    stream_destroy(s);
  }
  return finish();
}
