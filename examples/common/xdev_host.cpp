#include <mpix/mpix_st.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <tuple>

#include "xdev.h"

namespace xdev {

const char *kind() { return "host"; }
const char *stream_info_type() { return "MPIX_Host_stream"; }
void init(int) {}

void *stream_create() {
  MPIX_Host_stream s = nullptr;
  if (MPIX_Host_stream_create(&s) != MPI_SUCCESS) {
    std::fprintf(stderr, "xdev: MPIX_Host_stream_create failed\n");
    std::abort();
  }
  return s;
}

void stream_sync(void *stream) {
  int rc = MPIX_Host_stream_synchronize(static_cast<MPIX_Host_stream>(stream));
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    std::fprintf(stderr, "xdev: stream synchronize failed: %s\n", msg);
    std::abort();
  }
}

void stream_destroy(void *stream) { MPIX_Host_stream_destroy(static_cast<MPIX_Host_stream>(stream)); }

void *alloc(size_t bytes) {
  void *p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (!p) std::abort();
  return p;
}
void free(void *ptr) { std::free(ptr); }
void copy_to_device(void *dst, const void *src, size_t bytes) { std::memcpy(dst, src, bytes); }
void copy_to_host(void *dst, const void *src, size_t bytes) { std::memcpy(dst, src, bytes); }
void fill(void *dst, int byte, size_t bytes) { std::memset(dst, byte, bytes); }

void *alloc_pinned(size_t bytes) { return alloc(bytes); }
void free_pinned(void *ptr) { free(ptr); }
int device_count() { return 1; }
const char *device_name() { return "host CPU"; }

}  // namespace xdev

// ---- capture and counter-driven work (host backend) ---------------------------------------------
namespace xdev {
namespace {

void check(int rc, const char *what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  std::fprintf(stderr, "xdev: %s failed: %s\n", what, msg);
  std::abort();
}

// A task's arguments outlive the task: a captured task runs at every replay. Identical requests
// share one record, so the records stay as many as the distinct calls a program makes.
struct CounterTask {
  void *dst;
  const void *src;
  size_t bytes;
  uint64_t *counter;
  uint64_t key;
  bool operator<(const CounterTask &o) const {
    return std::tie(dst, src, bytes, counter, key) < std::tie(o.dst, o.src, o.bytes, o.counter, o.key);
  }
};

// Records are never destroyed: a process that exits with work still queued (exit() from
// MPI_Abort or a fatal error handler) keeps its stream thread running through static destruction.
template <typename Record>
Record *intern_record(const Record &r) {
  static auto *mu = new std::mutex;
  static auto *records = new std::set<Record>;
  std::lock_guard<std::mutex> lock(*mu);
  return const_cast<Record *>(&*records->insert(r).first);
}

CounterTask *intern(const CounterTask &t) { return intern_record(t); }

void enqueue(void *stream, void (*fn)(void *), CounterTask *t) {
  check(MPIX_Host_stream_enqueue(static_cast<MPIX_Host_stream>(stream), fn, t), "MPIX_Host_stream_enqueue");
}

struct GatherTask {
  void *dst;
  const void *src;
  size_t block, stride, count;
  bool operator<(const GatherTask &o) const {
    return std::tie(dst, src, block, stride, count) < std::tie(o.dst, o.src, o.block, o.stride, o.count);
  }
};

}  // namespace

void gather_blocks(void *stream, void *dst, const void *src, size_t block, size_t stride, size_t count) {
  GatherTask *t = intern_record(GatherTask{dst, src, block, stride, count});
  check(MPIX_Host_stream_enqueue(static_cast<MPIX_Host_stream>(stream),
                                 [](void *arg) {
                                   auto *g = static_cast<GatherTask *>(arg);
                                   for (size_t i = 0; i < g->count; ++i)
                                     std::memcpy(static_cast<char *>(g->dst) + i * g->block,
                                                 static_cast<const char *>(g->src) + i * g->stride, g->block);
                                 },
                                 t),
        "MPIX_Host_stream_enqueue");
}

void stream_begin_capture(void *stream) {
  check(MPIX_Host_stream_begin_capture(static_cast<MPIX_Host_stream>(stream)), "MPIX_Host_stream_begin_capture");
}

void *stream_end_capture(void *stream) {
  MPIX_Host_graph g = nullptr;
  check(MPIX_Host_stream_end_capture(static_cast<MPIX_Host_stream>(stream), &g), "MPIX_Host_stream_end_capture");
  return g;
}

void graph_launch(void *graph, void *stream) {
  check(MPIX_Host_graph_launch(static_cast<MPIX_Host_graph>(graph), static_cast<MPIX_Host_stream>(stream)),
        "MPIX_Host_graph_launch");
}

void graph_destroy(void *graph) { check(MPIX_Host_graph_destroy(static_cast<MPIX_Host_graph>(graph)), "MPIX_Host_graph_destroy"); }

void stamp(void *stream, void *dst, size_t bytes, uint64_t *counter, uint64_t key) {
  enqueue(stream,
          [](void *arg) {
            auto *t = static_cast<CounterTask *>(arg);
            const uint64_t gen = ++*t->counter;
            auto *out = static_cast<uint8_t *>(t->dst);
            for (size_t i = 0; i < t->bytes; ++i) out[i] = stamp_byte(t->key, gen, i);
          },
          intern({dst, nullptr, bytes, counter, key}));
}

void append(void *stream, void *dst, const void *src, size_t bytes, uint64_t *counter) {
  enqueue(stream,
          [](void *arg) {
            auto *t = static_cast<CounterTask *>(arg);
            std::memcpy(static_cast<char *>(t->dst) + *t->counter * t->bytes, t->src, t->bytes);
            ++*t->counter;
          },
          intern({dst, src, bytes, counter, 0}));
}

}  // namespace xdev
