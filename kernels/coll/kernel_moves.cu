// The collective kernel of Path::kMoves (device.h).
#include "device.h"

template int mpix_launch_coll_path<Path::kMoves>(const Args &, int, int, void *, bool);
template bool mpix_coll_path_supports_overlap<Path::kMoves>();
