// The libfabric transport in one process (src/transport/ofi): options, provider errors, counters,
// registration, argument checks, triggered chains to our own address in both trigger styles (puts,
// gets, accumulates), the
// operation-record limit, releasing counters with untriggered operations, many operations fired at once, and the doorbell agent.
// Runs with MPIX_ST_OFI_PROVIDER=sockets.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "transport/ofi/doorbell_agent.h"
#include "transport/ofi/fabric.h"

using namespace mpix::ofi;
using namespace std::chrono_literals;

namespace {

Options env_options(TriggerStyle style = TriggerStyle::none) {
  Options o;
  std::string why;
  REQUIRE_MESSAGE(options_from_env(&o, &why), why);
  o.style = style;
  return o;
}

std::unique_ptr<Fabric> open_fabric(const Options &o) {
  std::string why;
  auto f = Fabric::open(o, &why);
  REQUIRE_MESSAGE(f, why);
  return f;
}

// A fabric whose only peer (0) is itself.
std::unique_ptr<Fabric> open_self(const Options &o) {
  auto f = open_fabric(o);
  REQUIRE(f->insert_peers({f->local_address()}));
  REQUIRE(f->peer_count() == 1);
  return f;
}

bool eventually(const std::function<bool()> &done, std::chrono::milliseconds limit = 10s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(50us);
  }
  return true;
}

uint64_t load(uint64_t &w) { return std::atomic_ref<uint64_t>(w).load(); }

struct Buffers {
  std::vector<char> src = std::vector<char>(1 << 16), dst = std::vector<char>(1 << 16);
  alignas(8) uint64_t flags[2] = {};
};

}  // namespace

TEST_CASE("options come from the environment, and bad values are named") {
  setenv("MPIX_ST_OFI_TRIGGER", "context", 1);
  setenv("MPIX_ST_OFI_PROGRESS", "manual", 1);
  Options o;
  std::string why;
  CHECK(options_from_env(&o, &why));
  CHECK(o.style == TriggerStyle::triggered_context);
  CHECK(o.progress == Options::Progress::manual);
  setenv("MPIX_ST_OFI_PROGRESS", "provider", 1);
  Options p;
  CHECK(options_from_env(&p, &why));
  CHECK(p.progress == Options::Progress::provider);
  setenv("MPIX_ST_OFI_PROGRESS", "often", 1);
  CHECK_FALSE(options_from_env(&p, &why));
  CHECK(why.find("MPIX_ST_OFI_PROGRESS=often") != std::string::npos);
  setenv("MPIX_ST_OFI_PROGRESS", "manual", 1);
  setenv("MPIX_ST_OFI_TRIGGER", "sometimes", 1);
  CHECK_FALSE(options_from_env(&o, &why));
  CHECK(why.find("MPIX_ST_OFI_TRIGGER=sometimes") != std::string::npos);
  unsetenv("MPIX_ST_OFI_TRIGGER");
  unsetenv("MPIX_ST_OFI_PROGRESS");
}

TEST_CASE("providers that do not exist: the error names each one and why") {
  Options o;
  o.providers = "nonexistent, alsomissing";
  std::string why;
  CHECK_FALSE(Fabric::open(o, &why));
  INFO(why);
  CHECK(why.find("nonexistent: fi_getinfo") != std::string::npos);
  CHECK(why.find("alsomissing: fi_getinfo") != std::string::npos);
  o.providers = " , ";
  CHECK_FALSE(Fabric::open(o, &why));
  CHECK(why.find("empty list") != std::string::npos);
}

TEST_CASE("the provider opens and a trigger style is probed") {
  auto f = open_fabric(env_options());
  MESSAGE("provider ", f->provider(), ", style ", std::string(style_name(f->trigger_style())), ", probe: ", f->probe_report(),
          ", manual progress ", f->manual_progress(), ", atomic write ", f->supports_atomic_write(),
          ", triggered op limit ", f->triggered_op_limit());
  CHECK(f->trigger_style() != TriggerStyle::none);
  CHECK(f->probe_report().find(std::string(style_name(f->trigger_style())) + ": ok") != std::string::npos);
  CHECK(!f->local_address().empty());
  CHECK(f->max_put_bytes() >= (1u << 20));
  CHECK(f->pending_ops() == 0);
}

TEST_CASE("counters: add, read, bounded wait, release") {
  auto f = open_fabric(env_options());
  Counter c = f->make_counter();
  REQUIRE(c);
  CHECK(f->add(c, 3) == kOk);
  CHECK(f->add(c, 4) == kOk);
  CHECK(f->read(c) == 7);
  CHECK(f->read_errors(c) == 0);
  CHECK(f->wait(c, 7, 10) == kOk);
  auto t0 = std::chrono::steady_clock::now();
  CHECK(f->wait(c, 8, 20) == kErrTimeout);
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  CHECK(f->last_error().find("counter at 7, not 8") != std::string::npos);
  CHECK(f->release_counter(c));
  CHECK_FALSE(f->release_counter(c));
  CHECK(f->add(c, 1) == kErrArg);
}

TEST_CASE("registration: remote descriptions and deregistration") {
  auto f = open_fabric(env_options());
  std::vector<char> buf(4096);
  CHECK_FALSE(f->register_memory(nullptr, 10));
  CHECK_FALSE(f->register_memory(buf.data(), 0));
  Region a = f->register_memory(buf.data(), buf.size()), b = f->register_memory(buf.data() + 64, 64);
  REQUIRE(a);
  REQUIRE(b);
  RemoteRegion ra = f->remote(a), rb = f->remote(b);
  CHECK(ra.bytes == 4096);
  CHECK(ra.key != rb.key);
  CHECK((ra.base == 0 || ra.base == reinterpret_cast<uint64_t>(buf.data())));
  CHECK(f->deregister(a));
  CHECK_FALSE(f->deregister(a));
  CHECK(f->deregister(b));
}

TEST_CASE("argument errors are reported, not posted") {
  auto f = open_self(env_options());
  Buffers b;
  Region src = f->register_memory(b.src.data(), b.src.size());
  Region dst = f->register_memory(b.dst.data(), b.dst.size());
  RemoteRegion rd = f->remote(dst);
  Counter t = f->make_counter(), d = f->make_counter();
  Trigger trig{t, 1, d};
  CHECK(f->triggered_put(b.src.data() + 100, b.src.size(), src, 0, rd, 0, trig) == kErrArg);
  CHECK(f->last_error().find("outside its registered region") != std::string::npos);
  CHECK(f->triggered_put(b.src.data(), 16, src, 0, rd, b.dst.size() - 8, trig) == kErrArg);
  CHECK(f->last_error().find("exceed the remote region") != std::string::npos);
  CHECK(f->triggered_put(b.src.data(), 16, src, 1, rd, 0, trig) == kErrArg);
  CHECK(f->last_error().find("unknown peer 1") != std::string::npos);
  CHECK(f->triggered_atomic_add_u64(1, 0, rd, 4, trig) == kErrArg);
  CHECK(f->triggered_put(b.src.data(), 16, src, 0, rd, 0, Trigger{t, 1, Counter{99}}) == kErrArg);
  CHECK(f->pending_ops() == 0);
  CHECK_FALSE(f->insert_peers({f->local_address()}));
}

// The epoch chain of [Namashivayam 2023] §5.1 to our own address: puts fire when the trigger
// counter reaches their threshold, and the signal fires when the puts' completion counter reaches
// theirs.
static void run_chain(TriggerStyle style) {
  auto f = open_self(env_options(style));
  REQUIRE(f->trigger_style() == style);
  Buffers b;
  Region src = f->register_memory(b.src.data(), b.src.size());
  Region dst = f->register_memory(b.dst.data(), b.dst.size());
  Region flg = f->register_memory(b.flags, sizeof b.flags);
  RemoteRegion rd = f->remote(dst), rf = f->remote(flg);
  Counter trig = f->make_counter(), put_done = f->make_counter(), sig_done = f->make_counter();
  for (size_t i = 0; i < b.src.size(); ++i) b.src[i] = static_cast<char>(i * 7 + 1);

  // Two epochs: thresholds 1 and 2, each two puts and one signal.
  for (uint64_t epoch = 1; epoch <= 2; ++epoch) {
    size_t base = (epoch - 1) * 32768;
    CHECK(f->triggered_put(b.src.data() + base, 1000, src, 0, rd, base, {trig, epoch, put_done}) == kOk);
    CHECK(f->triggered_put(b.src.data() + base + 1000, 31768, src, 0, rd, base + 1000, {trig, epoch, put_done}) == kOk);
    CHECK(f->triggered_atomic_add_u64(10, 0, rf, 0, {put_done, 2 * epoch, sig_done}) == kOk);
    if (f->supports_atomic_write())
      CHECK(f->triggered_atomic_write_u64(100 + epoch, 0, rf, 8, {put_done, 2 * epoch, sig_done}) == kOk);
  }
  const uint64_t signals = f->supports_atomic_write() ? 2 : 1;
  CHECK(f->pending_ops() == 2 * (2 + signals));
  std::this_thread::sleep_for(5ms);
  CHECK(load(b.flags[0]) == 0);
  CHECK(b.dst[0] == 0);

  CHECK(f->add(trig, 1) == kOk);
  REQUIRE(f->wait(sig_done, signals, 10000) == kOk);
  CHECK(load(b.flags[0]) == 10);
  if (signals == 2) CHECK(load(b.flags[1]) == 101);
  CHECK(std::memcmp(b.dst.data(), b.src.data(), 32768) == 0);
  CHECK(b.dst[32768] == 0);  // the second epoch has not fired
  // The first epoch's records are released while the second's wait on the same counters.
  CHECK(f->pending_ops() == 2 + signals);

  CHECK(f->add(trig, 1) == kOk);
  REQUIRE(f->wait(sig_done, 2 * signals, 10000) == kOk);
  CHECK(load(b.flags[0]) == 20);
  if (signals == 2) CHECK(load(b.flags[1]) == 102);
  CHECK(std::memcmp(b.dst.data(), b.src.data(), b.dst.size()) == 0);
  CHECK(f->read(put_done) == 4);
  CHECK(f->read_errors(put_done) == 0);
  CHECK(f->pending_ops() == 0);
  CHECK(f->release_counter(trig));
  CHECK(f->release_counter(put_done));
  CHECK(f->release_counter(sig_done));
}

TEST_CASE("triggered chain, deferred work queue style") { run_chain(TriggerStyle::deferred_work_queue); }
TEST_CASE("triggered chain, triggered context style") { run_chain(TriggerStyle::triggered_context); }

// Gets and accumulates fired by one trigger, with a signal chained to their completion.
static void run_get_accumulate(TriggerStyle style) {
  auto f = open_self(env_options(style));
  std::vector<char> remote(4096), local(4096, 0);
  std::vector<double> acc_target(300, 1.0), acc_origin(300);
  std::vector<int32_t> max_target(64), max_origin(64);
  alignas(8) uint64_t flag = 0;
  for (size_t i = 0; i < remote.size(); ++i) remote[i] = static_cast<char>(i * 13 + 5);
  for (size_t i = 0; i < acc_origin.size(); ++i) acc_origin[i] = static_cast<double>(i);
  for (int i = 0; i < 64; ++i) max_target[i] = 10, max_origin[i] = i;
  Region rr = f->register_memory(remote.data(), remote.size()), lr = f->register_memory(local.data(), local.size());
  Region at = f->register_memory(acc_target.data(), acc_target.size() * 8);
  Region ao = f->register_memory(acc_origin.data(), acc_origin.size() * 8);
  Region mt = f->register_memory(max_target.data(), 64 * 4), mo = f->register_memory(max_origin.data(), 64 * 4);
  Region fr = f->register_memory(&flag, 8);
  Counter trig = f->make_counter(), done = f->make_counter(), sig = f->make_counter();

  REQUIRE(f->atomic_count_limit(AtomicType::f64, AtomicOp::sum) >= 1);
  const size_t per_op = std::min<size_t>(f->atomic_count_limit(AtomicType::f64, AtomicOp::sum), 300);
  uint64_t ops = 0;
  CHECK(f->triggered_get(local.data() + 8, 2000, lr, 0, f->remote(rr), 100, {trig, 1, done}) == kOk);
  ++ops;
  for (size_t first = 0; first < 300; first += per_op, ++ops) {
    const size_t n = std::min(per_op, 300 - first);
    CHECK(f->triggered_accumulate(acc_origin.data() + first, n, AtomicType::f64, AtomicOp::sum, ao, 0, f->remote(at),
                                  first * 8, {trig, 1, done}) == kOk);
  }
  CHECK(f->triggered_accumulate(max_origin.data(), 64, AtomicType::i32, AtomicOp::max, mo, 0, f->remote(mt), 0,
                                {trig, 1, done}) == kOk);
  ++ops;
  CHECK(f->triggered_atomic_add_u64(1, 0, f->remote(fr), 0, {done, ops, sig}) == kOk);
  std::this_thread::sleep_for(5ms);
  CHECK(local[8] == 0);
  CHECK(acc_target[5] == 1.0);

  CHECK(f->add(trig, 1) == kOk);
  REQUIRE(f->wait(sig, 1, 10000) == kOk);
  CHECK(load(flag) == 1);
  CHECK(std::memcmp(local.data() + 8, remote.data() + 100, 2000) == 0);
  CHECK(local[7] == 0);
  CHECK(local[2008] == 0);
  for (size_t i = 0; i < 300; ++i) CHECK(acc_target[i] == 1.0 + static_cast<double>(i));
  for (int i = 0; i < 64; ++i) CHECK(max_target[i] == std::max(10, i));
  CHECK(f->read_errors(done) == 0);
  // Unaligned targets and element counts past the provider's limit are refused, not posted.
  CHECK(f->triggered_accumulate(max_origin.data(), 1, AtomicType::i32, AtomicOp::sum, mo, 0, f->remote(mt), 2,
                                {trig, 2, done}) == kErrArg);
  const size_t limit = f->atomic_count_limit(AtomicType::i32, AtomicOp::sum);
  if (limit < 64)
    CHECK(f->triggered_accumulate(max_origin.data(), 64, AtomicType::i32, AtomicOp::sum, mo, 0, f->remote(mt), 0,
                                  {trig, 2, done}) == kErrUnsupported);
  CHECK(f->pending_ops() == 0);
}

TEST_CASE("gets and accumulates, deferred work queue style") { run_get_accumulate(TriggerStyle::deferred_work_queue); }
TEST_CASE("gets and accumulates, triggered context style") { run_get_accumulate(TriggerStyle::triggered_context); }

// Scattered pieces as one put and one get (fabric vectors): each piece lands at its own offset,
// bytes between them stay untouched, and each vectored operation counts one completion.
static void run_pieces(TriggerStyle style) {
  auto f = open_self(env_options(style));
  const size_t limit = f->rma_pieces_limit();
  REQUIRE(limit >= 1);
  REQUIRE(limit <= kMaxPieces);
  Buffers b;
  std::vector<char> back(4096, 0);
  for (size_t i = 0; i < b.src.size(); ++i) b.src[i] = static_cast<char>(i * 11 + 3);
  Region src = f->register_memory(b.src.data(), b.src.size()), dst = f->register_memory(b.dst.data(), b.dst.size());
  Region bk = f->register_memory(back.data(), back.size());
  Counter trig = f->make_counter(), done = f->make_counter();
  // Piece k: 8 + k bytes from src offset 100 k, to dst offset 1000 + 64 k; read back to 50 k.
  std::vector<Fabric::Piece> puts, gets;
  for (size_t k = 0; k < limit; ++k) {
    puts.push_back({b.src.data() + 100 * k, src, 1000 + 64 * k, 8 + k});
    gets.push_back({back.data() + 50 * k, bk, 1000 + 64 * k, 8 + k});
  }
  CHECK(f->triggered_put_pieces(puts.data(), limit, 0, f->remote(dst), {trig, 1, done}) == kOk);
  CHECK(f->triggered_get_pieces(gets.data(), limit, 0, f->remote(dst), {done, 1, done}) == kOk);
  CHECK(f->add(trig, 1) == kOk);
  REQUIRE(f->wait(done, 2, 10000) == kOk);
  CHECK(f->read_errors(done) == 0);
  std::vector<char> want(b.dst.size(), 0), want_back(back.size(), 0);
  for (size_t k = 0; k < limit; ++k) {
    std::memcpy(&want[1000 + 64 * k], &b.src[100 * k], 8 + k);
    std::memcpy(&want_back[50 * k], &b.src[100 * k], 8 + k);
  }
  CHECK(std::memcmp(b.dst.data(), want.data(), want.size()) == 0);
  CHECK(std::memcmp(back.data(), want_back.data(), back.size()) == 0);
  // More pieces than the provider takes, and pieces outside their region, are refused.
  std::vector<Fabric::Piece> many(limit + 1, puts[0]);
  CHECK(f->triggered_put_pieces(many.data(), many.size(), 0, f->remote(dst), {trig, 2, done}) == kErrArg);
  Fabric::Piece outside{b.src.data() + b.src.size() - 4, src, 0, 8};
  CHECK(f->triggered_put_pieces(&outside, 1, 0, f->remote(dst), {trig, 2, done}) == kErrArg);
  CHECK(f->pending_ops() == 0);
}

TEST_CASE("pieces in one put and one get, deferred work queue style") { run_pieces(TriggerStyle::deferred_work_queue); }
TEST_CASE("pieces in one put and one get, triggered context style") { run_pieces(TriggerStyle::triggered_context); }

TEST_CASE("a counter is not released while posted operations use it") {
  auto f = open_self(env_options());
  Buffers b;
  Region src = f->register_memory(b.src.data(), b.src.size());
  RemoteRegion rd = f->remote(f->register_memory(b.dst.data(), b.dst.size()));
  Counter t = f->make_counter(), d = f->make_counter();
  REQUIRE(f->triggered_put(b.src.data(), 8, src, 0, rd, 0, {t, 1, d}) == kOk);
  CHECK_FALSE(f->release_counter(t));
  CHECK_FALSE(f->release_counter(d));
  CHECK(f->add(t, 1) == kOk);
  REQUIRE(f->wait(d, 1, 10000) == kOk);
  CHECK(f->release_counter(t));
  CHECK(f->release_counter(d));
}

// A window's counters released while its second epoch was never rung (a skipped epoch):
// settle() waits for the first epoch's chain and counts the second's operations as never
// triggered; release_counters() closes the group without running them, and frees their records.
static void run_release_untriggered(TriggerStyle style) {
  auto f = open_self(env_options(style));
  Buffers b;
  Region src = f->register_memory(b.src.data(), b.src.size());
  RemoteRegion rd = f->remote(f->register_memory(b.dst.data(), b.dst.size()));
  RemoteRegion rf = f->remote(f->register_memory(b.flags, sizeof b.flags));
  Counter trig = f->make_counter(), put_done = f->make_counter(), sig_done = f->make_counter();
  std::fill(b.src.begin(), b.src.end(), 0x5a);
  for (uint64_t epoch = 1; epoch <= 2; ++epoch) {
    const size_t base = (epoch - 1) * 4096;
    REQUIRE(f->triggered_put(b.src.data() + base, 4096, src, 0, rd, base, {trig, epoch, put_done}) == kOk);
    REQUIRE(f->triggered_atomic_add_u64(1, 0, rf, 0, {put_done, epoch, sig_done}) == kOk);
  }
  // Another group, not released: its counter is refused in the group it does not belong to.
  Counter other = f->make_counter();
  CHECK(f->add(trig, 1) == kOk);
  size_t never = 0;
  REQUIRE(f->settle({trig, put_done, sig_done}, 10000, &never) == kOk);
  CHECK(never == 2);
  CHECK(load(b.flags[0]) == 1);
  CHECK(f->release_counters({trig, put_done}) == kErrArg);  // sig_done counts an operation of put_done
  CHECK(f->release_counters({trig, put_done, sig_done}) == kOk);
  CHECK(f->pending_ops() == 0);
  CHECK(f->add(other, 5) == kOk);  // the fabric goes on; nothing of the released group runs
  std::this_thread::sleep_for(20ms);
  CHECK(b.dst[0] == 0x5a);
  CHECK(b.dst[4096] == 0);  // the second epoch's put never ran
  CHECK(load(b.flags[0]) == 1);
  CHECK(f->release_counter(other));
}

TEST_CASE("released counters drop untriggered operations, deferred work queue style") {
  run_release_untriggered(TriggerStyle::deferred_work_queue);
}
TEST_CASE("released counters drop untriggered operations, triggered context style") {
  run_release_untriggered(TriggerStyle::triggered_context);
}

TEST_CASE("operation records run out with a clear error, and come back on completion") {
  Options o = env_options();
  o.max_pending_ops = 4;
  auto f = open_self(o);
  Buffers b;
  Region src = f->register_memory(b.src.data(), b.src.size());
  RemoteRegion rd = f->remote(f->register_memory(b.dst.data(), b.dst.size()));
  Counter t = f->make_counter(), d = f->make_counter();
  for (int i = 0; i < 4; ++i) CHECK(f->triggered_put(b.src.data(), 8, src, 0, rd, 8 * i, {t, 1, d}) == kOk);
  // None of them can run before the trigger: refused at once.
  auto t0 = std::chrono::steady_clock::now();
  CHECK(f->triggered_put(b.src.data(), 8, src, 0, rd, 64, {t, 1, d}) == kErrBusy);
  CHECK(std::chrono::steady_clock::now() - t0 < 500ms);
  CHECK(f->last_error().find("all 4 operation records are in flight (0 running)") != std::string::npos);
  // Once they run, a post waits for their records.
  CHECK(f->add(t, 1) == kOk);
  CHECK(f->triggered_put(b.src.data(), 8, src, 0, rd, 64, {t, 1, d}) == kOk);
  REQUIRE(f->wait(d, 5, 10000) == kOk);
  CHECK(f->pending_ops() == 0);
}

// sockets starts fired operations only while its transmit queue has room, and retries the rest
// only when the trigger counter changes again: progress() must get them all out.
TEST_CASE("thousands of operations fired by one add all complete") {
  for (TriggerStyle style : {TriggerStyle::deferred_work_queue, TriggerStyle::triggered_context}) {
    CAPTURE(std::string(style_name(style)));
    const int n = 6000;  // sockets stalled near 2,800 without the pokes
    Options o = env_options(style);
    o.max_pending_ops = n;
    auto f = open_self(o);
    std::vector<char> src(64 * n, 'a'), dst(64 * n, 0);
    Region rs = f->register_memory(src.data(), src.size());
    RemoteRegion rd = f->remote(f->register_memory(dst.data(), dst.size()));
    Counter t = f->make_counter(), d = f->make_counter();
    for (int i = 0; i < n; ++i) REQUIRE(f->triggered_put(src.data() + 64 * i, 64, rs, 0, rd, 64 * i, {t, 1, d}) == kOk);
    CHECK(f->add(t, 1) == kOk);
    CHECK(f->wait(d, n, 20000) == kOk);
    CHECK(dst == src);
    CHECK(f->pending_ops() == 0);
  }
}

TEST_CASE("doorbell agent: forwards increases, starts from the current value, stops on unwatch") {
  auto f = open_fabric(env_options());
  Counter c = f->make_counter();
  alignas(8) uint64_t bell = 5;
  auto ring = [&bell](uint64_t v) { std::atomic_ref<uint64_t>(bell).store(v, std::memory_order_release); };
  DoorbellAgent agent(*f);
  uint64_t id = agent.watch(&bell, c);
  std::this_thread::sleep_for(5ms);
  CHECK(f->read(c) == 0);
  ring(8);
  CHECK(eventually([&] { return f->read(c) == 3; }));
  ring(9);
  ring(12);
  CHECK(eventually([&] { return f->read(c) == 7; }));
  CHECK(agent.forwarded() == 7);
  CHECK(agent.error().empty());
  CHECK(agent.unwatch(id));
  CHECK_FALSE(agent.unwatch(id));
  ring(100);
  std::this_thread::sleep_for(5ms);
  CHECK(f->read(c) == 7);

  agent.watch(&bell, c);
  ring(50);
  CHECK(eventually([&] { return !agent.error().empty(); }));
  CHECK(agent.error().find("went back from 100 to 50") != std::string::npos);
  ring(51);
  CHECK(eventually([&] { return f->read(c) == 8; }));
}

TEST_CASE("doorbell agent rings a triggered chain") {
  auto f = open_self(env_options());
  Buffers b;
  Region src = f->register_memory(b.src.data(), b.src.size());
  RemoteRegion rd = f->remote(f->register_memory(b.dst.data(), b.dst.size()));
  RemoteRegion rf = f->remote(f->register_memory(b.flags, sizeof b.flags));
  Counter trig = f->make_counter(), put_done = f->make_counter(), sig_done = f->make_counter();
  std::memset(b.src.data(), 'z', 4096);
  REQUIRE(f->triggered_put(b.src.data(), 4096, src, 0, rd, 0, {trig, 1, put_done}) == kOk);
  REQUIRE(f->triggered_atomic_add_u64(1, 0, rf, 0, {put_done, 1, sig_done}) == kOk);
  alignas(8) uint64_t bell = 0;
  DoorbellAgent agent(*f);
  CHECK_FALSE(agent.arm(12345, 1));
  CHECK(agent.arm(agent.watch(&bell, trig), 1));
  std::atomic_ref<uint64_t>(bell).store(1, std::memory_order_release);
  CHECK(eventually([&] { return load(b.flags[0]) == 1; }));
  CHECK(std::memcmp(b.dst.data(), b.src.data(), 4096) == 0);
  CHECK(agent.error().empty());
}
