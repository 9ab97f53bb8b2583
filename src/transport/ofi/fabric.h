// The inter-node transport (doc/design.md, The inter-node path): one libfabric endpoint per
// process, registered memory, counters and triggered operations, chained as in
// [Namashivayam 2023] §5.1 (a put's completion counter is the trigger counter of the signal atomic
// that announces it). The only code that names libfabric (doc/design.md, Layers): this header
// shows no fi_* type, so the core can include it.
//
// Two styles of triggered operation exist and both are supported, picked by probing at start-up
// (a triggered put chained to a triggered atomic, run on a loopback address):
//   deferred_work_queue  fi_control(domain, FI_QUEUE_WORK, struct fi_deferred_work *): the only form
//                        the CXI (Slingshot) provider accepts. libfabric 1.17's sockets provider
//                        takes it too, when the operation's context is the work item's own
//                        (else -FI_EINVAL). Tested on sockets only; never run on CXI hardware.
//   triggered_context    the FI_TRIGGER flag with a struct fi_triggered_context as the operation's
//                        context; its completion counter is the one bound to the endpoint, so each
//                        completion counter gets an endpoint of its own.
// Counters are 64-bit here but providers may hold fewer bits (sockets: 31, CXI: 48); epoch counts
// stay far below either.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mpix::ofi {

enum class TriggerStyle { none, deferred_work_queue, triggered_context };
const char *style_name(TriggerStyle style);

// Results of the calls that post or check operations (0 = success); last_error() says more.
enum Status : int {
  kOk = 0,
  kErrArg = 1,          // a range outside its region, an unknown handle or peer
  kErrProvider = 2,     // the provider refused or failed
  kErrBusy = 3,         // resources exhausted: every operation record is in flight, or the
                        // provider kept answering -FI_EAGAIN
  kErrUnsupported = 4,  // the provider lacks the operation (e.g. FI_ATOMIC_WRITE)
  kErrTimeout = 5,
};

struct Options {
  std::string providers = "cxi,sockets";    // tried in order
  TriggerStyle style = TriggerStyle::none;  // none: probe, deferred work queue first
  // MPIX_ST_OFI_PROGRESS: automatic asks sockets for FI_PROGRESS_MANUAL and leaves other providers
  // their default (make_hints); manual asks every provider for it (tests that path); provider
  // leaves every provider its default.
  enum class Progress { automatic, manual, provider };
  Progress progress = Progress::automatic;
  size_t max_pending_ops = 4096;            // triggered operations whose completion is unseen
  // How long a post waits, driving progress, for a free operation record or for a provider that
  // answers -FI_EAGAIN, before it fails with kErrBusy; 0: no limit. Records free up in bulk (see
  // reclaim()), so a busy stream can hold them for a while.
  uint64_t busy_wait_ms = 1000;
  // Device memory will need registering: FI_HMEM is asked of each provider first, and the
  // provider is taken without it where it lacks it (registers_device_memory() then says false,
  // and the caller stages through host memory).
  bool device_memory = false;
  // At most this many pieces per put or get (0: what the provider takes, up to kMaxPieces); 1
  // gives each piece an operation of its own, as CXI does (MPIX_ST_OFI_RMA_PIECES).
  size_t max_rma_pieces = 0;
  // The domain (NIC) to open, by its name (cxi1), where provider `domain_provider` is the one
  // opened; empty, or another provider: that provider's first domain.
  std::string domain, domain_provider;
};

// One domain a provider offers: a NIC, or for socket providers an interface.
struct Nic {
  std::string provider, domain;
  std::string pci;  // "dddd:bb:dd.f" where the provider names the NIC's PCI address, else empty
};
// The domains of the first provider of options.providers that offers the endpoints open() needs,
// each once, in the provider's order. Empty with *why when none does.
std::vector<Nic> list_nics(const Options &options, std::string *why);

// Device memory to register: its runtime ("cuda", "hip") and device.
struct DeviceMemory {
  const char *runtime = nullptr;
  int ordinal = 0;
};
// MPIX_ST_OFI_PROVIDER (comma list), MPIX_ST_OFI_TRIGGER=auto|dwq|context,
// MPIX_ST_OFI_PROGRESS=auto|manual|provider, MPIX_ST_OFI_RMA_PIECES=n (src/settings/settings.def). False
// with *why for a value the settings table refuses.
bool options_from_env(Options *out, std::string *why);

// Handles: small ids, 0 = none.
struct Counter {
  uint32_t id = 0;
  explicit operator bool() const { return id != 0; }
};
struct Region {
  uint32_t id = 0;
  explicit operator bool() const { return id != 0; }
};

// What a peer needs to reach a registered region; exchanged as plain bytes.
struct RemoteRegion {
  uint64_t base = 0;  // virtual address of the region, or 0 where the provider uses offsets
  uint64_t key = 0;
  uint64_t bytes = 0;
};

// Element types and operations of accumulates (array atomics).
enum class AtomicType { i32, i64, f32, f64 };
enum class AtomicOp { sum, min, max, replace };
size_t atomic_type_bytes(AtomicType type);

// Most pieces one put or get carries (local and remote vectors of fi_writemsg / fi_readmsg); the
// provider's limits may be lower (Fabric::rma_pieces_limit).
constexpr size_t kMaxPieces = 8;

// When a triggered operation runs (`counter` reaches `threshold`) and which counter counts it
// complete (by one, once its data is visible at the target).
struct Trigger {
  Counter counter;
  uint64_t threshold = 0;
  Counter completion;
};

// Thread-safe: the doorbell agent adds to counters while the host posts operations.
class Fabric {
 public:
  // Opens the first provider of options.providers that offers reliable datagram endpoints with RMA,
  // 64-bit atomic sums and triggered operations, and probes its trigger style. Null with *why
  // naming each provider tried and why it was refused.
  static std::unique_ptr<Fabric> open(const Options &options, std::string *why);
  ~Fabric();
  Fabric(const Fabric &) = delete;
  Fabric &operator=(const Fabric &) = delete;

  const std::string &provider() const;
  TriggerStyle trigger_style() const;
  const std::string &probe_report() const;  // what each probed style did
  bool manual_progress() const;
  // Whether someone must call progress() while operations are in flight: manual progress, or a
  // provider that leaves fired triggers unstarted until poked (sockets, see progress()).
  bool needs_progress() const;
  uint64_t triggered_op_limit() const;  // what the provider says it can queue; 0 = unknown
  uint64_t max_put_bytes() const;
  bool supports_atomic_write() const;
  std::string last_error() const;

  // Addresses: exchange local_address() (e.g. MPI_Allgather), then insert them all; a peer's id is
  // its position in that list. Once per Fabric.
  std::vector<uint8_t> local_address() const;
  bool insert_peers(const std::vector<std::vector<uint8_t>> &addresses);
  int peer_count() const;

  // Registration for local use (put sources) and remote access (put and atomic targets).
  // `device`: device memory (needs registers_device_memory()); null for host memory.
  Region register_memory(void *base, size_t bytes, const DeviceMemory *device = nullptr);
  // Whether the provider registers device memory (FI_HMEM, asked with Options::device_memory). Only
  // compiled, never run: no provider here has it (Debian's libfabric is built without CUDA/ROCm).
  bool registers_device_memory() const;
  RemoteRegion remote(Region region) const;
  // The caller makes sure no operation in flight, here or at a peer, still uses the region.
  bool deregister(Region region);

  Counter make_counter();
  // Refused while posted operations still use the counter; a doorbell must not watch it.
  bool release_counter(Counter counter);
  Status add(Counter counter, uint64_t value);
  uint64_t read(Counter counter);
  uint64_t read_errors(Counter counter);
  // Where a 64-bit store of v adds v to `counter` (the CXI counter's MMIO adder), and the page
  // holding it, for registration with the GPU runtime. kErrUnsupported where the provider has no
  // such address (everything but cxi, and builds without rdma/fi_cxi_ext.h).
  // Stores bypass the bookkeeping of add(), so such a counter may only trigger operations: it is
  // refused once it counts operations' completions, and it then refuses to count them. A store adds
  // at most 2^48 - 1 (CXI's counter width). Unmap the page from the GPU before release_counter().
  struct CounterMmio { void *page = nullptr; size_t page_bytes = 0; void *adder = nullptr; };
  Status counter_mmio(Counter counter, CounterMmio *out);
  // Until read(counter) >= value, driving progress; kErrTimeout after timeout_ms.
  Status wait(Counter counter, uint64_t value, uint64_t timeout_ms);

  // Teardown of a group of counters (a window's) whose operations are triggered and counted
  // within the group, once nothing but the provider's completions adds to them. Operations whose
  // trigger threshold will never be reached (a doorbell never rung) are never run: settle() waits
  // (driving progress, kErrTimeout after timeout_ms) until every operation that was or will be
  // triggered has completed, and says how many never will be; release_counters() then closes the
  // counters without triggering the rest (the provider drops them with their trigger counter) and
  // frees their records. kErrArg where an operation links the group to another counter.
  Status settle(const std::vector<Counter> &group, uint64_t timeout_ms, size_t *never_triggered);
  Status release_counters(const std::vector<Counter> &group);

  // Triggered operations. `local` lies inside `local_region`; the target range lies inside
  // `remote`. Atomic operands are copied: the provider reads them when the operation fires.
  Status triggered_put(const void *local, size_t bytes, Region local_region, int peer,
                       const RemoteRegion &remote, uint64_t remote_offset, const Trigger &trigger);
  // Reads `bytes` of the remote range into `local`.
  Status triggered_get(void *local, size_t bytes, Region local_region, int peer, const RemoteRegion &remote,
                       uint64_t remote_offset, const Trigger &trigger);
  // Puts and gets of several pieces as one operation (one local and one remote vector each, as
  // fi_writemsg and fi_readmsg take them): `n` is at most rma_pieces_limit(), the bytes of all at
  // most max_put_bytes(). Each piece's local bytes lie inside its `region`.
  struct Piece {
    void *local;
    Region region;
    uint64_t remote_offset;
    size_t bytes;
  };
  Status triggered_put_pieces(const Piece *pieces, size_t n, int peer, const RemoteRegion &remote,
                              const Trigger &trigger);
  Status triggered_get_pieces(const Piece *pieces, size_t n, int peer, const RemoteRegion &remote,
                              const Trigger &trigger);
  // The provider's vector limits (iov_limit, rma_iov_limit), at most kMaxPieces; at least 1.
  size_t rma_pieces_limit() const;
  // Combines `count` elements at `local` into the remote range, element by element atomically;
  // count is at most atomic_count_limit(type, op).
  Status triggered_accumulate(const void *local, size_t count, AtomicType type, AtomicOp op, Region local_region,
                              int peer, const RemoteRegion &remote, uint64_t remote_offset, const Trigger &trigger);
  // Elements one accumulate may carry; 0 where the provider lacks the type or operation.
  size_t atomic_count_limit(AtomicType type, AtomicOp op) const;
  Status triggered_atomic_add_u64(uint64_t value, int peer, const RemoteRegion &remote,
                                  uint64_t remote_offset, const Trigger &trigger);
  Status triggered_atomic_write_u64(uint64_t value, int peer, const RemoteRegion &remote,
                                    uint64_t remote_offset, const Trigger &trigger);
  // The remote word becomes the larger of it and `value`: signals that may land in any order.
  Status triggered_atomic_max_u64(uint64_t value, int peer, const RemoteRegion &remote,
                                  uint64_t remote_offset, const Trigger &trigger);

  // Drives the provider: reads its completion queue (failed operations become last_error()) and
  // pokes trigger counters whose fired operations the provider could not start (sockets checks
  // its triggers only when a counter changes, and a fired operation that met a full transmit
  // queue waits for the next change).
  void progress();
  // Posted operations whose completion has not been seen yet.
  size_t pending_ops();

  struct Impl;

 private:
  explicit Fabric(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mpix::ofi
