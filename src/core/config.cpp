#include "config.h"

#include "kernels/work_items.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace mpix::core {
namespace {
uint64_t env_u64(const char *name, uint64_t fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v) return fallback;
  char *end = nullptr;
  unsigned long long x = std::strtoull(v, &end, 10);
  return (end && *end == '\0') ? x : fallback;
}
bool env_bool(const char *name) {
  const char *v = std::getenv(name);
  return v && (std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0 || std::strcmp(v, "yes") == 0);
}
}  // namespace

const Config &config() {
  static const Config c = [] {
    Config c;
    c.watchdog_ns = env_u64("MPIX_ST_WATCHDOG_MS", 0) * 1000000ull;
    c.mpi_gpu_aware = env_bool("MPIX_ST_MPI_GPU_AWARE");
    c.vnode_size = static_cast<int>(env_u64("MPIX_ST_VNODE_SIZE", 0));
    c.doorbell_poll_us = env_u64("MPIX_ST_DOORBELL_POLL_US", c.doorbell_poll_us);
    c.line_put_bytes = std::min<uint64_t>(env_u64("MPIX_ST_LINE_PUT_BYTES", c.line_put_bytes), work::kLinePutMaxBytes);
    c.dtype_runs = env_u64("MPIX_ST_DTYPE_RUNS", 1) != 0;
    c.dtype_list_mib = env_u64("MPIX_ST_DTYPE_LIST_MIB", c.dtype_list_mib);
    return c;
  }();
  return c;
}

}  // namespace mpix::core
