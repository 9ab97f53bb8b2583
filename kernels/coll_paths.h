// Host-side entries to the collective kernel of each path (coll_schedules.h: Path). Each path's
// kernel is built in a translation unit of its own, coll_kernel_<path>.cu, which instantiates
// these two for it (their definitions are in coll_device.h), so the kernels compile in parallel.
#pragma once
#include "coll_schedules.h"

template <mpix::coll::Path P>
int mpix_launch_coll_path(const mpix::coll::Args &args, int blocks, int threads, void *stream, bool overlap);
// Whether the path's kernel was built to wait for its predecessor (launch_overlap.h).
template <mpix::coll::Path P>
bool mpix_coll_path_supports_overlap();
