// Memory of the GPU backend: window memory, flags (kept for later windows, never handed back),
// pinned host memory, I/O pages mapped for the stream, regions shared with node-local peers through
// runtime IPC handles, and the host's synchronous copies to and from that memory.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "device_backend.h"

namespace mpix::gpu {

bool DeviceBackend::manages_memory(const void *ptr) {
  gpuPointerAttributes attr{};
  if (MPIX_GPU(PointerGetAttributes)(&attr, ptr) != gpuSuccess) {
    (void)MPIX_GPU(GetLastError)();  // plain host pointers report an error on some runtimes
    return false;
  }
  return gpu_is_device_memory(attr);
}

int DeviceBackend::allocate_window_memory(size_t bytes, void **ptr) {
  return check(MPIX_GPU(Malloc)(ptr, bytes ? bytes : 1), "window allocation", kErrNoMemory);
}

void DeviceBackend::free_window_memory(void *ptr) { (void)MPIX_GPU(Free)(ptr); }

int DeviceBackend::allocate_host_mapped(size_t bytes, HostMapped *out) {
  *out = HostMapped{};
  // Two-sided calls made while their stream is captured may need more of it (status records and
  // words): the runtime refuses the allocation under capture unless this thread relaxes the mode.
  gpuStreamCaptureMode mode = gpuStreamCaptureModeRelaxed;
  (void)MPIX_GPU(ThreadExchangeStreamCaptureMode)(&mode);
  const gpuError_t e = gpuHostAlloc(&out->host, bytes ? bytes : 1, gpuHostAllocMapped | gpuHostAllocPortable);
  (void)MPIX_GPU(ThreadExchangeStreamCaptureMode)(&mode);
  if (int st = check(e, "pinned host allocation", kErrNoMemory)) return st;
  std::memset(out->host, 0, bytes);
  if (int st = check(MPIX_GPU(HostGetDevicePointer)(&out->device, out->host, 0), "device view of host memory")) {
    (void)gpuFreeHost(out->host);
    *out = HostMapped{};
    return st;
  }
  return kOk;
}

void DeviceBackend::free_host_mapped(HostMapped *m) {
  if (m->host) (void)gpuFreeHost(m->host);
  *m = HostMapped{};
}

// One registration per page, shared by every caller that maps it (runtimes refuse to register
// a page twice, and several counters' adders may share one).
int DeviceBackend::map_io_memory(void *host, size_t bytes, void **device) {
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

void DeviceBackend::unmap_io_memory(void *host) {
  std::lock_guard<std::mutex> lock(map_mu_);
  auto it = io_pages_.find(host);
  if (it == io_pages_.end() || --it->second.refs > 0) return;
  (void)MPIX_GPU(HostUnregister)(host);
  io_pages_.erase(it);
}

// Flag memory is never handed back to the runtime: a captured launch replayed after its window
// was freed reads its wait's cursor, in that memory, while it learns that the window is gone
// (epoch_kernel.cu), so the memory stays mapped. Freed blocks serve later windows.
int DeviceBackend::allocate_flags(size_t bytes, void **ptr) {
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

void DeviceBackend::free_flags(void *ptr) {
  std::lock_guard<std::mutex> lock(map_mu_);
  auto it = flag_blocks_.find(ptr);
  if (it != flag_blocks_.end()) spare_flags_.emplace(it->second, ptr);
}

// The smallest freed flag block that holds `bytes`, or null.
void *DeviceBackend::take_spare_flags(size_t bytes) {
  std::lock_guard<std::mutex> lock(map_mu_);
  auto best = spare_flags_.lower_bound(bytes);
  if (best == spare_flags_.end()) return nullptr;
  void *ptr = best->second;
  spare_flags_.erase(best);
  return ptr;
}

// The handle's data: the runtime's IPC handle, then the allocation's address and size in the
// exporting process (import_region tells stale mappings by them).
struct ExportedRange {
  uint64_t base, bytes;
};
constexpr size_t kRangeAt = sizeof(gpuIpcMemHandle_t);
static_assert(kRangeAt + sizeof(ExportedRange) <= sizeof(RegionHandle::data));

int DeviceBackend::export_region(void *ptr, size_t bytes, RegionHandle *out) {
  *out = RegionHandle{};
  void *base = nullptr;
  size_t range = 0;
  if (int st = check(gpu_allocation_range(ptr, &base, &range), "allocation base lookup")) return st;
  gpuIpcMemHandle_t h;
  if (int st = check(MPIX_GPU(IpcGetMemHandle)(&h, base), "IPC handle export")) return st;
  out->kind = kIpcRegion;
  out->offset = static_cast<uint64_t>(static_cast<char *>(ptr) - static_cast<char *>(base));
  out->bytes = bytes;
  std::memcpy(out->data, &h, sizeof h);
  const ExportedRange r{reinterpret_cast<uint64_t>(base), range};
  std::memcpy(out->data + kRangeAt, &r, sizeof r);
  return kOk;
}

// Mappings of `pid`'s memory in the 2 MiB pages of the given range: the runtime refuses a handle
// (already mapped) while this process holds a mapping of an allocation the exporter has freed
// in those pages (small allocations share a page, whose handle dies with the last of them). Such
// a mapping reaches memory its owner freed, so nothing may use it any more: windows and
// communicators keep their peers' memory alive, and a message read straight from a send buffer
// completes its send before the buffer may be freed. Its holders' later release finds nothing.
void DeviceBackend::drop_stale_mappings(int pid, uint64_t exporter_base, uint64_t exporter_bytes) {
  constexpr uint64_t kPage = 2ull << 20;
  const uint64_t lo = exporter_base / kPage, hi = (exporter_base + std::max<uint64_t>(exporter_bytes, 1) - 1) / kPage;
  for (auto it = mappings_.begin(); it != mappings_.end();) {
    const Mapping &m = it->second;
    const uint64_t mlo = m.exporter_base / kPage, mhi = (m.exporter_base + std::max<uint64_t>(m.exporter_bytes, 1) - 1) / kPage;
    if (m.pid == pid && mlo <= hi && lo <= mhi) {
      (void)MPIX_GPU(IpcCloseMemHandle)(m.base);
      it = mappings_.erase(it);
    } else {
      ++it;
    }
  }
}

// One mapping per peer allocation, shared by every window over it (runtimes refuse to open the
// same handle twice in one process).
int DeviceBackend::import_region(const RegionHandle &h, int owner_pid, MappedRegion *out) {
  *out = MappedRegion{};
  if (h.kind != kIpcRegion) return fail(kErrUnsupported, "region was not exported by this backend");
  std::string key(reinterpret_cast<const char *>(h.data), sizeof(gpuIpcMemHandle_t));
  ExportedRange range;
  std::memcpy(&range, h.data + kRangeAt, sizeof range);
  std::lock_guard<std::mutex> lock(map_mu_);
  auto it = mappings_.find(key);
  if (it == mappings_.end()) {
    gpuIpcMemHandle_t handle;
    std::memcpy(&handle, h.data, sizeof handle);
    void *base = nullptr;
    gpuError_t e = MPIX_GPU(IpcOpenMemHandle)(&base, handle, gpuIpcMemLazyEnablePeerAccess);
    if (e == gpuErrorAlreadyMapped) {
      (void)MPIX_GPU(GetLastError)();
      drop_stale_mappings(owner_pid, range.base, range.bytes);
      e = MPIX_GPU(IpcOpenMemHandle)(&base, handle, gpuIpcMemLazyEnablePeerAccess);
    }
    if (int st = check(e, "IPC handle open")) return st;
    it = mappings_.emplace(key, Mapping{base, 0, next_mapping_id_++, owner_pid, range.base, range.bytes}).first;
  }
  ++it->second.refs;
  out->base = static_cast<char *>(it->second.base) + h.offset;
  out->cookie = reinterpret_cast<void *>(it->second.id);
  return kOk;
}

void DeviceBackend::release_region(MappedRegion *r) {
  if (r->cookie) {
    std::lock_guard<std::mutex> lock(map_mu_);
    for (auto it = mappings_.begin(); it != mappings_.end(); ++it) {
      if (it->second.id != reinterpret_cast<uint64_t>(r->cookie)) continue;
      if (--it->second.refs == 0) {
        (void)MPIX_GPU(IpcCloseMemHandle)(it->second.base);
        mappings_.erase(it);
      }
      break;
    }
  }
  *r = MappedRegion{};
}

int DeviceBackend::copy_to_device(void *dst, const void *src, size_t bytes) {
  gpuError_t e = MPIX_GPU(MemcpyAsync)(dst, src, bytes, MPIX_GPU(MemcpyHostToDevice), internal_);
  if (e == gpuSuccess) e = MPIX_GPU(StreamSynchronize)(internal_);
  return check(e, "copy to device");
}

// The window's entry of the live-window table: its key and a clear fault word, or a key of 0.
int DeviceBackend::set_window_alive(uint32_t window_id, bool alive) {
  uint64_t key = alive ? table_.acquire(window_id) : table_.release(window_id);
  if (!key) {
    if (!alive) return kOk;
    return fail(kErrNoMemory, "all " + std::to_string(table_.capacity()) +
                                  " entries of the live-window table hold live windows: free a window first");
  }
  const uint64_t value = alive ? key : 0;
  if (alive) reinterpret_cast<volatile uint64_t *>(area_->fault)[work::window_slot(key)] = 0;
  gpuError_t e = MPIX_GPU(MemcpyAsync)(keys_ + work::window_slot(key), &value, sizeof value,
                                       MPIX_GPU(MemcpyHostToDevice), internal_);
  if (e == gpuSuccess) e = MPIX_GPU(StreamSynchronize)(internal_);
  if (int st = check(e, "window table update")) {
    if (alive) table_.release(window_id);
    return st;
  }
  return kOk;
}

uint64_t DeviceBackend::read_flag(const uint64_t *flag) {
  uint64_t v = 0;
  if (MPIX_GPU(MemcpyAsync)(&v, flag, sizeof v, MPIX_GPU(MemcpyDeviceToHost), internal_) != gpuSuccess ||
      MPIX_GPU(StreamSynchronize)(internal_) != gpuSuccess)
    (void)MPIX_GPU(GetLastError)();
  return v;
}

}  // namespace mpix::gpu
