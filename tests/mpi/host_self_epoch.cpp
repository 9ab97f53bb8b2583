// Host-driven active-target epochs in which a rank is its own target (its start and post groups
// contain itself), alone and with a neighbour, both window kinds, windows on MPI_COMM_WORLD and on
// MPI_COMM_SELF:
//   MPI_Win_post({me}); MPI_Win_start({me}); MPI_Put(me); MPI_Win_complete; MPI_Win_wait.
// Valid MPI; MPI_Win_complete must not wait for MPI_Win_wait of the same process. Run with a short
// MPIX_ST_WATCHDOG_MS, so that a deadlock becomes an error instead of a hang.
#include "test_common.h"

using namespace mt;

namespace {

// Returns false when the epoch failed (then the window cannot be freed cleanly).
bool run(WinKind kind, bool with_neighbour, MPI_Comm comm) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  g_context = fmt("host-driven self epoch%s, %s, window on %s", with_neighbour ? " with a neighbour" : "",
                  kind_name(kind), comm == MPI_COMM_SELF ? "MPI_COMM_SELF" : "MPI_COMM_WORLD");
  TestWin w = make_window(kind, 64, 1, comm);
  std::vector<int> targets = {me}, origins = {me};
  if (with_neighbour && right != me) targets.push_back(right), origins.push_back(left);
  Group tg(targets, comm), og(origins, comm);
  DevBuf src(16);
  src.upload(pattern(16, key(0x5e1f, static_cast<uint64_t>(g_rank))));
  MT_OK(MPI_Win_post(og, 0, w.win));
  MT_OK(MPI_Win_start(tg, 0, w.win));
  MT_OK(MPI_Put(src.p, 8, MPI_BYTE, me, 0, 8, MPI_BYTE, w.win));
  if (with_neighbour && right != me) MT_OK(MPI_Put(src.p + 8, 8, MPI_BYTE, right, 8, 8, MPI_BYTE, w.win));
  const double t0 = now_s();
  int rc = MPI_Win_complete(w.win);
  if (rc != MPI_SUCCESS) {
    report(__FILE__, __LINE__,
           "MPI_Win_complete of a host-driven epoch whose target group holds the calling rank failed after %.1f s: "
           "%s (%s)",
           now_s() - t0, class_name(error_class(rc)), error_string(rc).c_str());
    return false;  // the epoch stays open: the window is left as is
  }
  rc = MPI_Win_wait(w.win);
  if (rc != MPI_SUCCESS) {
    report(__FILE__, __LINE__, "MPI_Win_wait failed: %s", error_string(rc).c_str());
    return false;
  }
  auto got = read_device(w.base, 16);
  auto mine = pattern(16, key(0x5e1f, static_cast<uint64_t>(g_rank)));
  auto theirs = pattern(16, key(0x5e1f, static_cast<uint64_t>((g_rank + g_size - 1) % g_size)));
  MT_SAME_BYTES(got.data(), mine.data(), 8, "bytes the rank put into its own window");
  if (with_neighbour && right != me)
    MT_SAME_BYTES(got.data() + 8, theirs.data() + 8, 8, "bytes from the left neighbour");
  free_window(w);
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "host_self_epoch");
  bool ok = true;
  for (MPI_Comm comm : {MPI_COMM_WORLD, MPI_COMM_SELF})
    for (WinKind kind : kAllKinds)
      for (bool nb : {false, true}) {
        int mine = ok ? 1 : 0, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (!all) break;  // a window is stuck: later collective window calls could not match
        ok = run(kind, nb, comm) && ok;
      }
  return finish();
}
