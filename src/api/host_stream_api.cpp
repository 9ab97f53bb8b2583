// Public host-backend streams and graphs, and introspection.
//
// Handles are tracked like windows: a table of live streams and one of live graphs, and a call
// looks its handle up there before it touches anything, so a destroyed, never created or twice
// destroyed handle is refused (MPI_ERR_ARG through MPI_COMM_SELF's error handler) instead of being
// dereferenced. A handle value is never handed out again: stream handles are addresses of small
// shells that are kept for the life of the process (a pointer's worth each), graph handles are
// numbers from a 64-bit sequence. The calls that wait for a stream (synchronize, destroy) refuse
// to run on that stream's own worker, where they would wait for themselves.
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "backend/backend.h"
#include "backend/host/host_stream.h"
#include "core/epochs.h"
#include "errors.h"
#include "host_streams.h"
#include "mpix/mpix_st.h"

using mpix::core::fail;
using mpix::core::Result;
using mpix::gpu::HostStream;

namespace {

using Tasks = std::vector<HostStream::Task>;

struct Table {
  std::mutex mu;
  std::unordered_map<const void *, std::shared_ptr<HostStream>> streams;  // live, by handle
  std::deque<mpix_host_stream> shells;  // every stream handle handed out (addresses stay put)
  std::unordered_map<uintptr_t, std::shared_ptr<const Tasks>> graphs;     // live, by handle value
  uint64_t graphs_made = 0;
};
// Never destroyed: streams still alive at exit keep their workers, which may run tasks then.
Table &table() {
  static Table *t = new Table;
  return *t;
}

constexpr const char *kNotAStream = "not a stream of MPIX_Host_stream_create (destroyed already, or never created)";
constexpr const char *kNotAGraph =
    "not a graph of MPIX_Host_stream_end_capture (destroyed already, or never created)";

Result refuse(int cls, const char *call, const std::string &why) { return fail(cls, std::string(call) + ": " + why); }
int raise(const Result &r) { return mpix::api::raise_no_object(r); }

// The live stream behind a handle, or null with *r saying why there is none.
std::shared_ptr<HostStream> live_stream(const void *handle, const char *call, Result *r) {
  if (!handle) {
    *r = refuse(MPI_ERR_ARG, call, "stream is NULL");
    return nullptr;
  }
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.streams.find(handle);
  if (it == t.streams.end()) {
    *r = refuse(MPI_ERR_ARG, call, kNotAStream);
    return nullptr;
  }
  return it->second;
}

std::shared_ptr<const Tasks> live_graph(MPIX_Host_graph handle, const char *call, Result *r) {
  if (!handle) {
    *r = refuse(MPI_ERR_ARG, call, "graph is NULL");
    return nullptr;
  }
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.graphs.find(reinterpret_cast<uintptr_t>(handle));
  if (it == t.graphs.end()) {
    *r = refuse(MPI_ERR_ARG, call, kNotAGraph);
    return nullptr;
  }
  return it->second;
}

// A drained stream's status as a result: the report of a timeout on this stream (unless a call on
// its window or MPIX_St_check took it), or the backend's last error.
Result stream_status(int status, const void *handle, const char *call) {
  if (status == mpix::gpu::kOk) return mpix::core::ok();
  Result r = mpix::core::take_watchdog_error(0, handle);
  if (!r && status == mpix::gpu::kErrTimeout)
    r = fail(MPI_ERR_OTHER, "a stream wait timed out (watchdog); its report was raised already by a call on its "
                            "window or MPIX_St_check");
  if (!r) r = fail(MPI_ERR_OTHER, "a stream operation failed: " + mpix::gpu::host_backend().last_error());
  r.message = std::string(call) + ": " + r.message;
  return r;
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
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.streams.count(stream) != 0;
}

extern "C" {

int MPIX_Host_stream_create(MPIX_Host_stream *stream) {
  constexpr const char *call = "MPIX_Host_stream_create";
  if (!stream) return raise(refuse(MPI_ERR_ARG, call, "stream is NULL"));
  std::shared_ptr<HostStream> s;
  try {
    s = std::make_shared<HostStream>();
  } catch (const std::exception &e) {  // no memory, or no thread
    return raise(refuse(MPI_ERR_NO_MEM, call, std::string("cannot make the stream: ") + e.what()));
  }
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  mpix_host_stream *shell = &t.shells.emplace_back(*s);
  s->set_handle(shell);
  t.streams.emplace(shell, std::move(s));
  *stream = shell;
  return MPI_SUCCESS;
}

int MPIX_Host_stream_enqueue(MPIX_Host_stream stream, void (*fn)(void *), void *arg) {
  constexpr const char *call = "MPIX_Host_stream_enqueue";
  Result r;
  auto s = live_stream(stream, call, &r);
  if (!s) return raise(r);
  if (!fn) return raise(refuse(MPI_ERR_ARG, call, "function is NULL"));
  s->enqueue([fn, arg] {
    fn(arg);
    return 0;
  });
  return MPI_SUCCESS;
}

int MPIX_Host_stream_synchronize(MPIX_Host_stream stream) {
  constexpr const char *call = "MPIX_Host_stream_synchronize";
  Result r;
  auto s = live_stream(stream, call, &r);
  if (!s) return raise(r);
  if (s->on_worker())
    return raise(refuse(MPI_ERR_OTHER, call, "called from a task running on this stream (its own task), which "
                                             "would wait for itself"));
  if (s->capturing())
    return raise(refuse(MPI_ERR_OTHER, call, "the stream is being captured (end the capture first)"));
  return raise(stream_status(s->synchronize(), stream, call));
}

int MPIX_Host_stream_destroy(MPIX_Host_stream stream) {
  constexpr const char *call = "MPIX_Host_stream_destroy";
  std::shared_ptr<HostStream> s;
  Result r;
  if (!stream) return raise(refuse(MPI_ERR_ARG, call, "stream is NULL"));
  {
    Table &t = table();
    std::lock_guard<std::mutex> lock(t.mu);
    auto it = t.streams.find(stream);
    if (it == t.streams.end()) {
      r = refuse(MPI_ERR_ARG, call, kNotAStream);
    } else if (it->second->on_worker()) {
      r = refuse(MPI_ERR_OTHER, call, "called from a task running on this stream (its own task), which would wait "
                                      "for itself; destroy it from another thread");
    } else if (it->second->capturing()) {
      r = refuse(MPI_ERR_OTHER, call, "the stream is being captured: end the capture (MPIX_Host_stream_end_capture) "
                                      "first");
    } else {
      s = std::move(it->second);
      t.streams.erase(it);  // from here on every call refuses the handle
    }
  }
  if (!s) return raise(r);
  // Everything queued runs first; what failed there is this call's error. The stream is gone
  // either way. The worker is joined here (or by the last call still holding the stream).
  r = stream_status(s->synchronize(), stream, call);
  s.reset();
  return raise(r);
}

int MPIX_Host_stream_begin_capture(MPIX_Host_stream stream) {
  constexpr const char *call = "MPIX_Host_stream_begin_capture";
  Result r;
  auto s = live_stream(stream, call, &r);
  if (!s) return raise(r);
  if (!s->begin_capture()) return raise(refuse(MPI_ERR_OTHER, call, "the stream is already being captured"));
  return MPI_SUCCESS;
}

int MPIX_Host_stream_end_capture(MPIX_Host_stream stream, MPIX_Host_graph *graph) {
  constexpr const char *call = "MPIX_Host_stream_end_capture";
  Result r;
  auto s = live_stream(stream, call, &r);
  if (!s) return raise(r);
  if (!graph) return raise(refuse(MPI_ERR_ARG, call, "graph is NULL"));
  auto tasks = std::make_shared<Tasks>();
  if (!s->end_capture(tasks.get())) return raise(refuse(MPI_ERR_OTHER, call, "the stream is not being captured"));
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  // Odd numbers of a 64-bit sequence: never an object's address, never handed out twice.
  const uintptr_t handle = static_cast<uintptr_t>(++t.graphs_made) * 2 + 1;
  t.graphs.emplace(handle, std::move(tasks));
  *graph = reinterpret_cast<MPIX_Host_graph>(handle);
  return MPI_SUCCESS;
}

int MPIX_Host_graph_launch(MPIX_Host_graph graph, MPIX_Host_stream stream) {
  constexpr const char *call = "MPIX_Host_graph_launch";
  Result r;
  auto g = live_graph(graph, call, &r);
  if (!g) return raise(r);
  auto s = live_stream(stream, call, &r);
  if (!s) return raise(r);
  if (s->capturing()) return raise(refuse(MPI_ERR_OTHER, call, "the stream is being captured (graphs do not nest)"));
  s->launch(*g);
  return MPI_SUCCESS;
}

int MPIX_Host_graph_destroy(MPIX_Host_graph graph) {
  constexpr const char *call = "MPIX_Host_graph_destroy";
  if (!graph) return raise(refuse(MPI_ERR_ARG, call, "graph is NULL"));
  std::shared_ptr<const Tasks> g;  // launches already enqueued hold copies of its tasks
  {
    Table &t = table();
    std::lock_guard<std::mutex> lock(t.mu);
    auto it = t.graphs.find(reinterpret_cast<uintptr_t>(graph));
    if (it != t.graphs.end()) {
      g = std::move(it->second);
      t.graphs.erase(it);
    }
  }
  if (!g) return raise(refuse(MPI_ERR_ARG, call, kNotAGraph));
  return MPI_SUCCESS;
}

const char *MPIX_St_backend_name(void) { return mpix::gpu::backend().name(); }

unsigned long long MPIX_St_stream_ops_enqueued(void) { return mpix::gpu::backend().stream_ops_enqueued(); }

}  // extern "C"
