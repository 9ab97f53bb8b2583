// Checks shared by the one-process API tests (doctest): error class and message, a host stream.
#pragma once
#include <doctest/doctest.h>
#include <mpi.h>
#include <mpix/mpix_st.h>

#include <cstring>
#include <string>

#include "error_text.h"

namespace {

// The library's message (MPI_Error_string's, or the registered text where this MPI cannot show it).
std::string err_string(int rc) { return mpix_test::error_text(rc); }

int err_class(int rc) {
  int c = -1;
  MPI_Error_class(rc, &c);
  return c;
}

// An error of class `cls` with a message "mpix-st: ...".
#define CHECK_MPIX_ERROR(call, cls)                           \
  do {                                                        \
    int rc_ = (call);                                         \
    INFO(#call << " -> " << rc_ << ": " << err_string(rc_));  \
    CHECK(rc_ != MPI_SUCCESS);                                \
    CHECK(err_class(rc_) == (cls));                           \
    CHECK(err_string(rc_).rfind("mpix-st: ", 0) == 0);        \
    CHECK(err_string(rc_).size() > std::strlen("mpix-st: ")); \
  } while (0)

struct Stream {
  MPIX_Host_stream s = nullptr;
  Stream() { REQUIRE(MPIX_Host_stream_create(&s) == MPI_SUCCESS); }
  ~Stream() { MPIX_Host_stream_destroy(s); }
};
}  // namespace
