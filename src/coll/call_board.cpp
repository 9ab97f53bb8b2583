#include "call_board.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "kernels/coll/args.h"

namespace mpix::coll {
namespace {

// Calls each rank keeps in its ring: a refusing rank's confirmation, and the comparison with a
// peer, need the peer's record of a call it made at most this many calls ago.
constexpr uint64_t kCallsKept = 256;
constexpr uint64_t kBusy = ~0ull;       // an entry being written
constexpr uint64_t kRefusedKind = 0xFF;  // Signature::packed of a refused call
constexpr size_t kMessageBytes = 504;

std::atomic_ref<uint64_t> word(uint64_t &w) { return std::atomic_ref<uint64_t>(w); }
uint64_t load(const uint64_t &w, std::memory_order o = std::memory_order_acquire) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t &>(w)).load(o);
}

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

const char *kind_name(uint64_t k) {
  static const char *names[] = {"allreduce", "reduce", "bcast", "allgather", "alltoall"};
  return k < 5 ? names[k] : "collective";
}
const char *dtype_name(uint64_t d) {
  static const char *names[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "float", "double", "bytes",
                                "float16", "bfloat16"};
  return d < 11 ? names[d] : "?";
}
const char *op_name(uint64_t o) {
  static const char *names[] = {"sum", "prod", "max", "min", "band", "bor", "bxor", ""};
  return o < 8 ? names[o] : "?";
}

void pause(unsigned spin) {
  if (spin < 64) return;
  if (spin < 1024) std::this_thread::yield();
  else std::this_thread::sleep_for(std::chrono::microseconds(50));
}

}  // namespace

struct CallBoard::Entry {
  uint64_t k, digest, count, packed;
};
struct CallBoard::Row {
  uint64_t decided;  // calls this rank has recorded
  uint64_t pad[7];   // the ring starts on the next cache line
  Entry ring[kCallsKept];
};
struct CallBoard::Header {
  uint64_t state;  // 0, 1 while a rank writes the message, 2: failed
  char message[kMessageBytes];
};
uint64_t CallBoard::bytes(int size) {
  static_assert(sizeof(Header) == 512 && sizeof(Row) % 64 == 0, "rows start on cache lines"); return sizeof(Header) + static_cast<uint64_t>(size) * sizeof(Row); }

CallBoard::CallBoard(void *memory, int rank, int size)
    : memory_(static_cast<char *>(memory)), rank_(rank), size_(size) {}

CallBoard::Header *CallBoard::header() const { return reinterpret_cast<Header *>(memory_); }
CallBoard::Row *CallBoard::row(int r) const {
  return reinterpret_cast<Row *>(memory_ + sizeof(Header) + static_cast<uint64_t>(r) * sizeof(Row));
}
uint64_t CallBoard::decided(int r) const { return load(row(r)->decided); }

CallBoard::Signature CallBoard::signature(uint8_t kind, uint8_t dtype, uint8_t op, int root, uint8_t algo,
                                          uint8_t protocol, uint64_t count) {
  Signature s;
  s.count = count;
  s.packed = uint64_t{kind} | uint64_t{dtype} << 8 | uint64_t{op} << 16 | uint64_t{algo & 15u} << 24 |
             uint64_t{protocol & 15u} << 28 | uint64_t{static_cast<uint32_t>(root)} << 32;
  return s;
}

bool CallBoard::read_entry(int r, uint64_t k, uint64_t *digest, Signature *sig) const {
  const Entry &e = row(r)->ring[k % kCallsKept];
  const uint64_t k1 = load(e.k);
  if (k1 != k) return false;
  *digest = load(e.digest, std::memory_order_relaxed);
  sig->count = load(e.count, std::memory_order_relaxed);
  sig->packed = load(e.packed, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return load(e.k, std::memory_order_relaxed) == k;
}

void CallBoard::record(bool refused, const Signature &sig) {
  const uint64_t k = ++calls_;
  const uint64_t packed = refused ? kRefusedKind : sig.packed;
  const uint64_t count = refused ? 0 : sig.count;
  digest_ = mix(digest_ ^ mix(count + 0x9e3779b97f4a7c15ull) ^ (packed * 0xff51afd7ed558ccdull));
  Entry &e = row(rank_)->ring[k % kCallsKept];
  word(e.k).store(kBusy, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  word(e.digest).store(digest_, std::memory_order_relaxed);
  word(e.count).store(count, std::memory_order_relaxed);
  word(e.packed).store(packed, std::memory_order_relaxed);
  word(e.k).store(k, std::memory_order_release);
  word(row(rank_)->decided).store(k, std::memory_order_release);
  if (refused) unconfirmed_ = k;
}

std::string CallBoard::describe(int r, uint64_t k, const Signature &s) const {
  (void)k;
  const uint64_t p = s.packed;
  std::string d = std::string(kind_name(p & 0xFF)) + " of " + std::to_string(s.count) + " x " + dtype_name((p >> 8) & 0xFF);
  if (((p >> 16) & 0xFF) != kNoOp) d += std::string(", ") + op_name((p >> 16) & 0xFF);
  if ((p & 0xFF) == kReduce || (p & 0xFF) == kBcast) d += ", root " + std::to_string(static_cast<int32_t>(p >> 32));
  if ((p >> 24) & 15) d += ", algorithm setting " + std::to_string((p >> 24) & 15);
  if ((p >> 28) & 15) d += ", protocol setting " + std::to_string((p >> 28) & 15);
  return "rank " + std::to_string(r) + ": " + d;
}

core::Result CallBoard::compare(int q, uint64_t k) {
  uint64_t mine = 0, theirs = 0;
  Signature ms, ts;
  if (!read_entry(rank_, k, &mine, &ms) || !read_entry(q, k, &theirs, &ts) || mine == theirs) return core::ok();
  // The first call both rings hold whose records differ: digests cover every call before.
  const uint64_t first = k >= kCallsKept ? k - kCallsKept + 1 : 1;
  uint64_t at = k;
  for (uint64_t i = first; i <= k; ++i) {
    uint64_t a = 0, b = 0;
    Signature sa, sb;
    if (read_entry(rank_, i, &a, &sa) && read_entry(q, i, &b, &sb) && a != b) {
      at = i;
      ms = sa;
      ts = sb;
      break;
    }
  }
  const bool i_refused = ms.packed == kRefusedKind, they_refused = ts.packed == kRefusedKind;
  const std::string call = "call " + std::to_string(at);
  std::string m;
  if (i_refused != they_refused) {
    const int refuser = i_refused ? rank_ : q, enqueuer = i_refused ? q : rank_;
    m = call + " on the communicator was refused on rank " + std::to_string(refuser) + " but enqueued on rank " +
        std::to_string(enqueuer);
  } else if (!i_refused && ms.packed != ts.packed) {
    m = call + " on the communicator has arguments that differ between ranks (" + describe(rank_, at, ms) + "; " +
        describe(q, at, ts) + ")";
  } else if (!i_refused && ms.count != ts.count) {
    m = call + " on the communicator has counts that differ between ranks (" + describe(rank_, at, ms) + "; " +
        describe(q, at, ts) + ")";
  } else {
    m = "the calls of rank " + std::to_string(rank_) + " and rank " + std::to_string(q) + " differ at or before " + call;
  }
  return mark_failed(m);
}

core::Result CallBoard::mark_failed(const std::string &message) {
  Header *h = header();
  uint64_t expected = 0;
  if (word(h->state).compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    std::memset(h->message, 0, kMessageBytes);
    std::memcpy(h->message, message.data(), std::min(message.size(), kMessageBytes - 1));
    word(h->state).store(2, std::memory_order_release);
  }
  return failure();
}

void CallBoard::fail(const std::string &why) { mark_failed(why); }

core::Result CallBoard::failure() const {
  Header *h = header();
  uint64_t st = load(h->state);
  if (st == 0) return core::ok();
  for (unsigned spin = 0; st == 1; ++spin) {  // another rank is writing the message
    pause(spin);
    st = load(h->state);
  }
  return core::fail(MPI_ERR_OTHER, "the stream collectives of this communicator failed: " + std::string(h->message) +
                                       ", so the ranks' rounds are out of step; every later stream collective on "
                                       "the communicator is refused (use a new communicator)");
}

core::Result CallBoard::check_before_enqueue(uint64_t watchdog_ns) {
  if (core::Result r = failure()) return r;
  if (unconfirmed_) {
    // This rank refused call j: it runs no more rounds until every rank has recorded call j and
    // their records up to j equal this rank's (they refused it too).
    const uint64_t j = unconfirmed_;
    const auto start = std::chrono::steady_clock::now();
    for (int q = 0; q < size_; ++q) {
      if (q == rank_) continue;
      for (unsigned spin = 0; decided(q) < j; ++spin) {
        if (core::Result r = failure()) return r;
        const auto waited = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
        if (watchdog_ns && static_cast<uint64_t>(waited.count()) > watchdog_ns)
          return mark_failed("call " + std::to_string(j) + " on the communicator was refused on rank " +
                             std::to_string(rank_) + ", and rank " + std::to_string(q) + " had not made it within " +
                             std::to_string(watchdog_ns / 1000000) + " ms (MPIX_ST_WATCHDOG_MS) to show it refused it too");
        pause(spin);
      }
      uint64_t theirs = 0;
      Signature ts;
      if (!read_entry(q, j, &theirs, &ts))
        return mark_failed("call " + std::to_string(j) + " on the communicator was refused on rank " +
                           std::to_string(rank_) + ", and rank " + std::to_string(q) + " ran more than " +
                           std::to_string(kCallsKept) + " calls past it before this rank could tell what it did there");
      if (core::Result r = compare(q, j)) return r;
    }
    unconfirmed_ = 0;
    return core::ok();
  }
  if (size_ < 2) return core::ok();
  // One peer a call, in turn: its latest record that this rank has too.
  const int q = static_cast<int>((rank_ + 1 + peer_turn_++ % static_cast<uint64_t>(size_ - 1)) % size_);
  const uint64_t k = std::min(decided(q), calls_);
  return k ? compare(q, k) : core::ok();
}

}  // namespace mpix::coll
