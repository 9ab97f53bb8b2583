// Active-target epochs on managed windows, stream-triggered or host-driven.
#pragma once
#include <mpi.h>

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

// Completes the host-mode notifications still in flight (before the window is freed).
Result drain_notifications(Window &w);

// An error describing a stream wait that the watchdog ended on window `window_id` (0: any window)
// and stream `stream` (null: any stream), if one is pending; taking it clears it.
Result take_watchdog_error(uint32_t window_id, const void *stream);

}  // namespace mpix::core
