// The GPU backend's class, one source built twice: as the CUDA plugin and as the HIP plugin. Its
// parts: start-up, device facts and errors (device_backend.cpp), memory and IPC mapping
// (device_memory.cpp), launches and stream operations (device_launch.cpp), and epoch calls merged
// under capture (device_capture.cpp).
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/window_table.h"
#include "kernels/epoch_launch.h"
#include "runtime_map.h"

namespace mpix::gpu {

constexpr uint32_t kIpcRegion = 1;
constexpr int kThreadsPerBlock = kLaunchThreads;  // epoch_launch.h: the kernels are built for it
constexpr uint32_t kTicketSlots = 4096;
constexpr uint32_t kBarrierSlots = 4096;  // collective launches: 4 words each, reset by the launch

class DeviceBackend final : public Backend {
 public:
  // ---- start-up, device facts, errors (device_backend.cpp) ----
  bool init(std::string *why);
  bool read_launch_trace(work::TraceLog *header, std::vector<work::TraceRecord> *records, const char **clock) override;
  const char *name() const override { return MPIX_GPU_BACKEND_NAME; }
  std::string last_error() const override;
  bool take_watchdog_report(WatchdogReport *out, uint32_t window_id, const void *stream) override;
  void mark_fault(uint32_t window_id) override;
  void peek_watchdog_reports(std::vector<WatchdogReport> *out) override;
  uint64_t stream_ops_enqueued() const override { return launches_.load(); }
  int device_ordinal() const override { return device_; }
  std::string device_id() const override { return device_id_; }
  void set_device_sharers(int n) override;
  const MulticastDriver *multicast_driver(std::string *why_not) override;

  // ---- memory and IPC mapping (device_memory.cpp) ----
  bool manages_memory(const void *ptr) override;
  int allocate_window_memory(size_t bytes, void **ptr) override;
  void free_window_memory(void *ptr) override;
  int allocate_host_mapped(size_t bytes, HostMapped *out) override;
  void free_host_mapped(HostMapped *m) override;
  int map_io_memory(void *host, size_t bytes, void **device) override;
  void unmap_io_memory(void *host) override;
  int allocate_flags(size_t bytes, void **ptr) override;
  void free_flags(void *ptr) override;
  int export_region(void *ptr, size_t bytes, RegionHandle *out) override;
  int import_region(const RegionHandle &h, int owner_pid, MappedRegion *out) override;
  void release_region(MappedRegion *r) override;
  int copy_to_device(void *dst, const void *src, size_t bytes) override;
  int set_window_alive(uint32_t window_id, bool alive) override;
  uint64_t read_flag(const uint64_t *flag) override;

  // ---- launches and stream operations (device_launch.cpp) ----
  int enqueue(void *stream, const WorkList &list) override;
  int enqueue_collective(void *stream, coll::Args args) override;
  int enqueue_host_call(void *stream, void (*fn)(void *), void *arg) override;
  int execute(const WorkList &list) override;
  int synchronize(void *stream) override;

  // ---- epoch calls merged under capture (device_capture.cpp) ----
  int capture_status(void *stream, bool *capturing) override;

 private:
  // MPIX_ST_STREAM_WAITS: where an eager list waits for its peers' flags.
  //   kernel     in the merged kernel only (spinning);
  //   memop      first in stream memory waits, then the kernel (whose own wait then passes at once);
  //   automatic  memop where several ranks share a device that time-slices between processes
  //              (CUDA without MPS), kernel elsewhere.
  // On a time-sliced device a kernel spinning on a peer's flag holds the slice the peer needs to
  // store it (measured: two ranks on one H100 without MPS, Faces st 6.1x slower than rma). A
  // memory wait holds no SM and lets the device switch to the peer. Only absolute values can be
  // waited for this way (epochs.cpp, resolve_cursors: windows never captured); captured lists and
  // lists with a watchdog (MPIX_ST_WATCHDOG_MS) wait in the kernel, where the watchdog is. The
  // kernel's wait stays either way: it is what acquires the peer's data.
  enum class WaitMode { automatic, kernel, memop };

  // A peer allocation mapped here (IPC), shared by every region over it; `id` is the regions'
  // cookie. The exporter's pid and address range tell stale mappings apart (import_region).
  struct Mapping {
    void *base;
    int refs;
    uint64_t id;
    int pid;
    uint64_t exporter_base, exporter_bytes;
  };
  uint64_t next_mapping_id_ = 1;  // guarded by map_mu_
  void drop_stale_mappings(int pid, uint64_t exporter_base, uint64_t exporter_bytes);
  struct IoPage {
    void *device;
    size_t bytes;
    int refs;
  };
  // The last list a capture on a stream recorded as one kernel node.
  struct CaptureTail {
    unsigned long long capture = 0;
    gpuGraphNode_t node = nullptr;
    WorkList list;
  };

  // device_backend.cpp
  bool allocate_launch_trace();
  int check(gpuError_t e, const char *what, int status = kErrRuntime);
  int fail(int status, std::string why);
  // A grid waiting for its predecessor holds resident blocks: where ranks share a device, that
  // could leave a peer's grid, which ours waits for, without room. Overlap only on a device of one.
  bool launch_overlap() const { return overlap_capable_ && sharers_ <= 1; }

  // device_memory.cpp
  void *take_spare_flags(size_t bytes);

  // device_launch.cpp
  void choose_waits();
  void wait_outside_kernels(void *stream, const WorkList &list);
  bool is_large_copy(const work::Item &it) const;
  bool has_large_copy(const WorkList &list) const;
  // A list's windows in the live-window table (work::LaunchHeader: window_key, lead_key, taken);
  // all 0 for host-driven work, which neither checks nor marks faults.
  struct ListKeys {
    uint64_t window = 0, lead = 0;
    uint32_t taken = 0;
  };
  ListKeys keys_of(const WorkList &list) const;
  // A communicator's fault word for its collectives (coll::Args::fault) and its reports taken so
  // far; word null once every one of the area's words serves another communicator.
  struct CommFault {
    uint64_t *word = nullptr;
    uint32_t taken = 0;
  };
  CommFault comm_fault(uint32_t comm_id);
  template <class Launch>
  int for_each_launch(const WorkList &list, const ListKeys &keys, uint16_t bits, Launch &&launch);
  int launch_all(void *stream, const WorkList &list, bool user_stream, uint16_t bits = 0);
  bool one_launch(const WorkList &list, work::LaunchParams *params, int *blocks);

  // device_capture.cpp
  gpuGraphNode_t capture_sole_dependency(void *stream, unsigned long long *capture);
  bool merge_into_tail(void *stream, const WorkList &list);
  void remember_tail(void *stream, const WorkList &list);

  int device_ = 0;
  int max_blocks_ = 64;
  static constexpr uint64_t kCopyBlockKib = 16;
  uint64_t bytes_per_block_ = kCopyBlockKib * 1024;
  uint64_t pairs_per_block_ = 512;  // runs per block of a derived-datatype list (MPIX_ST_PAIRS_PER_BLOCK)
  static constexpr uint64_t kSpreadBlocks = 64, kSpreadBlockBytes = 4096;
  uint64_t spread_blocks_ = kSpreadBlocks;  // MPIX_ST_COPY_SPREAD_BLOCKS
  uint64_t copy_engine_bytes_ = 128ull << 20;
  work::WatchdogMailbox *mailbox_ = nullptr;  // host-mapped, written by a timed-out wait (area_'s)
  work::WatchdogArea *area_ = nullptr;        // host-mapped: the mailbox and the fault words
  uint32_t *tickets_ = nullptr;               // block-completion counters of multi-block launches
  std::atomic<uint32_t> next_ticket_{0};
  uint32_t *barriers_ = nullptr;  // grid-barrier words of collective launches (kBarrierSlots x 4)
  std::atomic<uint32_t> next_barrier_{0};
  int coll_max_blocks_ = 16;
  int device_max_blocks_ = 64, device_coll_blocks_ = 16, sharers_ = 0;
  WaitMode wait_mode_ = WaitMode::automatic;
  bool time_sliced_ = false, memop_waits_ = false, overlap_capable_ = false;
  std::string device_id_;
  uint64_t *keys_ = nullptr;                  // the live-window table the kernels read, device memory
  WindowTable table_;                         // which entry each live window holds (host side)
  work::TraceLog *trace_ = nullptr;           // MPIX_ST_TRACE: the launch trace's log, device memory
  std::map<void *, size_t> flag_blocks_;      // every flag allocation and its size (never freed)
  std::multimap<size_t, void *> spare_flags_;  // by size: those whose window or communicator was freed
  gpuStream_t internal_ = nullptr;  // host-driven RMA runs its copies here
  mutable std::mutex mu_;
  std::string last_error_;
  std::mutex map_mu_;
  std::map<std::string, Mapping> mappings_;
  std::map<void *, IoPage> io_pages_;  // by host address; guarded by map_mu_ too
  std::atomic<uint64_t> launches_{0};
  std::mutex tails_mu_;
  std::map<void *, CaptureTail> tails_;  // by stream: the last captured list, while it can be joined
  std::map<uint32_t, uint32_t> comm_faults_;   // communicator id -> index in area_->comm_fault (under mu_)
  std::vector<uint32_t> comm_reports_taken_;  // by that index (under mu_)
};

}  // namespace mpix::gpu
