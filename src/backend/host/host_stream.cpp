#include "host_stream.h"

#include <atomic>

namespace mpix::gpu {

namespace {
thread_local const void *t_running_handle = nullptr;  // set by a stream's worker for its tasks
}  // namespace

const void *HostStream::running_handle() { return t_running_handle; }

HostStream::HostStream() : worker_([this] { run(); }) {}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_one();
  worker_.join();
}

void HostStream::enqueue(Task task) {
  if (capturing_) {
    captured_.push_back(std::move(task));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
    ++submitted_;
  }
  work_cv_.notify_one();
}

bool HostStream::begin_capture() {
  if (capturing_) return false;
  static std::atomic<uint64_t> next_capture{0};  // unique in the process, as CUDA's capture ids are
  capturing_ = true;
  capture_id_ = ++next_capture;
  captured_.clear();
  return true;
}

bool HostStream::end_capture(std::vector<Task> *graph) {
  if (!capturing_) return false;
  capturing_ = false;
  *graph = std::move(captured_);
  captured_.clear();
  return true;
}

void HostStream::launch(const std::vector<Task> &graph) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.insert(queue_.end(), graph.begin(), graph.end());
    submitted_ += graph.size();
  }
  work_cv_.notify_one();
}

int HostStream::synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = submitted_;
  done_cv_.wait(lock, [&] { return completed_ >= target; });
  int err = first_error_;
  first_error_ = 0;
  return err;
}

void HostStream::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping and drained
    Task task = std::move(queue_.front());
    queue_.pop_front();
    t_running_handle = handle_;
    lock.unlock();
    int status = task();
    lock.lock();
    if (status != 0 && first_error_ == 0) first_error_ = status;
    ++completed_;
    done_cv_.notify_all();
  }
}

}  // namespace mpix::gpu
