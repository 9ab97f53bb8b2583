// Host streams handed out by MPIX_Host_stream_create and not destroyed yet: calls given any other
// pointer (a destroyed stream, a stray value) are refused instead of running on freed memory.
#pragma once

namespace mpix::api {

bool is_live_host_stream(const void *stream);

}  // namespace mpix::api
