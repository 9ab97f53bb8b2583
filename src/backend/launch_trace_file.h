// The launch trace's files (MPIX_ST_TRACE; kernels/launch_trace.h says what is stamped). Each
// backend keeps one log per process; MPI_Finalize has it written as <prefix>.<rank>.csv.
#pragma once
#include <cstdint>
#include <string>

#include "kernels/launch_trace.h"
#include "settings/settings.h"

namespace mpix::gpu {

// MPIX_ST_TRACE: the path prefix of the trace files, or null when tracing is off. (Inline: the
// GPU plugins read it too.)
inline const char *launch_trace_prefix() {
  const std::string &v = settings::text(settings::Id::MPIX_ST_TRACE);
  return v.empty() ? nullptr : v.c_str();
}
// Records one log holds: MPIX_ST_TRACE_RECORDS (default 1 Mi, 16 MiB; 1 to 2^27, so that
// work::trace_log_bytes stays far inside 64 bits).
inline uint64_t launch_trace_capacity() { return settings::number(settings::Id::MPIX_ST_TRACE_RECORDS); }
static_assert(settings::entry(settings::Id::MPIX_ST_TRACE_RECORDS).min >= 1);
static_assert(settings::entry(settings::Id::MPIX_ST_TRACE_RECORDS).max * sizeof(work::TraceRecord) <= (1ull << 31));

// MPI_Finalize: the process backend's log written as below; true where tracing is off.
bool finish_launch_trace(int rank, std::string *why);

// Writes the log `log` (copied to host memory: header and its first min(claimed, capacity)
// records) as <prefix>.<rank>.csv: comment lines naming the backend, the clock, the counts and
// how many records were lost to a full log, then one line per written record, in claim order.
bool write_launch_trace_file(const work::TraceLog &log, const work::TraceRecord *records, const char *backend,
                             const char *clock, int rank, std::string *why);

}  // namespace mpix::gpu
