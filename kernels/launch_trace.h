// The launch trace (MPIX_ST_TRACE): where the time of each epoch launch (and collective call)
// goes, stamped by the launch itself. Stream profilers see a kernel as one bar; the question that matters for an
// epoch is which part of it waited (for a peer's post, for its complete) and which moved data.
//
// Each launch stamps six events with the device's nanosecond clock (%globaltimer on CUDA,
// s_memrealtime on AMD, steady_clock on the host backend) into one log per process: enter and
// waited from block 0, the other four from the block that finishes the list (the last one through
// the ticket; trail_done equals signalled where the list has no trailing waits). A launch with
// nothing after its data (no signals, no counts) stamps exit from block 0 instead of those four.
// The stamps are one thread's clock reads kept in shared memory; the finishing block writes all
// six at the end with one atomic add (block 0 of a multi-block launch hands its two over through
// a slot of the log before the ticket). Once the log is full, records are counted (`claimed`
// goes on) but not written. What tracing costs is measured, not assumed (README, "Launch
// trace"). MPI_Finalize writes the log (src/backend/launch_trace_file.h); scripts/trace-summary.py
// turns it into per-phase times.
//
// Each launch's records are written together, so they are contiguous in the log and start with
// its enter record, whatever other streams stamp meanwhile; launches are not numbered.
#pragma once
#include <cstdint>

#include "work_items.h"

namespace mpix::work {

enum TraceEvent : uint16_t {
  kTraceEnter = 1,       // the launch started (block 0)
  kTraceWaited = 2,      // its waits (a peer's post, or complete) are over (block 0)
  kTraceOpsDone = 3,     // every block has moved its data (the finishing block, past the ticket)
  kTraceSignalled = 4,   // its signals are stored, after the fence that orders the data
  kTraceTrailDone = 5,   // its trailing waits (a merged wait: the peers' completes) are over
  kTraceExit = 6,        // its counts are added: the launch is done
};
constexpr int kTraceEvents = 6;

inline const char *trace_event_name(uint16_t e) {
  switch (e) {
    case kTraceEnter: return "enter";
    case kTraceWaited: return "waited";
    case kTraceOpsDone: return "ops_done";
    case kTraceSignalled: return "signalled";
    case kTraceTrailDone: return "trail_done";
    case kTraceExit: return "exit";
    default: return "unknown";
  }
}

// What a launch's list holds (an enter record's `info`), so a summary can tell a post from a
// complete or a merged epoch.
enum TraceParts : uint16_t {
  kTraceLead = 1,      // leading signals (a post merged in front)
  kTraceWaits = 2,
  kTraceOps = 4,       // data movement
  kTraceSignals = 8,   // stored signals
  kTraceTrail = 16,    // trailing waits
  kTraceCounts = 32,   // counting signals
  // A collective call's launch (coll/device.h, host_coll_exec.cpp): the high byte holds its Kind
  // (coll/args.h) and the record's window_id the communicator's id. Block 0 stamps enter, waited
  // (the last of its waits on a peer ended; enter's time for a call that waits for nobody),
  // ops_done (the schedule's rounds are done) and exit (the communicator's cursor advanced);
  // other blocks stamp nothing.
  kTraceCollective = 64,
};
MPIX_HOST_DEVICE inline constexpr uint16_t trace_collective_parts(uint8_t kind) {
  return static_cast<uint16_t>(kTraceCollective | (static_cast<uint16_t>(kind) << 8));
}
MPIX_HOST_DEVICE inline uint16_t trace_parts(const LaunchHeader &h) {
  return (h.nlead ? kTraceLead : 0) | (h.nwait ? kTraceWaits : 0) | (h.ncopy ? kTraceOps : 0) |
         (h.nsignal ? kTraceSignals : 0) | (h.ntrail ? kTraceTrail : 0) | (h.ncount ? kTraceCounts : 0);
}

struct TraceRecord {
  uint64_t t_ns;
  uint32_t window_id;
  uint16_t event;  // TraceEvent
  uint16_t info;   // enter: the list's TraceParts; other events: the block that stamped it
};
static_assert(sizeof(TraceRecord) == 16, "the trace is copied back as raw records");

// Where block 0 of a multi-block launch leaves its two stamps for the finishing block: the slot
// of the launch's ticket (at least as many slots as the device backend has tickets, so launches
// in flight never share one).
constexpr uint32_t kTraceHandoffSlots = 4096;

// The log: this header, then `capacity` records. `claimed` counts every stamp, written or not.
struct TraceLog {
  unsigned long long claimed;
  unsigned long long capacity;
  uint64_t handoff[kTraceHandoffSlots][2];  // device only: enter and waited of block 0
  MPIX_HOST_DEVICE TraceRecord *records() { return reinterpret_cast<TraceRecord *>(this + 1); }
};
static_assert(sizeof(TraceLog) % 16 == 0, "records follow the header aligned");

inline constexpr uint64_t trace_log_bytes(uint64_t capacity) { return sizeof(TraceLog) + capacity * sizeof(TraceRecord); }

}  // namespace mpix::work

#if defined(__CUDACC__) || defined(__HIPCC__)
#include "device_atomics.h"

// The thread of a block that stamps (the second warp's first; thread 0 polls and signals).
__device__ inline bool mpix_trace_thread() { return threadIdx.x == (blockDim.x > 32 ? 32u : 0u); }

__device__ inline uint64_t *mpix_trace_handoff(uint64_t log_addr, uint64_t ticket_addr) {
  auto *log = reinterpret_cast<mpix::work::TraceLog *>(log_addr);
  return log->handoff[(ticket_addr / sizeof(uint32_t)) % mpix::work::kTraceHandoffSlots];
}

// Writes one launch's stamps (times t[k] of events e[k]) with one claim, after the launch's work,
// so the claim's atomic round trip delays only the kernel's end, not a phase it measures. The
// enter record carries the list's parts, the others the block that stamped them (0 for waited).
__device__ inline void mpix_trace_write(uint64_t log_addr, uint32_t window_id, const uint64_t *t, const uint16_t *e,
                                        int n, uint16_t parts) {
  auto *log = reinterpret_cast<mpix::work::TraceLog *>(log_addr);
  const unsigned long long i = atomicAdd(&log->claimed, static_cast<unsigned long long>(n));
  for (int k = 0; k < n; ++k) {
    const uint16_t info = k == 0 ? parts : k == 1 ? 0 : static_cast<uint16_t>(blockIdx.x);
    if (i + k < log->capacity) log->records()[i + k] = {t[k], window_id, e[k], info};
  }
}
#endif
