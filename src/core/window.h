// Shadow state of a window the library manages: peer mappings, flag slots, epoch counters and the
// open epochs. One Window per MPI_Win handle; the underlying MPI keeps its own window beside it.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "result.h"
#include "transport/ofi/fabric.h"

namespace mpix::core {

enum class EpochMode { none, stream, host };

struct Peer {
  bool node_local = false;
  int world_rank = 0;  // its fabric peer id
  int pid = 0;
  int disp_unit = 1;
  uint64_t bytes = 0;
  gpu::MappedRegion data;   // the peer's window memory (self: our own base)
  gpu::MappedRegion flags;  // the peer's flag area (self: our own flags)
  bool accumulate_lock = false;  // its memory is reached by copying: accumulates take its lock
  bool takes_lines = false;      // its stream waits take line puts (work_items.h; its MPIX_ST_LINE_PUT_BYTES > 0)
};

// An operation on a peer reached through the fabric: triggered operations, posted when the epoch
// completes and fired by its doorbell.
enum class RemoteKind : uint8_t { put, get, accumulate };
struct RemoteOp {
  RemoteKind kind;
  void *origin;  // read by puts and accumulates, written by gets
  uint64_t bytes;
  int target;
  uint64_t offset;
  uint8_t dtype = 0, op = 0;  // accumulates: work::Dtype, work::AccOp
  // What the network uses instead of `origin`: staging in registered host memory (a staged put's
  // or accumulate's copy of the data, where a staged get lands).
  void *staged = nullptr;
  ofi::Region staged_region{};
  // The origin memory to register, where it is more than [origin, origin + bytes): all pieces of
  // a derived datatype share one registration of the span they lie in (null: just this piece).
  void *span = nullptr;
  uint64_t span_bytes = 0;
  // A further piece of the same put or get as the op before it: the two may travel as one
  // network operation (fabric vectors, up to the provider's limit).
  bool joins = false;
};

struct AccessEpoch {
  EpochMode mode = EpochMode::none;
  int assert_bits = 0;
  std::vector<int> targets;      // window ranks
  std::vector<uint8_t> in_group;  // by window rank: is it a target of this epoch
  std::vector<work::Item> ops;   // recorded puts, gets, accumulates (addresses already resolved)
  std::vector<RemoteOp> remote_ops;
  std::vector<uint8_t> via_fabric;  // by window rank: this epoch reaches it through the fabric
  // By window rank: puts and accumulates in remote_ops to it (each takes a range of a staged
  // target's block), so checking the per-target limit costs O(1) per operation.
  std::vector<uint32_t> fabric_ranges;
  uint64_t fabric_ops = 0;  // triggered operations remote_ops take (checked against the budget)
  // By window rank: the index in `ops` of the one put to that target while it may travel as lines
  // (work_items.h, line puts), kNoLinePut before any operation to it, kNotLines after a second
  // operation or one that cannot.
  static constexpr int32_t kNoLinePut = -1, kNotLines = -2;
  std::vector<int32_t> line_put;
};

struct ExposureEpoch {
  EpochMode mode = EpochMode::none;
  int assert_bits = 0;
  std::vector<int> origins;
  std::vector<MPI_Request> post_sends;  // host mode: the post notifications in flight
  // Host mode: the origins' completion notifications, posted by the first MPI_Win_test.
  std::vector<MPI_Request> complete_recvs;
  bool completes_posted = false;
};

// Host memory of a window's transport that the stream reaches too (see gpu::HostMapped).
struct StagingBuffer {
  gpu::HostMapped mem;
  ofi::Region region;
  uint64_t bytes = 0;
};

// The inter-node half of a window. Remote peers write our flags with chained triggered atomics
// (one add per signal, so a slot counts its signals just as the IPC path stores the count).
// The stream rings the doorbells: the doorbell agent adds each ring to the trigger counter, or
// (CXI) the stream stores to the counter's MMIO adder itself.
//
// Staged windows (the network cannot reach window memory: device memory without FI_HMEM): remote
// puts and accumulates land in `landing`, a host mirror of the window followed by one range block
// per origin (work::StagedRanges) and by the flag slots peers on other nodes write. The origin's
// complete copies their data into `stream_staging` before ringing the doorbell and stores the
// ranges; the target's wait copies the described ranges from the mirror into the window. Gets
// land in staging too (see staged_transfers.h).
struct RemoteState {
  ofi::Region data, flags;                               // our registrations
  std::vector<ofi::RemoteRegion> peer_data, peer_flags;  // by window rank
  ofi::Counter post_trigger, complete_trigger, host_trigger;
  ofi::Counter op_done, signal_done;                     // completions
  bool staged = false;
  bool mirrors = false;               // staged: the window is copied into the mirror at each post
  std::vector<uint8_t> peer_mirrors;  // by window rank: that peer mirrors (takes gets, accumulates)
  gpu::HostMapped landing;        // staged only
  uint64_t *net_flags = nullptr;  // the flag slots the network writes (device view; the window's own flags
                                  // unless staged)
  gpu::HostMapped doorbell_mem;   // [0] post rings, [1] complete rings: stored by the stream;
                                  // [kSkipWord] set by a list the watchdog cut short (remote_epochs.cpp)
  uint64_t *doorbell = nullptr;   // host view, read by the doorbell agent
  // CXI: the stream rings by storing 1 to the trigger counter's MMIO adder instead (mapped for
  // the stream; null where the agent watches the word above).
  uint64_t *mmio_adder[2] = {nullptr, nullptr};
  void *mmio_page[2] = {nullptr, nullptr};
  StagingBuffer stream_staging, host_staging;  // staged data and range blocks, per epoch kind
  std::vector<StagingBuffer> retired_staging;   // outgrown, maybe still read by enqueued epochs
  uint64_t watch_ids[2] = {0, 0};
  uint64_t post_rings = 0, complete_rings = 0, host_rings = 0;
  uint64_t ops_posted = 0, signals_posted = 0;
  uint64_t op_epochs = 0;  // complete epochs with fabric operations: what remote_done_slot will reach
  // Registrations of origin buffers (fabric operations need registered memory), by base address.
  // One is reused while operations that use it are in flight (last_use: ops_posted after the
  // latest of them) and released once op_done passes that; a later epoch registers the buffer
  // again. So memory freed and reused at the same address (legal only once its epochs are done)
  // never meets a registration of the old memory; where registering pins pages, the provider's
  // MR cache, whose memory monitor sees frees, keeps registering again cheap.
  struct OriginRegistration {
    uint64_t bytes = 0;
    ofi::Region region;
    uint64_t last_use = 0;
  };
  std::map<uintptr_t, OriginRegistration> origin_regs;
  std::deque<std::pair<uint64_t, uintptr_t>> origin_releases;  // (last_use, base), oldest first
  std::vector<std::pair<uint64_t, ofi::Region>> origin_retired;  // replaced by longer ones: (last_use, region)
  uint64_t origin_registrations = 0;                           // made so far (tests, reports)
};

// Flag area of each rank: slot [t] holds the last post signal from target t, slot [size + o] the
// last complete signal from origin o, slot [2 * size] counts the work lists run on streams, and
// slot [2 * size + 1] is the accumulate lock of windows peers reach by copying, and slot
// [2 * size + 2] counts epochs whose fabric operations completed; the epoch cursors follow.
// Epoch values only grow, so slots are never reset.
class Window {
 public:
  MPI_Win handle = MPI_WIN_NULL;
  MPI_Comm comm = MPI_COMM_NULL;  // private duplicate: host-driven notifications travel here
  MPI_Group group = MPI_GROUP_NULL;
  uint32_t id = 0;
  int rank = 0, size = 0;
  void *base = nullptr;
  uint64_t bytes = 0;
  int disp_unit = 1;
  bool memory_owned = false;  // made by MPI_Win_allocate through the backend
  bool mirror_requested = false;  // info mpix_st_staged_get_accumulate (used if the window is staged)
  uint64_t *flags = nullptr;
  std::vector<Peer> peers;
  std::unique_ptr<RemoteState> remote;  // only when some peer is on another node


  AccessEpoch access;
  ExposureEpoch exposure;
  // Host-mode complete notifications still in flight: MPI_Win_complete does not wait for them
  // (a rank that is its own target receives its notification only in its later MPI_Win_wait).
  std::vector<MPI_Request> complete_sends;
  int passive_epochs = 0;    // MPI_Win_lock/lock_all depth (underlying MPI's epochs)
  bool fence_epoch = false;  // an MPI_Win_fence opened an epoch of the underlying MPI
  // Non-empty: the underlying MPI's window is a zero-size stand-in (device memory the MPI cannot
  // access, or an MPI whose one-sided components cannot create windows here), and this says why RMA
  // calls in its fence and lock epochs are refused.
  std::string pmpi_window_stub;
  uint64_t stream_lists = 0;  // work lists enqueued on streams; the last one run stores its number
                              // in the retire slot, so MPI_Win_free knows what is still in flight
                              // (lists captured into graphs are not counted: they run at replays)

  uint64_t *post_flag_at(int origin_peer) const;      // where this rank signals a post to origin
  uint64_t *complete_flag_at(int target_peer) const;  // where this rank signals a complete to target
  // Where this rank's stream waits for a peer's signals: peers on other nodes write a staged
  // window's network flag slots.
  const uint64_t *incoming_flags(int peer) const {
    return remote && !peers[peer].node_local ? remote->net_flags : flags;
  }
  const uint64_t *post_flag_from(int target) const { return incoming_flags(target) + target; }
  // A window that mirrors hears every origin's completes from the network (staged_transfers.h).
  const uint64_t *complete_flag_from(int origin) const {
    return (remote && remote->mirrors ? remote->net_flags : incoming_flags(origin)) + size + origin;
  }
  // Complete signals to `target` travel through the fabric: it is on another node, or it mirrors.
  bool completes_via_fabric(int target) const {
    return !peers[target].node_local || (remote && remote->peer_mirrors[target]);
  }
  uint64_t *retire_slot() const { return flags + 2 * size; }
  uint64_t *accumulate_lock_of(int target) const {
    return reinterpret_cast<uint64_t *>(peers[target].flags.base) + 2 * size + 1;
  }
  // Counts complete epochs whose fabric operations have completed (the NIC adds to it).
  static size_t remote_done_slot(int size) { return 2 * static_cast<size_t>(size) + 2; }

  // Epoch cursors, by window rank: how many epochs of each kind this process's streams have run
  // with that peer (list_items.h). They live in flag memory, private to this process, and only
  // stream work reads and advances them, in stream order; so eager epochs and replays of
  // captured graphs share them, and the host never needs to know how often a graph was replayed.
  enum Cursor : int {
    kPostsSent = 0,          // post signals stored to origin o
    kPostsExpected = 1,      // post signals awaited from target t
    kCompletesSent = 2,      // complete signals stored to target t
    kCompletesExpected = 3,  // complete signals awaited from origin o
  };
  uint64_t *cursor(Cursor c, int peer) const { return flags + cursor_base(size) + c * static_cast<size_t>(size) + peer; }
  // The host's count of each cursor (indexed like the cursors from kPostsSent of peer 0), exact
  // while no list of the window was ever captured: until then the host enqueued every advance,
  // and replays advance cursors the host cannot count (epochs.cpp, resolve_cursors).
  std::vector<uint64_t> cursor_counts;
  bool cursors_counted = true;
  static size_t cursor_base(int size) { return 2 * static_cast<size_t>(size) + 3; }
  // Line areas (work_items.h, line puts): one per origin after the cursors, in windows of at most
  // kLineAreaMaxRanks ranks (576 bytes each: the origin's lines, then the target's line hint;
  // larger windows put every byte directly).
  static constexpr int kLineAreaMaxRanks = 256;
  static bool has_line_areas(int size) { return size <= kLineAreaMaxRanks; }
  static size_t cursor_end(int size) { return cursor_base(size) + 4 * static_cast<size_t>(size); }
  static size_t line_area_base(int size) { return (cursor_end(size) + 7) / 8 * 8; }
  static size_t flag_slots(int size) {
    return has_line_areas(size) ? line_area_base(size) + static_cast<size_t>(size) * (work::kLineAreaBytes / 8)
                                : cursor_end(size);
  }
  // The area origin `origin` writes in `flags_of_rank` (a flag area's base: ours, or a peer's mapping).
  uint64_t *line_area(const void *flags_of_rank, int origin) const {
    return reinterpret_cast<uint64_t *>(const_cast<void *>(flags_of_rank)) + line_area_base(size) +
           static_cast<size_t>(origin) * (work::kLineAreaBytes / 8);
  }
};

// Registry of managed windows.
Window *find_window(MPI_Win win);
Window *find_window_by_id(uint32_t id);
// Calls f for every live window, under the registry's lock (f must not create or free windows).
void for_each_window(const std::function<void(Window &)> &f);
void register_window(std::unique_ptr<Window> w);
std::unique_ptr<Window> unregister_window(MPI_Win win);

// Handles of windows freed through MPI_Win_free (managed or not) until the MPI hands the handle
// out again: the underlying MPI may not notice a stale handle (MPICH 4.0 runs MPI_Win_post on a
// freed window and returns MPI_SUCCESS), so the library refuses it by name.
void note_window_freed(MPI_Win win);
void note_window_created(MPI_Win win);
bool window_was_freed(MPI_Win win);

}  // namespace mpix::core
