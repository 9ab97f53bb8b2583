// Whether a communicator's bcast gets a hardware multicast group (multicast.h), and why not.
// Off unless MPIX_ST_MULTICAST=1 on every rank: with it unset (or anything but "1") nothing
// multicast-related runs, not even the device's support query.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "backend/multicast.h"

namespace mpix::coll {

enum class MulticastDecision {
  kOff,        // not used; the reason says why
  kAskDevice,  // everything but the device allows it: ask the backend
  kUse,        // a group is (to be) set up
};

struct MulticastChoice {
  MulticastDecision decision = MulticastDecision::kOff;
  std::string reason;
};

enum class DeviceMulticast { kNotAsked, kUnsupported, kSupported };

struct MulticastInputs {
  const char *env = nullptr;          // this rank's MPIX_ST_MULTICAST (null: unset)
  bool every_rank_requested = false;  // MPIX_ST_MULTICAST=1 on every rank of the communicator
  bool every_peer_node_local = false;
  int ranks = 0;
  uint64_t bytes = 0;                 // of the buffer the group would cover
  DeviceMulticast device = DeviceMulticast::kNotAsked;  // agreed over the ranks
  std::string device_why;             // why not, when kUnsupported
};

// MPIX_ST_MULTICAST is exactly "1".
bool multicast_requested(const char *env);

// Pure: the decision for these inputs, checked in the order listed in MulticastInputs.
MulticastChoice multicast_choice(const MulticastInputs &in);

// The whole per-communicator decision, collective over the exchange's ranks once it reaches the
// device: asks the choice, then (kAskDevice) the backend's driver and every rank's device, then
// (kUse) sets the group up. `driver_of` is called only past the environment and locality checks.
// Any failure leaves `group` empty and the reason saying why; bcast then keeps its normal
// algorithm.
MulticastChoice set_up_bcast_multicast(MulticastInputs in, const gpu::MulticastExchange &x,
                                       const std::function<const gpu::MulticastDriver *(std::string *)> &driver_of,
                                       gpu::MulticastGroup *group, const gpu::MulticastDriver **used);

}  // namespace mpix::coll
