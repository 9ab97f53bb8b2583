// The public C API in one process (one MPI rank, host backend): host streams, argument errors,
// introspection, stream-triggered self epochs on a one-rank window. (Watchdog: test_api_watchdog.)
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

TEST_CASE("the backend is the host backend") { CHECK(std::string(MPIX_St_backend_name()) == "host"); }

TEST_CASE("host streams run enqueued functions in order; synchronize waits for them") {
  Stream st;
  std::vector<int> seen;
  struct Arg {
    std::vector<int> *seen;
    int i;
  };
  std::vector<Arg> args(1000);
  for (int i = 0; i < 1000; ++i) {
    args[i] = {&seen, i};
    REQUIRE(MPIX_Host_stream_enqueue(
                st.s, [](void *a) { static_cast<Arg *>(a)->seen->push_back(static_cast<Arg *>(a)->i); }, &args[i]) ==
            MPI_SUCCESS);
  }
  REQUIRE(MPIX_Host_stream_synchronize(st.s) == MPI_SUCCESS);
  REQUIRE(seen.size() == 1000);
  for (int i = 0; i < 1000; ++i) REQUIRE(seen[i] == i);
}

TEST_CASE("MPIX_Host_stream_enqueue does not count as a library stream operation") {
  Stream st;
  const unsigned long long before = MPIX_St_stream_ops_enqueued();
  for (int i = 0; i < 10; ++i)
    REQUIRE(MPIX_Host_stream_enqueue(
                st.s, [](void *) {}, nullptr) == MPI_SUCCESS);
  REQUIRE(MPIX_Host_stream_synchronize(st.s) == MPI_SUCCESS);
  CHECK(MPIX_St_stream_ops_enqueued() == before);
}

TEST_CASE("destroy drains the stream") {
  std::atomic<int> ran{0};
  MPIX_Host_stream s = nullptr;
  REQUIRE(MPIX_Host_stream_create(&s) == MPI_SUCCESS);
  for (int i = 0; i < 20; ++i)
    MPIX_Host_stream_enqueue(
        s,
        [](void *a) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          ++*static_cast<std::atomic<int> *>(a);
        },
        &ran);
  CHECK(MPIX_Host_stream_destroy(s) == MPI_SUCCESS);
  CHECK(ran.load() == 20);
}

TEST_CASE("NULL arguments of the host stream API are MPI_ERR_ARG") {
  Stream st;
  CHECK_MPIX_ERROR(MPIX_Host_stream_create(nullptr), MPI_ERR_ARG);
  CHECK_MPIX_ERROR(MPIX_Host_stream_enqueue(
                       nullptr, [](void *) {}, nullptr),
                   MPI_ERR_ARG);
  CHECK_MPIX_ERROR(MPIX_Host_stream_enqueue(st.s, nullptr, nullptr), MPI_ERR_ARG);
  CHECK_MPIX_ERROR(MPIX_Host_stream_synchronize(nullptr), MPI_ERR_ARG);
  CHECK_MPIX_ERROR(MPIX_Host_stream_destroy(nullptr), MPI_ERR_ARG);
  CHECK(err_string(MPIX_Host_stream_synchronize(nullptr)).find("MPIX_Host_stream_synchronize") != std::string::npos);
  CHECK(MPIX_Host_stream_synchronize(st.s) == MPI_SUCCESS);
}

TEST_CASE("the resource error class is a class of its own with a library message") {
  const int cls = MPIX_St_error_class_resource();
  CHECK(cls != MPI_SUCCESS);
  CHECK(cls > MPI_ERR_LASTCODE);
  CHECK(err_class(cls) == cls);
  CHECK(err_string(cls).rfind("mpix-st:", 0) == 0);
  CHECK(MPIX_St_error_class_resource() == cls);  // stable
}

TEST_CASE("MPIX_MODE_STREAM does not collide with the MPI assert bits") {
  for (int bit : {MPI_MODE_NOCHECK, MPI_MODE_NOSTORE, MPI_MODE_NOPUT, MPI_MODE_NOPRECEDE, MPI_MODE_NOSUCCEED})
    CHECK((bit & MPIX_MODE_STREAM) == 0);
}

TEST_CASE("stream-triggered self epochs on a one-rank window: data, and 3 stream operations per epoch") {
  Stream st;
  for (int kind = 0; kind < 2; ++kind) {
    CAPTURE(kind);
    const int n = 4096;
    std::vector<uint8_t> priv(n, 0);
    uint8_t *base = nullptr;
    MPI_Win win;
    if (kind == 0) {
      REQUIRE(MPI_Win_allocate(n, 1, MPI_INFO_NULL, MPI_COMM_SELF, &base, &win) == MPI_SUCCESS);
      std::memset(base, 0, n);
    } else {
      base = priv.data();
      REQUIRE(MPI_Win_create(base, n, 1, MPI_INFO_NULL, MPI_COMM_SELF, &win) == MPI_SUCCESS);
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Group self;
    MPI_Comm_group(MPI_COMM_SELF, &self);
    std::vector<std::vector<uint8_t>> src(50, std::vector<uint8_t>(100));
    const unsigned long long before = MPIX_St_stream_ops_enqueued();
    for (int e = 0; e < 50; ++e) {
      for (int i = 0; i < 100; ++i) src[e][i] = static_cast<uint8_t>(e * 3 + i);
      REQUIRE(MPIX_Win_post_stream(self, win, st.s) == MPI_SUCCESS);
      REQUIRE(MPI_Win_start(self, MPIX_MODE_STREAM, win) == MPI_SUCCESS);
      REQUIRE(MPI_Put(src[e].data(), 100, MPI_BYTE, 0, e * 80 + 1, 100, MPI_BYTE, win) == MPI_SUCCESS);
      REQUIRE(MPIX_Win_complete_stream(win, st.s) == MPI_SUCCESS);
      REQUIRE(MPIX_Win_wait_stream(win, st.s) == MPI_SUCCESS);
    }
    CHECK(MPIX_St_stream_ops_enqueued() - before == 150);
    REQUIRE(MPIX_Host_stream_synchronize(st.s) == MPI_SUCCESS);
    std::vector<uint8_t> want(n, 0);
    for (int e = 0; e < 50; ++e) std::memcpy(want.data() + e * 80 + 1, src[e].data(), 100);
    for (int i = 0; i < n; ++i)
      if (base[i] != want[i]) FAIL("byte " << i << ": got " << int(base[i]) << ", want " << int(want[i]));
    MPI_Group_free(&self);
    CHECK(MPI_Win_free(&win) == MPI_SUCCESS);
  }
}

// The half-precision handles as main saw them before MPI_Init.
MPI_Datatype g_float16_before_init = MPI_INT, g_bfloat16_before_init = MPI_INT;

TEST_CASE("MPIX_ST_FLOAT16 and MPIX_ST_BFLOAT16: null before MPI_Init, then distinct 2-byte types that cannot be freed") {
  CHECK(g_float16_before_init == MPI_DATATYPE_NULL);
  CHECK(g_bfloat16_before_init == MPI_DATATYPE_NULL);
  for (MPI_Datatype t : {MPIX_ST_FLOAT16, MPIX_ST_BFLOAT16}) {
    REQUIRE(t != MPI_DATATYPE_NULL);
    int size = 0;
    MPI_Aint lb = -1, extent = 0;
    CHECK(MPI_Type_size(t, &size) == MPI_SUCCESS);
    CHECK(MPI_Type_get_extent(t, &lb, &extent) == MPI_SUCCESS);
    CHECK(size == 2);
    CHECK(lb == 0);
    CHECK(extent == 2);
    MPI_Datatype copy = t;
    const int rc = MPI_Type_free(&copy);
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE);
    CHECK(copy == t);
  }
  CHECK(MPIX_ST_FLOAT16 != MPIX_ST_BFLOAT16);
}

int main(int argc, char **argv) {
  g_float16_before_init = MPIX_ST_FLOAT16;
  g_bfloat16_before_init = MPIX_ST_BFLOAT16;
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  doctest::Context ctx(argc, argv);
  const int rc = ctx.run();
  MPI_Finalize();
  return rc;
}
