// The launch trace's files (MPIX_ST_TRACE; kernels/launch_trace.h says what is stamped). Each
// backend keeps one log per process; MPI_Finalize has it written as <prefix>.<rank>.csv.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kernels/launch_trace.h"

namespace mpix::gpu {

// MPIX_ST_TRACE: the path prefix of the trace files, or null when tracing is off. (Inline: the
// GPU plugins read it too.)
inline const char *launch_trace_prefix() {
  const char *v = std::getenv("MPIX_ST_TRACE");
  return v && *v ? v : nullptr;
}
// Records one log holds: MPIX_ST_TRACE_RECORDS (default 1 Mi, 16 MiB); at least 1.
inline uint64_t launch_trace_capacity() {
  const char *v = std::getenv("MPIX_ST_TRACE_RECORDS");
  return std::max<uint64_t>(1, v && *v ? std::strtoull(v, nullptr, 10) : (1ull << 20));
}

// MPI_Finalize: the process backend's log written as below; true where tracing is off.
bool finish_launch_trace(int rank, std::string *why);

// Writes the log `log` (copied to host memory: header and its first min(claimed, capacity)
// records) as <prefix>.<rank>.csv: comment lines naming the backend, the clock, the counts and
// how many records were lost to a full log, then one line per written record, in claim order.
bool write_launch_trace_file(const work::TraceLog &log, const work::TraceRecord *records, const char *backend,
                             const char *clock, int rank, std::string *why);

}  // namespace mpix::gpu
