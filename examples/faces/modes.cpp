#include "modes.h"

#include <mpix/mpix_st.h>

#include "two_sided.h"

namespace faces {

std::vector<std::string> all_modes() { return {"p2p", "rma", "st", "queue", "enqueue", "nccl"}; }

bool mode_available(const std::string &mode, const Options &o, const Plan &plan, bool devices_shared, MPI_Comm comm,
                    std::string *why) {
  if (mode == "queue" || mode == "enqueue") {
#ifndef MPIX_ST_DEFINES_MPIX_STREAM
    if (mode == "enqueue") {
      *why = "this MPI's mpi.h declares MPIX_Stream, so its own MPIX_*_enqueue calls are in charge, not mpix-st's";
      return false;
    }
#endif
    *why = two_sided_unavailable(plan, comm, o.graph);
    return why->empty();
  }
  if (mode != "nccl") return true;
#ifdef FACES_HAVE_NCCL
  if (devices_shared) {
    *why = "NCCL allows one rank per GPU in a communicator, and some GPU serves several ranks here";
    return false;
  }
  return true;
#else
  (void)devices_shared;
  *why = "this binary was built without NCCL (faces_cuda with NCCL found at configure time has it)";
  return false;
#endif
}

std::unique_ptr<Exchange> make_exchange(const std::string &mode, const Context &c) {
  if (mode == "p2p") return make_p2p_exchange(c);
  if (mode == "rma") return make_rma_exchange(c);
  if (mode == "st") return make_st_exchange(c);
  if (mode == "queue") return make_queue_exchange(c);
#ifdef MPIX_ST_DEFINES_MPIX_STREAM
  if (mode == "enqueue") return make_enqueue_exchange(c);
#endif
#ifdef FACES_HAVE_NCCL
  if (mode == "nccl") return make_nccl_exchange(c);
#endif
  return nullptr;
}

std::string vendor_library_version() {
#ifdef FACES_HAVE_NCCL
  return nccl_library_version();
#else
  return "";
#endif
}

}  // namespace faces
