// The CUDA plugin's hardware multicast steps (multicast_cuda.cpp). COMPILED ONLY, NEVER RUN.
#pragma once
#include <string>

#include "backend/multicast.h"

namespace mpix::gpu {

// The driver table for device `ordinal`, or null and why (a driver without the multicast entry
// points). Looked up once; the table lives for the process.
const MulticastDriver *cuda_multicast_driver(int ordinal, std::string *why_not);

}  // namespace mpix::gpu
