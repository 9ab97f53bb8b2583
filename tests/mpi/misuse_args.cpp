// Misuse, arguments: NULL pointers, negative counts and displacements, ranks outside the window,
// ranges outside the target's window (windows of different sizes and units per rank),
// displacement overflow, bad types and ops, destroyed or stray host streams, and window creation
// with bad arguments on every rank or on one rank only (every rank must fail, none may hang),
// including unknown values of the library's info keys. Each case checks the error class and a
// message substring; each section ends with correct epochs whose data is checked.
#include <climits>
#include <cstdint>

#include "misuse_common.h"

using namespace mt;

namespace {

int g_right = 0, g_left = 0;

// Public host-stream calls and the stream argument of the MPIX_*_stream calls.
void stream_arguments(TestWin &w, void *s) {
  g_context = "host streams";
  Group self({g_rank});
  MU_ERROR(MPIX_Host_stream_create(nullptr), MPI_ERR_ARG, "stream is NULL");
  MU_ERROR(MPIX_Host_stream_enqueue(nullptr, [](void *) {}, nullptr), MPI_ERR_ARG, "stream is NULL");
  MU_ERROR(MPIX_Host_stream_enqueue(static_cast<MPIX_Host_stream>(s), nullptr, nullptr), MPI_ERR_ARG,
           "function is NULL");
  MU_ERROR(MPIX_Host_stream_synchronize(nullptr), MPI_ERR_ARG, "stream is NULL");
  MU_ERROR(MPIX_Host_stream_destroy(nullptr), MPI_ERR_ARG, "stream is NULL");
  // A destroyed stream, and a pointer that never was one.
  MPIX_Host_stream gone = nullptr;
  MT_OK(MPIX_Host_stream_create(&gone));
  MT_OK(MPIX_Host_stream_destroy(gone));
  int not_a_stream = 0;
  auto *stray = reinterpret_cast<MPIX_Host_stream>(&not_a_stream);
  MU_ERROR(MPIX_Host_stream_synchronize(gone), MPI_ERR_ARG, "destroyed");
  MU_ERROR(MPIX_Host_stream_enqueue(gone, [](void *) {}, nullptr), MPI_ERR_ARG, "destroyed");
  MU_ERROR(MPIX_Host_stream_destroy(gone), MPI_ERR_ARG, "destroyed");
  MU_ERROR(MPIX_Host_stream_synchronize(stray), MPI_ERR_ARG, "never created");
  // The stream argument of the epoch calls: nothing is opened by a refused call.
  MU_ERROR(MPIX_Win_post_stream(self, w.win, nullptr), MPI_ERR_ARG, "stream is NULL");
  MU_ERROR(MPIX_Win_post_stream(self, w.win, gone), MPI_ERR_ARG, "destroyed");
  MU_ERROR(MPIX_Win_post_stream(self, w.win, stray), MPI_ERR_ARG, "MPIX_Host_stream");
  MU_ERROR(MPIX_Win_wait_stream(w.win, s), MPI_ERR_RMA_SYNC, "without an exposure epoch");
  MT_OK(MPI_Win_start(self, MPIX_MODE_STREAM, w.win));
  MU_ERROR(MPIX_Win_complete_stream(w.win, nullptr), MPI_ERR_ARG, "stream is NULL");
  MU_ERROR(MPIX_Win_complete_stream(w.win, gone), MPI_ERR_ARG, "destroyed");
  MT_OK(MPIX_Win_post_stream(self, w.win, s));
  MU_ERROR(MPIX_Win_wait_stream(w.win, nullptr), MPI_ERR_ARG, "stream is NULL");
  MU_ERROR(MPIX_Win_wait_stream(w.win, stray), MPI_ERR_ARG, "MPIX_Host_stream");
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
  MT_SYNC(s);
  mu::window_still_works(w, s, 0x5100);
}

// Bad arguments of MPI_Put / MPI_Get / MPI_Accumulate inside an open epoch to the right
// neighbour; the epoch then carries one correct put, whose data must arrive alone.
void rma_arguments(Mode mode, TestWin &w, TestWin &w8, void *s) {
  g_context = fmt("RMA arguments in a %s epoch", mode_name(mode));
  Group to_right({g_right}), from_left({g_left});
  DevBuf buf(4096);
  xdev::fill(buf.p, 0, 4096);
  const int r = g_right;
  xdev::fill(w.base, 0, w.bytes);  // no peer writes it before this rank's post below
  MT_POST(mode, from_left, w.win, s);
  MT_POST(mode, from_left, w8.win, s);
  MT_START(mode, to_right, w.win);
  MT_START(mode, to_right, w8.win);
  // NULL origin buffers (a zero count is fine).
  MU_ERROR(MPI_Put(nullptr, 4, MPI_BYTE, r, 0, 4, MPI_BYTE, w.win), MPI_ERR_BUFFER, "origin buffer is NULL");
  MU_ERROR(MPI_Get(nullptr, 4, MPI_BYTE, r, 0, 4, MPI_BYTE, w.win), MPI_ERR_BUFFER, "origin buffer is NULL");
  MU_ERROR(MPI_Accumulate(nullptr, 1, MPI_INT, r, 0, 1, MPI_INT, MPI_SUM, w.win), MPI_ERR_BUFFER,
           "origin buffer is NULL");
  MT_OK(MPI_Put(nullptr, 0, MPI_BYTE, r, 0, 0, MPI_BYTE, w.win));
  // Negative counts and displacements.
  MU_ERROR(MPI_Put(buf.p, -1, MPI_BYTE, r, 0, -1, MPI_BYTE, w.win), MPI_ERR_COUNT, "negative count");
  MU_ERROR(MPI_Put(buf.p, 4, MPI_BYTE, r, 0, -4, MPI_BYTE, w.win), MPI_ERR_COUNT, "negative count");
  MU_ERROR(MPI_Get(buf.p, -3, MPI_INT, r, 0, -3, MPI_INT, w.win), MPI_ERR_COUNT, "negative count");
  MU_ERROR(MPI_Accumulate(buf.p, -2, MPI_INT, r, 0, -2, MPI_INT, MPI_SUM, w.win), MPI_ERR_COUNT, "negative count");
  MU_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, r, -1, 1, MPI_BYTE, w.win), MPI_ERR_DISP, "negative target displacement");
  MU_ERROR(MPI_Get(buf.p, 1, MPI_BYTE, r, -64, 1, MPI_BYTE, w.win), MPI_ERR_DISP, "negative target displacement");
  MU_ERROR(MPI_Accumulate(buf.p, 1, MPI_INT, r, PTRDIFF_MIN, 1, MPI_INT, MPI_SUM, w.win), MPI_ERR_DISP,
           "negative target displacement");
  // Ranks outside the window, and a rank of the window outside the start group.
  MU_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, g_size, 0, 1, MPI_BYTE, w.win), MPI_ERR_RANK, "not in the window");
  MU_ERROR(MPI_Get(buf.p, 1, MPI_BYTE, -5, 0, 1, MPI_BYTE, w.win), MPI_ERR_RANK, "not in the window");
  MU_ERROR(MPI_Accumulate(buf.p, 1, MPI_INT, MPI_ANY_SOURCE, 0, 1, MPI_INT, MPI_SUM, w.win), MPI_ERR_RANK,
           "not in the window");
  if (g_size > 2) {
    MU_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, g_left, 0, 1, MPI_BYTE, w.win), MPI_ERR_RMA_SYNC,
             "not in the group of MPI_Win_start");
  }
  // Ranges: rank p's window `w` has 256 * (p + 1) bytes (disp_unit 1); `w8` has 64 * (p + 1)
  // elements of 8 bytes, disp_unit 8. The right neighbour's sizes decide, not ours.
  const size_t right_bytes = 256 * static_cast<size_t>(r + 1);
  const std::string window_of = fmt("window of %zu bytes", right_bytes);
  MU_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, r, static_cast<MPI_Aint>(right_bytes), 1, MPI_BYTE, w.win), MPI_ERR_RMA_RANGE,
           window_of.c_str());
  MU_ERROR(MPI_Get(buf.p, 16, MPI_BYTE, r, static_cast<MPI_Aint>(right_bytes) - 8, 16, MPI_BYTE, w.win),
           MPI_ERR_RMA_RANGE, window_of.c_str());
  MU_ERROR(MPI_Accumulate(buf.p, 2, MPI_INT, r, static_cast<MPI_Aint>(right_bytes) - 4, 2, MPI_INT, MPI_SUM, w.win),
           MPI_ERR_RMA_RANGE, window_of.c_str());
  MU_ERROR(MPI_Put(buf.p, INT_MAX, MPI_DOUBLE, r, 0, INT_MAX, MPI_DOUBLE, w.win), MPI_ERR_RMA_RANGE, "outside rank");
  const MPI_Aint right_elems = 64 * static_cast<MPI_Aint>(r + 1);
  MU_ERROR(MPI_Put(buf.p, 8, MPI_BYTE, r, right_elems, 8, MPI_BYTE, w8.win), MPI_ERR_RMA_RANGE, "x unit 8");
  MU_ERROR(MPI_Put(buf.p, 16, MPI_BYTE, r, right_elems - 1, 16, MPI_BYTE, w8.win), MPI_ERR_RMA_RANGE, "x unit 8");
  // Displacement overflow: disp x disp_unit beyond 64 bits must not wrap into the window.
  const MPI_Aint wraps = static_cast<MPI_Aint>((UINT64_MAX / 8) + 1);  // x 8 = 2^64: wraps to 0
  MU_ERROR(MPI_Put(buf.p, 8, MPI_BYTE, r, wraps, 8, MPI_BYTE, w8.win), MPI_ERR_RMA_RANGE, "outside rank");
  MU_ERROR(MPI_Get(buf.p, 8, MPI_BYTE, r, wraps + 1, 8, MPI_BYTE, w8.win), MPI_ERR_RMA_RANGE, "outside rank");
  MU_ERROR(MPI_Accumulate(buf.p, 1, MPI_LONG_LONG, r, wraps, 1, MPI_LONG_LONG, MPI_SUM, w8.win), MPI_ERR_RMA_RANGE,
           "outside rank");
  MU_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, r, PTRDIFF_MAX, 1, MPI_BYTE, w.win), MPI_ERR_RMA_RANGE, "outside rank");
  // Types and ops.
  MU_ERROR(MPI_Put(buf.p, 1, MPI_DATATYPE_NULL, r, 0, 1, MPI_BYTE, w.win), MPI_ERR_TYPE, "MPI_DATATYPE_NULL");
  MPI_Datatype vec;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MU_ERROR(MPI_Get(buf.p, 1, vec, r, 0, 3, MPI_INT, w.win), MPI_ERR_TYPE,
           "vector(count=2, blocklength=1, stride=2) of MPI_INT");
  MPI_Type_free(&vec);
  MU_ERROR(MPI_Put(buf.p, 3, MPI_BYTE, r, 0, 1, MPI_INT, w.win), MPI_ERR_TYPE, "different byte counts");
  MU_ERROR(MPI_Accumulate(buf.p, 2, MPI_INT, r, 0, 1, MPI_LONG_LONG, MPI_SUM, w.win), MPI_ERR_TYPE,
           "same on origin and target");
  MU_ERROR(MPI_Accumulate(buf.p, 4, MPI_CHAR, r, 0, 4, MPI_CHAR, MPI_SUM, w.win), MPI_ERR_TYPE, "element types");
  MU_ERROR(MPI_Accumulate(buf.p, 1, MPI_INT, r, 0, 1, MPI_INT, MPI_OP_NULL, w.win), MPI_ERR_OP, "MPI_SUM");
  MU_ERROR(MPI_Accumulate(buf.p, 1, MPI_DOUBLE, r, 0, 1, MPI_DOUBLE, MPI_PROD, w.win), MPI_ERR_OP, "MPI_REPLACE");
  // The one correct operation of the epoch.
  DevBuf src(64);
  src.upload(pattern(64, key(0x5200, static_cast<uint64_t>(mode), static_cast<uint64_t>(g_rank))));
  MT_OK(MPI_Put(src.p, 64, MPI_BYTE, r, 32, 64, MPI_BYTE, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_COMPLETE(mode, w8.win, s);
  MT_WAIT(mode, w.win, s);
  MT_WAIT(mode, w8.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  std::vector<uint8_t> want(256 * static_cast<size_t>(g_rank + 1), 0);
  auto sent = pattern(64, key(0x5200, static_cast<uint64_t>(mode), static_cast<uint64_t>(g_left)));
  std::memcpy(want.data() + 32, sent.data(), 64);
  auto got = read_device(w.base, want.size());
  MT_SAME_BYTES(got.data(), want.data(), want.size(), "window after an epoch of refused operations");
  xdev::fill(w.base, 0, want.size());
  MPI_Barrier(MPI_COMM_WORLD);
}

// Creates a window of `kind` with the given arguments; returns the call's code. A window that was
// created anyway is freed (and reported: the call should have failed).
int create_rc(WinKind kind, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, bool null_base, bool null_win,
              bool null_baseptr = false) {
  MPI_Win win = MPI_WIN_NULL;
  static DevBuf mem(1024);
  int rc;
  if (kind == WinKind::allocate) {
    void *base = nullptr;
    rc = MPI_Win_allocate(size, disp_unit, info, comm, null_baseptr ? nullptr : &base, null_win ? nullptr : &win);
  } else {
    rc = MPI_Win_create(null_base ? nullptr : mem.p, size, disp_unit, info, comm, null_win ? nullptr : &win);
  }
  if (rc == MPI_SUCCESS && win != MPI_WIN_NULL) {
    report(__FILE__, __LINE__, "%s succeeded where it should have failed", kind_name(kind));
    MPI_Win_free(&win);
  }
  return rc;
}

MPI_Info info_with(const char *key, const char *value) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpix_st_memory", "device");
  MPI_Info_set(info, key, value);
  return info;
}

// Bad creation arguments, on every rank or on one rank only: every rank gets an error, the rank
// with the bad argument its own reason, the others "another rank".
void creation_arguments(WinKind kind, void *s) {
  g_context = fmt("%s: arguments", kind_name(kind));
  const char *other = "another rank";
  const bool first = g_rank == 0, last = g_rank == g_size - 1;
  MPI_Info dev = info_with("mpix_st", "true");
  MU_ERROR(create_rc(kind, first ? -1 : 64, 1, dev, MPI_COMM_WORLD, false, false), first ? MPI_ERR_SIZE : MPI_ERR_ARG,
           first ? "negative" : other);
  MU_ERROR(create_rc(kind, 64, last ? 0 : 1, dev, MPI_COMM_WORLD, false, false), last ? MPI_ERR_DISP : MPI_ERR_ARG,
           last ? "displacement unit" : other);
  MU_ERROR(create_rc(kind, 64, -8, dev, MPI_COMM_WORLD, false, false), MPI_ERR_DISP, "displacement unit");
  MU_ERROR(create_rc(kind, 64, 1, dev, MPI_COMM_WORLD, false, true), MPI_ERR_ARG, "NULL");
  MU_ERROR(create_rc(kind, 64, 1, dev, MPI_COMM_NULL, false, false), MPI_ERR_COMM, "MPI_COMM_NULL");
  if (kind == WinKind::create) {
    MU_ERROR(create_rc(kind, 64, 1, dev, MPI_COMM_WORLD, first, false), first ? MPI_ERR_ARG : MPI_ERR_ARG,
             first ? "base is NULL" : other);
  } else {
    MU_ERROR(create_rc(kind, 64, 1, dev, MPI_COMM_WORLD, false, false, last), MPI_ERR_ARG, last ? "baseptr" : other);
  }
  MPI_Info_free(&dev);
  // Unknown values of the library's info keys (every rank), and on one rank only.
  const std::pair<const char *, const char *> bad_values[] = {
      {"mpix_st", "maybe"}, {"mpix_st_memory", "hbm"}, {"mpix_st_staged_get_accumulate", "perhaps"}};
  for (const auto &[k, v] : bad_values) {
    MPI_Info info = info_with(k, v);
    MU_ERROR(create_rc(kind, 64, 1, info, MPI_COMM_WORLD, false, false), MPI_ERR_INFO_VALUE, k);
    MPI_Info_free(&info);
  }
  MPI_Info info = info_with("mpix_st", last ? "yes" : "true");
  MU_ERROR(create_rc(kind, 64, 1, info, MPI_COMM_WORLD, false, false), last ? MPI_ERR_INFO_VALUE : MPI_ERR_ARG,
           last ? "\"yes\"" : other);
  MPI_Info_free(&info);
  // Nothing is left half made: a window of this kind works.
  TestWin w = make_window(kind, 128);
  mu::window_still_works(w, s, 0x5300 + static_cast<uint64_t>(kind));
  free_window(w);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "misuse_args");
  g_right = (g_rank + 1) % g_size;
  g_left = (g_rank + g_size - 1) % g_size;
  {
    void *s = stream_create();
    for (WinKind kind : kAllKinds) {
      TestWin w = make_window(kind, 256 * static_cast<size_t>(g_rank + 1));
      TestWin w8 = make_window(kind, 64 * 8 * static_cast<size_t>(g_rank + 1), 8);
      if (kind == WinKind::allocate) stream_arguments(w, s);
      for (Mode mode : kAllModes) rma_arguments(mode, w, w8, s);
      mu::window_still_works(w, s, 0x5400 + static_cast<uint64_t>(kind));
      free_window(w8);
      free_window(w);
      creation_arguments(kind, s);
    }
    stream_destroy(s);
  }
  return mu::finish("misuse_args");
}
