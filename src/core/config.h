// The core's settings as typed values: a view of the settings table (src/settings/settings.def
// has each one's range, default and help), read once.
#pragma once
#include <cstdint>

namespace mpix::core {

struct Config {
  uint64_t watchdog_ns = 0;       // MPIX_ST_WATCHDOG_MS: stream and host waits report instead of hanging
  bool mpi_gpu_aware = false;     // MPIX_ST_MPI_GPU_AWARE: the underlying MPI accepts device pointers
  int vnode_size = 0;             // MPIX_ST_VNODE_SIZE: ranks per virtual node (0: physical nodes)
  uint64_t doorbell_poll_us = 64;  // MPIX_ST_DOORBELL_POLL_US: the doorbell agent's longest pause while
                                   // a doorbell is armed (0: it spins)
  uint64_t line_put_bytes = 256;   // MPIX_ST_LINE_PUT_BYTES: puts up to this size travel as lines
                                   // (work_items.h; 0: never; at most work::kLinePutMaxBytes)
  bool dtype_runs = true;          // MPIX_ST_DTYPE_RUNS=0: every derived-datatype piece a run of its
                                   // own (what joining runs gains, measured; pair_lists.cpp)
  uint64_t dtype_list_mib = 256;   // MPIX_ST_DTYPE_LIST_MIB: memory for derived-datatype pair lists,
                                   // which live as long as the process (pair_lists.h)
};

const Config &config();

}  // namespace mpix::core
