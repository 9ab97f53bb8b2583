#include "config.h"

#include "kernels/work_items.h"
#include "settings/settings.h"

namespace mpix::core {

using settings::Id;

// The table's bounds are what the arithmetic here and where the values are used handles.
static_assert(settings::entry(Id::MPIX_ST_LINE_PUT_BYTES).max == work::kLinePutMaxBytes);
static_assert(settings::entry(Id::MPIX_ST_WATCHDOG_MS).max <= UINT64_MAX / 1000000 / 1000);  // ns, room for clocks
static_assert(settings::entry(Id::MPIX_ST_VNODE_SIZE).max <= INT32_MAX);
static_assert(settings::entry(Id::MPIX_ST_DTYPE_LIST_MIB).max < (uint64_t(1) << 44));  // bytes within 64 bits

const Config &config() {
  static const Config c = [] {
    Config c;
    c.watchdog_ns = settings::number(Id::MPIX_ST_WATCHDOG_MS) * 1000000ull;
    c.mpi_gpu_aware = settings::flag(Id::MPIX_ST_MPI_GPU_AWARE);
    c.vnode_size = static_cast<int>(settings::number(Id::MPIX_ST_VNODE_SIZE));
    c.doorbell_poll_us = settings::number(Id::MPIX_ST_DOORBELL_POLL_US);
    c.line_put_bytes = settings::number(Id::MPIX_ST_LINE_PUT_BYTES);
    c.dtype_runs = settings::flag(Id::MPIX_ST_DTYPE_RUNS);
    c.dtype_list_mib = settings::number(Id::MPIX_ST_DTYPE_LIST_MIB);
    return c;
  }();
  return c;
}

}  // namespace mpix::core
