// The portability layer: everything the core needs from a GPU runtime (or from the host backend).
// Nothing above src/backend names a GPU runtime (CUDA, HIP); the core talks to one Backend chosen
// once per process.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/coll/args.h"
#include "kernels/launch_trace.h"
#include "kernels/work_items.h"
#include "multicast.h"

namespace mpix::gpu {

// Opaque description of a memory region that node-local peers can map. Exchanged with MPI.
// RegionHandle::flags
constexpr uint32_t kRegionReachedByCopy = 1;  // peers cannot map it: they copy through the owner
                                              // process, so accumulates into it take a lock

struct RegionHandle {
  uint32_t kind = 0;  // backend specific
  uint32_t flags = 0;
  uint64_t offset = 0;  // of the region inside the exported allocation
  uint64_t bytes = 0;
  uint8_t data[112] = {};
};

// A peer's region as seen from this process.
struct MappedRegion {
  char *base = nullptr;  // mapped address of the region, or the remote address when cma_pid != 0
  int cma_pid = 0;       // host backend: the region is reached with cross-memory attach
  void *cookie = nullptr;  // backend bookkeeping for unmap
};

// Pinned host memory this process's stream reaches too (the network writes it, the stream polls
// or copies it): `host` for the CPU and the NIC, `device` for work items.
struct HostMapped {
  void *host = nullptr;
  void *device = nullptr;
};

// An ordered list of work items (waits, then data operations, then signals) for one epoch call.
struct WorkList {
  std::vector<work::Item> waits, ops, signals;
  // Signals stored before the waits, ordering no data: only lists merged under capture have them
  // (a post's signals, followed by the epoch calls after it; list_merge.h).
  std::vector<work::Item> leading_signals;
  // Waits after the signals (a doorbell rung, then the network's completion awaited), then data
  // operations that need them passed (staged gets: host staging -> the origin buffer); counting
  // signals (work::kSignalAdd) run after these. Trailing ops cost the device a second launch.
  std::vector<work::Item> trailing_waits, trailing_ops;
  uint32_t window_id = 0;
  // A post of another window merged in front (list_merge.h): its signals lead, and replays check
  // that window is alive too. 0: none.
  uint32_t lead_window_id = 0;
  uint64_t watchdog_ns = 0;  // 0: waits never time out
  bool captured = false;     // enqueued into a stream capture: replays check the window is alive
  // Lists that ring a network doorbell: the word (device view; host memory) a list sets to 1 when
  // the watchdog skips its signals (work::LaunchHeader::skip_addr). 0: none.
  uint64_t skip_word = 0;
  // Its counting signals order nothing of its data (work::kCountsUnordered): they advance this
  // process's cursors and add to peers' "free" counts of mailboxes the list only read, and nobody
  // reads what the list stored on seeing them (captured two-sided lists: no request records).
  bool counts_unordered = false;
  // Captured two-sided send lists that may share one kernel node (list_merge.h): equal non-zero
  // values mark lists whose sends the caller allows to wait and store together. 0: none.
  uint64_t send_group = 0;
  bool empty() const {
    return waits.empty() && ops.empty() && signals.empty() && trailing_waits.empty() && trailing_ops.empty() &&
           leading_signals.empty();
  }
  void clear() {
    leading_signals.clear();
    waits.clear();
    ops.clear();
    signals.clear();
    trailing_waits.clear();
    trailing_ops.clear();
    lead_window_id = 0;
    captured = false;
    skip_word = 0;
    counts_unordered = false;
    send_group = 0;
  }
};

struct WatchdogReport {
  uint32_t window_id = 0;
  int peer = -1;
  uint32_t reason = 0;  // work::WaitReason
  uint64_t expected = 0, observed = 0;
  const void *stream = nullptr;  // the stream that ran the list (null where the backend cannot tell)
  uint64_t more = 0;             // later timeouts on the same window, folded into this report
  // The wait ended at once, behind an earlier timeout of its window or communicator
  // (work::fault_skips), not by its own watchdog.
  bool after_fault = false;
};

// Error codes of backend calls (0 = success); the core maps them to MPI error classes.
enum Status : int { kOk = 0, kErrRuntime = 1, kErrNoMemory = 2, kErrUnsupported = 3, kErrTimeout = 4 };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char *name() const = 0;
  // Last error explanation, for error messages.
  virtual std::string last_error() const = 0;

  // True if windows over this memory are managed by this backend (device memory; any host memory
  // on the host backend).
  virtual bool manages_memory(const void *ptr) = 0;

  // Window memory for MPI_Win_allocate on this backend (shared memory on the host backend).
  virtual int allocate_window_memory(size_t bytes, void **ptr) = 0;
  virtual void free_window_memory(void *ptr) = 0;
  // Zeroed memory for 64-bit epoch flags: polled by this process's stream, stored to by peers.
  virtual int allocate_flags(size_t bytes, void **ptr) = 0;
  virtual void free_flags(void *ptr) = 0;

  // Zeroed pinned host memory, also reached by this process's streams.
  virtual int allocate_host_mapped(size_t bytes, HostMapped *out) = 0;
  virtual void free_host_mapped(HostMapped *m) = 0;
  // Maps I/O memory (a NIC's MMIO page) for this process's streams: *device is the address work
  // items store to. kErrUnsupported where the runtime cannot.
  virtual int map_io_memory([[maybe_unused]] void *host, [[maybe_unused]] size_t bytes,
                            [[maybe_unused]] void **device) {
    return kErrUnsupported;
  }
  virtual void unmap_io_memory([[maybe_unused]] void *host) {}

  virtual int export_region(void *ptr, size_t bytes, RegionHandle *out) = 0;
  // `owner_pid`: the process that exported the region.
  virtual int import_region(const RegionHandle &handle, int owner_pid, MappedRegion *out) = 0;
  virtual void release_region(MappedRegion *region) = 0;
  // Every peer has imported the region exported from `ptr` (or failed to): the backend may drop
  // what let them find it. The host backend unlinks the shared-memory name, so a process killed
  // later leaves nothing behind in /dev/shm; exporting that memory again reaches it by copying.
  virtual void exported_region_mapped([[maybe_unused]] void *ptr) {}

  // Enqueue a work list on `stream` as one stream operation (more only when it exceeds one launch).
  virtual int enqueue(void *stream, const WorkList &list) = 0;
  // Enqueue one collective call (kernels/coll/args.h) on `stream` as one stream operation. The
  // backend fills args.mailbox and args.barrier.
  virtual int enqueue_collective(void *stream, coll::Args args) = 0;
  // Runs fn(arg) on a host thread when `stream` reaches this point (a host node of the graph where
  // the stream is being captured): one stream operation. fn must not call the backend, the GPU
  // runtime or MPI.
  virtual int enqueue_host_call(void *stream, void (*fn)(void *), void *arg) = 0;
  // Copies host data into memory this backend allocated (flags, window memory), synchronously.
  // Not for use while a stream of this process is being captured.
  virtual int copy_to_device(void *dst, const void *src, size_t bytes) = 0;
  // Run a work list now and wait for it (host-driven RMA).
  virtual int execute(const WorkList &list) = 0;
  virtual int synchronize(void *stream) = 0;
  // Whether `stream` is being captured into a graph (CUDA/HIP stream capture, or an
  // MPIX_Host_stream between begin and end of capture). Work enqueued then runs at each replay.
  virtual int capture_status(void *stream, bool *capturing) = 0;
  // The live-window table (work::window_key, backend/window_table.h): window `window_id` takes an
  // entry no live window holds (alive), or gives it back (not alive; replays of its captured
  // graphs then do nothing). kErrNoMemory when every entry holds a live window (last_error says so).
  virtual int set_window_alive(uint32_t window_id, bool alive) = 0;
  // Host read of a flag in this process's flag memory.
  virtual uint64_t read_flag(const uint64_t *flag) = 0;
  // A wait of an earlier enqueue timed out (MPIX_ST_WATCHDOG_MS): takes the pending report of
  // window `window_id` (0: of any window) that ran on `stream` (null: on any stream), once.
  virtual bool take_watchdog_report(WatchdogReport *out, uint32_t window_id, const void *stream) = 0;
  // Marks live window `window_id`'s fault word pending (work::fault_skips), as a timeout of one of
  // its waits does: its queued lists end their waits at once. For a window whose group holds a
  // process found dead.
  virtual void mark_fault(uint32_t window_id) = 0;
  // The reports not yet taken, left in place (any thread may ask: the fault monitor does).
  virtual void peek_watchdog_reports(std::vector<WatchdogReport> *out) = 0;
  virtual uint64_t stream_ops_enqueued() const = 0;
  // The device this backend's memory lives on (GPU backends: the one current at start-up).
  virtual int device_ordinal() const { return 0; }
  // Names the device across processes (its PCI bus id; "" on the host backend), so ranks can tell
  // which of them share one.
  virtual std::string device_id() const { return ""; }
  // `n` processes (this one included) run kernels on this device. Kernels whose blocks wait on
  // other processes must leave room for theirs: grids shrink to 1/n of the device (the largest n
  // seen counts).
  virtual void set_device_sharers([[maybe_unused]] int n) {}
  // MPIX_ST_TRACE (kernels/launch_trace.h): this process's launch trace copied to host memory,
  // after every stream of the process is synchronised: the log's header, its written records
  // (min(claimed, capacity)) and the name of the clock that stamped them. False on failure
  // (last_error says why); never called where tracing is off.
  virtual bool read_launch_trace(work::TraceLog *header, std::vector<work::TraceRecord> *records, const char **clock) = 0;
  // Hardware multicast (multicast.h), asked only with MPIX_ST_MULTICAST=1: the driver steps of
  // this backend, or null and why not. The host backend has no multicast hardware; the HIP
  // plugin has none either (HIP has no multicast objects: bcast keeps the IPC 'direct'
  // algorithm). The CUDA plugin's steps are compiled only, never run (README, "Collectives").
  virtual const MulticastDriver *multicast_driver(std::string *why_not) {
    *why_not = std::string(name()) + " backend: no hardware multicast; bcast uses its normal algorithm";
    return nullptr;
  }
};

// The backend of this process: MPIX_ST_BACKEND=auto|host|cuda|hip (auto: a GPU backend when its
// plugin loads and sees a device, else host). Never null once selected.
Backend &backend();
// The host backend alone (host streams, shared memory), whatever the process backend is.
Backend &host_backend();

// ABI of the GPU backend plugins (libmpixst_cuda.so, libmpixst_hip.so).
using PluginCreateFn = Backend *(*)(std::string *why_not);
constexpr const char *kPluginCreateSymbol = "mpixst_backend_create";

}  // namespace mpix::gpu
