// Error codes: distinct errors of one class get distinct codes, and a code a program kept still
// reads its own message after later errors of that class (issue: the second error's message
// replaced the first's). The same message gets the same code again; a class holds at most 64
// codes, each keeping its message until 64 other messages of the class came after it.
#include <set>

#include "test_common.h"

using namespace mt;

namespace {

constexpr int kRing = 64;  // src/api/errors.cpp: kCodesPerClass

// An MPI_Put to a rank outside the window: MPI_ERR_RANK naming that rank.
int put_to(TestWin &w, const DevBuf &buf, int target) {
  return MPI_Put(buf.p, 8, MPI_BYTE, target, 0, 8, MPI_BYTE, w.win);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "error_codes");
  for (WinKind kind : kAllKinds) {
    g_context = kind_name(kind);
    TestWin w = make_window(kind, 64);
    DevBuf buf(8);
    Group self({g_rank});
    MT_OK(MPI_Win_post(self, 0, w.win));
    MT_OK(MPI_Win_start(self, 0, w.win));

    const int first = put_to(w, buf, 1000);
    const int second = put_to(w, buf, 1001);
    MT_CHECKF(error_class(first) == MPI_ERR_RANK && error_class(second) == MPI_ERR_RANK, "classes %s, %s",
              class_name(error_class(first)), class_name(error_class(second)));
    MT_CHECKF(first != second, "two errors of one class with different messages share code %d", first);
    MT_CHECKF(contains(error_string(first), "target rank 1000"), "the first code's message after a second error: %s",
              error_string(first).c_str());
    MT_CHECKF(contains(error_string(second), "target rank 1001"), "the second code's message: %s",
              error_string(second).c_str());
    MT_CHECKF(put_to(w, buf, 1000) == first, "the same message again got another code");

    // More distinct messages than the ring holds: codes are reused, the last kRing keep theirs.
    std::set<int> codes;
    std::vector<int> last;
    for (int k = 0; k < 3 * kRing; ++k) {
      const int rc = put_to(w, buf, 2000 + k);
      codes.insert(rc);
      if (k >= 2 * kRing) last.push_back(rc);
    }
    MT_CHECKF(codes.size() <= static_cast<size_t>(kRing), "%zu codes for one class (at most %d)", codes.size(), kRing);
    for (int k = 0; k < kRing; ++k) {
      const std::string want = fmt("target rank %d ", 2000 + 2 * kRing + k);
      MT_CHECKF(contains(error_string(last[static_cast<size_t>(k)]), want), "code %d: \"%s\", want \"%s\"",
                last[static_cast<size_t>(k)], error_string(last[static_cast<size_t>(k)]).c_str(), want.c_str());
    }
    // Another class's codes are its own.
    const int range = MPI_Put(buf.p, 8, MPI_BYTE, g_rank, 1 << 20, 8, MPI_BYTE, w.win);
    MT_CHECKF(error_class(range) == MPI_ERR_RMA_RANGE && codes.count(range) == 0, "range error: class %s, code %d",
              class_name(error_class(range)), range);

    MT_OK(MPI_Win_complete(w.win));
    MT_OK(MPI_Win_wait(w.win));
    free_window(w);
  }
  return finish();
}
