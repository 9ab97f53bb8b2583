#include "launch_trace_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend.h"

namespace mpix::gpu {

bool finish_launch_trace(int rank, std::string *why) {
  if (!launch_trace_prefix()) return true;
  Backend &b = backend();
  work::TraceLog log{};
  std::vector<work::TraceRecord> records;
  const char *clock = "";
  if (!b.read_launch_trace(&log, &records, &clock)) {
    *why = std::string("MPIX_ST_TRACE: the ") + b.name() + " backend could not read its trace back: " + b.last_error();
    return false;
  }
  return write_launch_trace_file(log, records.data(), b.name(), clock, rank, why);
}

bool write_launch_trace_file(const work::TraceLog &log, const work::TraceRecord *records, const char *backend,
                             const char *clock, int rank, std::string *why) {
  const char *prefix = launch_trace_prefix();
  if (!prefix) return true;
  const std::string path = std::string(prefix) + "." + std::to_string(rank) + ".csv";
  std::FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    *why = "MPIX_ST_TRACE: cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  const uint64_t written = std::min<uint64_t>(log.claimed, log.capacity);
  std::fprintf(f, "# mpix-st launch trace v1\n# backend %s\n# clock %s\n# rank %d\n", backend, clock, rank);
  std::fprintf(f, "# records %llu\n# dropped %llu\n", static_cast<unsigned long long>(written),
               static_cast<unsigned long long>(log.claimed - written));
  std::fprintf(f, "t_ns,window,event,info\n");
  for (uint64_t i = 0; i < written; ++i) {
    const work::TraceRecord &r = records[i];
    std::fprintf(f, "%llu,%u,%s,%u\n", static_cast<unsigned long long>(r.t_ns), r.window_id,
                 work::trace_event_name(r.event), r.info);
  }
  const bool ok = std::fclose(f) == 0;
  if (!ok) *why = "MPIX_ST_TRACE: writing " + path + " failed";
  return ok;
}

}  // namespace mpix::gpu
