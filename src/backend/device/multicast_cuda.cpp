// Hardware multicast steps of the CUDA plugin (multicast.h) over the driver's multicast objects.
//
// COMPILED ONLY, NEVER RUN. Nothing in the project's tests or CI calls this: a program that
// creates multicast objects on the shared GPU test machines can put the host's GPUs out of service
// for a day. It is reached only with MPIX_ST_MULTICAST=1 (off by default) and must first run on a
// machine set aside for it.
//
// As everywhere in the plugin, driver functions come through the runtime's entry-point lookup
// (cudaGetDriverEntryPointByVersion), so the plugin has no link dependency on libcuda; the
// multicast calls appeared in CUDA 12.1, the others in 12.0 or earlier.
//
// Sharing the object: it is created with the POSIX file-descriptor handle type and exported as an
// fd; the other ranks take a duplicate of that fd straight from the creating process with
// pidfd_open + pidfd_getfd (Linux 5.6), given its pid and fd number through the MPI exchange. No
// socket or rendezvous is needed, and the creator keeps its fd open until every rank imported.
// pidfd_getfd needs ptrace access to the creator: where Yama restricts ptrace to descendants, the
// creator allows any process of its user to attach (PR_SET_PTRACER_ANY), as the host backend
// already does for cross-memory attach.
#include "multicast_cuda.h"
#include "runtime_map.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <mutex>
#include <numeric>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

namespace mpix::gpu {
namespace {

constexpr CUmemAllocationHandleType kFdHandle = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;

// Driver entry points, with the signatures of CUDA 13's cuda.h.
struct Entry {
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*device_get_attribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*multicast_get_granularity)(size_t *, const CUmulticastObjectProp *, CUmulticastGranularity_flags);
  CUresult (*multicast_create)(CUmemGenericAllocationHandle *, const CUmulticastObjectProp *);
  CUresult (*multicast_add_device)(CUmemGenericAllocationHandle, CUdevice);
  CUresult (*multicast_bind_mem)(CUmemGenericAllocationHandle, size_t, CUmemGenericAllocationHandle, size_t, size_t,
                                 unsigned long long);
  CUresult (*multicast_unbind)(CUmemGenericAllocationHandle, CUdevice, size_t, size_t);
  CUresult (*mem_get_allocation_granularity)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
  CUresult (*mem_create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
  CUresult (*mem_release)(CUmemGenericAllocationHandle);
  CUresult (*mem_export)(void *, CUmemGenericAllocationHandle, CUmemAllocationHandleType, unsigned long long);
  CUresult (*mem_import)(CUmemGenericAllocationHandle *, void *, CUmemAllocationHandleType);
  CUresult (*mem_address_reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*mem_address_free)(CUdeviceptr, size_t);
  CUresult (*mem_map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*mem_unmap)(CUdeviceptr, size_t);
  CUresult (*mem_set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
};

template <class Fn>
bool lookup(const char *symbol, unsigned version, Fn *out, std::string *missing) {
  *out = gpu_driver_function<Fn>(symbol, version);
  if (!*out && missing->empty()) *missing = symbol;
  return *out != nullptr;
}

bool look_up_all(Entry *e, std::string *missing) {
  bool ok = true;
  ok &= lookup("cuDeviceGet", 12000, &e->device_get, missing);
  ok &= lookup("cuDeviceGetAttribute", 12000, &e->device_get_attribute, missing);
  ok &= lookup("cuMulticastGetGranularity", 12010, &e->multicast_get_granularity, missing);
  ok &= lookup("cuMulticastCreate", 12010, &e->multicast_create, missing);
  ok &= lookup("cuMulticastAddDevice", 12010, &e->multicast_add_device, missing);
  ok &= lookup("cuMulticastBindMem", 12010, &e->multicast_bind_mem, missing);
  ok &= lookup("cuMulticastUnbind", 12010, &e->multicast_unbind, missing);
  ok &= lookup("cuMemGetAllocationGranularity", 12000, &e->mem_get_allocation_granularity, missing);
  ok &= lookup("cuMemCreate", 12000, &e->mem_create, missing);
  ok &= lookup("cuMemRelease", 12000, &e->mem_release, missing);
  ok &= lookup("cuMemExportToShareableHandle", 12000, &e->mem_export, missing);
  ok &= lookup("cuMemImportFromShareableHandle", 12000, &e->mem_import, missing);
  ok &= lookup("cuMemAddressReserve", 12000, &e->mem_address_reserve, missing);
  ok &= lookup("cuMemAddressFree", 12000, &e->mem_address_free, missing);
  ok &= lookup("cuMemMap", 12000, &e->mem_map, missing);
  ok &= lookup("cuMemUnmap", 12000, &e->mem_unmap, missing);
  ok &= lookup("cuMemSetAccess", 12000, &e->mem_set_access, missing);
  return ok;
}

class CudaMulticast {
 public:
  bool init(int ordinal, std::string *why) {
    std::string missing;
    if (!look_up_all(&e_, &missing)) {
      *why = "cuda: the driver has no " + missing + " (multicast needs CUDA 12.1 or later)";
      return false;
    }
    ordinal_ = ordinal;
    if (e_.device_get(&dev_, ordinal) != CUDA_SUCCESS) {
      *why = "cuda: cuDeviceGet failed";
      return false;
    }
    fill_table();
    return true;
  }
  const MulticastDriver *table() const { return &table_; }

 private:
  int fail(const char *what, CUresult r) {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::string(what) + " returned CUresult " + std::to_string(static_cast<int>(r));
    return 1;  // kErrRuntime
  }
  int fail_errno(const char *what) {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::string(what) + " failed (errno " + std::to_string(errno) + ")";
    return 1;
  }

  CUmulticastObjectProp multicast_prop(int devices, size_t bytes) const {
    CUmulticastObjectProp p{};
    p.numDevices = static_cast<unsigned>(devices);
    p.size = bytes;
    p.handleTypes = kFdHandle;
    return p;
  }
  // Shareable device memory: an imported multicast object binds only memory that is exportable.
  CUmemAllocationProp memory_prop() const {
    CUmemAllocationProp p{};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.requestedHandleTypes = kFdHandle;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = ordinal_;
    return p;
  }

  bool device_supports(std::string *why) {
    int v = 0;
    if (e_.device_get_attribute(&v, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, dev_) != CUDA_SUCCESS) {
      *why = "cuda: the multicast attribute of device " + std::to_string(ordinal_) + " cannot be read";
      return false;
    }
    if (!v) *why = "cuda: device " + std::to_string(ordinal_) + " has no multicast support (no NVSwitch multicast)";
    return v != 0;
  }

  // Sizes, bind offsets and mappings must be multiples of the multicast granularity and of the
  // physical memory's: their least common multiple (both are powers of two in practice).
  int granularity(int devices, size_t bytes, size_t *out) {
    CUmulticastObjectProp mp = multicast_prop(devices, bytes);
    size_t mc = 0, mem = 0;
    if (CUresult r = e_.multicast_get_granularity(&mc, &mp, CU_MULTICAST_GRANULARITY_MINIMUM))
      return fail("cuMulticastGetGranularity", r);
    CUmemAllocationProp ap = memory_prop();
    if (CUresult r = e_.mem_get_allocation_granularity(&mem, &ap, CU_MEM_ALLOC_GRANULARITY_MINIMUM))
      return fail("cuMemGetAllocationGranularity", r);
    *out = std::lcm(mc, mem);
    unit_ = *out;
    return 0;
  }

  int create(int devices, size_t bytes, uint64_t *mc) {
    CUmulticastObjectProp p = multicast_prop(devices, bytes);
    CUmemGenericAllocationHandle h = 0;
    if (CUresult r = e_.multicast_create(&h, &p)) return fail("cuMulticastCreate", r);
    *mc = h;
    return 0;
  }

  int export_handle(uint64_t mc, MulticastShareable *out) {
    int fd = -1;
    if (CUresult r = e_.mem_export(&fd, mc, kFdHandle, 0)) return fail("cuMemExportToShareableHandle", r);
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // lets peers' pidfd_getfd reach the fd
    out->pid = static_cast<int32_t>(getpid());
    out->fd = fd;
    return 0;
  }
  void close_export(MulticastShareable *exported) {
    if (exported->fd >= 0) close(exported->fd);
    exported->fd = -1;
  }

  int import_handle(const MulticastShareable &from, uint64_t *mc) {
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, from.pid, 0));
    if (pidfd < 0) return fail_errno("pidfd_open of the creating rank");
    const int fd = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, from.fd, 0));
    close(pidfd);
    if (fd < 0) return fail_errno("pidfd_getfd of the multicast handle");
    CUmemGenericAllocationHandle h = 0;
    const CUresult r = e_.mem_import(&h, reinterpret_cast<void *>(static_cast<uintptr_t>(fd)), kFdHandle);
    close(fd);  // the imported handle does not need it
    if (r != CUDA_SUCCESS) return fail("cuMemImportFromShareableHandle", r);
    *mc = h;
    return 0;
  }

  int add_device(uint64_t mc) {
    if (CUresult r = e_.multicast_add_device(mc, dev_)) return fail("cuMulticastAddDevice", r);
    return 0;
  }

  int allocate(size_t bytes, uint64_t *mem) {
    CUmemAllocationProp p = memory_prop();
    CUmemGenericAllocationHandle h = 0;
    if (CUresult r = e_.mem_create(&h, bytes, &p, 0)) return fail("cuMemCreate", r);
    *mem = h;
    return 0;
  }

  int bind(uint64_t mc, uint64_t mem, size_t bytes) {
    if (CUresult r = e_.multicast_bind_mem(mc, 0, mem, 0, bytes, 0)) return fail("cuMulticastBindMem", r);
    return 0;
  }
  void unbind(uint64_t mc, size_t bytes) { (void)e_.multicast_unbind(mc, dev_, 0, bytes); }

  int map(uint64_t handle, size_t bytes, uint64_t *va) {
    CUdeviceptr p = 0;
    // Aligned to the group's unit: every rank computed it (multicast_setup asks granularity first).
    if (CUresult r = e_.mem_address_reserve(&p, bytes, unit_, 0, 0)) return fail("cuMemAddressReserve", r);
    if (CUresult r = e_.mem_map(p, bytes, 0, handle, 0)) {
      (void)e_.mem_address_free(p, bytes);
      return fail("cuMemMap", r);
    }
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = ordinal_;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (CUresult r = e_.mem_set_access(p, bytes, &access, 1)) {
      (void)e_.mem_unmap(p, bytes);
      (void)e_.mem_address_free(p, bytes);
      return fail("cuMemSetAccess", r);
    }
    *va = static_cast<uint64_t>(p);
    return 0;
  }
  void unmap(uint64_t va, size_t bytes) {
    (void)e_.mem_unmap(static_cast<CUdeviceptr>(va), bytes);
    (void)e_.mem_address_free(static_cast<CUdeviceptr>(va), bytes);
  }

  void release(uint64_t handle) { (void)e_.mem_release(handle); }

  std::string last_error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

  void fill_table() {
    table_.device_supports = [this](std::string *why) { return device_supports(why); };
    table_.granularity = [this](int n, size_t b, size_t *g) { return granularity(n, b, g); };
    table_.create = [this](int n, size_t b, uint64_t *mc) { return create(n, b, mc); };
    table_.export_handle = [this](uint64_t mc, MulticastShareable *out) { return export_handle(mc, out); };
    table_.close_export = [this](MulticastShareable *e) { close_export(e); };
    table_.import_handle = [this](const MulticastShareable &f, uint64_t *mc) { return import_handle(f, mc); };
    table_.add_device = [this](uint64_t mc) { return add_device(mc); };
    table_.allocate = [this](size_t b, uint64_t *mem) { return allocate(b, mem); };
    table_.bind = [this](uint64_t mc, uint64_t mem, size_t b) { return bind(mc, mem, b); };
    table_.unbind = [this](uint64_t mc, size_t b) { unbind(mc, b); };
    table_.map = [this](uint64_t h, size_t b, uint64_t *va) { return map(h, b, va); };
    table_.unmap = [this](uint64_t va, size_t b) { unmap(va, b); };
    table_.release = [this](uint64_t h) { release(h); };
    table_.last_error = [this] { return last_error(); };
  }

  Entry e_{};
  int ordinal_ = 0;
  CUdevice dev_ = 0;
  size_t unit_ = 0;
  mutable std::mutex mu_;
  std::string error_;
  MulticastDriver table_;
};

}  // namespace

const MulticastDriver *cuda_multicast_driver(int ordinal, std::string *why_not) {
  static std::mutex mu;
  static CudaMulticast *made = nullptr;  // lives for the process: contexts hold its table
  static std::string why_made;
  std::lock_guard<std::mutex> lock(mu);
  if (!made && why_made.empty()) {
    auto *m = new CudaMulticast;
    if (m->init(ordinal, &why_made))
      made = m;
    else
      delete m;
  }
  if (!made) *why_not = why_made;
  return made ? made->table() : nullptr;
}

}  // namespace mpix::gpu
