// Host streams handed out by MPIX_Host_stream_create and not destroyed yet: calls given any other
// pointer (a destroyed stream, a stray value) are refused instead of running on freed memory.
#pragma once
#include "core/result.h"

namespace mpix::api {

bool is_live_host_stream(const void *stream);
// The stream argument of a *_stream call: on the host backend it must be a live MPIX_Host_stream
// (GPU runtimes check their own streams at launch).
core::Result check_stream(void *stream);

}  // namespace mpix::api
