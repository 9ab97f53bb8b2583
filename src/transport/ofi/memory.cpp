// Memory registration under each of the provider's registration modes (fi_mr(3)):
//   FI_MR_VIRT_ADDR  targets are addressed by virtual address, else by offset into the region
//   FI_MR_PROV_KEY   the provider chooses keys, else we request unique ones
//   FI_MR_LOCAL      local buffers need the registration's descriptor
//   FI_MR_ENDPOINT   a registration is bound to the endpoint and enabled before use
#include <cstring>

#include "fabric_impl.h"

namespace mpix::ofi {

RegionEntry *Fabric::Impl::region(Region r) {
  if (!r || r.id > regions.size()) return nullptr;
  return regions[r.id - 1].get();
}

namespace {
// The FI_HMEM interface of a GPU runtime's memory.
fi_hmem_iface hmem_iface(const char *runtime) {
  return std::strcmp(runtime, "hip") == 0 ? FI_HMEM_ROCR : FI_HMEM_CUDA;
}
}  // namespace

Region Fabric::Impl::register_memory(void *base, size_t bytes, const DeviceMemory *device) {
  if (!base || bytes == 0) {
    std::lock_guard lock(mu);
    return fail(kErrArg, "register_memory: null or empty range"), Region{};
  }
  if (device && !hmem) {
    std::lock_guard lock(mu);
    return fail(kErrUnsupported, "register_memory: the provider does not register device memory (no FI_HMEM)"),
           Region{};
  }
  const uint64_t mode = info->domain_attr->mr_mode;
  uint64_t key = 0;
  {
    std::lock_guard lock(mu);
    key = next_key++;
  }
  auto entry = std::make_unique<RegionEntry>();
  constexpr uint64_t kAccess = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  const uint64_t requested_key = (mode & FI_MR_PROV_KEY) ? 0 : key;
  int rc;
  if (device) {
    // Device memory: the same registration, naming the memory's interface (fi_mr(3), FI_HMEM).
    const iovec iov{base, bytes};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = kAccess;
    attr.requested_key = requested_key;
    attr.iface = hmem_iface(device->runtime);
    if (attr.iface == FI_HMEM_CUDA) attr.device.cuda = device->ordinal;
    rc = fi_mr_regattr(domain, &attr, 0, &entry->mr);
  } else {
    rc = fi_mr_reg(domain, base, bytes, kAccess, 0, requested_key, 0, &entry->mr, nullptr);
  }
  if (!rc && (mode & FI_MR_ENDPOINT)) {
    if (!(rc = fi_mr_bind(entry->mr, &ep->fid, 0))) rc = fi_mr_enable(entry->mr);
  }
  std::lock_guard lock(mu);
  if (rc) {
    if (entry->mr) fi_close(&entry->mr->fid);
    return fail(kErrProvider, fi_error_text("fi_mr_reg", rc)), Region{};
  }
  entry->base = static_cast<char *>(base);
  entry->bytes = bytes;
  entry->desc = (mode & FI_MR_LOCAL) ? fi_mr_desc(entry->mr) : nullptr;
  entry->remote.base = (mode & FI_MR_VIRT_ADDR) ? reinterpret_cast<uint64_t>(base) : 0;
  entry->remote.key = fi_mr_key(entry->mr);
  entry->remote.bytes = bytes;
  regions.push_back(std::move(entry));
  return Region{static_cast<uint32_t>(regions.size())};
}

Region Fabric::register_memory(void *base, size_t bytes, const DeviceMemory *device) {
  return impl_->register_memory(base, bytes, device);
}

bool Fabric::registers_device_memory() const { return impl_->hmem; }

RemoteRegion Fabric::remote(Region r) const {
  std::lock_guard lock(impl_->mu);
  RegionEntry *e = impl_->region(r);
  return e ? e->remote : RemoteRegion{};
}

bool Fabric::deregister(Region r) {
  std::lock_guard lock(impl_->mu);
  RegionEntry *e = impl_->region(r);
  if (!e) return impl_->fail(kErrArg, "deregister: unknown region"), false;
  int rc = fi_close(&e->mr->fid);
  impl_->regions[r.id - 1].reset();
  if (rc) return impl_->fail(kErrProvider, fi_error_text("fi_close (memory region)", rc)), false;
  return true;
}

}  // namespace mpix::ofi
