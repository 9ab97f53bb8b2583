// The collective kernel of Path::kOneShot (device.h).
#include "device.h"

template int mpix_launch_coll_path<Path::kOneShot>(const Args &, int, int, void *, bool);
template bool mpix_coll_path_supports_overlap<Path::kOneShot>();
