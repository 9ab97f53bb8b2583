// Collective creation and destruction of windows.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>

#include "result.h"

namespace mpix::core {

// Ids of windows and of communicators' collective state, from one sequence: watchdog reports name
// them, so they never collide.
uint32_t next_object_id();

// Waits until the stream work counted by `flag` (a word of this process's flag memory, read through
// the backend) reaches `count`: memory that enqueued work still uses is freed only after it ran.
// false when MPIX_ST_WATCHDOG_MS (if set) passed first.
bool stream_work_drained(const uint64_t *flag, uint64_t count);
// The same where `ran` reads the count.
bool stream_work_drained(const std::function<uint64_t()> &ran, uint64_t count);

// The library's info keys with a value it does not know (MPI_ERR_INFO_VALUE): mpix_st and
// mpix_st_staged_get_accumulate take true/false (or 1/0), mpix_st_memory device/host.
Result check_window_info(MPI_Info info);
// Arguments of MPI_Win_create / MPI_Win_allocate that are wrong on this rank (not collective).
Result check_window_arguments(const void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Win *win,
                              bool base_required);
// Collective: every rank learns whether any rank's *r is an error (returns true when none is), and
// *flag becomes the logical AND of every rank's *flag. A rank whose own arguments were fine gets
// *r saying that another rank's were not.
bool agree_on_arguments(Result *r, int *flag, MPI_Comm comm, const char *call);

// Creates the underlying MPI window and, when every rank's memory is memory the backend manages
// (and no rank's info says mpix_st=false), the library's shadow state with mapped peers. With
// `adopt` (a window the MPI's MPI_Win_allocate made over `base`), that window is the underlying
// one: *win = adopt, managed when the backend manages the MPI's memory, left as it is otherwise.
Result create_window(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, bool memory_owned,
                     MPI_Win *win, MPI_Win adopt = MPI_WIN_NULL);
// Frees a managed window once its stream work has drained. On success *memory_owned tells whether
// *base was allocated by the library (MPI_Win_allocate) and must be released by the caller.
Result free_window(MPI_Win *win, bool *memory_owned, void **base);

}  // namespace mpix::core
