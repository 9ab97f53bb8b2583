// Host-backend "kernels": plain loops run by the MPIX_Host_stream worker, in stream order with
// the library's epoch operations.
#include <mpix/mpix_st.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "kernels.h"

namespace faces::kernels {
namespace {

// Runs `work` on the stream. A task may run many times (a captured block replays it, like a
// host node of a CUDA graph), so it is never freed after running: tasks are kept per distinct
// call (kernel, pointers, scale), which are few, and one task serves every repeat of its call.
// Shapes and region lists are the plan's, which lives for the whole run, so their addresses name them.
using Key = std::tuple<int, const void *, const void *, const void *, double>;

std::atomic<unsigned long long> g_launches{0};

// Never destroyed: a process that exits with work still queued (exit() from MPI_Abort or a fatal
// error handler, while the stream thread runs on) would otherwise have its stream call tasks that
// static destruction freed.
struct Tasks {
  std::mutex mu;
  std::map<Key, std::unique_ptr<std::function<void()>>> by_key;
};
Tasks &tasks() {
  static Tasks *t = new Tasks;
  return *t;
}

void enqueue(void *stream, const Key &key, std::function<void()> work) {
  Tasks &t = tasks();
  std::function<void()> *task = nullptr;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    auto &slot = t.by_key[key];
    if (!slot) slot = std::make_unique<std::function<void()>>(std::move(work));
    task = slot.get();
  }
  auto run = [](void *arg) { (*static_cast<std::function<void()> *>(arg))(); };
  ++g_launches;
  if (MPIX_Host_stream_enqueue(static_cast<MPIX_Host_stream>(stream), run, task) != MPI_SUCCESS) {
    std::fprintf(stderr, "faces: MPIX_Host_stream_enqueue failed\n");
    std::abort();
  }
}

}  // namespace

unsigned long long launches() { return g_launches.load(); }

std::string launch_overlap_unavailable() { return "the host backend runs tasks, not kernels"; }

void set_launch_overlap(bool) {}

void init_field(const Shape &s, const Placement &p, double scale, double *u, void *stream) {
  enqueue(stream, Key{0, u, &s, &p, scale}, [=] {
    int e[3], i[3];
    for (e[2] = 0; e[2] < s.m[2]; ++e[2])
      for (e[1] = 0; e[1] < s.m[1]; ++e[1])
        for (e[0] = 0; e[0] < s.m[0]; ++e[0])
          for (i[2] = 0; i[2] < s.n; ++i[2])
            for (i[1] = 0; i[1] < s.n; ++i[1])
              for (i[0] = 0; i[0] < s.n; ++i[0]) u[point_index(s, e, i)] = initial_value(s, p, e, i, scale);
  });
}

void interior_sum(const Shape &s, double *u, void *stream) {
  enqueue(stream, Key{1, u, &s, nullptr, 0}, [=] {
    for (int d = 0; d < 3; ++d) {
      const int a = (d + 1) % 3, b = (d + 2) % 3;  // the two dimensions along the shared face
      int e[3], i[3];
      for (int pair = 0; pair + 1 < s.m[d]; ++pair)
        for (e[a] = 0; e[a] < s.m[a]; ++e[a])
          for (i[a] = 0; i[a] < s.n; ++i[a])
            for (e[b] = 0; e[b] < s.m[b]; ++e[b])
              for (i[b] = 0; i[b] < s.n; ++i[b]) {
                e[d] = pair, i[d] = s.n - 1;
                const int64_t lo = point_index(s, e, i);
                e[d] = pair + 1, i[d] = 0;
                const int64_t hi = point_index(s, e, i);
                u[lo] = u[hi] = u[lo] + u[hi];
              }
    }
  });
}

void pack(const Shape &s, const RegionList &regions, const double *u, double *buf, void *stream) {
  enqueue(stream, Key{2, u, buf, &regions, 0}, [=] {
    for (int j = 0; j < regions.count; ++j) {
      const Region &r = regions.r[j];
      for (int64_t k = 0; k < r.count; ++k) buf[r.offset + k] = u[region_point(s, r, k)];
    }
  });
}

void unpack_add(const Shape &s, const RegionList &regions, double *u, const double *buf, void *stream) {
  enqueue(stream, Key{3, u, buf, &regions, 0}, [=] {
    for (int j = 0; j < regions.count; ++j) {
      const Region &r = regions.r[j];
      for (int64_t k = 0; k < r.count; ++k) u[region_point(s, r, k)] += buf[r.offset + k];
    }
  });
}

}  // namespace faces::kernels
