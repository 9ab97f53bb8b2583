// Interposed MPI_Init / MPI_Init_thread / MPI_Finalize: right after the MPI starts, every setting
// is checked against the settings table (src/settings) and the inter-node transport is opened
// collectively (only when some peers are on other nodes), after each process's node is found; it is
// closed right before the MPI stops.
// Init also makes the library's half-precision datatype handles (half_datatypes.h), which Finalize
// frees while the MPI still runs; Finalize writes the launch trace (MPIX_ST_TRACE) first.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "backend/launch_trace_file.h"
#include "coll/context.h"
#include "core/config.h"
#include "core/fault_monitor.h"
#include "core/internode.h"
#include "errors.h"
#include "p2p/network.h"
#include "half_datatypes.h"
#include "settings/settings.h"
#include "topo/locality.h"

namespace {

// The library's part of MPI_Init once the MPI runs. Every setting the table refuses is reported
// in one error of class MPI_ERR_ARG, raised through MPI_COMM_WORLD's error handler (the default
// one prints the message and aborts the job); MPI_Init then returns it, the transport stays
// closed, and every later window, epoch and collective call refuses (backend_selection_error).
int start_library() {
  mpix::api::create_half_datatypes();
  const std::vector<std::string> refused = mpix::settings::problems();
  if (!refused.empty()) {
    std::string message;
    for (const std::string &r : refused) message += (message.empty() ? "" : "; ") + r;
    return mpix::api::raise_comm(MPI_COMM_WORLD, mpix::core::fail(MPI_ERR_ARG, message));
  }
  // Each process's node, once for every window and communicator (collective over MPI_COMM_WORLD).
  mpix::topo::locate_process(mpix::core::config().vnode_size);
  mpix::core::internode::open_if_needed();
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Init(int *argc, char ***argv) {
  const int rc = PMPI_Init(argc, argv);
  return rc == MPI_SUCCESS ? start_library() : rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  return rc == MPI_SUCCESS ? start_library() : rc;
}

int MPI_Finalize(void) {
  // MPIX_ST_TRACE: the launch trace is written while the MPI still names this rank.
  if (mpix::gpu::launch_trace_prefix()) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::string why;
    if (!mpix::gpu::finish_launch_trace(rank, &why)) std::fprintf(stderr, "mpix-st: %s\n", why.c_str());
  }
  mpix::core::stop_fault_monitor();
  mpix::coll::release_all_contexts();
  mpix::p2p::net::settle_all();
  mpix::core::internode::close();
  mpix::api::free_half_datatypes();
  return PMPI_Finalize();
}

}  // extern "C"
