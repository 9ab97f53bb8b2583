// Public host-backend streams and introspection.
#include <new>

#include "../core/epochs.h"
#include "../gpu/backend.h"
#include "../gpu/host/host_stream.h"
#include "errors.h"
#include "mpix/mpix_st.h"

using mpix::core::fail;

extern "C" {

int MPIX_Host_stream_create(MPIX_Host_stream *stream) {
  if (!stream) return mpix::api::raise_no_object(fail(MPI_ERR_ARG, "MPIX_Host_stream_create: stream is NULL"));
  *stream = new (std::nothrow) mpix_host_stream;
  if (!*stream) return mpix::api::raise_no_object(fail(MPI_ERR_NO_MEM, "MPIX_Host_stream_create: out of memory"));
  return MPI_SUCCESS;
}

int MPIX_Host_stream_enqueue(MPIX_Host_stream stream, void (*fn)(void *), void *arg) {
  if (!stream || !fn)
    return mpix::api::raise_no_object(fail(MPI_ERR_ARG, "MPIX_Host_stream_enqueue: stream or function is NULL"));
  stream->stream.enqueue([fn, arg] {
    fn(arg);
    return 0;
  });
  return MPI_SUCCESS;
}

int MPIX_Host_stream_synchronize(MPIX_Host_stream stream) {
  if (!stream) return mpix::api::raise_no_object(fail(MPI_ERR_ARG, "MPIX_Host_stream_synchronize: stream is NULL"));
  int status = stream->stream.synchronize();
  if (status == mpix::gpu::kOk) return MPI_SUCCESS;
  mpix::core::Result r = mpix::core::take_watchdog_error();
  if (!r) r = fail(MPI_ERR_OTHER, "a stream operation failed: " + mpix::gpu::host_backend().last_error());
  return mpix::api::raise_no_object(r);
}

int MPIX_Host_stream_destroy(MPIX_Host_stream stream) {
  if (!stream) return mpix::api::raise_no_object(fail(MPI_ERR_ARG, "MPIX_Host_stream_destroy: stream is NULL"));
  delete stream;  // drains the queue first
  return MPI_SUCCESS;
}

const char *MPIX_St_backend_name(void) { return mpix::gpu::backend().name(); }

unsigned long long MPIX_St_stream_ops_enqueued(void) { return mpix::gpu::backend().stream_ops_enqueued(); }

}  // extern "C"
