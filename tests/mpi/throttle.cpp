// Triggered-operation throttling on epochs between (virtual) nodes: a ring of 8-byte puts, 10,000
// stream-triggered epochs enqueued with one synchronisation at the end (MPIX_ST_VNODE_SIZE makes
// the neighbours remote; MPIX_ST_THROTTLE and MPIX_ST_TRIGGERED_OPS_MAX set the budget).
//   throttle complete   every epoch completes with the right data (static, adaptive)
//   throttle exhausted  app mode: some call returns the resource error, naming the variable; after
//                       a stream synchronisation the same call succeeds and the run completes
//   throttle refused    the window cannot be created, and the error names `argv[2]`
// `throttle complete N` / `throttle exhausted N` run N epochs instead of 10,000.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "test_common.h"

using namespace mt;

namespace {

constexpr int kSlots = 64;  // the window holds the last 64 epochs' values
int g_epochs = 10000;       // argv[2] of the complete and exhausted runs may set fewer

uint64_t value(int epoch, int rank) { return key(0x7f, static_cast<uint64_t>(epoch), static_cast<uint64_t>(rank)); }

// Calls `call`; in app mode a resource error is answered by synchronising the stream and calling
// again, as an application using MPIX_ST_THROTTLE=app does. Counts the errors seen.
template <typename Call>
void call_throttled(Call call, void *s, bool app, int *exhausted, const char *what) {
  int rc = call();
  if (rc != MPI_SUCCESS && app) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    MT_CHECKF(cls == MPIX_St_error_class_resource(), "%s: error class %d, want the resource class", what, cls);
    MT_CHECKF(contains(mpix_test::error_text(rc), "MPIX_ST_TRIGGERED_OPS_MAX"),
              "%s: the message should name MPIX_ST_TRIGGERED_OPS_MAX: %s", what, mpix_test::error_text(rc).c_str());
    ++*exhausted;
    MT_SYNC(s);
    rc = call();
  }
  MT_OK(rc);
}

void run_epochs(bool app, void *s) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group to_right({right}), from_left({left});
  TestWin w = make_window(WinKind::allocate, kSlots * sizeof(uint64_t), sizeof(uint64_t));  // slot units
  // A source word per epoch: the data of every epoch is distinct, and none is rewritten.
  std::vector<uint64_t> host(g_epochs);
  for (int e = 0; e < g_epochs; ++e) host[e] = value(e, g_rank);
  DevBuf src(g_epochs * sizeof(uint64_t));
  src.upload(std::vector<uint8_t>(reinterpret_cast<uint8_t *>(host.data()),
                                  reinterpret_cast<uint8_t *>(host.data() + g_epochs)));
  int exhausted = 0;
  for (int e = 0; e < g_epochs && g_failures == 0; ++e) {
    g_context = fmt("epoch %d", e);
    call_throttled([&] { return MPIX_Win_post_stream(from_left, w.win, s); }, s, app, &exhausted, "post");
    MT_OK(MPI_Win_start(to_right, MPIX_MODE_STREAM, w.win));
    MT_OK(MPI_Put(src.p + e * sizeof(uint64_t), 1, MPI_UINT64_T, right, e % kSlots, 1, MPI_UINT64_T, w.win));
    call_throttled([&] { return MPIX_Win_complete_stream(w.win, s); }, s, app, &exhausted, "complete");
    MT_OK(MPIX_Win_wait_stream(w.win, s));
  }
  MT_SYNC(s);
  g_context = "after all epochs";
  std::vector<uint8_t> got = read_device(w.base, kSlots * sizeof(uint64_t));
  for (int j = 0; j < kSlots; ++j) {
    const int last = g_epochs - kSlots + j;  // the last epoch that wrote slot `last % kSlots`
    uint64_t v;
    std::memcpy(&v, got.data() + (last % kSlots) * sizeof(uint64_t), sizeof v);
    MT_CHECKF(v == value(last, left), "slot %d holds %llx, want epoch %d's %llx", last % kSlots,
              (unsigned long long)v, last, (unsigned long long)value(last, left));
  }
  if (app) MT_CHECKF(exhausted > 0, "app mode with a small budget never reported exhaustion");
  else MT_CHECKF(exhausted == 0, "a blocking mode reported exhaustion %d times", exhausted);
  free_window(w);
}

void run_refused(const std::string &named) {
  g_context = "window creation refused";
  uint8_t *base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  const int rc = MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  MT_CHECKF(rc != MPI_SUCCESS, "MPI_Win_allocate succeeded, although the settings leave no usable inter-node transport");
  MT_CHECKF(contains(mpix_test::error_text(rc), named), "the error should name %s: %s", named.c_str(),
            mpix_test::error_text(rc).c_str());
  if (rc == MPI_SUCCESS) MPI_Win_free(&win);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "throttle");
  const std::string what = argc > 1 ? argv[1] : "complete";
  if (what != "refused" && argc > 2) g_epochs = std::max(kSlots, std::atoi(argv[2]));
  {
    void *s = stream_create();
    const double t0 = now_s();
    if (what == "refused") run_refused(argc > 2 ? argv[2] : "");
    else run_epochs(what == "exhausted", s);
    if (g_rank == 0) note("throttle %s: %.2f s", what.c_str(), now_s() - t0);
    stream_destroy(s);
  }
  return finish();
}
