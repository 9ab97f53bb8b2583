#include "staged_transfers.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "internode.h"
#include "list_items.h"
#include "settings/settings.h"

namespace mpix::core::staged {
namespace {

using work::StagedRanges;

// Bytes of [mirror | range blocks] of a window of `bytes` among `size` ranks.
uint64_t landing_data_bytes(uint64_t bytes, int size) {
  return work::staged_mirror_bytes(bytes) + static_cast<uint64_t>(size) * sizeof(StagedRanges);
}

uint64_t block_bytes(uint64_t ranges) { return 2 * sizeof(uint64_t) + ranges * sizeof(work::StagedRange); }

using internode::transport_failure;

// Makes `buffer` hold at least `bytes`. A buffer it outgrows is kept until the window is freed:
// epochs already enqueued may still copy into it.
Result reserve_staging(RemoteState &s, StagingBuffer &buffer, uint64_t bytes) {
  if (buffer.bytes >= bytes) return ok();
  const uint64_t want = std::max<uint64_t>({bytes, 2 * buffer.bytes, 65536});
  if (buffer.mem.host) s.retired_staging.push_back(buffer);
  buffer = StagingBuffer{};
  gpu::Backend &be = gpu::backend();
  if (be.allocate_host_mapped(want, &buffer.mem))
    return fail(MPI_ERR_NO_MEM, "staging buffer of " + std::to_string(want) + " bytes: " + be.last_error());
  buffer.region = internode::fabric().register_memory(buffer.mem.host, want);
  if (!buffer.region) {
    be.free_host_mapped(&buffer.mem);
    buffer = StagingBuffer{};
    return transport_failure("registering a staging buffer");
  }
  buffer.bytes = want;
  return ok();
}

void free_staging(StagingBuffer &b) {
  if (b.region) internode::fabric().deregister(b.region);
  if (b.mem.host) gpu::backend().free_host_mapped(&b.mem);
  b = StagingBuffer{};
}

work::Item store2(char *at, uint64_t first, uint64_t second) {
  work::Item it{};
  it.kind = work::kStore2;
  it.a = reinterpret_cast<uint64_t>(at);
  it.b = first;
  it.bytes = second;
  return it;
}

}  // namespace

bool enabled() {
  static const bool on = [] {
    const uint64_t v = settings::number(settings::Id::MPIX_ST_OFI_STAGING);  // 0, 1 or auto
    if (v != settings::kAuto) return v == 1;
    // GPU backends stage unless the provider registers device memory (FI_HMEM).
    return std::strcmp(gpu::backend().name(), "host") != 0 &&
           !(!internode::available() && internode::fabric().registers_device_memory());
  }();
  return on;
}

bool mirror_requested(MPI_Info info) {
  static const bool everywhere = settings::flag(settings::Id::MPIX_ST_STAGED_GET_ACCUMULATE);
  if (info != MPI_INFO_NULL) {
    char value[16] = {};
    int flag = 0;
    PMPI_Info_get(info, "mpix_st_staged_get_accumulate", sizeof value - 1, value, &flag);
    if (flag) return std::strcmp(value, "true") == 0 || std::strcmp(value, "1") == 0;
  }
  return everywhere;
}

Result allocate_landing(const Window &w, remote::Registration *reg) {
  gpu::Backend &be = gpu::backend();
  const uint64_t data = landing_data_bytes(w.bytes, w.size), flags = Window::flag_slots(w.size) * sizeof(uint64_t);
  if (be.allocate_host_mapped(data + flags, &reg->landing))
    return fail(MPI_ERR_NO_MEM, "host mirror of the window for staged puts (" + std::to_string(data + flags) +
                                    " bytes): " + be.last_error());
  char *host = static_cast<char *>(reg->landing.host);
  ofi::Fabric &f = internode::fabric();
  reg->data = f.register_memory(host, data);
  if (reg->data) reg->flags = f.register_memory(host + data, flags);
  if (!reg->flags) return transport_failure("registering the window's host mirror");
  return ok();
}

uint64_t *net_flags(const Window &w, const gpu::HostMapped &landing) {
  return reinterpret_cast<uint64_t *>(static_cast<char *>(landing.device) + landing_data_bytes(w.bytes, w.size));
}

Result check(const Window &w, const RemoteOp &op, uint64_t pieces) {
  const std::string target = " to rank " + std::to_string(op.target);
  const char *name = op.kind == RemoteKind::put ? "MPI_Put" : op.kind == RemoteKind::get ? "MPI_Get" : "MPI_Accumulate";
  if (op.kind != RemoteKind::put && !w.remote->peer_mirrors[op.target])
    return fail(MPI_ERR_UNSUPPORTED_OPERATION,
                name + target +
                    " on another node: this window stages inter-node transfers through host memory (the network "
                    "cannot register its memory), and the target does not copy its window there at post; create "
                    "the window with info mpix_st_staged_get_accumulate=true (or set "
                    "MPIX_ST_STAGED_GET_ACCUMULATE=1) to allow MPI_Get and MPI_Accumulate");
  if (op.kind == RemoteKind::get) return ok();
  // Puts and accumulates take a range of the origin's block at the target per contiguous piece
  // (counted as the epoch records them: O(1) per operation).
  if (w.access.fabric_ranges[op.target] + pieces > work::kStagedRangesMax)
    return fail(MPI_ERR_UNSUPPORTED_OPERATION,
                name + target + ": more than " + std::to_string(work::kStagedRangesMax) +
                    " puts and accumulates to one rank reached through the network in one epoch of a staged window "
                    "(each contiguous piece of a derived datatype counts as one; this one has " +
                    std::to_string(pieces) + ")");
  return ok();
}

void mirror_window(const Window &w, const std::vector<int> &origins, gpu::WorkList &list) {
  if (!w.remote || !w.remote->mirrors || origins.empty() || w.bytes == 0) return;
  list.ops.push_back(copy_item(w.remote->landing.device, w.base, w.bytes));
}

Result stage(Window &w, StagingBuffer &buffer, std::vector<RemoteOp> &ops, gpu::WorkList &list) {
  RemoteState &s = *w.remote;
  // Layout: each target's range block, then each operation's data, every piece 64-byte aligned.
  // Puts and accumulates are described in their target's block; gets are not.
  std::vector<int> targets;
  std::vector<uint64_t> ranges(w.size, 0);
  uint64_t bytes = 0;
  for (const RemoteOp &op : ops) {
    if (op.kind != RemoteKind::get && ranges[op.target]++ == 0) targets.push_back(op.target);
    bytes += work::staged_align(op.bytes);
  }
  for (int t : targets) bytes += work::staged_align(block_bytes(ranges[t]));
  if (Result r = reserve_staging(s, buffer, bytes)) return r;
  char *host = static_cast<char *>(buffer.mem.host), *device = static_cast<char *>(buffer.mem.device);
  uint64_t at = 0;
  const size_t nops = ops.size();
  auto place = [&](RemoteOp &op) {
    op.staged = host + at;
    op.staged_region = buffer.region;
    at += work::staged_align(op.bytes);
  };
  for (int t : targets) {
    const uint64_t block = at;
    at += work::staged_align(block_bytes(ranges[t]));
    list.ops.push_back(store2(device + block, ranges[t], 0));
    uint64_t r = 0;
    for (size_t i = 0; i < nops; ++i) {
      RemoteOp &op = ops[i];
      if (op.target != t || op.kind == RemoteKind::get) continue;
      list.ops.push_back(store2(device + block + block_bytes(r++), op.offset, op.bytes));
      list.ops.push_back(copy_item(device + at, op.origin, op.bytes));
      place(op);
    }
    ops.push_back(RemoteOp{RemoteKind::put, nullptr, block_bytes(ranges[t]), t,
                           work::staged_mirror_bytes(w.peers[t].bytes) + w.rank * sizeof(StagedRanges), 0, 0,
                           host + block, buffer.region});
  }
  for (size_t i = 0; i < nops; ++i) {
    RemoteOp &op = ops[i];
    if (op.kind != RemoteKind::get) continue;
    list.trailing_ops.push_back(copy_item(op.origin, device + at, op.bytes));
    place(op);
  }
  return ok();
}

void apply(const Window &w, const std::vector<int> &origins, gpu::WorkList &list) {
  const RemoteState &s = *w.remote;
  const uint64_t mirror = reinterpret_cast<uint64_t>(s.landing.device);
  for (int o : origins) {
    if (w.peers[o].node_local && !s.mirrors) continue;  // a mirroring window hears every origin's accumulates
    work::Item copy{};
    copy.kind = work::kCopyStaged;
    copy.a = reinterpret_cast<uint64_t>(w.base);
    copy.b = mirror;
    copy.bytes = w.bytes;
    copy.peer = o;
    list.ops.push_back(copy);
    auto *count = reinterpret_cast<uint64_t *>(work::staged_ranges_at(mirror, w.bytes, o));
    list.signals.push_back(signal_item(count, 0));
  }
}

void release_staging(RemoteState &s) {
  free_staging(s.stream_staging);
  free_staging(s.host_staging);
  for (StagingBuffer &b : s.retired_staging) free_staging(b);
  s.retired_staging.clear();
}

}  // namespace mpix::core::staged
