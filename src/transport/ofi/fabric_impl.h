// The libfabric objects behind Fabric. Included by src/transport/ofi/*.cpp only.
//
// Locking: `mu` guards the tables (counters, regions, operation records) and the error text, and
// is held only briefly. Provider calls run outside it (the domain is opened FI_THREAD_SAFE), with
// object pointers looked up under it: a counter or region must not be released while another
// thread still uses it (a doorbell watching it, an operation being posted with it).
#pragma once
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_trigger.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fabric.h"

namespace mpix::ofi {

// Everything a triggered operation refers to must stay in place until it completes (fi_trigger(3)),
// so each posted operation owns one record of a fixed array until reclaim() sees it complete.
struct OpRecord {
  fi_deferred_work work;          // deferred work queue style
  fi_triggered_context2 trigger;  // triggered context style (also fits FI_CONTEXT2 providers)
  fi_op_rma rma;
  fi_op_atomic atomic;
  iovec iov[kMaxPieces];  // puts and gets: one local and one remote vector per piece
  fi_ioc ioc;
  fi_rma_iov rma_iov[kMaxPieces];
  fi_rma_ioc rma_ioc;
  void *desc[kMaxPieces];
  uint64_t operand;  // atomic operand, read by the provider when the operation fires
  uint64_t threshold;
  uint32_t trigger_counter;  // id; records are listed under their completion counter
};

struct CounterEntry {
  fid_cntr *cntr = nullptr;
  fid_ep *ep = nullptr;         // triggered context style: the endpoint whose writes it counts
  uint64_t retired = 0;         // operations it counted whose records were released
  uint64_t added = 0;           // what add() put into it
  bool mmio = false;            // its MMIO adder was handed out: it counts no completions
  uint32_t trigger_refs = 0;    // unreclaimed operations it triggers
  std::vector<uint32_t> records;  // unreclaimed operations it counts
};

struct RegionEntry {
  fid_mr *mr = nullptr;
  char *base = nullptr;
  size_t bytes = 0;
  void *desc = nullptr;  // local descriptor (FI_MR_LOCAL), else null
  RemoteRegion remote;
};

enum class OpKind { put, get, atomic };

struct Fabric::Impl {
  fi_info *info = nullptr;
  fid_fabric *fabric = nullptr;
  fid_domain *domain = nullptr;
  fid_av *av = nullptr;
  fid_cq *cq = nullptr;
  fid_ep *ep = nullptr;
  fi_addr_t self = FI_ADDR_NOTAVAIL;  // our own address, for the probe
  std::vector<fi_addr_t> peers;
  bool peers_inserted = false;

  std::string provider;
  TriggerStyle style = TriggerStyle::none;
  std::string probe_report;
  bool manual_progress = false;
  bool poke_triggers = false;  // sockets: see Fabric::progress()
  bool atomic_write = false;
  bool hmem = false;  // the provider registers device memory (FI_HMEM)
  uint64_t triggered_limit = 0;
  size_t pieces_limit = 1;  // pieces one put or get carries (Fabric::rma_pieces_limit)
  // Elements one accumulate may carry, by AtomicType and AtomicOp (fi_atomicvalid at open; 0: none).
  size_t atomic_limits[4][4] = {};
  uint64_t next_key = 1;  // requested MR keys when the provider does not choose them

  std::unique_ptr<OpRecord[]> records;
  size_t record_count = 0;
  uint64_t busy_wait_ms = 1000;  // Options::busy_wait_ms
  bool waited_too_long(std::chrono::steady_clock::time_point since) const {
    return busy_wait_ms && std::chrono::steady_clock::now() - since > std::chrono::milliseconds(busy_wait_ms);
  }
  std::vector<uint32_t> free_records;
  fid_mr *records_mr = nullptr;  // FI_MR_LOCAL: atomic operands live in the records
  void *records_desc = nullptr;
  uint64_t probe_words[3] = {};  // probe: source, target, flag
  Region probe_region;

  std::vector<std::unique_ptr<CounterEntry>> counters;  // by id - 1; null once released
  std::vector<std::unique_ptr<RegionEntry>> regions;    // by id - 1; null once deregistered
  std::chrono::steady_clock::time_point last_poke{};
  // Held while progress() pokes counters outside `mu`: release_counters() waits on it before closing.
  std::mutex poke_mu;

  mutable std::mutex mu;
  std::string error;

  ~Impl();

  // mu held:
  Status fail(Status status, std::string message);
  CounterEntry *counter(Counter c);
  RegionEntry *region(Region r);
  size_t reclaim();
  Status endpoint_for(CounterEntry *completion, fid_ep **out);

  // mu not held:
  Status peer_address(int peer, fi_addr_t *out);
  Status take_record(const char *what, uint32_t *rec);
  Counter make_counter();
  bool release_counter(Counter c);
  Region register_memory(void *base, size_t bytes, const DeviceMemory *device);
  Status add(Counter c, uint64_t value);
  uint64_t read(Counter c);
  uint64_t read_errors(Counter c);
  Status counter_mmio(Counter c, CounterMmio *out);
  Status wait(Counter c, uint64_t value, uint64_t timeout_ms);
  void progress();
  // Puts and gets of `n` pieces, each inside its local region.
  Status rma(TriggerStyle s, OpKind kind, const Fabric::Piece *pieces, size_t n, fi_addr_t dest,
             const RemoteRegion &remote, const Trigger &trigger);
  // An atomic of `count` elements from `local` (inside `local_region`), or of one 64-bit operand
  // kept in the record when `local` is null.
  Status atomic(TriggerStyle s, fi_op op, fi_datatype type, const void *local, size_t count, Region local_region,
                uint64_t operand, fi_addr_t dest, const RemoteRegion &remote, uint64_t remote_offset,
                const Trigger &trigger);
  // The same with one 64-bit operand toward world rank `peer`.
  Status atomic_u64(fi_op op, uint64_t operand, int peer, const RemoteRegion &remote, uint64_t remote_offset,
                    const Trigger &trigger);
  // The local descriptor of [p, p + bytes) inside `r`, or an error naming `what`.
  Status local_range(Region r, const void *p, size_t bytes, const char *what, void **desc);
  Status submit(TriggerStyle s, OpKind kind, uint32_t rec, const Trigger &trigger);

  // probe.cpp
  enum class Probe { works, refused, broken };  // broken: it left operations queued
  Probe probe(TriggerStyle s, std::string *why);
  void query_limits();
};

std::string fi_error_text(const char *call, long ret);
fi_datatype ofi_datatype(AtomicType type);
fi_op ofi_op(AtomicOp op);

}  // namespace mpix::ofi
