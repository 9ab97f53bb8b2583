// Usage errors: each must return the documented MPI error class (window error handler set to
// MPI_ERRORS_RETURN; MPI_COMM_SELF's for MPI_WIN_NULL and host streams) with a message starting
// with "mpix-st:", change no state, and leave the window usable: every section ends with a
// correct epoch whose data is checked. (Displacement overflow: disp_overflow.) Run with --strict-messages to require
// that MPI_Error_string itself shows the messages.
#include "test_common.h"

using namespace mt;

namespace {

int g_right = 0, g_left = 0;

#define EXPECT_MSG(msg, part) \
  MT_CHECKF(contains((msg), (part)), "message \"%s\" does not mention \"%s\"", (msg).c_str(), (part))

// A correct ring epoch with a data check: the window still works after the errors before it.
void ring_epoch_ok(Mode mode, const TestWin &w, void *s, const char *after) {
  Group to_right({g_right}), from_left({g_left});
  static uint64_t serial = 0;
  ++serial;
  DevBuf src(32);
  src.upload(pattern(32, key(0xe7, serial, static_cast<uint64_t>(g_rank))));
  MT_POST(mode, from_left, w.win, s);
  MT_START(mode, to_right, w.win);
  MT_OK(MPI_Put(src.p, 32, MPI_BYTE, g_right, 0, 32, MPI_BYTE, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  auto want = pattern(32, key(0xe7, serial, static_cast<uint64_t>(g_left)));
  auto got = read_device(w.base, 32);
  MT_SAME_BYTES(got.data(), want.data(), 32, fmt("%s epoch after %s", mode_name(mode), after));
}

void epoch_order_errors(const TestWin &w, void *s) {
  g_context = fmt("%s: epoch order", kind_name(w.kind));
  std::string m;
  m = MT_EXPECT_ERROR(MPIX_Win_complete_stream(w.win, s), MPI_ERR_RMA_SYNC);
  EXPECT_MSG(m, "MPI_Win_start");
  MT_EXPECT_ERROR(MPI_Win_complete(w.win), MPI_ERR_RMA_SYNC);
  m = MT_EXPECT_ERROR(MPIX_Win_wait_stream(w.win, s), MPI_ERR_RMA_SYNC);
  EXPECT_MSG(m, "post");
  MT_EXPECT_ERROR(MPI_Win_wait(w.win), MPI_ERR_RMA_SYNC);

  // Mixing stream-triggered and host-driven calls inside one epoch, then closing it correctly.
  Group to_right({g_right}), from_left({g_left});
  DevBuf src(32);
  for (Mode mode : kAllModes) {
    g_context = fmt("%s: %s epoch closed with the other mode's calls", kind_name(w.kind), mode_name(mode));
    const Mode other = mode == Mode::stream ? Mode::host : Mode::stream;
    src.upload(pattern(32, key(0xe8, static_cast<uint64_t>(mode), static_cast<uint64_t>(g_rank))));
    MT_POST(mode, from_left, w.win, s);
    MT_START(mode, to_right, w.win);
    MT_OK(MPI_Put(src.p, 32, MPI_BYTE, g_right, 0, 32, MPI_BYTE, w.win));
    m = MT_EXPECT_ERROR(complete_rc(other, w.win, s), MPI_ERR_RMA_SYNC);
    EXPECT_MSG(m, mode == Mode::stream ? "MPIX_Win_complete_stream" : "MPI_Win_complete");
    MT_COMPLETE(mode, w.win, s);
    m = MT_EXPECT_ERROR(wait_rc(other, w.win, s), MPI_ERR_RMA_SYNC);
    EXPECT_MSG(m, mode == Mode::stream ? "MPIX_Win_wait_stream" : "MPI_Win_wait");
    MT_WAIT(mode, w.win, s);
    if (mode == Mode::stream) MT_SYNC(s);
    auto want = pattern(32, key(0xe8, static_cast<uint64_t>(mode), static_cast<uint64_t>(g_left)));
    auto got = read_device(w.base, 32);
    MT_SAME_BYTES(got.data(), want.data(), 32, "data of the epoch that saw the mixed calls");
  }

  // A second start or post while one is open.
  g_context = fmt("%s: nested epochs", kind_name(w.kind));
  for (Mode mode : kAllModes) {
    MT_OK(post_rc(mode, from_left, w.win, s));
    MT_EXPECT_ERROR(post_rc(mode, from_left, w.win, s), MPI_ERR_RMA_SYNC);
    MT_EXPECT_ERROR(post_rc(mode == Mode::stream ? Mode::host : Mode::stream, from_left, w.win, s), MPI_ERR_RMA_SYNC);
    MT_OK(start_rc(mode, to_right, w.win));
    MT_EXPECT_ERROR(start_rc(mode, to_right, w.win), MPI_ERR_RMA_SYNC);
    MT_EXPECT_ERROR(start_rc(mode == Mode::stream ? Mode::host : Mode::stream, to_right, w.win), MPI_ERR_RMA_SYNC);
    MT_COMPLETE(mode, w.win, s);
    MT_WAIT(mode, w.win, s);
    if (mode == Mode::stream) MT_SYNC(s);
  }
  ring_epoch_ok(Mode::stream, w, s, "epoch-order errors");
  ring_epoch_ok(Mode::host, w, s, "epoch-order errors");
}

void rma_errors(const TestWin &w, void *s) {
  g_context = fmt("%s: RMA calls", kind_name(w.kind));
  DevBuf buf(2048);
  xdev::fill(buf.p, 0, 2048);
  std::string m;
  // Outside any epoch.
  m = MT_EXPECT_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, g_right, 0, 1, MPI_BYTE, w.win), MPI_ERR_RMA_SYNC);
  EXPECT_MSG(m, "outside an access epoch");
  MT_EXPECT_ERROR(MPI_Get(buf.p, 1, MPI_BYTE, g_right, 0, 1, MPI_BYTE, w.win), MPI_ERR_RMA_SYNC);
  MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 1, MPI_INT, g_right, 0, 1, MPI_INT, MPI_SUM, w.win), MPI_ERR_RMA_SYNC);
  MT_EXPECT_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, MPI_PROC_NULL, 0, 1, MPI_BYTE, w.win), MPI_ERR_RMA_SYNC);

  for (Mode mode : kAllModes) {
    g_context = fmt("%s: RMA calls in a %s epoch", kind_name(w.kind), mode_name(mode));
    // Self epoch (stream mode) or exposure-free access epoch with an empty group (host mode): the
    // erroneous calls are rejected at the call, so nothing reaches a target.
    Group self({g_rank});
    MPI_Group target_group = mode == Mode::stream ? self.g : MPI_GROUP_EMPTY;
    if (mode == Mode::stream) MT_OK(MPIX_Win_post_stream(self, w.win, s));
    MT_OK(start_rc(mode, target_group, w.win));
    // Not in the start group.
    m = MT_EXPECT_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, g_right, 0, 1, MPI_BYTE, w.win), MPI_ERR_RMA_SYNC);
    EXPECT_MSG(m, "not in the group of MPI_Win_start");
    MT_EXPECT_ERROR(MPI_Get(buf.p, 1, MPI_BYTE, g_right, 0, 1, MPI_BYTE, w.win), MPI_ERR_RMA_SYNC);
    MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 1, MPI_INT, g_right, 0, 1, MPI_INT, MPI_SUM, w.win), MPI_ERR_RMA_SYNC);
    // Not a rank of the window.
    MT_EXPECT_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, g_size, 0, 1, MPI_BYTE, w.win), MPI_ERR_RANK);
    MT_EXPECT_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, -7, 0, 1, MPI_BYTE, w.win), MPI_ERR_RANK);
    if (mode == Mode::stream) {
      // Range: the window has w.bytes bytes (disp_unit 1).
      const MPI_Aint end = static_cast<MPI_Aint>(w.bytes);
      m = MT_EXPECT_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, g_rank, end, 1, MPI_BYTE, w.win), MPI_ERR_RMA_RANGE);
      EXPECT_MSG(m, "outside rank");
      MT_EXPECT_ERROR(MPI_Put(buf.p, 10, MPI_BYTE, g_rank, end - 5, 10, MPI_BYTE, w.win), MPI_ERR_RMA_RANGE);
      MT_EXPECT_ERROR(MPI_Put(buf.p, static_cast<int>(w.bytes) + 1, MPI_BYTE, g_rank, 0, static_cast<int>(w.bytes) + 1,
                              MPI_BYTE, w.win),
                      MPI_ERR_RMA_RANGE);
      MT_EXPECT_ERROR(MPI_Get(buf.p, 8, MPI_BYTE, g_rank, end - 4, 8, MPI_BYTE, w.win), MPI_ERR_RMA_RANGE);
      MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 2, MPI_INT, g_rank, end - 4, 2, MPI_INT, MPI_SUM, w.win),
                      MPI_ERR_RMA_RANGE);
      MT_EXPECT_ERROR(MPI_Put(buf.p, 1, MPI_BYTE, g_rank, -1, 1, MPI_BYTE, w.win), MPI_ERR_DISP);
      // The last bytes are in range.
      MT_OK(MPI_Put(buf.p, 5, MPI_BYTE, g_rank, end - 5, 5, MPI_BYTE, w.win));
      // Types.
      MPI_Datatype vec;
      MPI_Type_contiguous(4, MPI_INT, &vec);
      MPI_Type_commit(&vec);
      // Derived types are supported (tests/mpi/datatypes.cpp); signatures must still match.
      m = MT_EXPECT_ERROR(MPI_Put(buf.p, 1, vec, g_rank, 0, 5, MPI_INT, w.win), MPI_ERR_TYPE);
      EXPECT_MSG(m, "signatures differ");
      EXPECT_MSG(m, "contiguous(4) of MPI_INT");
      MT_EXPECT_ERROR(MPI_Put(buf.p, 4, MPI_FLOAT, g_rank, 0, 1, vec, w.win), MPI_ERR_TYPE);
      MT_EXPECT_ERROR(MPI_Get(buf.p, 1, vec, g_rank, 0, 2, MPI_DOUBLE, w.win), MPI_ERR_TYPE);
      MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 1, vec, g_rank, 0, 4, MPI_FLOAT, MPI_SUM, w.win), MPI_ERR_TYPE);
      MPI_Type_free(&vec);
      // Constructors the library does not flatten are named.
      {
        int gsizes[1] = {8}, distribs[1] = {MPI_DISTRIBUTE_BLOCK}, dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG}, psizes[1] = {1};
        MPI_Datatype darray;
        MPI_Type_create_darray(1, 0, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &darray);
        MPI_Type_commit(&darray);
        m = MT_EXPECT_ERROR(MPI_Put(buf.p, 8, MPI_INT, g_rank, 0, 1, darray, w.win), MPI_ERR_TYPE);
        EXPECT_MSG(m, "darray");
        MPI_Type_free(&darray);
      }
      MT_EXPECT_ERROR(MPI_Put(buf.p, 3, MPI_BYTE, g_rank, 0, 1, MPI_INT, w.win), MPI_ERR_TYPE);  // 3 bytes vs 4
      MT_EXPECT_ERROR(MPI_Put(buf.p, 1, MPI_DATATYPE_NULL, g_rank, 0, 1, MPI_DATATYPE_NULL, w.win), MPI_ERR_TYPE);
      MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 2, MPI_UNSIGNED, g_rank, 0, 2, MPI_UNSIGNED, MPI_SUM, w.win), MPI_ERR_TYPE);
      MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 2, MPI_SHORT, g_rank, 0, 2, MPI_SHORT, MPI_SUM, w.win), MPI_ERR_TYPE);
      MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 2, MPI_INT, g_rank, 0, 2, MPI_FLOAT, MPI_SUM, w.win), MPI_ERR_TYPE);
      // Ops.
      m = MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 2, MPI_INT, g_rank, 0, 2, MPI_INT, MPI_PROD, w.win), MPI_ERR_OP);
      EXPECT_MSG(m, "MPI_SUM");
      MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 2, MPI_INT, g_rank, 0, 2, MPI_INT, MPI_BAND, w.win), MPI_ERR_OP);
      MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 2, MPI_DOUBLE, g_rank, 0, 2, MPI_DOUBLE, MPI_LAND, w.win), MPI_ERR_OP);
      MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 2, MPI_INT, g_rank, 0, 2, MPI_INT, MPI_NO_OP, w.win), MPI_ERR_OP);
      MPI_Op user;
      MPI_Op_create([](void *, void *, int *, MPI_Datatype *) {}, 1, &user);
      MT_EXPECT_ERROR(MPI_Accumulate(buf.p, 2, MPI_INT, g_rank, 0, 2, MPI_INT, user, w.win), MPI_ERR_OP);
      MPI_Op_free(&user);
      // Counts.
      MT_EXPECT_ERROR(MPI_Put(buf.p, -1, MPI_BYTE, g_rank, 0, -1, MPI_BYTE, w.win), MPI_ERR_COUNT);
    }
    MT_OK(complete_rc(mode, w.win, s));
    if (mode == Mode::stream) MT_OK(MPIX_Win_wait_stream(w.win, s));
    if (mode == Mode::stream) MT_SYNC(s);
  }
  ring_epoch_ok(Mode::stream, w, s, "RMA-call errors");
  ring_epoch_ok(Mode::host, w, s, "RMA-call errors");
}

void group_errors(const TestWin &w, void *s) {
  g_context = fmt("%s: groups", kind_name(w.kind));
  std::string m;
  m = MT_EXPECT_ERROR(MPIX_Win_post_stream(MPI_GROUP_NULL, w.win, s), MPI_ERR_GROUP);
  EXPECT_MSG(m, "MPI_GROUP_NULL");
  MT_EXPECT_ERROR(MPI_Win_post(MPI_GROUP_NULL, 0, w.win), MPI_ERR_GROUP);
  MT_EXPECT_ERROR(MPI_Win_start(MPI_GROUP_NULL, MPIX_MODE_STREAM, w.win), MPI_ERR_GROUP);
  MT_EXPECT_ERROR(MPI_Win_start(MPI_GROUP_NULL, 0, w.win), MPI_ERR_GROUP);
  // A window on MPI_COMM_SELF and a group naming another process of MPI_COMM_WORLD.
  TestWin solo = make_window(w.kind, 64, 1, MPI_COMM_SELF);
  Group other({g_right}), both({g_rank, g_right});
  for (Mode mode : kAllModes) {
    m = MT_EXPECT_ERROR(post_rc(mode, other, solo.win, s), MPI_ERR_GROUP);
    EXPECT_MSG(m, "not in the window's communicator");
    MT_EXPECT_ERROR(start_rc(mode, other, solo.win), MPI_ERR_GROUP);
    MT_EXPECT_ERROR(start_rc(mode, both, solo.win), MPI_ERR_GROUP);
  }
  // Nothing was opened: a self epoch on the solo window works.
  Group self({0}, MPI_COMM_SELF);
  DevBuf src(8);
  const uint64_t v = key(0x501, static_cast<uint64_t>(g_rank));
  src.upload(&v, 8);
  MT_OK(MPIX_Win_post_stream(self, solo.win, s));
  MT_OK(MPI_Win_start(self, MPIX_MODE_STREAM, solo.win));
  MT_OK(MPI_Put(src.p, 8, MPI_BYTE, 0, 8, 8, MPI_BYTE, solo.win));
  MT_OK(MPIX_Win_complete_stream(solo.win, s));
  MT_OK(MPIX_Win_wait_stream(solo.win, s));
  MT_SYNC(s);
  uint64_t got = 0;
  xdev::copy_to_host(&got, solo.base + 8, 8);
  MT_CHECKF(got == v, "self epoch on a one-rank window after group errors: got %llx, want %llx",
            static_cast<unsigned long long>(got), static_cast<unsigned long long>(v));
  free_window(solo);
  ring_epoch_ok(Mode::stream, w, s, "group errors");
  ring_epoch_ok(Mode::host, w, s, "group errors");
}

void win_null_errors(void *s) {
  g_context = "MPI_WIN_NULL";
  Group self({g_rank});
  std::string m;
  m = MT_EXPECT_ERROR(MPIX_Win_post_stream(self, MPI_WIN_NULL, s), MPI_ERR_WIN);
  EXPECT_MSG(m, "MPI_WIN_NULL");
  MT_EXPECT_ERROR(MPIX_Win_complete_stream(MPI_WIN_NULL, s), MPI_ERR_WIN);
  MT_EXPECT_ERROR(MPIX_Win_wait_stream(MPI_WIN_NULL, s), MPI_ERR_WIN);
  MT_EXPECT_ERROR(MPI_Win_start(self, MPIX_MODE_STREAM, MPI_WIN_NULL), MPI_ERR_WIN);
  // Without MPIX_MODE_STREAM the call belongs to the underlying MPI: only its class is checked.
  const int rc = MPI_Win_start(self, 0, MPI_WIN_NULL);
  MT_CHECKF(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_WIN, "MPI_Win_start(..., 0, MPI_WIN_NULL): class %s",
            class_name(error_class(rc)));
  DevBuf buf(8);
  const int prc = MPI_Put(buf.p, 1, MPI_BYTE, 0, 0, 1, MPI_BYTE, MPI_WIN_NULL);
  MT_CHECKF(prc != MPI_SUCCESS && error_class(prc) == MPI_ERR_WIN, "MPI_Put on MPI_WIN_NULL: class %s",
            class_name(error_class(prc)));
  MT_EXPECT_ERROR(MPI_Win_free(nullptr), MPI_ERR_ARG);
}

// Windows the library does not manage: info mpix_st=false on every rank, or (MPI_Win_create) on one
// rank only. MPI_Win_allocate with mpix_st=false on some ranks only is in mixed_info.
void unmanaged_errors(WinKind kind, void *s) {
  for (int who = 0; who < (kind == WinKind::create ? 2 : 1); ++who) {
    g_context = fmt("%s: window with mpix_st=false on %s", kind_name(kind), who == 0 ? "every rank" : "rank 0 only");
    MPI_Info info;
    MPI_Info_create(&info);
    if (who == 0 || g_rank == 0) MPI_Info_set(info, "mpix_st", "false");
    const size_t n = 256;
    MPI_Win win;
    uint8_t *base = nullptr;
    void *priv = nullptr;
    if (kind == WinKind::allocate) {
      MT_OK(MPI_Win_allocate(n, 1, info, MPI_COMM_WORLD, &base, &win));
    } else {
      priv = xdev::alloc(n);
      base = static_cast<uint8_t *>(priv);
      MT_OK(MPI_Win_create(base, n, 1, info, MPI_COMM_WORLD, &win));
    }
    MPI_Info_free(&info);
    MT_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    Group to_right({g_right}), from_left({g_left});
    std::string m = MT_EXPECT_ERROR(MPIX_Win_post_stream(from_left, win, s), MPI_ERR_WIN);
    EXPECT_MSG(m, "not managed");
    MT_EXPECT_ERROR(MPI_Win_start(to_right, MPIX_MODE_STREAM, win), MPI_ERR_WIN);
    MT_EXPECT_ERROR(MPIX_Win_complete_stream(win, s), MPI_ERR_WIN);
    MT_EXPECT_ERROR(MPIX_Win_wait_stream(win, s), MPI_ERR_WIN);
    // The standard calls pass through to the underlying MPI. Only over host memory: with CUDA,
    // MPI_Win_create here is over device memory, which a non-GPU-aware MPI cannot use.
    if (!kCuda || kind == WinKind::allocate) {
      std::vector<uint8_t> host_src = pattern(n, key(0x11d, static_cast<uint64_t>(who), static_cast<uint64_t>(g_rank)));
      std::memset(base, 0, n);
      MPI_Barrier(MPI_COMM_WORLD);
      MT_OK(MPI_Win_post(from_left, 0, win));
      MT_OK(MPI_Win_start(to_right, 0, win));
      MT_OK(MPI_Put(host_src.data(), static_cast<int>(n), MPI_BYTE, g_right, 0, static_cast<int>(n), MPI_BYTE, win));
      MT_OK(MPI_Win_complete(win));
      MT_OK(MPI_Win_wait(win));
      auto want = pattern(n, key(0x11d, static_cast<uint64_t>(who), static_cast<uint64_t>(g_left)));
      MT_SAME_BYTES(base, want.data(), n, "unmanaged window after an MPI epoch");
    }
    MT_OK(MPI_Win_free(&win));
    if (priv) xdev::free(priv);
  }
}

void host_stream_errors(const TestWin &w, void *s) {
#ifndef MPIX_TEST_CUDA
  g_context = fmt("%s: NULL host stream", kind_name(w.kind));
  Group self({g_rank});
  std::string m = MT_EXPECT_ERROR(MPIX_Win_post_stream(self, w.win, nullptr), MPI_ERR_ARG);
  EXPECT_MSG(m, "stream is NULL");
  // The failed post opened nothing.
  MT_EXPECT_ERROR(MPIX_Win_wait_stream(w.win, s), MPI_ERR_RMA_SYNC);
  MT_OK(MPI_Win_start(self, MPIX_MODE_STREAM, w.win));
  MT_EXPECT_ERROR(MPIX_Win_complete_stream(w.win, nullptr), MPI_ERR_ARG);
  MT_OK(MPIX_Win_post_stream(self, w.win, s));
  MT_EXPECT_ERROR(MPIX_Win_wait_stream(w.win, nullptr), MPI_ERR_ARG);
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
  MT_SYNC(s);
  MT_EXPECT_ERROR(MPIX_Host_stream_create(nullptr), MPI_ERR_ARG);
  MT_EXPECT_ERROR(MPIX_Host_stream_enqueue(
                      nullptr, [](void *) {}, nullptr),
                  MPI_ERR_ARG);
  MT_EXPECT_ERROR(MPIX_Host_stream_enqueue(static_cast<MPIX_Host_stream>(s), nullptr, nullptr), MPI_ERR_ARG);
  MT_EXPECT_ERROR(MPIX_Host_stream_synchronize(nullptr), MPI_ERR_ARG);
  MT_EXPECT_ERROR(MPIX_Host_stream_destroy(nullptr), MPI_ERR_ARG);
  ring_epoch_ok(Mode::stream, w, s, "NULL-stream errors");
#else
  (void)w;
  (void)s;
#endif
}

void sync_mix_errors(const TestWin &w, void *s) {
  g_context = fmt("%s: fence and lock epochs mixed with active-target epochs", kind_name(w.kind));
  Group self({g_rank});
  for (Mode mode : kAllModes) {
    MT_OK(start_rc(mode, MPI_GROUP_EMPTY, w.win));
    MT_EXPECT_ERROR(MPI_Win_fence(0, w.win), MPI_ERR_RMA_SYNC);
    MT_OK(complete_rc(mode, w.win, s));
    MT_OK(post_rc(mode, MPI_GROUP_EMPTY, w.win, s));
    MT_EXPECT_ERROR(MPI_Win_fence(0, w.win), MPI_ERR_RMA_SYNC);
    MT_OK(wait_rc(mode, w.win, s));
    if (mode == Mode::stream) MT_SYNC(s);
  }
  if (!kCuda) {  // CUDA windows over device memory: the underlying MPI has a stand-in window
    MT_OK(MPI_Win_lock_all(0, w.win));
    MT_EXPECT_ERROR(MPI_Win_start(MPI_GROUP_EMPTY, MPIX_MODE_STREAM, w.win), MPI_ERR_RMA_SYNC);
    MT_EXPECT_ERROR(MPI_Win_start(MPI_GROUP_EMPTY, 0, w.win), MPI_ERR_RMA_SYNC);
    MT_OK(MPI_Win_unlock_all(w.win));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  ring_epoch_ok(Mode::stream, w, s, "fence/lock mix errors");
  ring_epoch_ok(Mode::host, w, s, "fence/lock mix errors");
}

void creation_errors(WinKind kind) {
  g_context = fmt("%s: creation arguments", kind_name(kind));
  MPI_Win win = MPI_WIN_NULL;
  void *mem = xdev::alloc(64);
  uint8_t *base = nullptr;
  if (kind == WinKind::allocate) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpix_st_memory", "device");
    MT_EXPECT_ERROR(MPI_Win_allocate(-1, 1, info, MPI_COMM_WORLD, &base, &win), MPI_ERR_SIZE);
    MPI_Info_free(&info);
  } else {
    MT_EXPECT_ERROR(MPI_Win_create(mem, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_SIZE);
    MT_EXPECT_ERROR(MPI_Win_create(mem, 64, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
  }
  xdev::free(mem);
}

// MPI_Win_free with an epoch open on one rank: every rank's MPI_Win_free fails (it is collective),
// the window stays valid, and after the epoch is closed the window frees.
void free_errors(WinKind kind, void *s) {
  for (int which = 0; which < 4; ++which) {
    const Mode mode = which % 2 ? Mode::host : Mode::stream;
    const bool access = which < 2;
    g_context = fmt("%s: MPI_Win_free with %s %s epoch open on rank 0", kind_name(kind), mode_name(mode),
                    access ? "an access" : "an exposure");
    TestWin w = make_window(kind, 64);
    if (g_rank == 0) {
      if (access)
        MT_OK(start_rc(mode, MPI_GROUP_EMPTY, w.win));
      else
        MT_OK(post_rc(mode, MPI_GROUP_EMPTY, w.win, s));
    }
    MPI_Win handle = w.win;
    std::string m = MT_EXPECT_ERROR(MPI_Win_free(&w.win), MPI_ERR_RMA_SYNC);
    if (g_rank == 0) EXPECT_MSG(m, access ? "access epoch" : "exposure epoch");
    MT_CHECKF(w.win == handle, "a failed MPI_Win_free changed the handle");
    if (g_rank == 0) {
      if (access)
        MT_OK(complete_rc(mode, w.win, s));
      else
        MT_OK(wait_rc(mode, w.win, s));
      if (mode == Mode::stream) MT_SYNC(s);
    }
    ring_epoch_ok(Mode::stream, w, s, "a failed MPI_Win_free");
    free_window(w);
  }
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "errors");
  g_right = (g_rank + 1) % g_size;
  g_left = (g_rank + g_size - 1) % g_size;
  {
    void *s = stream_create();
    win_null_errors(s);
    for (WinKind kind : kAllKinds) {
      TestWin w = make_window(kind, 1000);
      epoch_order_errors(w, s);
      rma_errors(w, s);
      group_errors(w, s);
      host_stream_errors(w, s);
      sync_mix_errors(w, s);
      free_window(w);
      unmanaged_errors(kind, s);
      creation_errors(kind);
      free_errors(kind, s);
    }
    stream_destroy(s);
  }
  return finish();
}
