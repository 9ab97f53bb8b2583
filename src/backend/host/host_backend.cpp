// The host backend: streams are worker threads, window memory and flags live in shared memory,
// windows over private memory are reached with cross-memory attach.
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/backend.h"
#include "backend/launch_trace_file.h"
#include "backend/list_merge.h"
#include "backend/window_table.h"
#include "host_exec.h"
#include "host_stream.h"
#include "shm_segments.h"

namespace mpix::gpu {
namespace {

enum HostRegionKind : uint32_t { kShm = 1, kCma = 2 };

struct ShmHandleData {
  uint64_t segment_bytes;
  char name[96];
};
static_assert(sizeof(ShmHandleData) <= sizeof(RegionHandle::data));

struct ShmMapping {
  void *base;  // the whole segment, mapped from its start
  uint64_t bytes;
};

class HostBackend final : public Backend {
 public:
  HostBackend() {
    // Let node-local peers use cross-memory attach on this process under Yama ptrace_scope=1.
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    if (launch_trace_prefix()) {
      const uint64_t capacity = launch_trace_capacity();
      trace_ = static_cast<work::TraceLog *>(std::calloc(1, work::trace_log_bytes(capacity)));
      if (trace_) trace_->capacity = capacity;  // without it, read_launch_trace reports the failure
    }
  }

  bool read_launch_trace(work::TraceLog *header, std::vector<work::TraceRecord> *records, const char **clock) override {
    *clock = "steady_clock";
    if (!trace_) {
      fail(kErrNoMemory, "no trace log (its allocation failed, or MPIX_ST_TRACE was set after start-up)");
      return false;
    }
    header->capacity = trace_->capacity;
    header->claimed = std::atomic_ref<unsigned long long>(trace_->claimed).load(std::memory_order_acquire);
    records->assign(trace_->records(), trace_->records() + std::min<uint64_t>(header->claimed, header->capacity));
    return true;
  }
  const char *name() const override { return "host"; }
  std::string last_error() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return last_error_;
  }

  bool manages_memory(const void *) override { return true; }

  int allocate_window_memory(size_t bytes, void **ptr) override { return allocate_shared(bytes, ptr); }
  void free_window_memory(void *ptr) override { shm::destroy(ptr); }
  int allocate_flags(size_t bytes, void **ptr) override { return allocate_shared(bytes, ptr); }
  void free_flags(void *ptr) override { shm::destroy(ptr); }

  int allocate_host_mapped(size_t bytes, HostMapped *out) override {
    *out = HostMapped{};
    const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    out->host = std::aligned_alloc(64, rounded);
    if (!out->host) return fail(kErrNoMemory, "host allocation of " + std::to_string(bytes) + " bytes");
    std::memset(out->host, 0, rounded);
    out->device = out->host;
    return kOk;
  }
  void free_host_mapped(HostMapped *m) override {
    std::free(m->host);
    *m = HostMapped{};
  }

  // Host streams are threads of this process: they store to the page where it is mapped.
  int map_io_memory(void *host, size_t, void **device) override {
    *device = host;
    return kOk;
  }

  int export_region(void *ptr, size_t bytes, RegionHandle *out) override {
    *out = RegionHandle{};
    out->bytes = bytes;
    std::string name;
    size_t offset = 0;
    if (shm::find(ptr, &name, &offset)) {
      out->kind = kShm;
      out->offset = offset;
      ShmHandleData d{};
      d.segment_bytes = offset + bytes;
      std::strncpy(d.name, name.c_str(), sizeof d.name - 1);
      std::memcpy(out->data, &d, sizeof d);
    } else {
      out->kind = kCma;
      out->flags = kRegionReachedByCopy;
      out->offset = reinterpret_cast<uint64_t>(ptr);
    }
    return kOk;
  }

  int import_region(const RegionHandle &h, int owner_pid, MappedRegion *out) override {
    *out = MappedRegion{};
    if (h.kind == kCma) {
      out->base = reinterpret_cast<char *>(h.offset);
      out->cma_pid = owner_pid;
      return kOk;
    }
    ShmHandleData d;
    std::memcpy(&d, h.data, sizeof d);
    void *base = shm::map(d.name, d.segment_bytes);
    if (!base) return fail(kErrRuntime, std::string("cannot map shared memory ") + d.name + ": " + std::strerror(errno));
    out->base = static_cast<char *>(base) + h.offset;
    out->cookie = new ShmMapping{base, d.segment_bytes};
    return kOk;
  }

  void exported_region_mapped(void *ptr) override { shm::unlink_name(ptr); }

  void release_region(MappedRegion *r) override {
    if (auto *m = static_cast<ShmMapping *>(r->cookie)) {
      shm::unmap(m->base, m->bytes);
      delete m;
    }
    *r = MappedRegion{};
  }

  int enqueue(void *stream, const WorkList &list) override {
    if (!stream) return fail(kErrUnsupported, "null stream: the host backend needs an MPIX_Host_stream");
    HostStream &hs = static_cast<mpix_host_stream *>(stream)->stream;
    if (list.captured && hs.capturing() && graph_merge_enabled()) return enqueue_captured(hs, stream, list);
    ++ops_;
    hs.enqueue([this, list, stream, keys = keys_of(list)] { return run_list(list, stream, keys); });
    return kOk;
  }

  int enqueue_host_call(void *stream, void (*fn)(void *), void *arg) override {
    if (!stream) return fail(kErrUnsupported, "null stream: the host backend needs an MPIX_Host_stream");
    ++ops_;
    static_cast<mpix_host_stream *>(stream)->stream.enqueue([fn, arg] {
      fn(arg);
      return kOk;
    });
    return kOk;
  }

  // A collective queued behind one of its communicator's that timed out ends its waits at once
  // too, as an epoch list does behind its window's (work::fault_skips; the fault word per
  // communicator lives here, in host memory).
  int enqueue_collective(void *stream, coll::Args args) override {
    if (!stream) return fail(kErrUnsupported, "null stream: the host backend needs an MPIX_Host_stream");
    ++ops_;
    args.trace = reinterpret_cast<uint64_t>(trace_);
    HostStream &hs = static_cast<mpix_host_stream *>(stream)->stream;
    CommFault *cf = comm_fault(args.comm_id);
    const host_exec::FaultWatch watch{&cf->fault, cf->taken.load(std::memory_order_acquire), hs.capturing()};
    hs.enqueue([this, args, stream, watch, cf] {
      WatchdogReport report;
      host_exec::FaultWatch w = watch;
      const int st = host_exec::run_collective(args, &report, &w);
      if (st == kErrTimeout) {
        if (!report.after_fault) std::atomic_ref<uint64_t>(cf->fault).fetch_or(work::kFaultPending);
        const void *running = HostStream::running_handle();  // the launch stream of a replay
        keep_report(report, running ? running : stream);
      }
      return st;
    });
    return kOk;
  }

  int copy_to_device(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return kOk;
  }

  int execute(const WorkList &list) override { return run_list(list, nullptr, ListKeys{}); }

  int synchronize(void *stream) override {
    if (!stream) return kOk;
    return static_cast<mpix_host_stream *>(stream)->stream.synchronize();
  }

  int capture_status(void *stream, bool *capturing) override {
    *capturing = stream && static_cast<mpix_host_stream *>(stream)->stream.capturing();
    return kOk;
  }

  int set_window_alive(uint32_t window_id, bool alive) override {
    if (!alive) {
      if (const uint64_t key = table_.release(window_id))
        std::atomic_ref<uint64_t>(keys_[work::window_slot(key)]).store(0, std::memory_order_release);
      return kOk;
    }
    const uint64_t key = table_.acquire(window_id);
    if (!key)
      return fail(kErrNoMemory, "all " + std::to_string(table_.capacity()) +
                                    " entries of the live-window table hold live windows: free a window first");
    std::atomic_ref<uint64_t>(faults_[work::window_slot(key)]).store(0, std::memory_order_relaxed);
    std::atomic_ref<uint64_t>(keys_[work::window_slot(key)]).store(key, std::memory_order_release);
    return kOk;
  }

  uint64_t read_flag(const uint64_t *flag) override {
    return std::atomic_ref<uint64_t>(*const_cast<uint64_t *>(flag)).load(std::memory_order_acquire);
  }

  // Taking a report tells the program: its window's (or communicator's) fault word keeps failing
  // the lists enqueued before, no longer those enqueued after (work::fault_skips).
  bool take_watchdog_report(WatchdogReport *out, uint32_t window_id, const void *stream) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = std::find_if(watchdog_.begin(), watchdog_.end(), [&](const WatchdogReport &r) {
        return (!window_id || r.window_id == window_id) && (!stream || r.stream == stream);
      });
      if (it == watchdog_.end()) return false;
      *out = *it;
      watchdog_.erase(it);
    }
    if (out->reason == work::kWaitCollective) {
      CommFault *cf = comm_fault(out->window_id);
      std::atomic_ref<uint64_t>(cf->fault).store(cf->taken.fetch_add(1) + 1, std::memory_order_release);
    } else if (const uint64_t key = table_.key_of(out->window_id)) {
      if (const uint32_t taken = table_.take_report(key))
        std::atomic_ref<uint64_t>(faults_[work::window_slot(key)]).store(taken, std::memory_order_release);
    }
    return true;
  }

  void peek_watchdog_reports(std::vector<WatchdogReport> *out) override {
    std::lock_guard<std::mutex> lock(mu_);
    *out = watchdog_;
  }

  void mark_fault(uint32_t window_id) override {
    if (const uint64_t key = table_.key_of(window_id))
      std::atomic_ref<uint64_t>(faults_[work::window_slot(key)]).fetch_or(work::kFaultPending, std::memory_order_acq_rel);
  }

  uint64_t stream_ops_enqueued() const override { return ops_.load(); }

 private:
  // The last list a capture recorded on a stream, while it is the capture's last task.
  struct CaptureTail {
    uint64_t capture = 0;
    size_t index = 0;
    WorkList list;
  };
  // A list's windows in the live-window table, looked up when it is enqueued (both are live then),
  // and its window's reports the program had taken by then.
  struct ListKeys {
    uint64_t window = 0, lead = 0;
    uint32_t taken = 0;
  };
  ListKeys keys_of(const WorkList &list) const {
    ListKeys k;
    k.window = table_.key_of(list.window_id);
    k.lead = table_.key_of(list.lead_window_id);
    k.taken = table_.reports_taken(k.window);
    return k;
  }
  // A communicator's fault word (work::fault_skips), made at its first collective; kept for the
  // process's life (a few words per communicator that ran collectives).
  struct CommFault {
    uint64_t fault = 0;  // through std::atomic_ref
    std::atomic<uint32_t> taken{0};
  };
  CommFault *comm_fault(uint32_t comm_id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto &slot = comm_faults_[comm_id];
    if (!slot) slot = std::make_unique<CommFault>();
    return slot.get();
  }

  // Joins the previous captured list where it is the capture's last task and one run can do both
  // (list_merge.h), as the device backend joins kernel nodes; else records the list as a task.
  int enqueue_captured(HostStream &hs, void *stream, const WorkList &list) {
    std::lock_guard<std::mutex> lock(tails_mu_);
    auto it = tails_.find(stream);
    if (it != tails_.end() && it->second.capture == hs.capture_id() && it->second.index + 1 == hs.captured_count() &&
        merge_captured(it->second.list, list)) {  // untouched where it refuses
      hs.replace_last_captured(
          [this, merged = it->second.list, stream, keys = keys_of(it->second.list)] { return run_list(merged, stream, keys); });
      return kOk;
    }
    ++ops_;
    hs.enqueue([this, list, stream, keys = keys_of(list)] { return run_list(list, stream, keys); });
    tails_[stream] = CaptureTail{hs.capture_id(), hs.captured_count() - 1, list};
    return kOk;
  }

  int allocate_shared(size_t bytes, void **ptr) {
    *ptr = shm::create(bytes);
    if (!*ptr) return fail(kErrNoMemory, std::string("shared memory segment of ") + std::to_string(bytes) +
                                              " bytes: " + std::strerror(errno));
    return kOk;
  }

  // A timeout is kept as the window's report until a call on that window, a synchronisation of
  // that stream, or MPIX_St_check takes it; later ones on the same window and stream are counted
  // in it. A timeout marks the window's fault word, so that its lists queued behind end their
  // waits at once (host-driven work, on no stream, neither marks nor reads it: its caller reports
  // at once, and may retry).
  int run_list(const WorkList &list, const void *stream, const ListKeys &keys) {
    // A replayed graph's list runs on the launch stream: its report goes there.
    if (stream)
      if (const void *running = HostStream::running_handle()) stream = running;
    WatchdogReport report;
    std::string why;
    int st = kOk;
    // A captured list's window (or merged post's) was freed: its entry holds another key, or none.
    const auto freed = [this](uint32_t id, uint64_t key) {
      return id && (!key || std::atomic_ref<uint64_t>(keys_[work::window_slot(key)]).load(std::memory_order_acquire) != key);
    };
    const bool window_freed = freed(list.window_id, keys.window);
    if (list.captured && (window_freed || freed(list.lead_window_id, keys.lead))) {
      report = WatchdogReport{};
      report.window_id = window_freed ? list.window_id : list.lead_window_id;
      report.peer = -1;
      report.reason = work::kFreedWindow;
      st = kErrTimeout;  // kept as the window's report, like a watchdog event
    } else {
      uint64_t *fault = stream && keys.window ? &faults_[work::window_slot(keys.window)] : nullptr;
      host_exec::FaultWatch watch{fault, keys.taken, list.captured};
      st = host_exec::run(list, &report, &why, trace_, fault ? &watch : nullptr);
      if (st == kErrTimeout && fault && !report.after_fault)
        std::atomic_ref<uint64_t>(*fault).fetch_or(work::kFaultPending, std::memory_order_acq_rel);
    }
    if (st == kErrTimeout && !stream) {  // host-driven: the caller reports it now
      return fail(st, "the watchdog ended a wait for window rank " + std::to_string(report.peer) + " (it expected " +
                          std::to_string(report.expected) + ", the flag holds " + std::to_string(report.observed) + ")");
    }
    if (st == kErrTimeout) {
      keep_report(report, stream);
    } else if (st != kOk) {
      fail(st, why);
    }
    return st;
  }

  void keep_report(WatchdogReport report, const void *stream) {
    report.stream = stream;
    std::lock_guard<std::mutex> lock(mu_);
    auto same = std::find_if(watchdog_.begin(), watchdog_.end(), [&](const WatchdogReport &r) {
      return r.window_id == report.window_id && r.stream == report.stream;
    });
    if (same != watchdog_.end())
      ++same->more;
    else
      watchdog_.push_back(report);
  }

  int fail(int status, std::string why) {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_ = std::move(why);
    return status;
  }

  mutable std::mutex mu_;
  std::string last_error_;
  std::vector<WatchdogReport> watchdog_;  // pending reports, oldest first
  std::atomic<uint64_t> ops_{0};
  std::mutex tails_mu_;
  std::map<void *, CaptureTail> tails_;  // by stream
  WindowTable table_;                                  // which entry each live window holds
  uint64_t keys_[work::kWindowSlots] = {};    // the live-window table the streams read (std::atomic_ref)
  uint64_t faults_[work::kWindowSlots] = {};  // its entries' fault words (work::fault_skips)
  std::map<uint32_t, std::unique_ptr<CommFault>> comm_faults_;  // by communicator id (under mu_)
  work::TraceLog *trace_ = nullptr;  // MPIX_ST_TRACE: the launch trace's log (never freed: MPI_Finalize reads it)
};

}  // namespace

Backend &host_backend() {
  static HostBackend instance;
  return instance;
}

}  // namespace mpix::gpu
