// Shared by the misuse suites (misuse_*.cpp): every case is a call with bad arguments or in a bad
// state that must fail with a given MPI error class and a message naming what was wrong; the
// suites count their cases and print the count.
#pragma once
#include "test_common.h"

namespace mu {

inline long g_cases = 0;

// One misuse case: `rc` must be an error of class `cls` (see mt::expect_error_at) whose message
// contains `part`. Returns the message.
inline std::string expect_at(int rc, int cls, const char *part, const char *what, const char *file, int line) {
  ++g_cases;
  const std::string m = mt::expect_error_at(rc, cls, what, file, line);
  if (rc != MPI_SUCCESS && !mt::contains(m, part))
    mt::report(file, line, "%s: message \"%s\" does not mention \"%s\"", what, m.c_str(), part);
  return m;
}
#define MU_ERROR(call, cls, part) ::mu::expect_at((call), (cls), (part), #call, __FILE__, __LINE__)

// mt::finish() after printing how many cases rank 0 ran (and the most any rank ran).
inline int finish(const char *suite) {
  long most = 0;
  MPI_Allreduce(&g_cases, &most, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  mt::note("%s: %ld misuse cases on rank 0 (at most %ld on one rank)", suite, g_cases, most);
  return mt::finish();
}

// A correct PSCW ring epoch in each mode, data checked: the window works after the cases before.
inline void window_still_works(mt::TestWin &w, void *s, uint64_t tag) {
  for (mt::Mode mode : mt::kAllModes) mt::pscw_ring(mode, w, s, tag + static_cast<uint64_t>(mode), 0);
}

}  // namespace mu
