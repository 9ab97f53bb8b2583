// Epochs of different kinds on one managed window (doc/guide/rma-epochs.md, "Fence and lock epochs
// beside stream epochs"), host backend, both window kinds:
//  - MPI_Win_fence, MPI_Win_lock and MPI_Win_lock_all after stream epochs whose closing calls were
//    made but whose stream work is still queued (a task on the stream holds it back): they wait
//    for that work, so the stream epoch's puts land before the fence's or lock's puts to the same
//    bytes, and its data is in the window when the fence returns; after a synchronised stream
//    they simply work;
//  - inside an open active-target epoch of either mode (access, exposure, both): fence, lock,
//    lock_all, unlock, unlock_all, the flushes and MPI_Win_sync are refused with
//    MPI_ERR_RMA_SYNC; MPI_Fetch_and_op, MPI_Compare_and_swap and MPI_Get_accumulate with
//    MPI_ERR_UNSUPPORTED_OPERATION; MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate with
//    MPI_ERR_RMA_SYNC; each message names the call and what to use; the epoch then completes
//    with its data byte for byte (nothing was lost);
//  - inside a lock epoch: MPI_Win_start and both posts are refused (MPI_ERR_RMA_SYNC), while the
//    lock epoch's own calls (flush, sync, MPI_Fetch_and_op) work and fetch what MPI says;
//  - a stream-opened epoch closed by the host-driven call (and the reverse), and MPI_Win_test of
//    a stream exposure epoch: MPI_ERR_RMA_SYNC naming the closing call to use;
//  - MPI-4 large-count MPI_Put_c / MPI_Get_c in a stream epoch are recorded like MPI_Put / MPI_Get.
// --watchdog (run with a short MPIX_ST_WATCHDOG_MS): a fence whose window's queued stream work is
// held back past the watchdog reports MPI_ERR_OTHER naming the call and the setting instead of
// hanging; once the stream runs, the fence works.
#include <atomic>
#include <thread>

#include "test_common.h"

using namespace mt;

namespace {

constexpr size_t kBytes = 4096;
int g_right = 0, g_left = 0;
long g_cases = 0;

// A refused call: error class `cls`, a message naming `call` and containing `part`.
void expect_refusal_at(int rc, int cls, const char *call, const char *part, const char *what, const char *file,
                       int line) {
  ++g_cases;
  const std::string m = expect_error_at(rc, cls, what, file, line);
  if (rc == MPI_SUCCESS) return;
  if (!contains(m, call)) report(file, line, "%s: message \"%s\" does not name %s", what, m.c_str(), call);
  if (!contains(m, part)) report(file, line, "%s: message \"%s\" does not mention \"%s\"", what, m.c_str(), part);
  // Open MPI's MPI_MAX_ERROR_STRING is 256: a longer message would lose its end there.
  if (m.size() > 255) report(file, line, "%s: message of %zu characters (more than 255): \"%s\"", what, m.size(), m.c_str());
}
#define REFUSED(call_expr, cls, call, part) expect_refusal_at((call_expr), (cls), (call), (part), #call_expr, __FILE__, __LINE__)

// Holds the stream back for `seconds` (a task on it), so what is enqueued after it is still
// queued when the host goes on.
void hold_stream(void *s, double seconds) {
  stream_call(s, [seconds] { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); });
}

// Origin buffers stay until their epochs have run (data moves at the epoch's completion, or when
// the stream runs it): kept here, dropped at the end of each part.
std::vector<DevBuf> g_sources;

void put_bytes(TestWin &w, const std::vector<uint8_t> &data, size_t off) {
  g_sources.emplace_back(data.size());
  DevBuf &src = g_sources.back();
  src.upload(data);
  MT_OK(MPI_Put(src.p, static_cast<int>(data.size()), MPI_BYTE, g_right, static_cast<MPI_Aint>(off),
                static_cast<int>(data.size()), MPI_BYTE, w.win));
}

std::vector<uint8_t> data_of(uint64_t tag, int rank) { return pattern(64, key(tag, static_cast<uint64_t>(rank))); }

// One stream epoch in the ring, closed on the host but held back on the stream: 64 bytes at 0
// and 64 bytes at 64.
void queued_stream_epoch(TestWin &w, void *s, uint64_t tag) {
  Group to({g_right}), from({g_left});
  hold_stream(s, 0.3);
  MT_OK(MPIX_Win_post_stream(from, w.win, s));
  MT_OK(MPI_Win_start(to, MPIX_MODE_STREAM, w.win));
  for (size_t off : {size_t(0), size_t(64)}) put_bytes(w, data_of(tag + off, g_rank), off);
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
}

void check_bytes(const TestWin &w, size_t off, const std::vector<uint8_t> &want, const std::string &what) {
  auto got = read_device(w.base + off, want.size());
  MT_SAME_BYTES(got.data(), want.data(), want.size(), what);
}

// Fence, lock and lock_all after queued stream epochs: the MPI's epoch comes after them.
void after_queued_epochs(WinKind kind, void *s) {
  TestWin w = make_window(kind, kBytes);

  g_context = fmt("%s: MPI_Win_fence after a queued stream epoch", kind_name(kind));
  queued_stream_epoch(w, s, 0x100);
  const double t0 = now_s();
  MT_OK(MPI_Win_fence(0, w.win));
  const double waited = now_s() - t0;
  // The fence waited for the window's stream work: the stream epoch's data is here already.
  check_bytes(w, 64, data_of(0x100 + 64, g_left), "stream put, read right after the fence");
  put_bytes(w, data_of(0x200, g_rank), 0);  // over the stream put's bytes
  MT_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
  MT_SYNC(s);
  check_bytes(w, 0, data_of(0x200, g_left), "fence put after the stream put to the same bytes");
  note("  %s: fence waited %.3f s for the window's queued stream epoch", kind_name(kind), waited);

  g_context = fmt("%s: MPI_Win_lock_all after a queued stream epoch", kind_name(kind));
  queued_stream_epoch(w, s, 0x300);
  MT_OK(MPI_Win_lock_all(0, w.win));
  put_bytes(w, data_of(0x400, g_rank), 0);
  MT_OK(MPI_Win_unlock_all(w.win));
  MT_SYNC(s);
  MPI_Barrier(MPI_COMM_WORLD);
  check_bytes(w, 0, data_of(0x400, g_left), "lock_all put after the stream put to the same bytes");
  check_bytes(w, 64, data_of(0x300 + 64, g_left), "stream put before lock_all");

  g_context = fmt("%s: MPI_Win_lock after a queued stream epoch", kind_name(kind));
  queued_stream_epoch(w, s, 0x500);
  MT_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, g_right, 0, w.win));
  put_bytes(w, data_of(0x600, g_rank), 0);
  MT_OK(MPI_Win_unlock(g_right, w.win));
  MT_SYNC(s);
  MPI_Barrier(MPI_COMM_WORLD);
  check_bytes(w, 0, data_of(0x600, g_left), "lock put after the stream put to the same bytes");

  // After a synchronised stream: nothing to wait for.
  g_context = fmt("%s: MPI_Win_fence after a synchronised stream epoch", kind_name(kind));
  queued_stream_epoch(w, s, 0x700);
  MT_SYNC(s);
  MPI_Barrier(MPI_COMM_WORLD);
  MT_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win));
  put_bytes(w, data_of(0x800, g_rank), 0);
  MT_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
  check_bytes(w, 0, data_of(0x800, g_left), "fence put after a synchronised stream epoch");
  check_bytes(w, 64, data_of(0x700 + 64, g_left), "synchronised stream put");
  g_sources.clear();
  free_window(w);
}

const char *closer(Mode mode, bool access) {
  if (mode == Mode::stream) return access ? "MPIX_Win_complete_stream" : "MPIX_Win_wait_stream";
  return access ? "MPI_Win_complete" : "MPI_Win_wait";
}

// The MPI's synchronisation calls of fence and lock epochs, refused while this rank has an
// active-target epoch open (`closing`: the call its message must name).
void sync_calls_refused(TestWin &w, const char *closing) {
  REFUSED(MPI_Win_fence(0, w.win), MPI_ERR_RMA_SYNC, "MPI_Win_fence", closing);
  REFUSED(MPI_Win_lock(MPI_LOCK_SHARED, g_right, 0, w.win), MPI_ERR_RMA_SYNC, "MPI_Win_lock", closing);
  REFUSED(MPI_Win_lock_all(0, w.win), MPI_ERR_RMA_SYNC, "MPI_Win_lock_all", closing);
  REFUSED(MPI_Win_unlock(g_right, w.win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock", "lock epochs");
  REFUSED(MPI_Win_unlock_all(w.win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all", "lock epochs");
  REFUSED(MPI_Win_flush(g_right, w.win), MPI_ERR_RMA_SYNC, "MPI_Win_flush", closing);
  REFUSED(MPI_Win_flush_all(w.win), MPI_ERR_RMA_SYNC, "MPI_Win_flush_all", closing);
  REFUSED(MPI_Win_flush_local(g_right, w.win), MPI_ERR_RMA_SYNC, "MPI_Win_flush_local", closing);
  REFUSED(MPI_Win_flush_local_all(w.win), MPI_ERR_RMA_SYNC, "MPI_Win_flush_local_all", closing);
  REFUSED(MPI_Win_sync(w.win), MPI_ERR_RMA_SYNC, "MPI_Win_sync", closing);
}

// RMA calls the library does not record, inside its access epoch.
void unrecorded_refused(TestWin &w) {
  int one = 1, result = 0, compare = 0, out[4] = {}, in[4] = {1, 2, 3, 4};
  MPI_Request req = MPI_REQUEST_NULL;
  const char *use = "MPI_Put";
  REFUSED(MPI_Fetch_and_op(&one, &result, MPI_INT, g_right, 0, MPI_SUM, w.win), MPI_ERR_UNSUPPORTED_OPERATION,
          "MPI_Fetch_and_op", use);
  REFUSED(MPI_Compare_and_swap(&one, &compare, &result, MPI_INT, g_right, 0, w.win), MPI_ERR_UNSUPPORTED_OPERATION,
          "MPI_Compare_and_swap", use);
  REFUSED(MPI_Get_accumulate(in, 4, MPI_INT, out, 4, MPI_INT, g_right, 0, 4, MPI_INT, MPI_SUM, w.win),
          MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Get_accumulate", use);
  REFUSED(MPI_Rput(in, 4, MPI_INT, g_right, 0, 4, MPI_INT, w.win, &req), MPI_ERR_RMA_SYNC, "MPI_Rput", "request-based");
  REFUSED(MPI_Rget(out, 4, MPI_INT, g_right, 0, 4, MPI_INT, w.win, &req), MPI_ERR_RMA_SYNC, "MPI_Rget", "request-based");
  REFUSED(MPI_Raccumulate(in, 4, MPI_INT, g_right, 0, 4, MPI_INT, MPI_SUM, w.win, &req), MPI_ERR_RMA_SYNC,
          "MPI_Raccumulate", "request-based");
  REFUSED(MPI_Rget_accumulate(in, 4, MPI_INT, out, 4, MPI_INT, g_right, 0, 4, MPI_INT, MPI_SUM, w.win, &req),
          MPI_ERR_RMA_SYNC, "MPI_Rget_accumulate", "request-based");
  MT_CHECKF(req == MPI_REQUEST_NULL, "a refused request-based call set a request");
}

// Inside open epochs of each mode: the refusals, then the epoch completes with its data.
void inside_open_epochs(WinKind kind, void *s, bool mpi_windows) {
  TestWin w = make_window(kind, kBytes);
  Group to({g_right}), from({g_left});
  for (Mode mode : kAllModes) {
    const uint64_t tag = 0x1000 + static_cast<uint64_t>(mode) * 0x100 + static_cast<uint64_t>(kind) * 0x10;
    g_context = fmt("%s: %s exposure epoch open", kind_name(kind), mode_name(mode));
    MT_POST(mode, from, w.win, s);
    sync_calls_refused(w, closer(mode, false));
    g_context = fmt("%s: %s access and exposure epochs open", kind_name(kind), mode_name(mode));
    MT_START(mode, to, w.win);
    put_bytes(w, data_of(tag, g_rank), 0);
    sync_calls_refused(w, closer(mode, true));
    unrecorded_refused(w);
    put_bytes(w, data_of(tag + 1, g_rank), 64);
    g_context = fmt("%s: %s exposure epoch open, access closed", kind_name(kind), mode_name(mode));
    MT_COMPLETE(mode, w.win, s);
    sync_calls_refused(w, closer(mode, false));
    MT_WAIT(mode, w.win, s);
    if (mode == Mode::stream) MT_SYNC(s);
    g_context = fmt("%s: %s epoch after the refusals", kind_name(kind), mode_name(mode));
    check_bytes(w, 0, data_of(tag, g_left), "first put of the epoch");
    check_bytes(w, 64, data_of(tag + 1, g_left), "put after the refused calls");
  }
  // The window works with fence epochs afterwards (nothing was left half-open).
  g_context = fmt("%s: fence epoch after the refusals", kind_name(kind));
  MPI_Barrier(MPI_COMM_WORLD);
  if (!mpi_windows) {
    expect_stand_in_refusal(w, g_sources.emplace_back(64).p, g_right);
    g_sources.clear();
    free_window(w);
    return;
  }
  MT_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win));
  put_bytes(w, data_of(0x1900, g_rank), 128);
  MT_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
  check_bytes(w, 128, data_of(0x1900, g_left), "fence epoch after the refusals");
  g_sources.clear();
  free_window(w);
}

// Active-target epochs do not begin inside a lock epoch; the lock epoch's own calls work.
void inside_lock_epoch(WinKind kind, void *s) {
  TestWin w = make_window(kind, kBytes);
  Group to({g_right}), from({g_left});
  g_context = fmt("%s: inside a lock_all epoch", kind_name(kind));
  MPI_Barrier(MPI_COMM_WORLD);
  MT_OK(MPI_Win_lock_all(0, w.win));
  REFUSED(MPI_Win_start(to, MPIX_MODE_STREAM, w.win), MPI_ERR_RMA_SYNC, "MPI_Win_start", "MPI_Win_unlock");
  REFUSED(MPI_Win_start(to, 0, w.win), MPI_ERR_RMA_SYNC, "MPI_Win_start", "MPI_Win_unlock");
  REFUSED(MPIX_Win_post_stream(from, w.win, s), MPI_ERR_RMA_SYNC, "MPIX_Win_post_stream", "MPI_Win_unlock");
  REFUSED(MPI_Win_post(from, 0, w.win), MPI_ERR_RMA_SYNC, "MPI_Win_post", "MPI_Win_unlock");
  // The lock epoch's calls are the MPI's.
  int one = 1, fetched = -1;
  MT_OK(MPI_Fetch_and_op(&one, &fetched, MPI_INT, g_right, 1024, MPI_SUM, w.win));
  MT_OK(MPI_Win_flush(g_right, w.win));
  MT_OK(MPI_Win_flush_all(w.win));
  MT_OK(MPI_Win_flush_local_all(w.win));
  MT_OK(MPI_Win_sync(w.win));
  MT_OK(MPI_Win_unlock_all(w.win));
  MT_CHECKF(fetched == 0, "MPI_Fetch_and_op in a lock epoch fetched %d, want 0", fetched);
  MPI_Barrier(MPI_COMM_WORLD);
  int landed = 0;
  std::memcpy(&landed, read_device(w.base + 1024, 4).data(), 4);
  MT_CHECKF(landed == 1, "MPI_Fetch_and_op in a lock epoch left %d, want 1", landed);
  g_context = fmt("%s: active-target epochs after the lock epoch", kind_name(kind));
  pscw_ring(Mode::stream, w, s, 0x2100 + static_cast<uint64_t>(kind), 256);
  pscw_ring(Mode::host, w, s, 0x2200 + static_cast<uint64_t>(kind), 320);
  g_sources.clear();
  free_window(w);
}

// Closing calls of the other form, and MPI_Win_test of a stream exposure epoch.
void closing_forms(WinKind kind, void *s) {
  TestWin w = make_window(kind, kBytes);
  Group to({g_right}), from({g_left});
  g_context = fmt("%s: closing calls of the other form", kind_name(kind));
  MT_OK(MPIX_Win_post_stream(from, w.win, s));
  REFUSED(MPI_Win_wait(w.win), MPI_ERR_RMA_SYNC, "MPI_Win_wait", "MPIX_Win_wait_stream");
  int flag = 1;
  REFUSED(MPI_Win_test(w.win, &flag), MPI_ERR_RMA_SYNC, "MPI_Win_test", "MPIX_Win_wait_stream");
  MT_CHECKF(flag == 0, "a refused MPI_Win_test set flag %d", flag);
  MT_OK(MPI_Win_start(to, MPIX_MODE_STREAM, w.win));
  put_bytes(w, data_of(0x3100, g_rank), 0);
  REFUSED(MPI_Win_complete(w.win), MPI_ERR_RMA_SYNC, "MPI_Win_complete", "MPIX_Win_complete_stream");
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
  MT_SYNC(s);
  check_bytes(w, 0, data_of(0x3100, g_left), "stream epoch after refused host-driven closes");
  MT_OK(MPI_Win_post(from, 0, w.win));
  REFUSED(MPIX_Win_wait_stream(w.win, s), MPI_ERR_RMA_SYNC, "MPIX_Win_wait_stream", "MPI_Win_wait");
  MT_OK(MPI_Win_start(to, 0, w.win));
  put_bytes(w, data_of(0x3200, g_rank), 64);
  REFUSED(MPIX_Win_complete_stream(w.win, s), MPI_ERR_RMA_SYNC, "MPIX_Win_complete_stream", "MPI_Win_complete");
  MT_OK(MPI_Win_complete(w.win));
  MT_OK(MPI_Win_wait(w.win));
  check_bytes(w, 64, data_of(0x3200, g_left), "host-driven epoch after refused stream closes");
  g_sources.clear();
  free_window(w);
}

#if MPI_VERSION >= 4
// MPI-4 large-count calls in a stream epoch are recorded as the int forms are.
void large_count_forms(void *s) {
  TestWin w = make_window(WinKind::allocate, kBytes);
  Group to({g_right}), from({g_left});
  g_context = "MPI_Put_c and MPI_Get_c in a stream epoch";
  DevBuf src(64), got(64);
  src.upload(data_of(0x4100, g_rank));
  MT_OK(MPIX_Win_post_stream(from, w.win, s));
  MT_OK(MPI_Win_start(to, MPIX_MODE_STREAM, w.win));
  MT_OK(MPI_Put_c(src.p, 64, MPI_BYTE, g_right, 512, 64, MPI_BYTE, w.win));
  MT_OK(MPI_Get_c(got.p, 64, MPI_BYTE, g_right, 0, 64, MPI_BYTE, w.win));
  REFUSED(MPI_Rput_c(src.p, 8, MPI_BYTE, g_right, 0, 8, MPI_BYTE, w.win, nullptr), MPI_ERR_RMA_SYNC, "MPI_Rput_c",
          "request-based");
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
  MT_SYNC(s);
  MPI_Barrier(MPI_COMM_WORLD);
  check_bytes(w, 512, data_of(0x4100, g_left), "MPI_Put_c");
  auto g = got.download();
  auto want = std::vector<uint8_t>(64, 0);
  MT_SAME_BYTES(g.data(), want.data(), 64, "MPI_Get_c of the right neighbour's zeros");
  g_sources.clear();
  free_window(w);
}
#endif

// --watchdog: a fence whose window's stream work is held back past MPIX_ST_WATCHDOG_MS.
void fence_past_watchdog(void *s) {
  TestWin w = make_window(WinKind::allocate, kBytes);
  Group to({g_right}), from({g_left});
  g_context = "MPI_Win_fence while the window's stream work is held back";
  std::atomic<bool> release{false};
  stream_call(s, [&release] {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  DevBuf src(64);
  src.upload(data_of(0x5100, g_rank));
  MT_OK(MPIX_Win_post_stream(from, w.win, s));
  MT_OK(MPI_Win_start(to, MPIX_MODE_STREAM, w.win));
  MT_OK(MPI_Put(src.p, 64, MPI_BYTE, g_right, 0, 64, MPI_BYTE, w.win));
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
  const double t0 = now_s();
  REFUSED(MPI_Win_fence(0, w.win), MPI_ERR_OTHER, "MPI_Win_fence", "MPIX_ST_WATCHDOG_MS");
  note("  the fence reported after %.2f s", now_s() - t0);
  release = true;
  MT_SYNC(s);
  MPI_Barrier(MPI_COMM_WORLD);
  check_bytes(w, 0, data_of(0x5100, g_left), "stream epoch run after the release");
  MT_OK(MPI_Win_fence(0, w.win));
  put_bytes(w, data_of(0x5200, g_rank), 0);
  MT_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
  check_bytes(w, 0, data_of(0x5200, g_left), "fence epoch after the release");
  g_sources.clear();
  free_window(w);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "epoch_mixing");
  g_right = (g_rank + 1) % g_size;
  g_left = (g_rank + g_size - 1) % g_size;
  bool watchdog = false;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--watchdog") == 0) watchdog = true;
  void *s = stream_create();
  // Where the MPI cannot create windows, the library's windows have a zero-size stand-in: the
  // MPI's fence and lock epochs on them carry no data, and only the refusals are checked.
  const bool mpi_windows = mpi_creates_windows();
  if (watchdog) {
    if (mpi_windows) fence_past_watchdog(s);
  } else {
    for (WinKind kind : kAllKinds) {
      if (mpi_windows) after_queued_epochs(kind, s);
      inside_open_epochs(kind, s, mpi_windows);
      if (mpi_windows) inside_lock_epoch(kind, s);
      closing_forms(kind, s);
    }
#if MPI_VERSION >= 4
    large_count_forms(s);
#endif
  }
  stream_destroy(s);
  long most = 0;
  MPI_Allreduce(&g_cases, &most, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  note("epoch_mixing: %ld refused calls checked on rank 0 (at most %ld on one rank)", g_cases, most);
  return finish();
}
