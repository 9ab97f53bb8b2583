// Active-target synchronisation: the stream-triggered MPIX_Win_*_stream calls and the interposed
// MPI_Win_{post,start,complete,wait,test}, which run host-driven on managed windows; and the lock
// epochs' MPI_Win_flush* and MPI_Win_sync, which the MPI runs but which are refused, saying why,
// inside the library's active-target epochs.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "backend/backend.h"
#include "core/epochs.h"
#include "errors.h"
#include "host_streams.h"
#include "mpix/mpix_st.h"
#include "p2p/engine.h"
#include "window_lookup.h"

static_assert(MPIX_MODE_STREAM == mpix::core::kModeStream, "public and internal stream assert bits differ");

using mpix::core::Result;
using mpix::core::Window;

namespace {

// Entry checks shared by every call on a managed window; returns the window or sets *r.
Window *enter(MPI_Win win, const char *call, Result *r) {
  Window *w = nullptr;
  if ((*r = mpix::api::mpi_state(call))) return nullptr;
  if ((*r = mpix::api::managed_window(win, &w))) return nullptr;
  if ((*r = mpix::api::pending_errors(*w))) return nullptr;
  return w;
}

// Assert bits other than these are refused on managed windows (MPI defines no others for them).
constexpr int kStartAsserts = MPI_MODE_NOCHECK | MPIX_MODE_STREAM;
constexpr int kPostAsserts = MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT;

Result check_asserts(int assert_bits, int allowed, const char *call) {
  if (!(assert_bits & ~allowed)) return mpix::core::ok();
  if (assert_bits & ~allowed & MPIX_MODE_STREAM)
    return mpix::core::fail(MPI_ERR_ASSERT, std::string(call) +
                                                ": MPIX_MODE_STREAM is an assert of MPI_Win_start only; a "
                                                "stream-triggered exposure epoch is opened with MPIX_Win_post_stream");
  return mpix::core::fail(MPI_ERR_ASSERT, std::string(call) + ": unknown assert bits 0x" + [&] {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%x", static_cast<unsigned>(assert_bits & ~allowed));
    return std::string(hex);
  }());
}

template <typename Fn>
int on_managed(MPI_Win win, const char *call, Fn &&fn) {
  Result r;
  Window *w = enter(win, call, &r);
  if (!r) r = fn(*w);
  return mpix::api::raise_win(win, r);
}

// Calls of the underlying MPI's own epochs: handles that are MPI_WIN_NULL or freed are refused here
// (the MPI may not notice a freed one); otherwise false, and the MPI takes the call.
bool refused_handle(MPI_Win win, int *rc) {
  Result r = mpix::api::usable_handle(win);
  if (!r) return false;
  *rc = mpix::api::raise_no_object(r);
  return true;
}

// Calls of lock epochs (the MPI's): refused with MPI_ERR_RMA_SYNC on a managed window with an
// active-target epoch open and no lock epoch (the MPI would say only "wrong synchronization").
template <typename Fn>
int lock_call(MPI_Win win, const char *call, Fn &&pmpi) {
  if (Result r = mpix::api::mpi_state(call)) return mpix::api::raise_no_object(r);
  if (int rc; refused_handle(win, &rc)) return rc;
  if (const Window *w = mpix::core::find_window(win))
    if (Result r = mpix::core::check_lock_call(*w, call)) return mpix::api::raise_win(win, r);
  return pmpi();
}

}  // namespace

extern "C" {

int MPIX_Win_post_stream(MPI_Group group, MPI_Win win, void *stream) {
  return on_managed(win, "MPIX_Win_post_stream", [&](Window &w) {
    if (Result r = mpix::api::check_stream(stream)) return r;
    return mpix::core::post(w, group, 0, stream, true);
  });
}

int MPIX_Win_complete_stream(MPI_Win win, void *stream) {
  return on_managed(win, "MPIX_Win_complete_stream", [&](Window &w) {
    if (Result r = mpix::api::check_stream(stream)) return r;
    return mpix::core::complete(w, stream, true);
  });
}

int MPIX_Win_wait_stream(MPI_Win win, void *stream) {
  return on_managed(win, "MPIX_Win_wait_stream", [&](Window &w) {
    if (Result r = mpix::api::check_stream(stream)) return r;
    return mpix::core::wait(w, stream, true);
  });
}

int MPIX_St_check(MPI_Win win) {
  if (Result r = mpix::api::mpi_state("MPIX_St_check")) return mpix::api::raise_no_object(r);
  if (win == MPI_WIN_NULL) {
    Result r = mpix::api::backend_error();
    if (!r) r = mpix::core::take_watchdog_error(0, nullptr);
    if (!r) {
      // An error of a two-sided operation a stream wait took, which its queue's next call would raise.
      std::lock_guard<std::recursive_mutex> guard(mpix::p2p::lock());
      r = mpix::p2p::take_any_error();
      if (r) r.message = "an operation completed by a stream wait failed: " + r.message;
    }
    return mpix::api::raise_no_object(r);
  }
  Window *w = nullptr;
  Result r = mpix::api::managed_window(win, &w);
  if (!r) r = mpix::api::pending_errors(*w);
  return mpix::api::raise_win(win, r);
}

int MPI_Win_start(MPI_Group group, int assert_bits, MPI_Win win) {
  if (Result r = mpix::api::mpi_state("MPI_Win_start")) return mpix::api::raise_no_object(r);
  if (!mpix::core::find_window(win)) {
    if (assert_bits & MPIX_MODE_STREAM) {
      Window *unused;
      return mpix::api::raise_win(win, mpix::api::managed_window(win, &unused));
    }
    if (int rc; refused_handle(win, &rc)) return rc;
    return PMPI_Win_start(group, assert_bits, win);
  }
  return on_managed(win, "MPI_Win_start", [&](Window &w) {
    if (Result r = check_asserts(assert_bits, kStartAsserts, "MPI_Win_start")) return r;
    return mpix::core::start(w, group, assert_bits);
  });
}

int MPI_Win_post(MPI_Group group, int assert_bits, MPI_Win win) {
  if (Result r = mpix::api::mpi_state("MPI_Win_post")) return mpix::api::raise_no_object(r);
  if (!mpix::core::find_window(win)) {
    if (int rc; refused_handle(win, &rc)) return rc;
    return PMPI_Win_post(group, assert_bits, win);
  }
  return on_managed(win, "MPI_Win_post", [&](Window &w) {
    if (Result r = check_asserts(assert_bits, kPostAsserts, "MPI_Win_post")) return r;
    return mpix::core::post(w, group, assert_bits, nullptr, false);
  });
}

int MPI_Win_complete(MPI_Win win) {
  if (Result r = mpix::api::mpi_state("MPI_Win_complete")) return mpix::api::raise_no_object(r);
  if (!mpix::core::find_window(win)) {
    if (int rc; refused_handle(win, &rc)) return rc;
    return PMPI_Win_complete(win);
  }
  return on_managed(win, "MPI_Win_complete", [&](Window &w) { return mpix::core::complete(w, nullptr, false); });
}

int MPI_Win_wait(MPI_Win win) {
  if (Result r = mpix::api::mpi_state("MPI_Win_wait")) return mpix::api::raise_no_object(r);
  if (!mpix::core::find_window(win)) {
    if (int rc; refused_handle(win, &rc)) return rc;
    return PMPI_Win_wait(win);
  }
  return on_managed(win, "MPI_Win_wait", [&](Window &w) { return mpix::core::wait(w, nullptr, false); });
}

int MPI_Win_flush(int rank, MPI_Win win) {
  return lock_call(win, "MPI_Win_flush", [&] { return PMPI_Win_flush(rank, win); });
}

int MPI_Win_flush_local(int rank, MPI_Win win) {
  return lock_call(win, "MPI_Win_flush_local", [&] { return PMPI_Win_flush_local(rank, win); });
}

int MPI_Win_flush_all(MPI_Win win) {
  return lock_call(win, "MPI_Win_flush_all", [&] { return PMPI_Win_flush_all(win); });
}

int MPI_Win_flush_local_all(MPI_Win win) {
  return lock_call(win, "MPI_Win_flush_local_all", [&] { return PMPI_Win_flush_local_all(win); });
}

int MPI_Win_sync(MPI_Win win) {
  return lock_call(win, "MPI_Win_sync", [&] { return PMPI_Win_sync(win); });
}

int MPI_Win_test(MPI_Win win, int *flag) {
  if (Result r = mpix::api::mpi_state("MPI_Win_test")) return mpix::api::raise_no_object(r);
  if (!mpix::core::find_window(win)) {
    if (int rc; refused_handle(win, &rc)) return rc;
    return PMPI_Win_test(win, flag);
  }
  return on_managed(win, "MPI_Win_test", [&](Window &w) {
    if (!flag) return mpix::core::fail(MPI_ERR_ARG, "MPI_Win_test: flag is NULL");
    return mpix::core::test(w, flag);
  });
}

}  // extern "C"
