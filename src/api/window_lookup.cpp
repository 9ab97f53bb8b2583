#include "window_lookup.h"

#include <string>

#include "backend/backend_select.h"
#include "core/epochs.h"

namespace mpix::api {

core::Result mpi_state(const char *call) {
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (finalized) return core::fail(MPI_ERR_OTHER, std::string(call) + " called after MPI_Finalize");
  if (!initialized) return core::fail(MPI_ERR_OTHER, std::string(call) + " called before MPI_Init");
  return core::ok();
}

core::Result usable_handle(MPI_Win win) {
  if (win == MPI_WIN_NULL) return core::fail(MPI_ERR_WIN, "window is MPI_WIN_NULL");
  if (core::window_was_freed(win))
    return core::fail(MPI_ERR_WIN, "this window was freed (MPI_Win_free): the handle is stale");
  return core::ok();
}

core::Result managed_window(MPI_Win win, core::Window **out) {
  *out = nullptr;
  if (core::Result r = usable_handle(win)) return r;
  *out = core::find_window(win);
  if (!*out)
    return core::fail(MPI_ERR_WIN, "this window is not managed by mpix-st: some rank's memory is not memory the "
                                   "backend manages, or its info said mpix_st=false");
  return core::ok();
}

core::Result backend_error() {
  if (const std::string &e = gpu::backend_selection_error(); !e.empty()) return core::fail(MPI_ERR_OTHER, e);
  return core::ok();
}

core::Result pending_errors(const core::Window &w) {
  if (core::Result r = backend_error()) return r;
  return core::take_watchdog_error(w.id, nullptr);
}

}  // namespace mpix::api
