// Hardware multicast selection and set-up (src/coll/multicast_choice.h, src/backend/multicast.h) with
// the driver stubbed: no GPU, no MPI, no driver call. The stubs count every call, fail the step
// they are told to, and hand out handles whose release they check.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <set>
#include <string>

#include "coll/multicast_choice.h"

using mpix::coll::DeviceMulticast;
using mpix::coll::multicast_choice;
using mpix::coll::MulticastChoice;
using mpix::coll::MulticastDecision;
using mpix::coll::MulticastInputs;
using mpix::gpu::MulticastDriver;
using mpix::gpu::MulticastExchange;
using mpix::gpu::MulticastGroup;
using mpix::gpu::MulticastShareable;

namespace {

constexpr size_t kUnit = 2 << 20;  // the stub's granularity

MulticastInputs requested(uint64_t bytes = 5000) {
  MulticastInputs in;
  in.env = "1";
  in.every_rank_requested = true;
  in.every_peer_node_local = true;
  in.ranks = 4;
  in.bytes = bytes;
  return in;
}

struct StubDriver {
  bool supported = true;
  std::string fail_step;  // the step that fails ("" none)
  std::map<std::string, int> calls;
  size_t created_bytes = 0;
  uint64_t next = 100;
  int handles_made = 0;
  std::set<uint64_t> live_handles, live_mappings;
  bool bound = false;
  bool export_open = false;
  MulticastDriver table;
  const MulticastDriver *handed_out = nullptr;  // what driver_of returned

  bool step(const std::string &name) {
    ++calls[name];
    return name == fail_step;
  }

  StubDriver() {
    table.device_supports = [this](std::string *why) {
      ++calls["supports"];
      if (!supported) *why = "stub: device without multicast";
      return supported;
    };
    table.granularity = [this](int, size_t, size_t *g) {
      if (step("granularity")) return 1;
      *g = kUnit;
      return 0;
    };
    table.create = [this](int, size_t bytes, uint64_t *mc) {
      if (step("create")) return 1;
      created_bytes = bytes;
      *mc = next++;
      live_handles.insert(*mc);
      ++handles_made;
      return 0;
    };
    table.export_handle = [this](uint64_t, MulticastShareable *out) {
      if (step("export")) return 1;
      out->pid = 42;
      out->fd = 7;
      export_open = true;
      return 0;
    };
    table.close_export = [this](MulticastShareable *) {
      ++calls["close_export"];
      export_open = false;
    };
    table.import_handle = [this](const MulticastShareable &from, uint64_t *mc) {
      if (step("import")) return 1;
      CHECK(from.pid == 42);
      CHECK(from.fd == 7);
      *mc = next++;
      live_handles.insert(*mc);
      ++handles_made;
      return 0;
    };
    table.add_device = [this](uint64_t mc) {
      CHECK(live_handles.count(mc));
      return step("add") ? 1 : 0;
    };
    table.allocate = [this](size_t bytes, uint64_t *mem) {
      if (step("allocate")) return 1;
      CHECK(bytes % kUnit == 0);
      *mem = next++;
      live_handles.insert(*mem);
      ++handles_made;
      return 0;
    };
    table.bind = [this](uint64_t, uint64_t, size_t) {
      if (step("bind")) return 1;
      bound = true;
      return 0;
    };
    table.unbind = [this](uint64_t, size_t) {
      ++calls["unbind"];
      CHECK(bound);
      bound = false;
    };
    table.map = [this](uint64_t h, size_t, uint64_t *va) {
      if (step("map")) return 1;
      CHECK(live_handles.count(h));
      *va = 0x1000 * next++;
      live_mappings.insert(*va);
      return 0;
    };
    table.unmap = [this](uint64_t va, size_t) {
      ++calls["unmap"];
      CHECK(live_mappings.erase(va) == 1);
    };
    table.release = [this](uint64_t h) {
      ++calls["release"];
      CHECK(live_handles.erase(h) == 1);
    };
    table.last_error = [this] { return "stub " + fail_step + " failed"; };
  }

  std::function<const MulticastDriver *(std::string *)> driver_of() {
    return [this](std::string *) {
      ++calls["driver_of"];
      handed_out = &table;
      return &table;
    };
  }
  int total_calls() const {
    int n = 0;
    for (auto &[name, count] : calls) n += count;
    return n;
  }
  bool all_released() const { return live_handles.empty() && live_mappings.empty() && !bound && !export_open; }
};

// One rank's view of a group whose other ranks all agree with it (or, with peer_fails, where
// another rank reports a failure at the agreement numbered peer_fails, counting from 1).
struct FakeExchange {
  int agreements = 0, peer_fails = 0;
  MulticastShareable from_root{42, 7};
  MulticastExchange make(int rank, int size = 4) {
    MulticastExchange x;
    x.rank = rank;
    x.size = size;
    x.root = 0;
    x.bcast_from_root = [this, rank](void *bytes, size_t n) {
      if (rank == 0) return;
      // What a root that succeeded sends: ok, its handle, the rounded size.
      REQUIRE(n == sizeof(mpix::gpu::MulticastCreated));
      mpix::gpu::MulticastCreated c;
      c.ok = 1;
      c.handle = from_root;
      c.bytes = kUnit;
      std::memcpy(bytes, &c, n);
    };
    x.all_true = [this](bool mine) { return ++agreements != peer_fails && mine; };
    return x;
  }
};

MulticastChoice run(StubDriver &d, FakeExchange &fx, MulticastInputs in, MulticastGroup *g, int rank = 0) {
  const MulticastDriver *used = nullptr;
  MulticastChoice c = mpix::coll::set_up_bcast_multicast(in, fx.make(rank), d.driver_of(), g, &used);
  CHECK((used != nullptr) == g->ready);
  return c;
}

}  // namespace

TEST_CASE("the choice: off unless MPIX_ST_MULTICAST is exactly 1 on every rank") {
  MulticastInputs in = requested();
  for (const char *env : {static_cast<const char *>(nullptr), "", "0", "true", "yes", "2", " 1"}) {
    in.env = env;
    MulticastChoice c = multicast_choice(in);
    CHECK(c.decision == MulticastDecision::kOff);
    CHECK(c.reason.find("MPIX_ST_MULTICAST") != std::string::npos);
    CHECK(c.reason.find("bcast uses its normal algorithm") != std::string::npos);
  }
  in.env = nullptr;
  CHECK(multicast_choice(in).reason.find("off by default") != std::string::npos);
  in = requested();
  in.every_rank_requested = false;
  CHECK(multicast_choice(in).decision == MulticastDecision::kOff);
  CHECK(multicast_choice(in).reason.find("some ranks") != std::string::npos);
}

TEST_CASE("the choice: node-local only, two ranks or more, a buffer, then the device decides") {
  MulticastInputs in = requested();
  CHECK(multicast_choice(in).decision == MulticastDecision::kAskDevice);
  in.every_peer_node_local = false;
  CHECK(multicast_choice(in).decision == MulticastDecision::kOff);
  CHECK(multicast_choice(in).reason.find("node") != std::string::npos);
  in = requested();
  in.ranks = 1;
  CHECK(multicast_choice(in).decision == MulticastDecision::kOff);
  in = requested(0);
  CHECK(multicast_choice(in).decision == MulticastDecision::kOff);
  in = requested();
  in.device = DeviceMulticast::kUnsupported;
  in.device_why = "HIP fallback: HIP has no multicast objects; bcast uses the IPC 'direct' algorithm";
  CHECK(multicast_choice(in).decision == MulticastDecision::kOff);
  CHECK(multicast_choice(in).reason.find("HIP fallback") != std::string::npos);
  in.device = DeviceMulticast::kSupported;
  CHECK(multicast_choice(in).decision == MulticastDecision::kUse);
  // The environment is checked before anything else, whatever the other inputs say.
  in.env = "0";
  CHECK(multicast_choice(in).decision == MulticastDecision::kOff);
}

TEST_CASE("MPIX_ST_MULTICAST unset or 0: the driver is never reached") {
  for (const char *env : {static_cast<const char *>(nullptr), "0"}) {
    StubDriver d;
    FakeExchange fx;
    MulticastInputs in = requested();
    in.env = env;
    MulticastGroup g;
    MulticastChoice c = run(d, fx, in, &g);
    CHECK(c.decision == MulticastDecision::kOff);
    CHECK(d.total_calls() == 0);  // not even driver_of or the support query
    CHECK(fx.agreements == 0);
    CHECK_FALSE(g.ready);
  }
}

TEST_CASE("requested but not every peer node-local: the driver is never reached") {
  StubDriver d;
  FakeExchange fx;
  MulticastInputs in = requested();
  in.every_peer_node_local = false;
  MulticastGroup g;
  CHECK(run(d, fx, in, &g).decision == MulticastDecision::kOff);
  CHECK(d.total_calls() == 0);
}

TEST_CASE("requested, device unsupported: fallback with the reason, nothing created") {
  StubDriver d;
  d.supported = false;
  FakeExchange fx;
  MulticastGroup g;
  MulticastChoice c = run(d, fx, requested(), &g);
  CHECK(c.decision == MulticastDecision::kOff);
  CHECK(c.reason.find("stub: device without multicast") != std::string::npos);
  CHECK(d.calls["supports"] == 1);
  CHECK(d.calls["create"] == 0);
  CHECK(d.calls["granularity"] == 0);
  CHECK_FALSE(g.ready);
}

TEST_CASE("requested, this device supported but another rank's not: fallback, nothing created") {
  StubDriver d;
  FakeExchange fx;
  fx.peer_fails = 1;  // the support agreement
  MulticastGroup g;
  MulticastChoice c = run(d, fx, requested(), &g);
  CHECK(c.decision == MulticastDecision::kOff);
  CHECK(c.reason.find("another rank's device") != std::string::npos);
  CHECK(d.calls["create"] == 0);
}

TEST_CASE("a backend without a driver (host, HIP): fallback with its reason") {
  FakeExchange fx;
  MulticastGroup g;
  const MulticastDriver *used = nullptr;
  MulticastChoice c = mpix::coll::set_up_bcast_multicast(
      requested(), fx.make(0),
      [](std::string *why) {
        *why = "HIP fallback: HIP has no multicast objects; bcast uses the IPC 'direct' algorithm";
        return static_cast<const MulticastDriver *>(nullptr);
      },
      &g, &used);
  CHECK(c.decision == MulticastDecision::kOff);
  CHECK(c.reason.find("HIP fallback") != std::string::npos);
  CHECK(used == nullptr);
}

TEST_CASE("requested, supported, all local: the root creates once, at the rounded size; release frees all") {
  StubDriver d;
  FakeExchange fx;
  MulticastGroup g;
  MulticastChoice c = run(d, fx, requested(5000), &g);
  CHECK(c.decision == MulticastDecision::kUse);
  CHECK(c.reason.find("data path is not built") != std::string::npos);
  REQUIRE(g.ready);
  CHECK(d.calls["create"] == 1);
  CHECK(d.created_bytes == kUnit);  // 5000 bytes rounded up to the granularity
  CHECK(g.bytes == kUnit);
  CHECK(d.calls["import"] == 0);
  CHECK(d.calls["add"] == 1);
  CHECK(d.calls["bind"] == 1);
  CHECK(d.calls["map"] == 2);  // the multicast object and the rank's own memory
  CHECK(d.calls["close_export"] == 1);
  CHECK(g.mc_va != 0);
  CHECK(g.mem_va != 0);
  mpix::gpu::multicast_release(*d.handed_out, &g);
  CHECK(d.all_released());
  CHECK_FALSE(g.ready);
}

TEST_CASE("a non-root rank imports the root's handle and never creates") {
  StubDriver d;
  FakeExchange fx;
  MulticastGroup g;
  MulticastChoice c = run(d, fx, requested(5000), &g, 2);
  CHECK(c.decision == MulticastDecision::kUse);
  CHECK(d.calls["create"] == 0);
  CHECK(d.calls["export"] == 0);
  CHECK(d.calls["import"] == 1);
  CHECK(g.bytes == kUnit);
  mpix::gpu::multicast_release(d.table, &g);
  CHECK(d.all_released());
}

TEST_CASE("a failure at any step: clean fallback with the reason, everything made so far released") {
  struct Case {
    const char *step;
    int rank;
  };
  for (Case k : {Case{"granularity", 0}, Case{"create", 0}, Case{"export", 0}, Case{"import", 1}, Case{"add", 0},
                 Case{"add", 1}, Case{"allocate", 0}, Case{"bind", 0}, Case{"bind", 1}, Case{"map", 0}, Case{"map", 1}}) {
    CAPTURE(k.step);
    CAPTURE(k.rank);
    StubDriver d;
    d.fail_step = k.step;
    FakeExchange fx;
    MulticastGroup g;
    MulticastChoice c = run(d, fx, requested(), &g, k.rank);
    CHECK(c.decision == MulticastDecision::kOff);
    CHECK(c.reason.find("multicast set-up failed") != std::string::npos);
    CHECK(c.reason.find(std::string("stub ") + k.step + " failed") != std::string::npos);
    CHECK(c.reason.find("bcast uses its normal algorithm") != std::string::npos);
    CHECK_FALSE(g.ready);
    CHECK(d.all_released());
    CHECK(d.calls["release"] == d.handles_made);
    CHECK(d.calls["unmap"] == d.calls["map"] - (k.step == std::string("map") ? 1 : 0));
  }
}

TEST_CASE("another rank's failure: this rank releases what it made and gives the same answer") {
  // Agreements: 1 support, 2 joined, 3 bound and mapped.
  for (int failing_agreement : {2, 3}) {
    CAPTURE(failing_agreement);
    StubDriver d;
    FakeExchange fx;
    fx.peer_fails = failing_agreement;
    MulticastGroup g;
    MulticastChoice c = run(d, fx, requested(), &g, 0);
    CHECK(c.decision == MulticastDecision::kOff);
    CHECK(c.reason.find("another rank") != std::string::npos);
    CHECK(d.calls["create"] == 1);
    CHECK(d.calls["close_export"] == 1);
    CHECK(d.all_released());
  }
}
