// The watchdog in one process (one MPI rank, host backend, MPIX_ST_WATCHDOG_MS=250 set before the
// library reads it): a stream-triggered self epoch whose post never comes.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>
#include <mpix/mpix_st.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/api_checks.h"

TEST_CASE("watchdog: a self epoch whose post never comes fails at synchronize, naming the window rank") {
  // MPIX_ST_WATCHDOG_MS=250 is set by main before the library reads its configuration.
  Stream st;
  std::vector<uint8_t> mem(64, 0), src(64, 1);
  MPI_Win win;
  REQUIRE(MPI_Win_create(mem.data(), 64, 1, MPI_INFO_NULL, MPI_COMM_SELF, &win) == MPI_SUCCESS);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Group self;
  MPI_Comm_group(MPI_COMM_SELF, &self);
  REQUIRE(MPI_Win_start(self, MPIX_MODE_STREAM, win) == MPI_SUCCESS);
  REQUIRE(MPI_Put(src.data(), 64, MPI_BYTE, 0, 0, 64, MPI_BYTE, win) == MPI_SUCCESS);
  REQUIRE(MPIX_Win_complete_stream(win, st.s) == MPI_SUCCESS);
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = MPIX_Host_stream_synchronize(st.s);
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK_MPIX_ERROR(rc, MPI_ERR_OTHER);
  const std::string msg = err_string(rc);
  INFO(msg);
  CHECK(msg.find("window rank 0") != std::string::npos);
  CHECK(msg.find("post") != std::string::npos);
  CHECK(took < std::chrono::seconds(5));
  CHECK(mem[0] == 0);  // the epoch's data was skipped
  // The stream is usable again.
  CHECK(MPIX_Host_stream_synchronize(st.s) == MPI_SUCCESS);
  // Nothing of the window is still queued on a stream: it must be freeable.
  const int frc = MPI_Win_free(&win);
  INFO("MPI_Win_free: " << err_string(frc));
  CHECK(frc == MPI_SUCCESS);
  MPI_Group_free(&self);
}

int main(int argc, char **argv) {
  setenv("MPIX_ST_WATCHDOG_MS", "250", 1);
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  doctest::Context ctx(argc, argv);
  const int rc = ctx.run();
  MPI_Finalize();
  return rc;
}
