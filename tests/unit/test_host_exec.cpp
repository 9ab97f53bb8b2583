// Unit tests of the host backend's work-list execution (src/backend/host/host_exec.h): the semantics
// of the merged epoch kernel - waits, then copies and accumulates, then signals.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "backend/host/host_exec.h"

using namespace mpix;
using gpu::WatchdogReport;
using gpu::WorkList;
using work::Item;
using namespace std::chrono_literals;

namespace {

uint64_t addr(const void *p) { return reinterpret_cast<uint64_t>(p); }

Item wait_on(const uint64_t *flag, uint64_t value, int peer = 0, uint8_t reason = work::kWaitPost) {
  Item it{};
  it.kind = work::kWait;
  it.a = addr(flag);
  it.b = value;
  it.dtype = reason;
  it.peer = peer;
  return it;
}

Item signal(uint64_t *flag, uint64_t value, bool add = false) {
  Item it{};
  it.kind = work::kSignal;
  it.a = addr(flag);
  it.b = value;
  if (add) it.flags = work::kSignalAdd;
  return it;
}

Item copy(void *dst, const void *src, uint64_t bytes, uint8_t flags = 0, int pid = 0) {
  Item it{};
  it.kind = work::kCopy;
  it.a = addr(dst);
  it.b = addr(src);
  it.bytes = bytes;
  it.flags = flags;
  it.peer = pid;
  return it;
}

Item acc(void *dst, const void *src, uint64_t bytes, uint8_t dtype, uint8_t op, uint8_t flags = 0, int pid = 0) {
  Item it = copy(dst, src, bytes, flags, pid);
  it.kind = work::kAccumulate;
  it.dtype = dtype;
  it.op = op;
  return it;
}

int run(const WorkList &l, WatchdogReport *rep = nullptr, std::string *why = nullptr) {
  WatchdogReport r;
  std::string w;
  return gpu::host_exec::run(l, rep ? rep : &r, why ? why : &w);
}

uint64_t load(const uint64_t &x) { return std::atomic_ref<uint64_t>(const_cast<uint64_t &>(x)).load(); }
void store(uint64_t &x, uint64_t v) { std::atomic_ref<uint64_t>(x).store(v); }

// Reference operators, written independently of work::apply_op.
template <typename T>
T ref_op(uint8_t op, T target, T origin) {
  if (op == work::kSum) return static_cast<T>(target + origin);
  if (op == work::kMax) return std::max(target, origin);
  if (op == work::kMin) return std::min(target, origin);
  return origin;
}

const char *op_name(uint8_t op) {
  static const char *n[] = {"sum", "max", "min", "replace"};
  return n[op];
}

template <typename T>
void check_accumulate(uint8_t dtype, uint8_t flags) {
  const size_t n = 1031;  // odd count
  std::vector<T> dst0(n), src(n);
  for (size_t i = 0; i < n; ++i) {
    // Mixed signs, magnitudes beyond 32 bits for int64, exact in float/double.
    const long long a = static_cast<long long>((i * 7919) % 2001) - 1000;
    const long long b = static_cast<long long>((i * 104729) % 3001) - 1500;
    if constexpr (sizeof(T) == 8 && std::numeric_limits<T>::is_integer) {
      dst0[i] = static_cast<T>(a) * (T(1) << 33);
      src[i] = static_cast<T>(b) * (T(1) << 31) + static_cast<T>(i);
    } else {
      dst0[i] = static_cast<T>(a) / static_cast<T>(std::numeric_limits<T>::is_integer ? 1 : 4);
      src[i] = static_cast<T>(b) / static_cast<T>(std::numeric_limits<T>::is_integer ? 1 : 8);
    }
  }
  for (uint8_t op : {work::kSum, work::kMax, work::kMin, work::kReplace}) {
    CAPTURE(op_name(op));
    CAPTURE(int(flags));
    std::vector<T> dst = dst0;
    WorkList l;
    l.ops.push_back(acc(dst.data(), src.data(), n * sizeof(T), dtype, op, flags, flags ? getpid() : 0));
    std::string why;
    REQUIRE(run(l, nullptr, &why) == gpu::kOk);
    for (size_t i = 0; i < n; ++i) {
      const T want = ref_op<T>(op, dst0[i], src[i]);
      if (std::memcmp(&dst[i], &want, sizeof(T)) != 0)
        FAIL("element " << i << ": got " << dst[i] << ", want " << want << " (target " << dst0[i] << ", origin "
                        << src[i] << ")");
    }
  }
}

}  // namespace

TEST_CASE("an empty list succeeds") {
  WorkList l;
  CHECK(run(l) == gpu::kOk);
}

TEST_CASE("signals store their value; kSignalAdd adds it") {
  uint64_t f = 5, g = 5;
  WorkList l;
  l.signals.push_back(signal(&f, 42));
  l.signals.push_back(signal(&g, 3, true));
  CHECK(run(l) == gpu::kOk);
  CHECK(f == 42);
  CHECK(g == 8);
  CHECK(run(l) == gpu::kOk);
  CHECK(f == 42);
  CHECK(g == 11);
  // A store may lower a flag (the protocol never does, but the item is a plain store).
  WorkList low;
  low.signals.push_back(signal(&f, 1));
  CHECK(run(low) == gpu::kOk);
  CHECK(f == 1);
}

TEST_CASE("a kStopsOnSkip ring is stored while the list's skip word is 0, and not once it is set") {
  uint64_t ring_word = 0, flag = 0, counter = 0, skip = 0;
  Item ring = signal(&ring_word, 1);
  ring.flags |= work::kStopsOnSkip;
  WorkList l;
  l.skip_word = addr(&skip);
  l.signals.push_back(signal(&flag, 7));
  l.signals.push_back(ring);
  l.signals.push_back(signal(&counter, 1, true));
  CHECK(run(l) == gpu::kOk);
  CHECK(ring_word == 1);
  skip = 1;  // an earlier list of the window skipped its ring
  ring_word = 0;
  flag = 0;
  CHECK(run(l) == gpu::kOk);
  CHECK(ring_word == 0);  // the ring alone is held back
  CHECK(flag == 7);
  CHECK(counter == 2);
  // Without the flag, or without a skip word, the same store goes out.
  WorkList plain = l;
  plain.signals[1].flags = 0;
  CHECK(run(plain) == gpu::kOk);
  CHECK(ring_word == 1);
  ring_word = 0;
  WorkList unwatched = l;
  unwatched.skip_word = 0;
  CHECK(run(unwatched) == gpu::kOk);
  CHECK(ring_word == 1);
}

TEST_CASE("concurrent kSignalAdd lists lose no increment") {
  uint64_t counter = 0;
  constexpr int kThreads = 4, kLists = 5000;
  std::vector<std::thread> th;
  for (int t = 0; t < kThreads; ++t)
    th.emplace_back([&] {
      WorkList l;
      l.signals.push_back(signal(&counter, 1, true));
      for (int i = 0; i < kLists; ++i) run(l);
    });
  for (auto &x : th) x.join();
  CHECK(load(counter) == uint64_t{kThreads} * kLists);
}

TEST_CASE("copies move exactly the bytes asked for, any size and alignment") {
  std::vector<uint8_t> src(70000), dst(70000 + 64);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{3}, size_t{8}, size_t{63}, size_t{4097}, size_t{65537}}) {
    for (size_t off : {size_t{0}, size_t{1}, size_t{7}}) {
      CAPTURE(bytes);
      CAPTURE(off);
      std::fill(dst.begin(), dst.end(), 0xcc);
      WorkList l;
      l.ops.push_back(copy(dst.data() + off, src.data() + 3, bytes));
      REQUIRE(run(l) == gpu::kOk);
      for (size_t i = 0; i < dst.size(); ++i) {
        const uint8_t want = (i >= off && i < off + bytes) ? src[3 + i - off] : 0xcc;
        if (dst[i] != want) FAIL("byte " << i << ": got " << int(dst[i]) << ", want " << int(want));
      }
    }
  }
}

TEST_CASE("overlapping copies behave like memmove") {
  std::vector<uint8_t> buf(1000), want(1000);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i);
  want = buf;
  std::memmove(want.data() + 10, want.data(), 500);
  WorkList l;
  l.ops.push_back(copy(buf.data() + 10, buf.data(), 500));
  REQUIRE(run(l) == gpu::kOk);
  CHECK(buf == want);
}

TEST_CASE("ops of a list run in order") {
  std::vector<uint8_t> a(64, 1), b(64, 2), c(64, 3);
  WorkList l;
  l.ops.push_back(copy(b.data(), a.data(), 64));  // b = a
  l.ops.push_back(copy(c.data(), b.data(), 64));  // c = b (= a)
  REQUIRE(run(l) == gpu::kOk);
  CHECK(c == a);
}

TEST_CASE("accumulate, 4 types x 4 ops, local memory") {
  check_accumulate<int32_t>(work::kInt32, 0);
  check_accumulate<int64_t>(work::kInt64, 0);
  check_accumulate<float>(work::kFloat, 0);
  check_accumulate<double>(work::kDouble, 0);
}

TEST_CASE("accumulate, 4 types x 4 ops, through cross-memory attach") {
  check_accumulate<int32_t>(work::kInt32, work::kDstRemoteCma);
  check_accumulate<int64_t>(work::kInt64, work::kDstRemoteCma);
  check_accumulate<float>(work::kFloat, work::kDstRemoteCma);
  check_accumulate<double>(work::kDouble, work::kDstRemoteCma);
}

TEST_CASE("accumulate special values: int32 wrap-around, float infinities, -0.0") {
  int32_t d32[2] = {std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()};
  int32_t s32[2] = {1, -1};
  WorkList l;
  l.ops.push_back(acc(d32, s32, sizeof d32, work::kInt32, work::kMax));
  REQUIRE(run(l) == gpu::kOk);
  CHECK(d32[0] == std::numeric_limits<int32_t>::max());
  CHECK(d32[1] == -1);
  double dd[2] = {1.5, -std::numeric_limits<double>::infinity()}, sd[2] = {std::numeric_limits<double>::infinity(), 2};
  WorkList m;
  m.ops.push_back(acc(dd, sd, sizeof dd, work::kDouble, work::kMin));
  REQUIRE(run(m) == gpu::kOk);
  CHECK(dd[0] == 1.5);
  CHECK(dd[1] == -std::numeric_limits<double>::infinity());
}

TEST_CASE("local accumulates are atomic per element across threads") {
  constexpr size_t n = 4096;
  std::vector<int64_t> dst(n, 0), one(n, 1);
  std::vector<int32_t> dst32(n, 0), one32(n, 1);
  constexpr int kThreads = 4, kLists = 300;
  std::vector<std::thread> th;
  for (int t = 0; t < kThreads; ++t)
    th.emplace_back([&] {
      WorkList l;
      l.ops.push_back(acc(dst.data(), one.data(), n * 8, work::kInt64, work::kSum));
      l.ops.push_back(acc(dst32.data(), one32.data(), n * 4, work::kInt32, work::kSum));
      for (int i = 0; i < kLists; ++i) run(l);
    });
  for (auto &x : th) x.join();
  for (size_t i = 0; i < n; ++i) {
    if (dst[i] != kThreads * kLists) FAIL("int64 element " << i << " is " << dst[i] << ", want " << kThreads * kLists);
    if (dst32[i] != kThreads * kLists) FAIL("int32 element " << i << " is " << dst32[i]);
  }
}

TEST_CASE("copies through cross-memory attach, both directions") {
  std::vector<uint8_t> local(100000), remote(100000, 0);
  for (size_t i = 0; i < local.size(); ++i) local[i] = static_cast<uint8_t>(i ^ (i >> 8));
  WorkList put;
  // kDstRemoteCma: a = remote address in process `peer`, b = local source.
  put.ops.push_back(copy(remote.data() + 1, local.data(), 99999, work::kDstRemoteCma, getpid()));
  REQUIRE(run(put) == gpu::kOk);
  CHECK(std::memcmp(remote.data() + 1, local.data(), 99999) == 0);
  CHECK(remote[0] == 0);
  std::vector<uint8_t> back(100000, 0);
  WorkList get;
  // kSrcRemoteCma: a = local destination, b = remote address.
  get.ops.push_back(copy(back.data(), remote.data() + 1, 99999, work::kSrcRemoteCma, getpid()));
  REQUIRE(run(get) == gpu::kOk);
  CHECK(std::memcmp(back.data(), local.data(), 99999) == 0);
}

TEST_CASE("a failed cross-memory-attach copy is an error with a reason, and skips the signals") {
  std::vector<uint8_t> src(64, 1);
  uint64_t flag = 0;
  WorkList l;
  // An address that is not mapped in this process.
  l.ops.push_back(copy(reinterpret_cast<void *>(uint64_t{16}), src.data(), 64, work::kDstRemoteCma, getpid()));
  l.signals.push_back(signal(&flag, 1));
  std::string why;
  CHECK(run(l, nullptr, &why) == gpu::kErrRuntime);
  CHECK(why.find("cross-memory attach") != std::string::npos);
  CHECK(flag == 0);
}

TEST_CASE("data is complete before the signals of the same list") {
  // A reader thread waits for the signal and must then see every byte of the copy.
  constexpr size_t n = 8 << 20;
  std::vector<uint8_t> src(n, 0x77), dst(n, 0);
  uint64_t flag = 0;
  std::atomic<bool> bad{false};
  std::thread reader([&] {
    while (load(flag) < 1) std::this_thread::yield();
    for (size_t i = 0; i < n; i += 4093)
      if (dst[i] != 0x77) bad = true;
    if (dst[n - 1] != 0x77) bad = true;
  });
  WorkList l;
  l.ops.push_back(copy(dst.data(), src.data(), n));
  l.signals.push_back(signal(&flag, 1));
  REQUIRE(run(l) == gpu::kOk);
  reader.join();
  CHECK_FALSE(bad.load());
}

TEST_CASE("waits already satisfied pass; waits satisfied later block until then") {
  uint64_t f1 = 7, f2 = 0;
  std::vector<uint8_t> src(4096, 9), dst(4096, 0);
  WorkList l;
  l.waits.push_back(wait_on(&f1, 7));  // equal: satisfied
  l.waits.push_back(wait_on(&f1, 3));  // greater: satisfied
  l.waits.push_back(wait_on(&f2, 2));
  l.ops.push_back(copy(dst.data(), src.data(), src.size()));
  std::atomic<bool> copied_early{false};
  std::thread setter([&] {
    std::this_thread::sleep_for(50ms);
    store(f2, 1);  // not enough yet
    std::this_thread::sleep_for(50ms);
    if (dst[0] != 0) copied_early = true;
    store(f2, 2);
  });
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(run(l) == gpu::kOk);
  const auto waited = std::chrono::steady_clock::now() - t0;
  setter.join();
  CHECK(waited >= 90ms);
  CHECK_FALSE(copied_early.load());
  CHECK(dst == src);
}

TEST_CASE("without a watchdog, a wait may take long and still succeed") {
  uint64_t f = 0;
  WorkList l;
  l.watchdog_ns = 0;
  l.waits.push_back(wait_on(&f, 1));
  std::thread setter([&] {
    std::this_thread::sleep_for(300ms);
    store(f, 1);
  });
  CHECK(run(l) == gpu::kOk);
  setter.join();
}

TEST_CASE("the watchdog ends a wait that never completes, with a report; data and signals are skipped") {
  uint64_t ok_flag = 10, never = 4, sig = 0;
  std::vector<uint8_t> src(256, 1), dst(256, 0);
  WorkList l;
  l.window_id = 77;
  l.watchdog_ns = 150ull * 1000 * 1000;
  l.waits.push_back(wait_on(&ok_flag, 10, 1, work::kWaitPost));
  l.waits.push_back(wait_on(&never, 6, 3, work::kWaitComplete));
  l.ops.push_back(copy(dst.data(), src.data(), 256));
  l.signals.push_back(signal(&sig, 1));
  WatchdogReport rep;
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(run(l, &rep) == gpu::kErrTimeout);
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK(took >= 150ms);
  CHECK(took < 3s);
  CHECK(rep.window_id == 77);
  CHECK(rep.peer == 3);
  CHECK(rep.reason == work::kWaitComplete);
  CHECK(rep.expected == 6);
  CHECK(rep.observed == 4);
  CHECK(dst[0] == 0);
  CHECK(sig == 0);
}

TEST_CASE("a watchdog does not fire on waits that complete in time") {
  uint64_t f = 0;
  WorkList l;
  l.watchdog_ns = 2000ull * 1000 * 1000;
  l.waits.push_back(wait_on(&f, 1, 2, work::kWaitPost));
  std::thread setter([&] {
    std::this_thread::sleep_for(50ms);
    store(f, 1);
  });
  WatchdogReport rep;
  CHECK(run(l, &rep) == gpu::kOk);
  setter.join();
}
