#include "multicast_choice.h"

#include <cstring>

namespace mpix::coll {
namespace {

// What every reason that keeps the normal algorithm ends with.
constexpr const char *kFallback = "; bcast uses its normal algorithm";

MulticastChoice off(std::string why) { return {MulticastDecision::kOff, std::move(why) + kFallback}; }

}  // namespace

bool multicast_requested(const char *env) { return env && std::strcmp(env, "1") == 0; }

MulticastChoice multicast_choice(const MulticastInputs &in) {
  if (!multicast_requested(in.env))
    return off(in.env && *in.env ? std::string("MPIX_ST_MULTICAST=") + in.env + " is not 1"
                                 : std::string("MPIX_ST_MULTICAST is unset (hardware multicast is off by default)"));
  if (!in.every_rank_requested) return off("MPIX_ST_MULTICAST=1 on some ranks of the communicator only");
  if (!in.every_peer_node_local) return off("not every rank is on this node (multicast groups are node-local)");
  if (in.ranks < 2) return off("a multicast group needs at least 2 ranks");
  if (in.bytes == 0) return off("no buffer to cover");
  switch (in.device) {
    case DeviceMulticast::kNotAsked:
      return {MulticastDecision::kAskDevice, "every rank asked for it; the devices are not yet asked"};
    case DeviceMulticast::kUnsupported:
      return off(in.device_why.empty() ? std::string("a device has no multicast support") : in.device_why);
    case DeviceMulticast::kSupported:
      break;
  }
  return {MulticastDecision::kUse, "hardware multicast group over " + std::to_string(in.ranks) + " ranks"};
}

MulticastChoice set_up_bcast_multicast(MulticastInputs in, const gpu::MulticastExchange &x,
                                       const std::function<const gpu::MulticastDriver *(std::string *)> &driver_of,
                                       gpu::MulticastGroup *group, const gpu::MulticastDriver **used) {
  *group = gpu::MulticastGroup{};
  *used = nullptr;
  MulticastChoice c = multicast_choice(in);
  if (c.decision != MulticastDecision::kAskDevice) return c;

  // Every rank asks its own device, then all agree (the group needs every device).
  std::string why;
  const gpu::MulticastDriver *d = driver_of(&why);
  const bool mine = d && d->device_supports(&why);
  const bool all = x.all_true(mine);
  in.device = all ? DeviceMulticast::kSupported : DeviceMulticast::kUnsupported;
  in.device_why = mine ? "another rank's device has no multicast support" : why;
  c = multicast_choice(in);
  if (c.decision != MulticastDecision::kUse) return c;

  if (!gpu::multicast_setup(*d, x, in.bytes, group, &why)) return off("multicast set-up failed: " + why);
  *used = d;
  // The group exists; no kernel stores through it yet (README, "Collectives": the multicast bcast
  // data path is not built), so this says so instead of claiming a faster bcast.
  c.reason += ", " + std::to_string(group->bytes) +
              " bytes each; the multicast data path is not built, so bcast still moves data with its normal "
              "algorithm";
  return c;
}

}  // namespace mpix::coll
