// The GPU backend, one source built twice: as the CUDA plugin and as the HIP plugin.
// Window memory is device memory shared through runtime IPC handles; flags are device memory the
// local stream polls and peers store to; one work list becomes one merged-kernel launch.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/launch_trace_file.h"
#include "backend/list_merge.h"
#include "kernels/epoch_launch.h"
#include "runtime_map.h"
#include "settings/settings.h"
#if !defined(MPIX_GPU_HIP)
#include "multicast_cuda.h"
#endif

namespace mpix::gpu {
namespace {

using settings::Id;

constexpr uint32_t kIpcRegion = 1;
constexpr int kThreadsPerBlock = kLaunchThreads;  // epoch_launch.h: the kernels are built for it
constexpr uint32_t kTicketSlots = 4096;
constexpr uint32_t kBarrierSlots = 4096;  // collective launches: 4 words each, reset by the launch

class DeviceBackend final : public Backend {
 public:
  bool init(std::string *why) {
    int count = 0;
    if (MPIX_GPU(GetDeviceCount)(&count) != gpuSuccess || count == 0) {
      *why = std::string(MPIX_GPU_BACKEND_NAME) + ": no device visible";
      return false;
    }
    int sms = 0;
    if (MPIX_GPU(GetDevice)(&device_) != gpuSuccess ||
        MPIX_GPU(DeviceGetAttribute)(&sms, gpuDevAttrMultiProcessorCount, device_) != gpuSuccess)
      sms = 0;
    // Copy grid: one block per MPIX_ST_COPY_BLOCK_KIB of data, at most MPIX_ST_COPY_BLOCKS_PER_SM per SM.
    // More than the kernel was built to keep resident could leave waiting blocks without an SM.
    static_assert(settings::entry(Id::MPIX_ST_COPY_BLOCKS_PER_SM).max == kEpochBlocksPerSm);
    const int per_sm = static_cast<int>(settings::number(Id::MPIX_ST_COPY_BLOCKS_PER_SM));
    device_max_blocks_ = (sms > 0 ? sms : 32) * per_sm;
    // Collective blocks wait for peers' blocks of their channel: all of them must run at once.
    device_coll_blocks_ = (sms > 0 ? sms : 16) * kCollBlocksPerSm;
    set_device_sharers(1);
    char bus[32] = {};
    if (MPIX_GPU(DeviceGetPCIBusId)(bus, sizeof bus - 1, device_) == gpuSuccess) device_id_ = bus;
    // 16 KiB: Faces' exchanges and a captured 256 KiB epoch ran 5-9% faster than with 64 on 2 H100s,
    // puts of 4-64 MiB within 2% (README, "One system fence per list of several blocks").
    // (The table's ranges: at least 1, and the products stay far inside 64 bits.)
    bytes_per_block_ = settings::number(Id::MPIX_ST_COPY_BLOCK_KIB) * 1024;
    pairs_per_block_ = settings::number(Id::MPIX_ST_PAIRS_PER_BLOCK);
    // A list of a few hundred KiB is bound by its blocks' memory round trips, not by bandwidth:
    // it spreads over up to this many blocks of at least 4 KiB. On 2 H200s a 210 KiB Faces
    // exchange took 0.54 us less (13 to 52 blocks); 4 KiB blocks for every list instead made
    // the periodic case, whose lists are larger, 8 us slower (README, "Launch trace").
    spread_blocks_ = settings::number(Id::MPIX_ST_COPY_SPREAD_BLOCKS);
    copy_engine_bytes_ = settings::number(Id::MPIX_ST_COPY_ENGINE_MIB) << 20;  // 0: never
    const std::string &waits = settings::word(Id::MPIX_ST_STREAM_WAITS);
    wait_mode_ = waits == "auto" ? WaitMode::automatic : waits == "memop" ? WaitMode::memop : WaitMode::kernel;
    time_sliced_ = gpu_device_time_sliced(device_);
    choose_waits();
    // MPIX_ST_LAUNCH_OVERLAP=0 turns it off (kernels/launch_overlap.h); devices without it ignore it.
    overlap_capable_ = settings::flag(Id::MPIX_ST_LAUNCH_OVERLAP) && mpix_kernels_support_overlap();
    if (gpuHostAlloc(reinterpret_cast<void **>(&mailbox_), sizeof *mailbox_, gpuHostAllocMapped) != gpuSuccess ||
        MPIX_GPU(Malloc)(reinterpret_cast<void **>(&tickets_), kTicketSlots * sizeof(uint32_t)) != gpuSuccess ||
        MPIX_GPU(Memset)(tickets_, 0, kTicketSlots * sizeof(uint32_t)) != gpuSuccess ||
        MPIX_GPU(Malloc)(reinterpret_cast<void **>(&barriers_), kBarrierSlots * 4 * sizeof(uint32_t)) != gpuSuccess ||
        MPIX_GPU(Memset)(barriers_, 0, kBarrierSlots * 4 * sizeof(uint32_t)) != gpuSuccess ||
        MPIX_GPU(Malloc)(reinterpret_cast<void **>(&alive_), work::kAliveSlots * sizeof(uint32_t)) != gpuSuccess ||
        MPIX_GPU(Memset)(alive_, 0, work::kAliveSlots * sizeof(uint32_t)) != gpuSuccess ||
        !allocate_launch_trace() ||
        // Those memsets ran on the legacy stream, which the users' non-blocking streams do not wait for.
        MPIX_GPU(DeviceSynchronize)() != gpuSuccess ||
        MPIX_GPU(StreamCreateWithFlags)(&internal_, gpuStreamNonBlocking) != gpuSuccess) {
      *why = std::string(MPIX_GPU_BACKEND_NAME) + ": start-up allocations failed";
      return false;
    }
    std::memset(mailbox_, 0, sizeof *mailbox_);
    return true;
  }

  // MPIX_ST_TRACE: the launch trace's log in device memory (kernels/launch_trace.h); null when off.
  bool allocate_launch_trace() {
    if (!launch_trace_prefix()) return true;
    const uint64_t capacity = launch_trace_capacity();
    const work::TraceLog header{0, capacity};
    return MPIX_GPU(Malloc)(reinterpret_cast<void **>(&trace_), work::trace_log_bytes(capacity)) == gpuSuccess &&
           MPIX_GPU(Memset)(trace_, 0, work::trace_log_bytes(capacity)) == gpuSuccess &&
           MPIX_GPU(Memcpy)(trace_, &header, sizeof header, MPIX_GPU(MemcpyHostToDevice)) == gpuSuccess;
  }

  bool read_launch_trace(work::TraceLog *header, std::vector<work::TraceRecord> *records, const char **clock) override {
#if defined(MPIX_GPU_HIP)
    *clock = "s_memrealtime";
#else
    *clock = "globaltimer";
#endif
    if (!trace_) {
      fail(kErrRuntime, "no trace log (MPIX_ST_TRACE was set after start-up)");
      return false;
    }
    if (check(MPIX_GPU(DeviceSynchronize)(), "synchronising for the launch trace") != kOk ||
        check(MPIX_GPU(Memcpy)(header, trace_, sizeof *header, MPIX_GPU(MemcpyDeviceToHost)), "reading the trace header") != kOk)
      return false;
    records->resize(std::min<uint64_t>(header->claimed, header->capacity));
    return check(MPIX_GPU(Memcpy)(records->data(), trace_->records(), records->size() * sizeof(work::TraceRecord),
                                  MPIX_GPU(MemcpyDeviceToHost)),
                 "reading the trace records") == kOk;
  }

  const char *name() const override { return MPIX_GPU_BACKEND_NAME; }
  std::string last_error() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return last_error_;
  }

  bool manages_memory(const void *ptr) override {
    gpuPointerAttributes attr{};
    if (MPIX_GPU(PointerGetAttributes)(&attr, ptr) != gpuSuccess) {
      (void)MPIX_GPU(GetLastError)();  // plain host pointers report an error on some runtimes
      return false;
    }
    return gpu_is_device_memory(attr);
  }

  int allocate_window_memory(size_t bytes, void **ptr) override {
    return check(MPIX_GPU(Malloc)(ptr, bytes ? bytes : 1), "window allocation", kErrNoMemory);
  }
  void free_window_memory(void *ptr) override { (void)MPIX_GPU(Free)(ptr); }

  int allocate_host_mapped(size_t bytes, HostMapped *out) override {
    *out = HostMapped{};
    if (int st = check(gpuHostAlloc(&out->host, bytes ? bytes : 1, gpuHostAllocMapped | gpuHostAllocPortable),
                       "pinned host allocation", kErrNoMemory))
      return st;
    std::memset(out->host, 0, bytes);
    if (int st = check(MPIX_GPU(HostGetDevicePointer)(&out->device, out->host, 0), "device view of host memory")) {
      (void)gpuFreeHost(out->host);
      *out = HostMapped{};
      return st;
    }
    return kOk;
  }
  void free_host_mapped(HostMapped *m) override {
    if (m->host) (void)gpuFreeHost(m->host);
    *m = HostMapped{};
  }

  // One registration per page, shared by every caller that maps it (runtimes refuse to register
  // a page twice, and several counters' adders may share one).
  int map_io_memory(void *host, size_t bytes, void **device) override {
    *device = nullptr;
    std::lock_guard<std::mutex> lock(map_mu_);
    auto it = io_pages_.find(host);
    if (it == io_pages_.end()) {
      gpuError_t e = MPIX_GPU(HostRegister)(host, bytes, gpuHostRegisterIoMemory | gpuHostRegisterMapped);
      if (int st = check(e, "I/O memory registration", e == gpuErrorNotSupported ? kErrUnsupported : kErrRuntime))
        return st;
      void *dev = nullptr;
      if (int st = check(MPIX_GPU(HostGetDevicePointer)(&dev, host, 0), "device view of I/O memory")) {
        (void)MPIX_GPU(HostUnregister)(host);
        return st;
      }
      it = io_pages_.emplace(host, IoPage{dev, bytes, 0}).first;
    } else if (it->second.bytes != bytes) {
      return fail(kErrRuntime, "I/O memory already mapped with another size");
    }
    ++it->second.refs;
    *device = it->second.device;
    return kOk;
  }
  void unmap_io_memory(void *host) override {
    std::lock_guard<std::mutex> lock(map_mu_);
    auto it = io_pages_.find(host);
    if (it == io_pages_.end() || --it->second.refs > 0) return;
    (void)MPIX_GPU(HostUnregister)(host);
    io_pages_.erase(it);
  }

  // Flag memory is never handed back to the runtime: a captured launch replayed after its window
  // was freed reads its wait's cursor, in that memory, while it learns that the window is gone
  // (epoch_kernel.cu), so the memory stays mapped. Freed blocks serve later windows.
  int allocate_flags(size_t bytes, void **ptr) override {
    *ptr = take_spare_flags(bytes);
    if (!*ptr) {
      if (int st = check(gpu_malloc_flags(ptr, bytes), "flag allocation", kErrNoMemory)) return st;
      std::lock_guard<std::mutex> lock(map_mu_);
      flag_blocks_[*ptr] = bytes;
    }
    // Zeroed on the internal stream and waited for: a plain memset runs on the legacy stream, which
    // the non-blocking internal stream does not wait for, so a copy_to_device of initial values
    // could land first and be zeroed (seen on a GPU time-sliced between two processes).
    gpuError_t e = MPIX_GPU(MemsetAsync)(*ptr, 0, bytes, internal_);
    if (e == gpuSuccess) e = MPIX_GPU(StreamSynchronize)(internal_);
    return check(e, "flag initialisation");
  }
  void free_flags(void *ptr) override {
    std::lock_guard<std::mutex> lock(map_mu_);
    auto it = flag_blocks_.find(ptr);
    if (it != flag_blocks_.end()) spare_flags_.emplace(it->second, ptr);
  }

  int export_region(void *ptr, size_t bytes, RegionHandle *out) override {
    *out = RegionHandle{};
    void *base = nullptr;
    if (int st = check(gpu_allocation_base(ptr, &base), "allocation base lookup")) return st;
    gpuIpcMemHandle_t h;
    if (int st = check(MPIX_GPU(IpcGetMemHandle)(&h, base), "IPC handle export")) return st;
    static_assert(sizeof h <= sizeof out->data);
    out->kind = kIpcRegion;
    out->offset = static_cast<uint64_t>(static_cast<char *>(ptr) - static_cast<char *>(base));
    out->bytes = bytes;
    std::memcpy(out->data, &h, sizeof h);
    return kOk;
  }

  // One mapping per peer allocation, shared by every window over it (runtimes refuse to open the
  // same handle twice in one process).
  int import_region(const RegionHandle &h, int, MappedRegion *out) override {
    *out = MappedRegion{};
    if (h.kind != kIpcRegion) return fail(kErrUnsupported, "region was not exported by this backend");
    std::string key(reinterpret_cast<const char *>(h.data), sizeof(gpuIpcMemHandle_t));
    std::lock_guard<std::mutex> lock(map_mu_);
    auto it = mappings_.find(key);
    if (it == mappings_.end()) {
      gpuIpcMemHandle_t handle;
      std::memcpy(&handle, h.data, sizeof handle);
      void *base = nullptr;
      if (int st = check(MPIX_GPU(IpcOpenMemHandle)(&base, handle, gpuIpcMemLazyEnablePeerAccess),
                         "IPC handle open"))
        return st;
      it = mappings_.emplace(key, Mapping{base, 0}).first;
    }
    ++it->second.refs;
    out->base = static_cast<char *>(it->second.base) + h.offset;
    out->cookie = it->second.base;
    return kOk;
  }

  void release_region(MappedRegion *r) override {
    if (r->cookie) {
      std::lock_guard<std::mutex> lock(map_mu_);
      for (auto it = mappings_.begin(); it != mappings_.end(); ++it) {
        if (it->second.base != r->cookie) continue;
        if (--it->second.refs == 0) {
          (void)MPIX_GPU(IpcCloseMemHandle)(it->second.base);
          mappings_.erase(it);
        }
        break;
      }
    }
    *r = MappedRegion{};
  }

  // Copies of at least MPIX_ST_COPY_ENGINE_MIB ride the copy engine: the list becomes a kernel for
  // its waits and other work, the engine copies, and a kernel for its signals. Below that size one
  // merged kernel is cheaper (one enqueue instead of three).
  int enqueue(void *stream, const WorkList &list) override {
    wait_outside_kernels(stream, list);
    if (copy_engine_bytes_ == 0 || !has_large_copy(list)) {
      if (!list.captured || !graph_merge_enabled()) return launch_all(stream, list, true);
      if (merge_into_tail(stream, list)) return kOk;
      const uint64_t before = launches_.load();
      if (int st = launch_all(stream, list, true)) return st;
      // A list of several launches is no tail: the next call's capture check finds another node.
      if (launches_.load() == before + 1) remember_tail(stream, list);
      return kOk;
    }
    WorkList head, tail;
    head.window_id = tail.window_id = list.window_id;
    head.watchdog_ns = tail.watchdog_ns = list.watchdog_ns;
    head.captured = tail.captured = list.captured;
    head.waits = list.waits;
    std::vector<const work::Item *> large;
    for (const work::Item &it : list.ops) {
      if (is_large_copy(it)) large.push_back(&it);
      else head.ops.push_back(it);
    }
    tail.signals = list.signals;
    tail.skip_word = list.skip_word;  // the signals, and so any doorbell, are the tail's
    tail.trailing_waits = list.trailing_waits;
    tail.trailing_ops = list.trailing_ops;
    if (int st = launch_all(stream, head, true)) return st;
    for (const work::Item *it : large) {
      gpuError_t e = MPIX_GPU(MemcpyAsync)(reinterpret_cast<void *>(it->a), reinterpret_cast<const void *>(it->b),
                                           it->bytes, MPIX_GPU(MemcpyDeviceToDevice), static_cast<gpuStream_t>(stream));
      if (int st = check(e, "copy-engine put")) return st;
      ++launches_;
    }
    return launch_all(stream, tail, true, work::kSkipIfWatchdogFired);
  }

  // One launch per call: a block per channel, as many as stay resident beside the device's other
  // ranks (a block runs several channels in turn beyond that).
  int enqueue_collective(void *stream, coll::Args args) override {
    const int blocks = static_cast<int>(std::min<uint64_t>(coll_max_blocks_, coll::channel_count(args)));
    args.mailbox = reinterpret_cast<uint64_t>(mailbox_);
    args.barrier = reinterpret_cast<uint64_t>(barriers_ + 4 * (next_barrier_.fetch_add(1) % kBarrierSlots));
    args.trace = reinterpret_cast<uint64_t>(trace_);
    // The call's block size (src/coll/collectives.cpp), within what the kernel is built for.
    const int threads = args.threads ? std::min<int>(static_cast<int>(args.threads), kThreadsPerBlock) : kThreadsPerBlock;
    const int err = mpix_launch_coll_kernel(args, blocks, threads, stream, launch_overlap());
    if (err != 0)
      return fail(kErrRuntime,
                  std::string("collective kernel launch: ") + MPIX_GPU(GetErrorString)(static_cast<gpuError_t>(err)));
    ++launches_;
    return kOk;
  }

  int copy_to_device(void *dst, const void *src, size_t bytes) override {
    gpuError_t e = MPIX_GPU(MemcpyAsync)(dst, src, bytes, MPIX_GPU(MemcpyHostToDevice), internal_);
    if (e == gpuSuccess) e = MPIX_GPU(StreamSynchronize)(internal_);
    return check(e, "copy to device");
  }

  int execute(const WorkList &list) override {
    if (int st = launch_all(internal_, list, false)) return st;
    return synchronize(internal_);
  }

  int synchronize(void *stream) override {
    if (int st = check(MPIX_GPU(StreamSynchronize)(static_cast<gpuStream_t>(stream)), "stream synchronize"))
      return st;
    return mailbox_->fired ? kErrTimeout : kOk;
  }

  int capture_status(void *stream, bool *capturing) override {
    gpuStreamCaptureStatus status = gpuStreamCaptureStatusNone;
    *capturing = false;
    if (int st = check(MPIX_GPU(StreamIsCapturing)(static_cast<gpuStream_t>(stream), &status), "stream capture query"))
      return st;
    *capturing = status != gpuStreamCaptureStatusNone;
    return kOk;
  }

  int set_window_alive(uint32_t window_id, bool alive) override {
    const uint32_t value = alive ? window_id + 1 : 0;
    gpuError_t e = MPIX_GPU(MemcpyAsync)(alive_ + work::window_alive_slot(window_id), &value, sizeof value,
                                         MPIX_GPU(MemcpyHostToDevice), internal_);
    if (e == gpuSuccess) e = MPIX_GPU(StreamSynchronize)(internal_);
    return check(e, "window table update");
  }

  uint64_t read_flag(const uint64_t *flag) override {
    uint64_t v = 0;
    if (MPIX_GPU(MemcpyAsync)(&v, flag, sizeof v, MPIX_GPU(MemcpyDeviceToHost), internal_) != gpuSuccess ||
        MPIX_GPU(StreamSynchronize)(internal_) != gpuSuccess)
      (void)MPIX_GPU(GetLastError)();
    return v;
  }

  // One mailbox per process holds the first timeout (until taken); it does not know the stream.
  bool take_watchdog_report(WatchdogReport *out, uint32_t window_id, const void *) override {
    volatile work::WatchdogMailbox *box = mailbox_;
    if (!box->fired) return false;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (window_id && box->window_id != window_id) return false;
    *out = WatchdogReport{box->window_id, box->peer, box->reason, box->expected, box->observed};
    box->fired = 0;
    return true;
  }

  uint64_t stream_ops_enqueued() const override { return launches_.load(); }
  int device_ordinal() const override { return device_; }
  std::string device_id() const override { return device_id_; }

  // Every block of an epoch or collective kernel may spin on another process's flags: with n
  // processes on the device, a grid larger than 1/n of it can hold every SM while the kernel it
  // waits for cannot start (measured: two ranks on one H100, a 64 MiB put's 264 blocks waited
  // forever for the other rank's one-block post).
  void set_device_sharers(int n) override {
    if (n <= sharers_) return;
    sharers_ = n;
    max_blocks_ = std::max(1, device_max_blocks_ / n);
    coll_max_blocks_ = std::max(1, device_coll_blocks_ / n);
    choose_waits();
  }
  // A grid waiting for its predecessor holds resident blocks: where ranks share a device, that
  // could leave a peer's grid, which ours waits for, without room. Overlap only on a device of one.
  bool launch_overlap() const { return overlap_capable_ && sharers_ <= 1; }

  // Asked only with MPIX_ST_MULTICAST=1 (src/coll/multicast_choice.h).
  const MulticastDriver *multicast_driver(std::string *why_not) override {
#if defined(MPIX_GPU_HIP)
    // The HIP fallback: HIP has no multicast objects, so bcast keeps the IPC 'direct' algorithm
    // (the root stores into every peer's mapped scratch).
    *why_not = "HIP fallback: HIP has no multicast objects; bcast uses the IPC 'direct' algorithm";
    return nullptr;
#else
    return cuda_multicast_driver(device_, why_not);  // compiled only, never run
#endif
  }

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
  void choose_waits() {
    memop_waits_ =
        wait_mode_ == WaitMode::memop || (wait_mode_ == WaitMode::automatic && sharers_ > 1 && time_sliced_);
  }
  void wait_outside_kernels(void *stream, const WorkList &list) {
    if (!memop_waits_ || list.captured || list.watchdog_ns) return;
    for (const work::Item &it : list.waits) {
      if (it.flags & work::kCursor) continue;  // relative to a cursor: only the kernel can read it
      if (it.kind != work::kWait) continue;    // a line put may end it without the flag (kWaitLines)
      if (gpu_stream_wait_geq(static_cast<gpuStream_t>(stream), reinterpret_cast<const uint64_t *>(it.a), it.b) !=
          gpuSuccess) {
        (void)MPIX_GPU(GetLastError)();
        memop_waits_ = false;  // the runtime refuses them: the kernels wait, as they always can
        return;
      }
    }
  }


  // The smallest freed flag block that holds `bytes`, or null.
  void *take_spare_flags(size_t bytes) {
    std::lock_guard<std::mutex> lock(map_mu_);
    auto best = spare_flags_.lower_bound(bytes);
    if (best == spare_flags_.end()) return nullptr;
    void *ptr = best->second;
    spare_flags_.erase(best);
    return ptr;
  }

  bool is_large_copy(const work::Item &it) const { return it.kind == work::kCopy && it.bytes >= copy_engine_bytes_; }
  bool has_large_copy(const WorkList &list) const {
    for (const work::Item &it : list.ops)
      if (is_large_copy(it)) return true;
    return false;
  }

  struct Mapping {
    void *base;
    int refs;
  };
  struct IoPage {
    void *device;
    size_t bytes;
    int refs;
  };

  // Splits the list into launches of at most kItemsPerLaunch items, preserving the order
  // leading signals < waits < ops < signals; a list that fits (every Faces exchange does) is one
  // launch. Trailing ops start a launch of their own (all blocks copy, after the trailing waits of
  // the one before). Calls launch(params, blocks) for each, in order; stops at its first error.
  template <class Launch>
  int for_each_launch(const WorkList &list, uint16_t bits, Launch &&launch) {
    // MPI orders accumulates of one origin by default: a list holding several runs each launch as
    // one block that applies them in order (see the kernel); the launches of a list that needs
    // more than one run in stream order, which keeps them ordered across launches too.
    int accumulates = 0;
    for (const work::Item &it : list.ops)
      accumulates += it.kind == work::kAccumulate || it.kind == work::kAccumulatePairs;
    const bool ordered = accumulates > 1;
    const bool no_data = list.trailing_ops.empty() && std::all_of(list.ops.begin(), list.ops.end(), [](const work::Item &it) {
                           return it.kind == work::kPutLines || it.kind == work::kLineTag;
                         });
    // Launch order (work_items.h): leading signals, waits, ops, stored signals, trailing waits,
    // counting signals. Scratch kept per thread: enqueue is the hot path, and it allocates nothing
    // once warm.
    thread_local std::vector<work::Item> stores, counts_signals;
    stores.clear();
    counts_signals.clear();
    for (const work::Item &it : list.signals) ((it.flags & work::kSignalAdd) ? counts_signals : stores).push_back(it);
    // Each part fills one count of the launch header (0 leading signals, 1 waits, 2 ops,
    // 3 signals, 4 trailing waits, 5 counting signals); trailing ops fill the ops of a later launch.
    struct Part {
      const std::vector<work::Item> *items;
      int slot;
    };
    Part parts[7] = {{&list.leading_signals, 0}, {&list.waits, 1}, {&list.ops, 2}, {&stores, 3},
                     {&list.trailing_waits, 4}, {&counts_signals, 5}};
    size_t nparts = 6, second_phase = nparts;
    if (!list.trailing_ops.empty()) {
      parts[5] = {&list.trailing_ops, 2};
      parts[6] = {&counts_signals, 5};
      nparts = 7;
      second_phase = 5;
    }
    size_t part = 0, index = 0;
    while (part < nparts) {
      work::LaunchParams p;
      std::memset(&p.h, 0, sizeof p.h);
      p.h.window_id = list.window_id;
      p.h.lead_window_id = list.lead_window_id;
      p.h.watchdog_ns = list.watchdog_ns;
      p.h.mailbox_addr = reinterpret_cast<uint64_t>(mailbox_);
      p.h.alive_addr = reinterpret_cast<uint64_t>(alive_);
      p.h.trace_addr = reinterpret_cast<uint64_t>(trace_);
      p.h.skip_addr = list.skip_word;
      uint16_t *counts[6] = {&p.h.nlead, &p.h.nwait, &p.h.ncopy, &p.h.nsignal, &p.h.ntrail, &p.h.ncount};
      size_t n = 0;
      uint64_t bytes = 0, runs = 0;
      const bool after_trailing_waits = part >= second_phase;
      for (; part < nparts; ++part, index = 0) {
        if (part == second_phase && !after_trailing_waits) break;  // trailing ops: a launch of their own
        const auto &v = *parts[part].items;
        const int slot = parts[part].slot;
        for (; index < v.size() && n < work::kItemsPerLaunch; ++index, ++n) {
          // An item and its companion (a pairs list, a line tag or area) share a launch.
          if (work::has_companion(v[index].kind) && n + 1 == work::kItemsPerLaunch) break;
          p.items[n] = v[index];
          // Data moved sizes the grid (a kPairList's `b` counts runs, its head has the bytes).
          const uint8_t kind = v[index].kind;
          if (slot == 2 && kind != work::kStore2 && !work::is_companion(kind)) bytes += v[index].bytes;
          if (kind == work::kPairList) runs += v[index].b;
          ++*counts[slot];
        }
        if (index < v.size()) break;  // this launch is full; the rest goes in the next
      }
      if (n == 0) {
        if (part < nparts) continue;  // an empty first phase
        break;
      }
      // Trailing ops are copies, never ordered accumulates; a timed-out trailing wait skips them.
      const bool one_block = ordered && !after_trailing_waits;
      p.h.bits = bits | (one_block ? work::kOrdered : 0) | (after_trailing_waits ? work::kSkipIfWatchdogFired : 0) |
                 (list.captured ? work::kCheckAlive : 0) | (no_data ? work::kNoData : 0);
      // Derived-datatype lists of many short runs are bound by their latency, not by bytes: a
      // block per pairs_per_block_ runs. Not per thread the runs take: every thread of a launch
      // walks every item, so blocks beyond the work cost instructions (README, Derived datatypes).
      const uint64_t want = std::max({bytes / bytes_per_block_, runs / pairs_per_block_,
                                      std::min<uint64_t>(spread_blocks_, bytes / kSpreadBlockBytes)});
      int blocks = one_block ? 1 : static_cast<int>(std::min<uint64_t>(max_blocks_, std::max<uint64_t>(1, want)));
      // The last of the blocks resets its ticket, so a replay of a captured launch finds it at 0.
      if (blocks > 1 && p.h.nsignal + p.h.ntrail + p.h.ncount > 0) {
        const uint32_t slot = next_ticket_.fetch_add(1) % kTicketSlots;
        p.h.ticket_addr = reinterpret_cast<uint64_t>(tickets_ + slot);
        p.h.ticket_expect = static_cast<uint32_t>(blocks);
      }
      if (int st = launch(p, blocks)) return st;
    }
    return kOk;
  }

  // `user_stream`: counts toward stream_ops_enqueued() (host-driven work on the internal stream does not).
  int launch_all(void *stream, const WorkList &list, bool user_stream, uint16_t bits = 0) {
    return for_each_launch(list, bits, [&](const work::LaunchParams &p, int blocks) {
      int err = mpix_launch_epoch_kernel(p, blocks, kThreadsPerBlock, stream, user_stream && launch_overlap());
      if (err != 0)
        return fail(kErrRuntime, std::string("epoch kernel launch: ") +
                                     MPIX_GPU(GetErrorString)(static_cast<gpuError_t>(err)));
      if (user_stream) ++launches_;
      return static_cast<int>(kOk);
    });
  }

  // ---- epoch calls merged under capture (list_merge.h) ----------------------------------------
  // The last list a capture on a stream recorded as one kernel node.
  struct CaptureTail {
    unsigned long long capture = 0;
    gpuGraphNode_t node = nullptr;
    WorkList list;
  };

  // The node `stream`'s capture would make the next node depend on, if it is exactly one; null
  // where it is not, or the stream is not capturing.
  gpuGraphNode_t capture_sole_dependency(void *stream, unsigned long long *capture) {
    gpuGraphNode_t node = nullptr;
    if (gpu_capture_sole_dependency(static_cast<gpuStream_t>(stream), capture, &node) != gpuSuccess) {
      (void)MPIX_GPU(GetLastError)();
      return nullptr;
    }
    return node;
  }

  // Gives `list` to the node of the previous captured list on `stream` where nothing was captured
  // on the stream since and one launch runs both: true if it did (the list is enqueued).
  bool merge_into_tail(void *stream, const WorkList &list) {
    std::lock_guard<std::mutex> lock(tails_mu_);
    auto it = tails_.find(stream);
    if (it == tails_.end()) return false;
    CaptureTail &tail = it->second;
    unsigned long long capture = 0;
    const gpuGraphNode_t only = capture_sole_dependency(stream, &capture);
    if (!only || capture != tail.capture || only != tail.node || !gpu_node_has_no_dependents(only)) {
      tails_.erase(it);
      return false;
    }
    WorkList merged = tail.list;
    if (!merge_captured(merged, list)) return false;
    int launches = 0;
    work::LaunchParams params;
    int blocks = 0;
    (void)for_each_launch(merged, 0, [&](const work::LaunchParams &p, int b) {
      if (++launches == 1) {
        params = p;
        blocks = b;
      }
      return static_cast<int>(kOk);
    });
    if (launches != 1) return false;  // (neither list has a copy-engine copy: enqueue sent those apart)
    if (mpix_set_epoch_kernel_node(only, params, blocks, kThreadsPerBlock) != 0) {
      (void)MPIX_GPU(GetLastError)();
      return false;
    }
    tail.list = std::move(merged);
    return true;
  }

  // After a captured list went out as one kernel launch: its node is the stream's tail.
  void remember_tail(void *stream, const WorkList &list) {
    std::lock_guard<std::mutex> lock(tails_mu_);
    CaptureTail tail;
    tail.node = capture_sole_dependency(stream, &tail.capture);
    if (!tail.node) {
      tails_.erase(stream);
      return;
    }
    tail.list = list;
    tails_[stream] = std::move(tail);
  }

  int check(gpuError_t e, const char *what, int status = kErrRuntime) {
    if (e == gpuSuccess) return kOk;
    (void)MPIX_GPU(GetLastError)();
    return fail(status, std::string(what) + ": " + MPIX_GPU(GetErrorString)(e));
  }

  int fail(int status, std::string why) {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_ = std::move(why);
    return status;
  }

  int device_ = 0;
  int max_blocks_ = 64;
  static constexpr uint64_t kCopyBlockKib = 16;
  uint64_t bytes_per_block_ = kCopyBlockKib * 1024;
  uint64_t pairs_per_block_ = 512;  // runs per block of a derived-datatype list (MPIX_ST_PAIRS_PER_BLOCK)
  static constexpr uint64_t kSpreadBlocks = 64, kSpreadBlockBytes = 4096;
  uint64_t spread_blocks_ = kSpreadBlocks;  // MPIX_ST_COPY_SPREAD_BLOCKS
  uint64_t copy_engine_bytes_ = 128ull << 20;
  work::WatchdogMailbox *mailbox_ = nullptr;  // host-mapped, written by a timed-out wait
  uint32_t *tickets_ = nullptr;               // block-completion counters of multi-block launches
  std::atomic<uint32_t> next_ticket_{0};
  uint32_t *barriers_ = nullptr;  // grid-barrier words of collective launches (kBarrierSlots x 4)
  std::atomic<uint32_t> next_barrier_{0};
  int coll_max_blocks_ = 16;
  int device_max_blocks_ = 64, device_coll_blocks_ = 16, sharers_ = 0;
  WaitMode wait_mode_ = WaitMode::automatic;
  bool time_sliced_ = false, memop_waits_ = false, overlap_capable_ = false;
  std::string device_id_;
  uint32_t *alive_ = nullptr;                 // live windows (work::window_alive_slot), device memory
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
};

}  // namespace
}  // namespace mpix::gpu

extern "C" __attribute__((visibility("default"))) mpix::gpu::Backend *mpixst_backend_create(std::string *why_not) {
  auto *b = new mpix::gpu::DeviceBackend();
  if (!b->init(why_not)) {
    delete b;
    return nullptr;
  }
  return b;
}
