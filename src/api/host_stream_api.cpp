// Public host-backend streams and introspection.
#include <mutex>
#include <new>
#include <string>
#include <unordered_set>

#include "backend/backend.h"
#include "backend/host/host_stream.h"
#include "core/epochs.h"
#include "errors.h"
#include "host_streams.h"
#include "mpix/mpix_st.h"

using mpix::core::fail;
using mpix::core::Result;

namespace {
std::mutex g_streams_mu;
std::unordered_set<const void *> g_streams;

// NULL, or a pointer that is not a live stream of MPIX_Host_stream_create.
Result check_host_stream(const void *stream, const char *call) {
  if (!stream) return fail(MPI_ERR_ARG, std::string(call) + ": stream is NULL");
  if (!mpix::api::is_live_host_stream(stream))
    return fail(MPI_ERR_ARG, std::string(call) +
                                 ": not a stream of MPIX_Host_stream_create (destroyed already, or never created)");
  return mpix::core::ok();
}
}  // namespace

Result mpix::api::check_stream(void *stream) {
  if (std::string(mpix::gpu::backend().name()) != "host") return mpix::core::ok();
  if (!stream) return fail(MPI_ERR_ARG, "stream is NULL: the host backend needs an MPIX_Host_stream");
  if (!is_live_host_stream(stream))
    return fail(MPI_ERR_ARG, "stream is not an MPIX_Host_stream of MPIX_Host_stream_create (destroyed already, or "
                             "never created)");
  return mpix::core::ok();
}

bool mpix::api::is_live_host_stream(const void *stream) {
  std::lock_guard<std::mutex> lock(g_streams_mu);
  return g_streams.count(stream) != 0;
}

extern "C" {

int MPIX_Host_stream_create(MPIX_Host_stream *stream) {
  if (!stream) return mpix::api::raise_no_object(fail(MPI_ERR_ARG, "MPIX_Host_stream_create: stream is NULL"));
  *stream = new (std::nothrow) mpix_host_stream;
  if (!*stream) return mpix::api::raise_no_object(fail(MPI_ERR_NO_MEM, "MPIX_Host_stream_create: out of memory"));
  std::lock_guard<std::mutex> lock(g_streams_mu);
  g_streams.insert(*stream);
  return MPI_SUCCESS;
}

int MPIX_Host_stream_enqueue(MPIX_Host_stream stream, void (*fn)(void *), void *arg) {
  if (Result r = check_host_stream(stream, "MPIX_Host_stream_enqueue")) return mpix::api::raise_no_object(r);
  if (!fn) return mpix::api::raise_no_object(fail(MPI_ERR_ARG, "MPIX_Host_stream_enqueue: function is NULL"));
  stream->stream.enqueue([fn, arg] {
    fn(arg);
    return 0;
  });
  return MPI_SUCCESS;
}

int MPIX_Host_stream_synchronize(MPIX_Host_stream stream) {
  if (Result r = check_host_stream(stream, "MPIX_Host_stream_synchronize")) return mpix::api::raise_no_object(r);
  if (stream->stream.capturing())
    return mpix::api::raise_no_object(
        fail(MPI_ERR_OTHER, "MPIX_Host_stream_synchronize: the stream is being captured (end the capture first)"));
  int status = stream->stream.synchronize();
  if (status == mpix::gpu::kOk) return MPI_SUCCESS;
  // The report of a timeout on this stream, unless a call on its window (or MPIX_St_check) took it.
  mpix::core::Result r = mpix::core::take_watchdog_error(0, stream);
  if (!r && status == mpix::gpu::kErrTimeout)
    r = fail(MPI_ERR_OTHER, "a stream wait timed out (watchdog); its report was raised already by a call on its "
                            "window or MPIX_St_check");
  if (!r) r = fail(MPI_ERR_OTHER, "a stream operation failed: " + mpix::gpu::host_backend().last_error());
  return mpix::api::raise_no_object(r);
}

int MPIX_Host_stream_destroy(MPIX_Host_stream stream) {
  if (Result r = check_host_stream(stream, "MPIX_Host_stream_destroy")) return mpix::api::raise_no_object(r);
  {
    std::lock_guard<std::mutex> lock(g_streams_mu);
    g_streams.erase(stream);
  }
  delete stream;  // drains the queue first
  return MPI_SUCCESS;
}

int MPIX_Host_stream_begin_capture(MPIX_Host_stream stream) {
  if (!stream) return mpix::api::raise_no_object(fail(MPI_ERR_ARG, "MPIX_Host_stream_begin_capture: stream is NULL"));
  if (!stream->stream.begin_capture())
    return mpix::api::raise_no_object(
        fail(MPI_ERR_OTHER, "MPIX_Host_stream_begin_capture: the stream is already being captured"));
  return MPI_SUCCESS;
}

int MPIX_Host_stream_end_capture(MPIX_Host_stream stream, MPIX_Host_graph *graph) {
  if (!stream || !graph)
    return mpix::api::raise_no_object(fail(MPI_ERR_ARG, "MPIX_Host_stream_end_capture: stream or graph is NULL"));
  auto *g = new (std::nothrow) mpix_host_graph;
  if (!g) return mpix::api::raise_no_object(fail(MPI_ERR_NO_MEM, "MPIX_Host_stream_end_capture: out of memory"));
  if (!stream->stream.end_capture(&g->tasks)) {
    delete g;
    return mpix::api::raise_no_object(
        fail(MPI_ERR_OTHER, "MPIX_Host_stream_end_capture: the stream is not being captured"));
  }
  *graph = g;
  return MPI_SUCCESS;
}

int MPIX_Host_graph_launch(MPIX_Host_graph graph, MPIX_Host_stream stream) {
  if (!graph || !stream)
    return mpix::api::raise_no_object(fail(MPI_ERR_ARG, "MPIX_Host_graph_launch: graph or stream is NULL"));
  if (stream->stream.capturing())
    return mpix::api::raise_no_object(
        fail(MPI_ERR_OTHER, "MPIX_Host_graph_launch: the stream is being captured (graphs do not nest)"));
  stream->stream.launch(graph->tasks);
  return MPI_SUCCESS;
}

int MPIX_Host_graph_destroy(MPIX_Host_graph graph) {
  if (!graph) return mpix::api::raise_no_object(fail(MPI_ERR_ARG, "MPIX_Host_graph_destroy: graph is NULL"));
  delete graph;  // launches already enqueued hold copies of its tasks
  return MPI_SUCCESS;
}

const char *MPIX_St_backend_name(void) { return mpix::gpu::backend().name(); }

unsigned long long MPIX_St_stream_ops_enqueued(void) { return mpix::gpu::backend().stream_ops_enqueued(); }

}  // extern "C"
