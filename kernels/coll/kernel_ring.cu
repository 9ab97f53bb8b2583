// The collective kernel of Path::kRing (device.h).
#include "device.h"

template int mpix_launch_coll_path<Path::kRing>(const Args &, int, int, void *, bool);
template bool mpix_coll_path_supports_overlap<Path::kRing>();
