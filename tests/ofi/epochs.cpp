// Two ranks, the inter-node epoch path of [Namashivayam 2023] §5.1 without the stream: rank 0 posts
// every epoch's triggered puts up front (one trigger counter, thresholds 1..kEpochs), each epoch's
// puts chained to a triggered atomic add on rank 1's flag (trigger: the puts' completion counter)
// and, where the provider has it, an atomic write of the epoch number. Then, epoch by epoch, rank 0
// writes the epoch's data and rings a doorbell word that a DoorbellAgent watches, as a stream
// would; the last two epochs are rung by one store. Rank 1 waits for its flag (bounded) and checks
// every byte. Plain MPI only for the exchange of addresses and keys.
//
//   --expect-no-provider  MPIX_ST_OFI_PROVIDER names no usable provider: passes when the error
//                         names each provider tried.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "transport/ofi/doorbell_agent.h"
#include "transport/ofi/fabric.h"

using namespace mpix::ofi;

namespace {

constexpr uint64_t kEpochs = 6;
constexpr size_t kDataBytes = 2u << 20;
constexpr unsigned char kUntouched = 0xEE;
constexpr auto kWaitLimit = std::chrono::seconds(15);

struct Segment {
  size_t offset, bytes;
};
// Sizes from one byte to 1 MiB, odd sizes and unaligned offsets; gaps between them stay untouched.
constexpr Segment kSegments[] = {{0, 1}, {64, 4099}, {8192 + 3, 65536}, {1u << 20, 1u << 20}};
constexpr uint64_t kPutsPerEpoch = std::size(kSegments);

int g_rank = 0;

[[noreturn]] void fail(const std::string &what) {
  std::fprintf(stderr, "[rank %d] FAIL: %s\n", g_rank, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void check(bool ok, const std::string &what) {
  if (!ok) fail(what);
}

unsigned char pattern(uint64_t epoch, size_t i) { return static_cast<unsigned char>(i * 131 + epoch * 29 + 7); }

uint64_t load(uint64_t &w) { return std::atomic_ref<uint64_t>(w).load(std::memory_order_acquire); }

int expect_no_provider() {
  Options o;
  std::string why;
  check(options_from_env(&o, &why), why);
  if (Fabric::open(o, &why)) fail("the fabric opened with MPIX_ST_OFI_PROVIDER=" + o.providers);
  if (g_rank == 0) std::printf("open failed as expected: %s\n", why.c_str());
  size_t start = 0;
  while (start <= o.providers.size()) {
    size_t end = std::min(o.providers.find(',', start), o.providers.size());
    std::string name = o.providers.substr(start, end - start);
    check(name.empty() || why.find(name + ": ") != std::string::npos, "the error does not name " + name);
    start = end + 1;
  }
  return 0;
}

template <typename T>
std::vector<T> allgather(const T &mine, int size) {
  std::vector<T> all(size);
  MPI_Allgather(&mine, sizeof(T), MPI_BYTE, all.data(), sizeof(T), MPI_BYTE, MPI_COMM_WORLD);
  return all;
}

struct Address {
  uint32_t bytes = 0;
  uint8_t data[256] = {};
};

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1 && std::strcmp(argv[1], "--expect-no-provider") == 0) {
    int rc = expect_no_provider();
    MPI_Finalize();
    return rc;
  }
  check(size == 2, "run with 2 ranks");

  Options options;
  std::string why;
  check(options_from_env(&options, &why), why);
  std::unique_ptr<Fabric> fabric = Fabric::open(options, &why);
  check(fabric != nullptr, why);
  if (g_rank == 0)
    std::printf("provider %s, trigger style %s (probe: %s), %s progress%s, atomic write %s, triggered-op limit %llu\n",
                fabric->provider().c_str(), style_name(fabric->trigger_style()), fabric->probe_report().c_str(),
                fabric->manual_progress() ? "manual" : "auto",
                fabric->needs_progress() ? " driven by the agent" : "", fabric->supports_atomic_write() ? "yes" : "no",
                static_cast<unsigned long long>(fabric->triggered_op_limit()));

  // Addresses and regions, exchanged with plain MPI.
  Address mine;
  std::vector<uint8_t> name = fabric->local_address();
  check(!name.empty() && name.size() <= sizeof mine.data, "local address of " + std::to_string(name.size()) + " bytes");
  mine.bytes = static_cast<uint32_t>(name.size());
  std::memcpy(mine.data, name.data(), name.size());
  std::vector<std::vector<uint8_t>> addresses;
  for (const Address &a : allgather(mine, size)) addresses.emplace_back(a.data, a.data + a.bytes);
  check(fabric->insert_peers(addresses) && fabric->peer_count() == size, fabric->last_error());

  auto *data = static_cast<unsigned char *>(std::aligned_alloc(4096, kDataBytes));
  alignas(64) static uint64_t flags[8] = {};  // [0] signal count, [1] last epoch written
  std::memset(data, kUntouched, kDataBytes);
  Region data_region = fabric->register_memory(data, kDataBytes);
  Region flag_region = fabric->register_memory(flags, sizeof flags);
  check(data_region && flag_region, fabric->last_error());
  std::vector<RemoteRegion> remote_data = allgather(fabric->remote(data_region), size);
  std::vector<RemoteRegion> remote_flags = allgather(fabric->remote(flag_region), size);
  const bool atomic_write = fabric->supports_atomic_write();
  DoorbellAgent agent(*fabric);  // every rank: the target's agent drives progress where needed

  Counter trig, put_done, sig_done;
  alignas(8) static uint64_t bell = 0;
  if (g_rank == 0) {
    trig = fabric->make_counter();
    put_done = fabric->make_counter();
    sig_done = fabric->make_counter();
    check(trig && put_done && sig_done, fabric->last_error());
    for (uint64_t e = 1; e <= kEpochs; ++e) {
      for (const Segment &s : kSegments)
        check(fabric->triggered_put(data + s.offset, s.bytes, data_region, 1, remote_data[1], s.offset,
                                    Trigger{trig, e, put_done}) == kOk,
              "triggered_put: " + fabric->last_error());
      Trigger after_puts{put_done, e * kPutsPerEpoch, sig_done};
      check(fabric->triggered_atomic_add_u64(1, 1, remote_flags[1], 0, after_puts) == kOk,
            "triggered_atomic_add_u64: " + fabric->last_error());
      if (atomic_write)
        check(fabric->triggered_atomic_write_u64(e, 1, remote_flags[1], 8, after_puts) == kOk,
              "triggered_atomic_write_u64: " + fabric->last_error());
    }
    // The host knows what its enqueued epochs will ring: the agent polls closely until then.
    check(agent.arm(agent.watch(&bell, trig), kEpochs), "arm");
  }
  MPI_Barrier(MPI_COMM_WORLD);  // everything is posted, nothing rung
  if (g_rank == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    check(load(flags[0]) == 0 && load(flags[1]) == 0, "a signal arrived before any doorbell");
    for (size_t i = 0; i < kDataBytes; ++i)
      if (data[i] != kUntouched) fail("byte " + std::to_string(i) + " changed before any doorbell");
  }
  MPI_Barrier(MPI_COMM_WORLD);

  uint64_t epoch = 0;
  while (epoch < kEpochs) {
    // The last two epochs are rung together: one doorbell store of +2.
    const uint64_t next = epoch + 1 == kEpochs - 1 ? kEpochs : epoch + 1;
    if (g_rank == 0) {
      for (const Segment &s : kSegments)
        for (size_t i = 0; i < s.bytes; ++i) data[s.offset + i] = pattern(next, s.offset + i);
      std::atomic_ref<uint64_t>(bell).store(next, std::memory_order_release);  // the stream's doorbell
    } else {
      auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
      while (load(flags[0]) < next) {
        if (std::chrono::steady_clock::now() > deadline)
          fail("epoch " + std::to_string(next) + ": flag at " + std::to_string(load(flags[0])) + " after " +
               std::to_string(kWaitLimit.count()) + " s");
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
      check(load(flags[0]) == next, "epoch " + std::to_string(next) + ": flag at " + std::to_string(load(flags[0])));
      size_t bad = 0, first_bad = 0;
      size_t cursor = 0;
      for (const Segment &s : kSegments) {
        for (; cursor < s.offset; ++cursor)
          if (data[cursor] != kUntouched && !bad++) first_bad = cursor;
        for (; cursor < s.offset + s.bytes; ++cursor)
          if (data[cursor] != pattern(next, cursor) && !bad++) first_bad = cursor;
      }
      for (; cursor < kDataBytes; ++cursor)
        if (data[cursor] != kUntouched && !bad++) first_bad = cursor;
      check(bad == 0, "epoch " + std::to_string(next) + ": " + std::to_string(bad) + " wrong bytes, first at " +
                          std::to_string(first_bad));
      if (atomic_write) {
        // A signal of its own: seeing the add says nothing of it. Two written by epochs rung
        // together may land in either order.
        auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
        while (load(flags[1]) < epoch + 1 && std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::microseconds(20));
        uint64_t w = load(flags[1]);
        check(w == next || (next != epoch + 1 && w == epoch + 1),
              "epoch " + std::to_string(next) + ": atomic write left " + std::to_string(w));
      }
      std::printf("[rank 1] epoch %llu: flag %llu, %llu puts of %zu..%zu bytes checked byte for byte\n",
                  static_cast<unsigned long long>(next), static_cast<unsigned long long>(load(flags[0])),
                  static_cast<unsigned long long>((next - epoch) * kPutsPerEpoch), kSegments[0].bytes,
                  kSegments[kPutsPerEpoch - 1].bytes);
      std::fflush(stdout);
    }
    epoch = next;
    MPI_Barrier(MPI_COMM_WORLD);  // rank 0 overwrites its data only once rank 1 has checked it
  }

  if (g_rank == 0) {
    const uint64_t signals = kEpochs * (atomic_write ? 2 : 1);
    check(fabric->wait(sig_done, signals, 15000) == kOk, "signal completions: " + fabric->last_error());
    check(fabric->read(put_done) == kEpochs * kPutsPerEpoch, "put completions " + std::to_string(fabric->read(put_done)));
    check(fabric->read_errors(trig) + fabric->read_errors(put_done) + fabric->read_errors(sig_done) == 0,
          "operations failed");
    check(fabric->pending_ops() == 0, std::to_string(fabric->pending_ops()) + " operations still pending");
    check(agent.forwarded() == kEpochs && agent.error().empty(),
          "doorbell agent forwarded " + std::to_string(agent.forwarded()) + " " + agent.error());
    std::printf("[rank 0] %llu epochs, %llu puts and %llu signals complete, %llu doorbell increments forwarded\n",
                static_cast<unsigned long long>(kEpochs), static_cast<unsigned long long>(kEpochs * kPutsPerEpoch),
                static_cast<unsigned long long>(signals), static_cast<unsigned long long>(agent.forwarded()));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  check(fabric->deregister(data_region) && fabric->deregister(flag_region), fabric->last_error());
  std::free(data);
  if (g_rank == 0) std::printf("PASS\n");
  MPI_Finalize();
  return 0;
}
