// MPIX_ST_BACKEND naming a backend that cannot be had (one MPI rank): the host backend stands in
// and the library reports the problem as an MPI_ERR_OTHER error on its calls, instead of running
// silently on another backend. The value is given as the first argument (set before MPI_Init).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>
#include <mpix/mpix_st.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/common/error_text.h"

static std::string g_value;

TEST_CASE("window creation and epochs report the unavailable backend") {
  CHECK(std::string(MPIX_St_backend_name()) == "host");
  std::vector<char> mem(64);
  MPI_Win win = MPI_WIN_NULL;
  const int rc = MPI_Win_create(mem.data(), 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const std::string msg = mpix_test::error_text(rc);
  INFO("MPI_Win_create -> " << rc << ": " << msg);
  CHECK(rc != MPI_SUCCESS);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OTHER);
  CHECK(msg.rfind("mpix-st: ", 0) == 0);
  CHECK(msg.find("MPIX_ST_BACKEND=" + g_value) != std::string::npos);
  void *base = nullptr;
  const int arc = MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  CHECK(arc != MPI_SUCCESS);
  MPI_Error_class(arc, &cls);
  CHECK(cls == MPI_ERR_OTHER);
  if (rc == MPI_SUCCESS) MPI_Win_free(&win);
}

int main(int argc, char **argv) {
  g_value = argc > 1 ? argv[1] : "bogus";
  setenv("MPIX_ST_BACKEND", g_value.c_str(), 1);
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  doctest::Context ctx;
  const int rc = ctx.run();
  MPI_Finalize();
  return rc;
}
