// The launch trace (MPIX_ST_TRACE): where the time of each epoch launch goes, stamped by the
// launch itself. Stream profilers see a kernel as one bar; the question that matters for an
// epoch is which part of it waited (for a peer's post, for its complete) and which moved data.
//
// Each launch stamps six events with the device's nanosecond clock (%globaltimer on CUDA,
// s_memrealtime on AMD, steady_clock on the host backend) into one log per process: enter and
// waited from block 0, the other four from the block that finishes the list (the last one through
// the ticket; trail_done equals signalled where the list has no trailing waits). A launch with
// nothing after its data (no signals, no counts) stamps exit from block 0 instead of those four.
// Each stamping block claims its records with one atomic add; once the log is full, records are
// counted (`claimed` goes on) but not written. What tracing costs is measured, not assumed
// (README, "Launch trace"). MPI_Finalize writes the log
// (src/gpu/launch_trace_file.h); scripts/trace-summary.py turns it into per-phase times.
//
// Launches are not numbered (the finishing block would need the number from block 0: one more
// global round trip per launch). A launch's records are told apart by window and time order:
// the launches of one window run one after the other on its stream, which holds for every
// program that uses a window from one stream (epochs of one window on two streams would need
// the user's own ordering anyway).
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
};
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

// The log: this header, then `capacity` records. `claimed` counts every stamp, written or not.
struct TraceLog {
  unsigned long long claimed;
  unsigned long long capacity;
  MPIX_HOST_DEVICE TraceRecord *records() { return reinterpret_cast<TraceRecord *>(this + 1); }
};
static_assert(sizeof(TraceLog) == 16, "records follow the header at 16 bytes");

inline constexpr uint64_t trace_log_bytes(uint64_t capacity) { return sizeof(TraceLog) + capacity * sizeof(TraceRecord); }

}  // namespace mpix::work

#if defined(__CUDACC__) || defined(__HIPCC__)
#include "device_atomics.h"

// The thread of a block that stamps: the second warp's first, so the claim's atomic round trip
// stalls a warp that is not the one polling flags or storing signals (thread 0).
__device__ inline bool mpix_trace_thread() { return threadIdx.x == (blockDim.x > 32 ? 32u : 0u); }

// Claims `n` consecutive records (one atomic for a block's stamps) and writes the first with
// `info`. Returns the first index; records beyond the capacity are counted, not written. The
// clock is read first: the atomic's round trip is not part of what the stamp measures.
__device__ inline unsigned long long mpix_trace_claim(uint64_t log_addr, uint32_t window_id, uint16_t event,
                                                      unsigned n, uint16_t info) {
  const uint64_t t = mpix_clock_ns();
  auto *log = reinterpret_cast<mpix::work::TraceLog *>(log_addr);
  const unsigned long long i = atomicAdd(&log->claimed, static_cast<unsigned long long>(n));
  if (i < log->capacity) log->records()[i] = {t, window_id, event, info};
  return i;
}
// Writes a record into a slot claimed before.
__device__ inline void mpix_trace_put(uint64_t log_addr, unsigned long long i, uint32_t window_id, uint16_t event) {
  auto *log = reinterpret_cast<mpix::work::TraceLog *>(log_addr);
  if (i < log->capacity) log->records()[i] = {mpix_clock_ns(), window_id, event, static_cast<uint16_t>(blockIdx.x)};
}
#endif
