// Hardware multicast groups (bcast, only with MPIX_ST_MULTICAST=1; off by default).
//
// A group spans the node-local ranks of one communicator and covers one buffer: every rank binds
// memory of its own device to one multicast object, and a store through the multicast mapping
// lands in every rank's memory at once (NVLink SHARP on NVSwitch systems).
//
// The steps are a table of driver calls over opaque 64-bit handles, so that
//   - the CUDA plugin fills it with the driver's cuMulticast* / cuMem* calls (multicast_cuda.cpp,
//     COMPILED ONLY, NEVER RUN: creating multicast objects on a shared test machine can take its
//     GPUs out of service),
//   - the host and HIP backends have none (Backend::multicast_driver says why),
//   - unit tests fill it with stubs that count calls and fail on demand.
// The sequence across ranks and its clean-up on failure (multicast_group.cpp) is written once,
// over the table and an exchange the caller provides (MPI in the core, a fake in tests): this
// layer names neither MPI nor a GPU runtime.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace mpix::gpu {

// How a process reaches another's multicast object: the CUDA plugin exports a POSIX file
// descriptor, and peers take a duplicate of it with pidfd_getfd(pid, fd) (multicast_cuda.cpp).
struct MulticastShareable {
  int32_t pid = 0;
  int32_t fd = -1;
};

// Driver steps. Every int-returning step returns 0 on success (else a Status, backend.h) and
// leaves last_error() saying why. Release steps never fail.
struct MulticastDriver {
  // Whether this process's device can join multicast groups; why not otherwise.
  std::function<bool(std::string *why_not)> device_supports;
  // The size unit of a group of `devices` devices for a buffer of `bytes` (multicast and
  // physical-memory granularity together): sizes, offsets and mappings are multiples of it.
  std::function<int(int devices, size_t bytes, size_t *granularity)> granularity;
  // One rank creates the object (`bytes` already rounded), exports it, and closes the export once
  // every peer has imported it (or failed to).
  std::function<int(int devices, size_t bytes, uint64_t *mc)> create;
  std::function<int(uint64_t mc, MulticastShareable *out)> export_handle;
  std::function<void(MulticastShareable *exported)> close_export;
  // The other ranks import it.
  std::function<int(const MulticastShareable &from, uint64_t *mc)> import_handle;
  // Every rank adds its device (all must have done so before anyone binds or maps).
  std::function<int(uint64_t mc)> add_device;
  // Physical memory on this rank's device, bound to the object at offset 0.
  std::function<int(size_t bytes, uint64_t *mem)> allocate;
  std::function<int(uint64_t mc, uint64_t mem, size_t bytes)> bind;
  std::function<void(uint64_t mc, size_t bytes)> unbind;
  // A device address for a handle (the multicast object, or this rank's memory): reserve, map,
  // grant this device access; unmap undoes all three.
  std::function<int(uint64_t handle, size_t bytes, uint64_t *va)> map;
  std::function<void(uint64_t va, size_t bytes)> unmap;
  // Releases a handle from create, import_handle or allocate.
  std::function<void(uint64_t handle)> release;
  std::function<std::string()> last_error;
};

// What the creating rank tells the others at set-up (the bytes bcast_from_root carries).
struct MulticastCreated {
  int32_t ok = 0;
  MulticastShareable handle;
  uint64_t bytes = 0;  // rounded: every rank binds and maps this much
  char why[200] = {};  // the root's failure
};

// What the set-up needs from the ranks of the group, collective over all of them: every rank
// calls both the same number of times, in the same order.
struct MulticastExchange {
  int rank = 0, size = 1, root = 0;
  std::function<void(void *bytes, size_t n)> bcast_from_root;  // root's bytes to every rank
  std::function<bool(bool mine)> all_true;                      // logical and over the ranks
};

// One rank's part of a group; `ready` once every rank's set-up succeeded.
struct MulticastGroup {
  uint64_t mc = 0;      // the multicast object (created here, or imported)
  uint64_t mem = 0;     // this rank's physical memory, bound to it
  uint64_t mc_va = 0;   // stores here reach every rank's memory
  uint64_t mem_va = 0;  // this rank's own view of its memory (reads)
  size_t bytes = 0;     // granularity-rounded size of the buffer
  bool have_mc = false, have_mem = false, bound = false, ready = false;
};

// Collective over the exchange's ranks: makes the group for a buffer of at least `bytes`. On any
// rank's failure every rank returns false with the reason, having released what it made.
bool multicast_setup(const MulticastDriver &d, const MulticastExchange &x, size_t bytes, MulticastGroup *g,
                     std::string *why);
// Releases this rank's part (local; each rank releases its own), newest first. Safe on a group
// that is partly made or empty.
void multicast_release(const MulticastDriver &d, MulticastGroup *g);

}  // namespace mpix::gpu
