// Unit tests of the host backend's stream: an in-order worker thread (src/backend/host/host_stream.h).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "backend/host/host_stream.h"

using mpix::gpu::HostStream;
using namespace std::chrono_literals;

TEST_CASE("tasks run in enqueue order") {
  HostStream s;
  std::vector<int> seen;
  seen.reserve(10000);
  for (int i = 0; i < 10000; ++i)
    s.enqueue([&seen, i] {
      seen.push_back(i);
      return 0;
    });
  REQUIRE(s.synchronize() == 0);
  REQUIRE(seen.size() == 10000);
  for (int i = 0; i < 10000; ++i) {
    if (seen[i] != i) FAIL("task " << i << " ran at position " << i << " but recorded " << seen[i]);
  }
}

TEST_CASE("enqueue returns before the task runs, on another thread") {
  HostStream s;
  std::atomic<bool> release{false}, ran{false};
  std::thread::id worker;
  s.enqueue([&] {
    while (!release.load()) std::this_thread::sleep_for(100us);
    worker = std::this_thread::get_id();
    ran = true;
    return 0;
  });
  // The task is blocked until we release it: enqueue must already have returned.
  std::this_thread::sleep_for(20ms);
  CHECK_FALSE(ran.load());
  release = true;
  CHECK(s.synchronize() == 0);
  CHECK(ran.load());
  CHECK(worker != std::this_thread::get_id());
}

TEST_CASE("synchronize waits for every task enqueued before it") {
  HostStream s;
  std::atomic<int> done{0};
  for (int i = 0; i < 20; ++i)
    s.enqueue([&] {
      std::this_thread::sleep_for(1ms);
      ++done;
      return 0;
    });
  CHECK(s.synchronize() == 0);
  CHECK(done.load() == 20);
}

TEST_CASE("synchronize of an idle or fresh stream returns at once") {
  HostStream s;
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(s.synchronize() == 0);
  CHECK(s.synchronize() == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < 1s);
}

TEST_CASE("the first failure is reported once, later tasks still run") {
  HostStream s;
  std::atomic<int> ran{0};
  s.enqueue([&] { return ++ran, 0; });
  s.enqueue([&] { return ++ran, 3; });
  s.enqueue([&] { return ++ran, 4; });
  s.enqueue([&] { return ++ran, 0; });
  CHECK(s.synchronize() == 3);
  CHECK(ran.load() == 4);
  // Reported and cleared.
  CHECK(s.synchronize() == 0);
  s.enqueue([&] { return ++ran, 0; });
  CHECK(s.synchronize() == 0);
  s.enqueue([&] { return ++ran, 7; });
  CHECK(s.synchronize() == 7);
  CHECK(ran.load() == 6);
}

TEST_CASE("the destructor runs what is still queued") {
  std::atomic<int> ran{0};
  {
    HostStream s;
    for (int i = 0; i < 50; ++i)
      s.enqueue([&] {
        std::this_thread::sleep_for(200us);
        ++ran;
        return 0;
      });
  }
  CHECK(ran.load() == 50);
}

TEST_CASE("several enqueuing threads: each thread's tasks keep their order") {
  HostStream s;
  constexpr int kThreads = 4, kTasks = 2000;
  std::vector<std::vector<int>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kTasks; ++i)
        s.enqueue([&, t, i] {
          seen[t].push_back(i);  // the worker is the only writer
          return 0;
        });
    });
  for (auto &th : threads) th.join();
  CHECK(s.synchronize() == 0);
  for (int t = 0; t < kThreads; ++t) {
    REQUIRE(seen[t].size() == static_cast<size_t>(kTasks));
    for (int i = 0; i < kTasks; ++i)
      if (seen[t][i] != i) FAIL("thread " << t << ": task " << i << " ran out of order (got " << seen[t][i] << ")");
  }
}

TEST_CASE("synchronize from another thread while tasks are enqueued") {
  HostStream s;
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) s.enqueue([&] { return ++ran, 0; });
  int rc = -1;
  std::thread other([&] { rc = s.synchronize(); });
  other.join();
  CHECK(rc == 0);
  CHECK(ran.load() >= 100);
  CHECK(s.synchronize() == 0);
  CHECK(ran.load() == 100);
}

TEST_CASE("two streams are independent") {
  HostStream a, b;
  std::atomic<bool> release{false};
  std::atomic<int> b_ran{0};
  a.enqueue([&] {
    while (!release.load()) std::this_thread::sleep_for(100us);
    return 0;
  });
  b.enqueue([&] { return ++b_ran, 0; });
  CHECK(b.synchronize() == 0);  // does not wait for the blocked stream a
  CHECK(b_ran.load() == 1);
  release = true;
  CHECK(a.synchronize() == 0);
}
