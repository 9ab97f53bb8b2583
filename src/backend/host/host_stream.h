// Host backend stream: an in-order worker thread. Tasks are the host backend's "kernels".
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mpix::gpu {

class HostStream {
 public:
  // A task returns a backend Status; the first failure is kept until synchronize() reports it.
  using Task = std::function<int()>;
  HostStream();
  ~HostStream();
  HostStream(const HostStream &) = delete;
  HostStream &operator=(const HostStream &) = delete;

  void enqueue(Task task);
  // Blocks until every task enqueued before the call has run; returns and clears the first failure.
  int synchronize();

  // Stream capture: between begin_capture and end_capture, enqueue records tasks instead of
  // running them; the recorded list is a graph that launch() enqueues again, any number of times.
  // Like CUDA's, one capture at a time per stream; only the thread that owns the stream calls these.
  bool begin_capture();
  bool end_capture(std::vector<Task> *graph);
  bool capturing() const { return capturing_; }
  void launch(const std::vector<Task> &graph);
  // Whether the calling thread is this stream's worker (a task running on it): such a caller must
  // not wait for the stream (synchronize, or the destructor's drain and join).
  bool on_worker() const { return std::this_thread::get_id() == worker_.get_id(); }
  // While capturing: which capture (each begin_capture starts a new one), how many tasks it has
  // recorded, and a way to give the last of them new work (list_merge.h).
  uint64_t capture_id() const { return capture_id_; }
  size_t captured_count() const { return captured_.size(); }
  void replace_last_captured(Task task) { captured_.back() = std::move(task); }
  // The handle programs name this stream by, set once before any task. A task's reports belong to
  // the stream that runs it, which for a replayed graph is the launch stream, not the one its
  // tasks were captured on: running_handle() is the handle of the stream whose worker calls it
  // (inside a task), else nullptr.
  void set_handle(const void *handle) { handle_ = handle; }
  static const void *running_handle();

 private:
  void run();
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Task> queue_;
  uint64_t submitted_ = 0, completed_ = 0;
  int first_error_ = 0;
  bool stopping_ = false;
  bool capturing_ = false;
  uint64_t capture_id_ = 0;
  std::vector<Task> captured_;
  const void *handle_ = nullptr;
  std::thread worker_;
};

}  // namespace mpix::gpu

// What an MPIX_Host_stream handle points to: the stream while it lives. The API keeps every handle it
// handed out (src/api/host_stream_api.cpp), so no later stream gets the address of a destroyed one,
// and checks a handle against its table of live streams before anything reads `stream`.
struct mpix_host_stream {
  explicit mpix_host_stream(mpix::gpu::HostStream &s) : stream(s) {}
  mpix::gpu::HostStream &stream;
};

// The tasks one capture recorded (an MPIX_Host_graph names one through the API's table of live
// graphs; the handle is a number, never an address).
struct mpix_host_graph {
  std::vector<mpix::gpu::HostStream::Task> tasks;
};
