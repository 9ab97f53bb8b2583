#include "modes.h"

namespace faces {

std::vector<std::string> all_modes() { return {"p2p", "rma", "st", "nccl"}; }

bool mode_available(const std::string &mode, bool devices_shared, std::string *why) {
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
