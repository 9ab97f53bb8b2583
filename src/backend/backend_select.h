#pragma once
#include <string>

namespace mpix::gpu {
// Non-empty when MPIX_ST_BACKEND asked for a backend that could not be had, or a setting was
// refused (settings::start_problems): the host backend stands in, and the library reports this text
// as an error on every window, epoch and collective call.
const std::string &backend_selection_error();
}  // namespace mpix::gpu
