// Active-target epochs on managed windows, stream-triggered or host-driven.
#pragma once
#include <mpi.h>

#include <string>

#include "result.h"
#include "window.h"

namespace mpix::core {

// The assert bit that opens a stream-triggered access epoch (public name: MPIX_MODE_STREAM).
constexpr int kModeStream = 1 << 20;

// stream_mode: enqueue on `stream` (MPIX_*_stream); otherwise host-driven (MPI_Win_*).
Result post(Window &w, MPI_Group group, int assert_bits, void *stream, bool stream_mode);
Result start(Window &w, MPI_Group group, int assert_bits);
Result complete(Window &w, void *stream, bool stream_mode);
Result wait(Window &w, void *stream, bool stream_mode);
// MPI_Win_test of a host-driven exposure epoch: *flag = 1 once it is closed, as MPI_Win_wait would.
Result test(Window &w, int *flag);

// The library's active-target epochs of `w` open at this rank and how to close them, e.g. "a
// stream-triggered access epoch (MPI_Win_start with MPIX_MODE_STREAM) open; close it with
// MPIX_Win_complete_stream"; "" when none is open.
std::string open_epochs(const Window &w);

// The underlying MPI's own synchronisation on a managed window (doc/guide/rma-epochs.md, "Fence
// and lock epochs beside stream epochs"). Before MPI_Win_fence, MPI_Win_lock and MPI_Win_lock_all:
// MPI_ERR_RMA_SYNC while an active-target epoch of this rank is open on the window (either mode;
// MPI does not nest the kinds of epochs); otherwise waits until the stream has run every stream
// operation of the window's closed epochs (MPI_ERR_OTHER past MPIX_ST_WATCHDOG_MS), so the MPI's
// epoch comes after them, as the program ordered.
Result before_mpi_epoch(Window &w, const char *call);
// MPI_Win_unlock(_all), MPI_Win_flush*, MPI_Win_sync: they belong to lock epochs. MPI_ERR_RMA_SYNC
// when the window has an active-target epoch of this rank open and no lock epoch; otherwise ok
// (the MPI takes the call and reports its own errors).
Result check_lock_call(const Window &w, const char *call);

// Completes the host-mode notifications still in flight (before the window is freed).
Result drain_notifications(Window &w);

// An error describing a stream wait that the watchdog ended on window `window_id` (0: any window)
// and stream `stream` (null: any stream), if one is pending; taking it clears it.
Result take_watchdog_error(uint32_t window_id, const void *stream);

}  // namespace mpix::core
