// Active-target synchronisation: the stream-triggered MPIX_Win_*_stream calls and the interposed
// MPI_Win_{post,start,complete,wait}, which run host-driven on managed windows.
#include <mpi.h>

#include <cstring>

#include "../core/epochs.h"
#include "../gpu/backend.h"
#include "errors.h"
#include "mpix/mpix_st.h"
#include "window_lookup.h"

static_assert(MPIX_MODE_STREAM == mpix::core::kModeStream, "public and internal stream assert bits differ");

using mpix::core::Result;
using mpix::core::Window;

namespace {

// Entry checks shared by every call on a managed window; returns the window or sets *r.
Window *enter(MPI_Win win, Result *r) {
  Window *w = nullptr;
  if ((*r = mpix::api::managed_window(win, &w))) return nullptr;
  if ((*r = mpix::api::pending_errors())) return nullptr;
  return w;
}

Result check_stream(void *stream) {
  if (!stream && std::strcmp(mpix::gpu::backend().name(), "host") == 0)
    return mpix::core::fail(MPI_ERR_ARG, "stream is NULL: the host backend needs an MPIX_Host_stream");
  return mpix::core::ok();
}

template <typename Fn>
int on_managed(MPI_Win win, Fn &&fn) {
  Result r;
  Window *w = enter(win, &r);
  if (!r) r = fn(*w);
  return mpix::api::raise_win(win, r);
}

}  // namespace

extern "C" {

int MPIX_Win_post_stream(MPI_Group group, MPI_Win win, void *stream) {
  return on_managed(win, [&](Window &w) {
    if (Result r = check_stream(stream)) return r;
    return mpix::core::post(w, group, 0, stream, true);
  });
}

int MPIX_Win_complete_stream(MPI_Win win, void *stream) {
  return on_managed(win, [&](Window &w) {
    if (Result r = check_stream(stream)) return r;
    return mpix::core::complete(w, stream, true);
  });
}

int MPIX_Win_wait_stream(MPI_Win win, void *stream) {
  return on_managed(win, [&](Window &w) {
    if (Result r = check_stream(stream)) return r;
    return mpix::core::wait(w, stream, true);
  });
}

int MPI_Win_start(MPI_Group group, int assert_bits, MPI_Win win) {
  if (!mpix::core::find_window(win)) {
    if (assert_bits & MPIX_MODE_STREAM) {
      Window *unused;
      return mpix::api::raise_win(win, mpix::api::managed_window(win, &unused));
    }
    return PMPI_Win_start(group, assert_bits, win);
  }
  return on_managed(win, [&](Window &w) { return mpix::core::start(w, group, assert_bits); });
}

int MPI_Win_post(MPI_Group group, int assert_bits, MPI_Win win) {
  if (!mpix::core::find_window(win)) return PMPI_Win_post(group, assert_bits, win);
  return on_managed(win, [&](Window &w) { return mpix::core::post(w, group, assert_bits, nullptr, false); });
}

int MPI_Win_complete(MPI_Win win) {
  if (!mpix::core::find_window(win)) return PMPI_Win_complete(win);
  return on_managed(win, [&](Window &w) { return mpix::core::complete(w, nullptr, false); });
}

int MPI_Win_wait(MPI_Win win) {
  if (!mpix::core::find_window(win)) return PMPI_Win_wait(win);
  return on_managed(win, [&](Window &w) { return mpix::core::wait(w, nullptr, false); });
}

}  // extern "C"
