// Interposed window creation and destruction (and the flavour attribute of windows the library
// allocated), plus tracking of the underlying MPI's fence and lock epochs (so MPI_Put outside any
// epoch is caught on managed windows).
#include <mpi.h>

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "backend/backend.h"
#include "core/epochs.h"
#include "core/window_setup.h"
#include "errors.h"
#include "window_lookup.h"

using mpix::core::Result;
using mpix::core::Window;

namespace {
// MPI_Win_allocate memory made by the library for windows that ended up unmanaged.
std::mutex g_mu;
std::unordered_map<MPI_Win, void *> g_unmanaged_memory;
std::unordered_set<MPI_Win> g_mpi_allocated;  // managed windows over the MPI's MPI_Win_allocate memory

bool info_equals(MPI_Info info, const char *key, const char *want) {
  if (info == MPI_INFO_NULL) return false;
  char value[32] = {};
  int flag = 0;
  PMPI_Info_get(info, key, sizeof value - 1, value, &flag);
  return flag && std::strcmp(value, want) == 0;
}
}  // namespace

extern "C" {

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  if (Result r = mpix::api::mpi_state("MPI_Win_create")) return mpix::api::raise_comm(comm, r);
  if (Result r = mpix::api::backend_error()) return mpix::api::raise_comm(comm, r);
  return mpix::api::raise_comm(comm, mpix::core::create_window(base, size, disp_unit, info, comm, false, win));
}

// Info mpix_st_memory=device: the backend's memory (device memory; shared memory node-local peers
// map on the host backend) under an underlying MPI_Win_create. Otherwise the MPI allocates: on the
// GPU backends that host memory is not managed, on the host backend it is (reached by copying).
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
  if (Result r = mpix::api::mpi_state("MPI_Win_allocate")) return mpix::api::raise_comm(comm, r);
  if (Result r = mpix::api::backend_error()) return mpix::api::raise_comm(comm, r);
  if (comm == MPI_COMM_NULL)
    return mpix::api::raise_comm(comm, mpix::core::fail(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL"));
  mpix::gpu::Backend &be = mpix::gpu::backend();
  const bool host = std::strcmp(be.name(), "host") == 0;
  // Every rank must take the same path: one underlying MPI_Win_allocate, or library memory under
  // one underlying MPI_Win_create; and arguments wrong on one rank fail the call on every rank.
  Result args = mpix::core::check_window_arguments(nullptr, size, disp_unit, info, win, false);
  if (!args && !baseptr) args = mpix::core::fail(MPI_ERR_ARG, "MPI_Win_allocate: baseptr is NULL");
  // Library memory only when asked for: otherwise the program gets the MPI's own allocate window
  // (its flavour, its shared-memory component and atomics), which the host backend then manages
  // over the MPI's memory (reached by copying) as it manages MPI_Win_create windows.
  int library_memory = !info_equals(info, "mpix_st", "false") && info_equals(info, "mpix_st_memory", "device");
  // The memory is allocated before the ranks agree, so an allocation that fails on one rank fails
  // the call on every rank instead of leaving the others in the window's collectives.
  void *mem = nullptr;
  if (!args && library_memory && be.allocate_window_memory(static_cast<size_t>(size), &mem)) {
    args = mpix::core::fail(MPI_ERR_NO_MEM, "MPI_Win_allocate: " + std::to_string(size) +
                                                " bytes of window memory: " + be.last_error());
    mem = nullptr;
  }
  if (!mpix::core::agree_on_arguments(&args, &library_memory, comm, "MPI_Win_allocate") || !library_memory) {
    if (mem) be.free_window_memory(mem);
    if (args) return mpix::api::raise_comm(comm, args);
    MPI_Win made = MPI_WIN_NULL;
    int rc = PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, &made);
    if (rc != MPI_SUCCESS) return rc;
    mpix::core::note_window_created(made);
    if (!host) {
      *win = made;
      return MPI_SUCCESS;
    }
    Result r = mpix::core::create_window(*static_cast<void **>(baseptr), size, disp_unit, info, comm, false, win, made);
    if (r) return mpix::api::raise_comm(comm, r);
    std::lock_guard<std::mutex> lock(g_mu);
    if (mpix::core::find_window(*win)) g_mpi_allocated.insert(*win);
    return MPI_SUCCESS;
  }
  Result r = mpix::core::create_window(mem, size, disp_unit, info, comm, true, win);
  if (r) {
    be.free_window_memory(mem);
    return mpix::api::raise_comm(comm, r);
  }
  *static_cast<void **>(baseptr) = mem;
  if (!mpix::core::find_window(*win)) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_unmanaged_memory[*win] = mem;
  }
  return MPI_SUCCESS;
}

// The underlying MPI's window of a library window may be of another flavour than the program's
// call (library memory for MPI_Win_allocate under MPI_Win_create; a stand-in from
// MPI_Win_allocate_shared where Open MPI cannot create one): the program sees the flavour of its call.
int MPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag) {
  const int rc = PMPI_Win_get_attr(win, keyval, attribute_val, flag);
  if (rc != MPI_SUCCESS || keyval != MPI_WIN_CREATE_FLAVOR || !*flag) return rc;
  static int allocate_flavor = MPI_WIN_FLAVOR_ALLOCATE, create_flavor = MPI_WIN_FLAVOR_CREATE;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_mpi_allocated.count(win)) return rc;  // the MPI's own allocate window
  if (const mpix::core::Window *w = mpix::core::find_window(win)) {
    *static_cast<int **>(attribute_val) = w->memory_owned ? &allocate_flavor : &create_flavor;
    return rc;
  }
  if (g_unmanaged_memory.count(win)) *static_cast<int **>(attribute_val) = &allocate_flavor;
  return rc;
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  int rc = PMPI_Win_create_dynamic(info, comm, win);
  if (rc == MPI_SUCCESS) mpix::core::note_window_created(*win);
  return rc;
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
  int rc = PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS) mpix::core::note_window_created(*win);
  return rc;
}

int MPI_Win_free(MPI_Win *win) {
  if (!win) return mpix::api::raise_no_object(mpix::core::fail(MPI_ERR_ARG, "MPI_Win_free: win is NULL"));
  if (Result r = mpix::api::mpi_state("MPI_Win_free")) return mpix::api::raise_no_object(r);
  if (Result r = mpix::api::usable_handle(*win)) return mpix::api::raise_no_object(r);
  if (!mpix::core::find_window(*win)) {
    const MPI_Win handle = *win;
    void *mem = nullptr;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      auto it = g_unmanaged_memory.find(*win);
      if (it != g_unmanaged_memory.end()) {
        mem = it->second;
        g_unmanaged_memory.erase(it);
      }
    }
    int rc = PMPI_Win_free(win);
    if (mem) mpix::gpu::backend().free_window_memory(mem);
    if (rc == MPI_SUCCESS) mpix::core::note_window_freed(handle);
    return rc;
  }
  MPI_Win handle = *win;
  bool owned = false;
  void *base = nullptr;
  if (Result r = mpix::core::free_window(win, &owned, &base)) return mpix::api::raise_win(handle, r);
  mpix::core::note_window_freed(handle);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_mpi_allocated.erase(handle);
  }
  if (owned) mpix::gpu::backend().free_window_memory(base);
  return MPI_SUCCESS;
}

int MPI_Win_fence(int assert_bits, MPI_Win win) {
  if (Result r = mpix::api::mpi_state("MPI_Win_fence")) return mpix::api::raise_no_object(r);
  if (mpix::core::window_was_freed(win))
    return mpix::api::raise_no_object(mpix::api::usable_handle(win));
  if (Window *w = mpix::core::find_window(win)) {
    if (Result r = mpix::core::before_mpi_epoch(*w, "MPI_Win_fence")) return mpix::api::raise_win(win, r);
    w->fence_epoch = !(assert_bits & MPI_MODE_NOSUCCEED);
  }
  return PMPI_Win_fence(assert_bits, win);
}

int MPI_Win_lock(int lock_type, int rank, int assert_bits, MPI_Win win) {
  if (Result r = mpix::api::mpi_state("MPI_Win_lock")) return mpix::api::raise_no_object(r);
  if (mpix::core::window_was_freed(win)) return mpix::api::raise_no_object(mpix::api::usable_handle(win));
  if (Window *w = mpix::core::find_window(win))
    if (Result r = mpix::core::before_mpi_epoch(*w, "MPI_Win_lock")) return mpix::api::raise_win(win, r);
  int rc = PMPI_Win_lock(lock_type, rank, assert_bits, win);
  if (Window *w = mpix::core::find_window(win); w && rc == MPI_SUCCESS) ++w->passive_epochs;
  return rc;
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  if (Result r = mpix::api::mpi_state("MPI_Win_unlock")) return mpix::api::raise_no_object(r);
  if (mpix::core::window_was_freed(win)) return mpix::api::raise_no_object(mpix::api::usable_handle(win));
  if (Window *w = mpix::core::find_window(win))
    if (Result r = mpix::core::check_lock_call(*w, "MPI_Win_unlock")) return mpix::api::raise_win(win, r);
  int rc = PMPI_Win_unlock(rank, win);
  if (Window *w = mpix::core::find_window(win); w && rc == MPI_SUCCESS && w->passive_epochs > 0) --w->passive_epochs;
  return rc;
}

int MPI_Win_lock_all(int assert_bits, MPI_Win win) {
  if (Result r = mpix::api::mpi_state("MPI_Win_lock_all")) return mpix::api::raise_no_object(r);
  if (mpix::core::window_was_freed(win)) return mpix::api::raise_no_object(mpix::api::usable_handle(win));
  if (Window *w = mpix::core::find_window(win))
    if (Result r = mpix::core::before_mpi_epoch(*w, "MPI_Win_lock_all")) return mpix::api::raise_win(win, r);
  int rc = PMPI_Win_lock_all(assert_bits, win);
  if (Window *w = mpix::core::find_window(win); w && rc == MPI_SUCCESS) ++w->passive_epochs;
  return rc;
}

int MPI_Win_unlock_all(MPI_Win win) {
  if (Result r = mpix::api::mpi_state("MPI_Win_unlock_all")) return mpix::api::raise_no_object(r);
  if (mpix::core::window_was_freed(win)) return mpix::api::raise_no_object(mpix::api::usable_handle(win));
  if (Window *w = mpix::core::find_window(win))
    if (Result r = mpix::core::check_lock_call(*w, "MPI_Win_unlock_all")) return mpix::api::raise_win(win, r);
  int rc = PMPI_Win_unlock_all(win);
  if (Window *w = mpix::core::find_window(win); w && rc == MPI_SUCCESS && w->passive_epochs > 0) --w->passive_epochs;
  return rc;
}

}  // extern "C"
