// The schedules of the node-local collectives (coll_args.h), written once over an executor so the
// host backend and the device kernel run the same steps:
//   x.ok()                    false once a wait timed out: the rest of the call is skipped
//   x.cursor()                rounds this communicator ran before this call
//   x.wait(flag, v, peer)     until *flag >= v (acquire, system scope)
//   x.wait_all(first, peers, v)  until first[q] >= v for every bit q of `peers`, the waits
//                             overlapping where the executor can
//   x.copy(dst, src, bytes)   shared by the threads that run the channel (a device block)
//   x.reduce(dsts, nd, srcs, ns, n)  dsts[k][i] = op over srcs[0..ns)[i], in that order, for i < n
//                             (dsts and srcs indexable, as the per-piece arguments below)
//   x.barrier()               the channel's copies and reductions before it are done and visible
//                             at system scope
//   x.signal(flag, v)         *flag = v (release, system scope), stored once
//   x.signal_each(peers, v, address_of)  *address_of(q) = v for every bit q of `peers`, stored
//                             once each, the stores overlapping where the executor can; for
//                             stores that announce reads done (freed), which need no release
//   x.load(word)              a flag word of this rank, as every thread sees it
//   x.set(word, v)            *word = v, stored once, even after a timeout
//   x.finish(cursor)          once per executor (each block): once every channel of the call is
//                             done, the communicator's cursor becomes `cursor`
//   x.table()                 the PeerTable (a.table, or a copy the executor keeps nearer)
// and for the kLL protocol (coll_lines.h), each over units of 8 payload bytes:
//   x.put_lines(lines, src, bytes, r)      src's bytes as lines tagged for round r
// Per-piece arguments (lines, srcs, dsts, peers, outs) are anything indexable: arrays, or
// Indexed functions of the piece (below), which the kLL paths pass so that no array of peer
// addresses is built in a thread's local memory (see run_lines_call).
//   x.put_lines_each(lines, srcs, k, bytes, r)  the same for pieces j < k (srcs[j] to lines[j]),
//                             the pieces' stores overlapping where the executor can; a unit of
//                             a source may be read by any thread (settle before overwriting it)
//   x.get_lines(dsts, lines, peers, k, bytes, r)  for pieces j < k: waits for each line of round r
//                             from peers[j] at lines[j], stores its payload at dsts[j]
//   x.reduce_lines(dst, outs, no, srcs, ns, own, n, r)  dst[i] (dst may be null) and lines of
//                             round r at outs[0..no) = op over sources in order: srcs[own] is
//                             memory, srcs[s] (s != own) lines of round r from rank s
//   x.settle()                the channel's steps before it are done (no fence)
// Sources are reduced in rank order on every rank, so every rank computes bit-identical results.
#pragma once
#include <cstdint>
#include <type_traits>

#include "coll_args.h"
#include "coll_lines.h"
#include "half_float.h"

namespace mpix::coll {

// Node-local communicators the schedules handle (peer masks are 64-bit words).
constexpr int kMaxRanks = 64;

// Scratch slots are whole multiples of this, so vector copies stay aligned.
constexpr uint64_t kSlotAlign = 64;

// Piece k's value as at(k), indexable like an array without being one.
template <class F>
struct Indexed {
  F at;
  MPIX_HOST_DEVICE auto operator[](int k) const { return at(k); }
};
template <class F>
MPIX_HOST_DEVICE Indexed<F> indexed(F f) {
  return Indexed<F>{f};
}
// The same value for every piece.
template <class T>
MPIX_HOST_DEVICE auto same(T v) {
  return indexed([v](int) { return v; });
}
// Two pieces: first, then second.
template <class T>
MPIX_HOST_DEVICE auto pair_of(T first, T second) {
  return indexed([first, second](int k) { return k == 0 ? first : second; });
}

// Chunks of the pipelined chains, bcast's and reduce's (seed 003's chunk model; 512 KiB by
// default there).
constexpr uint64_t kChainChunkBytes = 512 * 1024;

// Two-shot allreduce and reduce: a reduce-scatter, then the parts pushed to every rank or the root.
MPIX_HOST_DEVICE inline bool is_two_shot(uint8_t kind, uint8_t algo) {
  return algo == kTwoShot && (kind == kAllreduce || kind == kReduce);
}

// Pipelined chains, bcast's and reduce's: one slot per half, a chunk of at most kChainChunkBytes.
MPIX_HOST_DEVICE inline bool is_chain(uint8_t kind, uint8_t algo) {
  return algo == kChain && (kind == kBcast || kind == kReduce);
}

// Slots a scratch half is cut into, and bytes of one (a multiple of kSlotAlign).
MPIX_HOST_DEVICE inline uint64_t slot_count(uint8_t kind, uint8_t algo, int n) {
  if (kind == kBcast || is_chain(kind, algo)) return 1;
  if (is_two_shot(kind, algo)) return 2 * static_cast<uint64_t>(n);  // n sources' parts, n results
  if (kind != kAllreduce) return n;  // reduce, allgather, alltoall: one slot per source
  switch (algo) {
    case kRing: return n > 1 ? 2 * static_cast<uint64_t>(n - 1) : 1;  // one per step
    case kGsb:
    case kBtb: return static_cast<uint64_t>(n) + 1;  // n sources' partials, the result
    default: return n;
  }
}
MPIX_HOST_DEVICE inline uint64_t slot_bytes(uint8_t kind, uint8_t algo, int n, uint64_t half_bytes) {
  uint64_t slot = half_bytes / slot_count(kind, algo, n) / kSlotAlign * kSlotAlign;
  if (is_chain(kind, algo) && slot > kChainChunkBytes) slot = kChainChunkBytes;
  return slot;
}

// Elements one round moves (of the vector, or of each rank's block); 0: the scratch is too small.
// Algorithms that cut the round into n parts move n slots' worth.
MPIX_HOST_DEVICE inline uint64_t round_capacity(uint8_t kind, uint8_t algo, int n, uint64_t half_bytes, uint32_t elem) {
  const uint64_t per_slot = slot_bytes(kind, algo, n, half_bytes) / elem;
  const bool parts = is_two_shot(kind, algo) || (kind == kAllreduce && algo == kRing && n > 1);
  return parts ? per_slot * n : per_slot;
}

// Channels (coll_args.h): each region is an equal, aligned share of both scratch halves.
MPIX_HOST_DEVICE inline uint64_t channel_half_bytes(uint64_t half_bytes, uint32_t channels) {
  return half_bytes / channels / kSlotAlign * kSlotAlign;
}

// Allgather and alltoall use at most this much of each half, however large the scratch: on
// 4 H200s their 128 MiB calls lost 3-6% of bus bandwidth with 32 MiB halves and 15-18% with
// 64 MiB (bigger rounds, fewer of them to overlap), where the ring allreduce gained 38% with 32.
// Alltoall takes half of that again: on 4 H100s (one job, halves set by MPIX_ST_COLL_SCRATCH_KIB)
// its 128 MiB calls took 370 us with 8 MiB, 401-446 with 16 and 519 with 4 (NCCL 345-358), 64 MiB
// ones 208 against 218-230; the ring allgather took 405-410 us with 8 MiB against 338-346 with 16.
constexpr uint64_t kGatherHalfMaxBytes = uint64_t(16) << 20;
constexpr uint64_t kAlltoallHalfMaxBytes = uint64_t(8) << 20;
MPIX_HOST_DEVICE inline uint64_t used_half_bytes(uint8_t kind, uint64_t half_bytes) {
  const uint64_t most = kind == kAlltoall    ? kAlltoallHalfMaxBytes
                        : kind == kAllgather ? kGatherHalfMaxBytes
                                             : half_bytes;
  return half_bytes > most ? most : half_bytes;
}
// A channel's share of the part of a half the call uses: the host sizes rounds by it, the
// schedule addresses its region with it, so both come from here.
MPIX_HOST_DEVICE inline uint64_t call_channel_half_bytes(const Args &a) {
  return channel_half_bytes(used_half_bytes(a.kind, a.half_bytes), region_count(a));
}

// Element-wise operators of the reductions, shared by host and device code. Half types reach them
// as float (ReduceIn in half_float.h).
template <typename T>
MPIX_HOST_DEVICE inline T reduce_op(uint8_t op, T a, T b) {
  switch (op) {
    case kSum: return a + b;
    case kProd: return a * b;
    case kMax: return a > b ? a : b;
    case kMin: return a < b ? a : b;
    default: break;
  }
  if constexpr (std::is_integral<T>::value) {
    switch (op) {
      case kBand: return a & b;
      case kBor: return a | b;
      default: return a ^ b;
    }
  }
  return b;  // bitwise operators on floating point are refused before enqueue
}

// Calls fn(Type<T>{}) with the element type of a reduction's dtype code (nothing for kBytes).
template <typename T>
struct Type {
  using type = T;
};
template <typename Fn>
MPIX_HOST_DEVICE inline void with_reduce_type(uint8_t dtype, Fn &&fn) {
  switch (dtype) {
    case kInt8: return fn(Type<int8_t>{});
    case kUint8: return fn(Type<uint8_t>{});
    case kInt32: return fn(Type<int32_t>{});
    case kUint32: return fn(Type<uint32_t>{});
    case kInt64: return fn(Type<int64_t>{});
    case kUint64: return fn(Type<uint64_t>{});
    case kFloat: return fn(Type<float>{});
    case kDouble: return fn(Type<double>{});
    case kHalf: return fn(Type<Float16>{});
    case kBfloat16: return fn(Type<Bfloat16>{});
    default: return;
  }
}

// One unit (8 bytes) of a reduction over line payloads: fetch(s, &word) gives source s's payload
// (false: its wait failed, and the unit is dropped). Elements combine as ReduceIn<T>::Acc in source
// order and are rounded once, as the kSimple reduction does, so both protocols give the same bits.
template <typename T, typename Fetch>
MPIX_HOST_DEVICE inline bool reduce_unit(uint8_t op, int nsrc, Fetch &&fetch, uint64_t *out) {
  using In = ReduceIn<T>;
  using Acc = typename In::Acc;
  constexpr int kLanes = static_cast<int>(kLinePayload / sizeof(T));
  union Unit {
    uint64_t word;
    T lane[kLanes];
  } u;
  Acc acc[kLanes];
  if (!fetch(0, &u.word)) return false;
  for (int l = 0; l < kLanes; ++l) acc[l] = In::load(u.lane[l]);
  for (int s = 1; s < nsrc; ++s) {
    if (!fetch(s, &u.word)) return false;
    for (int l = 0; l < kLanes; ++l) acc[l] = reduce_op<Acc>(op, acc[l], In::load(u.lane[l]));
  }
  for (int l = 0; l < kLanes; ++l) u.lane[l] = In::store(acc[l]);
  *out = u.word;
  return true;
}

// kLL: slots of a channel's line area (one per source; two-shot adds one per result part), the
// bytes of lines each gets, and elements a round moves then (two-shot: n parts of a slot each).
MPIX_HOST_DEVICE inline uint64_t line_slot_count(uint8_t kind, uint8_t algo, int n) {
  return (is_two_shot(kind, algo) ? 2 : 1) * static_cast<uint64_t>(n);
}
MPIX_HOST_DEVICE inline uint64_t line_slot_bytes(uint8_t kind, uint8_t algo, int n, uint64_t line_region_bytes) {
  return line_region_bytes / line_slot_count(kind, algo, n) / kSlotAlign * kSlotAlign;
}
MPIX_HOST_DEVICE inline uint64_t line_round_capacity(uint8_t kind, uint8_t algo, int n, uint64_t line_region_bytes,
                                                     uint32_t elem) {
  const uint64_t per_slot = line_slot_bytes(kind, algo, n, line_region_bytes) / kLineBytes * kLinePayload / elem;
  return is_two_shot(kind, algo) ? per_slot * n : per_slot;
}

// What every channel of a call computes from its arguments, computed once by the host into them.
// A 64-bit division is a chain of dependent instructions that one thread runs for about 0.1 us:
// on one H200 a one-rank 8-byte reduce's kernel spent 0.75 us of its 1.6 before its first step
// (this arithmetic and the cursor load); with it done here the replayed call took 1.75 us, not 2.06.
// Every round but the last is full (rounds = count / (channels x round_elems), rounded up), and in
// a full round each channel takes round_elems; the last round's elements are split evenly in
// channel order into 64-byte multiples, so channels left without elements still run its waits and
// signals and their flags stay in step.
MPIX_HOST_DEVICE inline void set_geometry(Args &a) {
  a.channel_half = call_channel_half_bytes(a);
  a.slot = slot_bytes(a.kind, a.algo, a.size, a.channel_half);
  a.line_slot = a.proto == kLL ? line_slot_bytes(a.kind, a.algo, a.size, a.line_region_bytes) : 0;
  const uint64_t channels = channel_count(a), cap = a.round_elems, full = channels * cap;
  const uint64_t start = a.rounds ? (a.rounds - 1) * full : 0;
  const uint64_t total = a.count - start < full ? a.count - start : full;
  const uint64_t align = kSlotAlign / elem_size(a.dtype);
  uint64_t share = (total + channels - 1) / channels;
  share = (share + align - 1) / align * align;
  a.last_share = share > cap ? cap : share;
}

// A call's path: the steps its schedule can take. A device backend runs each path as a kernel of
// its own (coll_paths.h), every step inlined, so that the schedule, its executor and the call's
// arguments stay in registers (Schedule::run_lines_call says why); one kernel holding every
// reduction's steps took ptxas more than ten minutes to compile. The host backend runs the same
// schedules through run_schedule.
enum class Path {
  kMoves,          // kSimple calls that reduce nothing: bcast, allgather, alltoall, local copies
  kLines,          // kLL: one-shot allreduce and reduce, direct bcast, allgather, alltoall
  kTwoShotLines,   // kLL two-shot allreduce and reduce
  kTwoShot,        // kSimple two-shot allreduce and reduce
  kRing,           // kSimple ring allreduce
  kChainReduce,    // kSimple pipelined chain reduce
  kOneShot,        // kSimple one-shot allreduce and direct reduce
  kReduce,         // other kSimple reductions: GSB, BTB, local reductions
};
// Every path, and fn(PathTag<P>{}) called for the path p names: the one enumeration that the host
// schedule, the kernel launch and the kernels' checks dispatch through.
constexpr Path kPaths[] = {Path::kMoves,   Path::kLines,       Path::kTwoShotLines, Path::kTwoShot,
                           Path::kRing,    Path::kChainReduce, Path::kOneShot,      Path::kReduce};
template <Path P>
using PathTag = std::integral_constant<Path, P>;
template <class Fn>
MPIX_HOST_DEVICE decltype(auto) with_path(Path p, Fn &&fn) {
  switch (p) {
    case Path::kLines: return fn(PathTag<Path::kLines>{});
    case Path::kTwoShotLines: return fn(PathTag<Path::kTwoShotLines>{});
    case Path::kTwoShot: return fn(PathTag<Path::kTwoShot>{});
    case Path::kRing: return fn(PathTag<Path::kRing>{});
    case Path::kChainReduce: return fn(PathTag<Path::kChainReduce>{});
    case Path::kOneShot: return fn(PathTag<Path::kOneShot>{});
    case Path::kReduce: return fn(PathTag<Path::kReduce>{});
    case Path::kMoves: break;
  }
  return fn(PathTag<Path::kMoves>{});
}

MPIX_HOST_DEVICE inline Path path_of(const Args &a) {
  if (a.proto == kLL) return is_two_shot(a.kind, a.algo) ? Path::kTwoShotLines : Path::kLines;
  if (a.kind == kLocalReduce) return Path::kReduce;
  if (a.kind != kAllreduce && a.kind != kReduce) return Path::kMoves;
  if (a.algo == kTwoShot) return Path::kTwoShot;
  if (a.kind == kAllreduce && a.algo == kRing && a.size > 1) return Path::kRing;
  if (is_chain(a.kind, a.algo)) return Path::kChainReduce;
  if (a.kind == kAllreduce && (a.algo == kGsb || a.algo == kBtb)) return Path::kReduce;
  return Path::kOneShot;
}

namespace detail {

struct Round {
  uint64_t r;       // the round's number (1-based, communicator-wide)
  uint64_t first;   // first element of the round
  uint64_t elems;   // elements of the round
};

template <class X>
class Schedule {
 public:
  // Channel `channel` of the call: its rounds follow the channel's own count.
  MPIX_HOST_DEVICE Schedule(X &x, const Args &a, uint32_t channel)
      : x_(x), a_(a), t_(x.table()), n_(a.size), me_(a.rank),
        esize_(elem_size(a.dtype)), channel_(channel),
        base_(x.load(flags(a.rank) + FlagLayout::channel_cursor(a.size))) {}

  // The channel's rounds of a kSimple call of path P, then its count advanced (after the last
  // round's barrier: every thread read the old count long before).
  template <Path P>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void run() {
    run_rounds<P>();
    advance();
  }
  // Every kLL call (one-shot and two-shot allreduce and reduce, direct bcast, allgather and
  // alltoall; Path::kLines and kTwoShotLines). Like run(), every step inlined, so that on a device
  // the schedule, its executor and the call's arguments stay in registers. A schedule object that
  // an outlined step receives lives in a thread's local memory, and so does every array of peer
  // addresses a step builds: on 4 H100s a chain of replayed one-shot reduces took 1.25 us a call
  // with neither and 2.2-6.3 us with one to eight such arrays read on the way
  // (examples/bench/call_chain_cuda.cu).
  template <bool TwoShot>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_lines_call() {
    if (TwoShot) run_two_shot_lines();
    else run_lines();
    advance();
  }

 private:
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void advance() {
    x_.set(flags(me_) + FlagLayout::channel_cursor(n_), base_ + a_.rounds);
  }
  template <Path P>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_rounds() {
    if constexpr (P == Path::kMoves)
      if ((a_.kind == kAllgather && a_.algo != kRing) || a_.kind == kAlltoall) return gather_pipelined(a_.kind == kAlltoall);
    for (uint64_t i = 0; i < a_.rounds && x_.ok(); ++i) {
      const Round rd = round(i);
      step<P>(rd);
      // A direct bcast's root read no scratch since its round's barrier: its freed signals need
      // no second one.
      if (a_.kind == kBcast && a_.algo != kChain && a_.algo != kBinomial && me_ == a_.root) signal_freed(rd.r);
      else end_round(rd.r);
    }
  }
  // Round rd's steps on path P (path_of chose P by the call's kind and algorithm).
  template <Path P>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void step(const Round &rd) {
    const bool all = a_.kind == kAllreduce;
    if constexpr (P == Path::kTwoShot) {
      two_shot(rd, all);
    } else if constexpr (P == Path::kRing) {
      allreduce_ring(rd);
    } else if constexpr (P == Path::kChainReduce) {
      reduce_chain(rd);
    } else if constexpr (P == Path::kOneShot) {
      reduce_one_shot(rd, all);
    } else if constexpr (P == Path::kReduce) {
      if (a_.kind == kLocalReduce) local_reduce(rd);
      else if (a_.algo == kGsb) allreduce_gsb(rd);
      else allreduce_btb(rd);
    } else if (a_.kind == kBcast) {
      if (a_.algo == kChain) bcast_chain(rd);
      else if (a_.algo == kBinomial) bcast_binomial(rd);
      else bcast(rd);
    } else if (a_.kind == kAllgather) {
      allgather_ring(rd);
    } else {
      local_copy(rd);
    }
  }

  // This channel's slice of round i (0-based): a round moves up to channels x round_elems
  // elements, each channel its share of them in channel order (set_geometry).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE Round round(uint64_t i) const {
    const uint64_t full = channel_count(a_) * a_.round_elems, start = i * full;
    const uint64_t total = a_.count - start < full ? a_.count - start : full;
    const uint64_t share = i + 1 == a_.rounds ? a_.last_share : a_.round_elems;
    const uint64_t skip = channel_ * share < total ? channel_ * share : total;
    return Round{base_ + i + 1, start + skip, total - skip < share ? total - skip : share};
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE char *scratch(int rank, uint64_t r) const {
    return reinterpret_cast<char *>(t_[rank].scratch) + (r & 1) * a_.half_bytes + channel_ * a_.channel_half;
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE uint64_t *flags(int rank) const {
    return reinterpret_cast<uint64_t *>(t_[rank].flags) + channel_ * FlagLayout::words(n_);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE uint64_t slot_bytes() const { return a_.slot; }
  // kLL: this channel's line area in `rank`'s scratch for round r, after both halves.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE char *lines(int rank, uint64_t r) const {
    return reinterpret_cast<char *>(t_[rank].scratch) + 2 * a_.half_bytes + (2 * channel_ + (r & 1)) * a_.line_region_bytes;
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE const char *send() const { return reinterpret_cast<const char *>(a_.sendbuf); }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE char *recv() const { return reinterpret_cast<char *>(a_.recvbuf); }

  MPIX_HOST_DEVICE MPIX_FORCEINLINE int mod(int v) const { return ((v % n_) + n_) % n_; }
  // The k-th peer (k = 1 .. n - 1) a rank pushes to when it pushes to all: me + k. Every rank
  // starting at rank 0 made each step an incast (n - 1 writers into one GPU while the others'
  // links idled); rotated, each step is a permutation, one writer per receiver.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE int push_peer(int k) const { return mod(me_ + k); }
  // Rank of virtual rank v in a tree or chain rooted at the root.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE int real(int v) const { return mod(v + a_.root); }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE int virt() const { return mod(me_ - a_.root); }
  // Binomial tree over virtual ranks: v's parent is v less its lowest set bit; its children are
  // v + m for the powers of two m below that bit (below n for the root).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE static int lowest_bit(int v) { return v & -v; }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE int tree_parent() const { return real(virt() - lowest_bit(virt())); }
  // Calls fn(child rank) for v's children, nearest first.
  template <class F>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void tree_children(F &&fn) const {
    const int v = virt(), limit = v ? lowest_bit(v) : n_;
    for (int m = 1; m < limit && v + m < n_; m <<= 1) fn(real(v + m));
  }
  // The j-th child tree_children names (j = 0: the nearest).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE int tree_child(int j) const { return real(virt() + (1 << j)); }

  // May this rank write round r into `peer`'s scratch?
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void wait_freed(int peer, uint64_t r) { x_.wait(flags(me_) + FlagLayout::freed(peer, n_), r, peer); }
  // The same for every peer in the mask at once (bit q: rank q); a push then never waits mid-way.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void wait_freed_all(uint64_t peers, uint64_t r) {
    x_.wait_all(flags(me_) + FlagLayout::freed(0, n_), peers, r);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE uint64_t all_peers() const {
    return (n_ >= 64 ? ~uint64_t(0) : (uint64_t(1) << n_) - 1) & ~(uint64_t(1) << me_);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void wait_arrived(int step, int peer, uint64_t r) {
    x_.wait(flags(me_) + FlagLayout::arrive(step, peer, n_), r, peer);
  }
  // The same for every peer in the mask at once (arrive flags of one step are consecutive by source).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void wait_arrived_all(int step, uint64_t peers, uint64_t r) {
    x_.wait_all(flags(me_) + FlagLayout::arrive(step, 0, n_), peers, r);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void tell_arrived(int step, int peer, uint64_t r) {
    x_.signal(flags(peer) + FlagLayout::arrive(step, me_, n_), r);
  }
  // After its last read of its own scratch half: every peer may write round r + 2 into it. Every
  // store of the round into a peer's scratch was fenced before the arrival that announced it, and
  // every read of this rank's scratch was used (its value stored or reduced) before the block
  // barrier, so, as in the kLL rounds, the freed signals need no fence (a system fence here cost
  // every call of the `simple` protocol one on its last round's path). Local steps keep the fence:
  // what reads their results next is not a peer waiting on a flag.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void end_round(uint64_t r) {
    if (a_.kind == kLocalReduce || a_.kind == kLocalCopy) x_.barrier();
    else x_.settle();
    signal_freed(r);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void signal_freed(uint64_t r) {
    x_.signal_each(all_peers(), r + 2, [&](int q) { return flags(q) + FlagLayout::freed(me_, n_); });
  }

  // Allreduce (every rank receives) or reduce (the root does): each pusher stores its round into
  // the receiver's slot `me`, the receiver reduces all slots with its own input in rank order.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void reduce_one_shot(const Round &rd, bool all) {
    const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_, slot = slot_bytes();
    for (int k = 1; k < n_; ++k) {
      const int q = push_peer(k);
      if (!all && q != a_.root) continue;
      wait_freed(q, rd.r);
      x_.copy(scratch(q, rd.r) + me_ * slot, send() + off, bytes);
    }
    x_.barrier();
    for (int q = 0; q < n_; ++q)
      if (q != me_ && (all || q == a_.root)) tell_arrived(0, q, rd.r);
    if (!all && me_ != a_.root) return;
    wait_arrived_all(0, all_peers(), rd.r);
    x_.reduce(same(static_cast<void *>(recv() + off)), 1, slots_and_own(rd.r, send() + off), n_, rd.elems);
  }
  // Sources of a reduction in rank order: slot q of my scratch for each peer q, `own` for me.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE auto slots_and_own(uint64_t r, const char *own) const {
    const char *slots = scratch(me_, r);
    const uint64_t slot = slot_bytes();
    return indexed([this, slots, slot, own](int q) {
      return static_cast<const void *>(q == me_ ? own : slots + q * slot);
    });
  }

  // Two-shot's cut of a round: part j (of `part` elements, the last ones fewer or none) is
  // reduced by rank j.
  struct Parts {
    uint64_t part, elems;
    MPIX_HOST_DEVICE MPIX_FORCEINLINE uint64_t first(int j) const { return j * part < elems ? j * part : elems; }
    MPIX_HOST_DEVICE MPIX_FORCEINLINE uint64_t count(int j) const { return first(j + 1) - first(j); }
  };
  MPIX_HOST_DEVICE MPIX_FORCEINLINE Parts parts(const Round &rd) const { return Parts{(rd.elems + n_ - 1) / n_, rd.elems}; }

  // Allreduce (or reduce) in two pushes: part j of the round goes to rank j (reduce-scatter into
  // scratch half A), rank j reduces it and pushes the result into half B slot j of every rank
  // (allgather), or of the root only (gather), and those ranks copy the parts out. A reduce's root
  // takes in (n - 1)/n of the vector twice instead of n - 1 whole vectors.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void two_shot(const Round &rd, bool all) {
    const uint64_t slot = slot_bytes();
    const Parts p = parts(rd);
    auto gets_result = [&](int q) { return all || q == a_.root; };
    const uint64_t off = rd.first * esize_;
    for (int k = 1; k < n_; ++k) {
      const int q = push_peer(k);
      wait_freed(q, rd.r);
      x_.copy(scratch(q, rd.r) + me_ * slot, send() + off + p.first(q) * esize_, p.count(q) * esize_);
    }
    x_.barrier();
    for (int q = 0; q < n_; ++q)
      if (q != me_) tell_arrived(0, q, rd.r);
    const uint64_t mine = off + p.first(me_) * esize_;
    wait_arrived_all(0, all_peers(), rd.r);
    // Half B of each receiving peer's scratch (after the n slots of half A), slot me; and my own
    // result where I receive: every rank in rank order (all), or the root alone.
    const int root = a_.root;
    const uint64_t r = rd.r;
    const auto dsts = indexed([this, all, root, mine, slot, r](int j) {
      const int q = all ? j : root;
      return static_cast<void *>(q == me_ ? recv() + mine : scratch(q, r) + (n_ + me_) * slot);
    });
    x_.reduce(dsts, all ? n_ : 1, slots_and_own(r, send() + mine), n_, p.count(me_));
    x_.barrier();
    for (int q = 0; q < n_; ++q)
      if (q != me_ && gets_result(q)) tell_arrived(1, q, rd.r);
    if (!gets_result(me_)) return;
    for (int q = 0; q < n_; ++q) {
      if (q == me_) continue;
      wait_arrived(1, q, rd.r);
      x_.copy(recv() + off + p.first(q) * esize_, scratch(me_, rd.r) + (n_ + q) * slot, p.count(q) * esize_);
    }
  }

  // Two-shot in lines (kLL): part q of the round goes as lines into slot `me` of rank q's line
  // area; each rank reduces its part as the lines land and sends every result unit on as lines
  // into slot n + me of each rank that receives (all, or the root), which store them as they land.
  // Two line hops, no fence and no flag, where kSimple takes two fenced flag round trips. In
  // place, the thread of a unit reads it for the push before it stores that unit's result.
  // Inlined like the other kLL calls (run_lines_call).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_two_shot_lines() {
    for (uint64_t i = 0; i < a_.rounds && x_.ok(); ++i) {
      const Round rd = round(i);
      two_shot_lines(rd, a_.kind == kAllreduce);
      x_.settle();
      signal_freed(rd.r);
    }
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void two_shot_lines(const Round &rd, bool all) {
    const Parts p = parts(rd);
    const uint64_t off = rd.first * esize_, r = rd.r;
    const char *in = send() + off;
    char *out = recv() + off;
    for (int q = 0; q < n_; ++q) {  // rank order (reduce_lines says why)
      if (q == me_) continue;
      wait_freed(q, r);
      x_.put_lines(line_slot(q, r, me_), in + p.first(q) * esize_, p.count(q) * esize_, r);
    }
    // My part's result goes on to every other rank (all), or to the root (unless I am it).
    const int root = a_.root;
    const int nout = all ? n_ - 1 : me_ != root ? 1 : 0;
    const auto outs = indexed([this, all, root, r](int j) { return line_slot(all ? other(j) : root, r, n_ + me_); });
    const auto srcs = indexed([this, in, &p, r](int q) {
      return q == me_ ? static_cast<const void *>(in + p.first(q) * esize_)
                      : static_cast<const void *>(line_slot(me_, r, q));
    });
    x_.reduce_lines(all || me_ == root ? out + p.first(me_) * esize_ : nullptr, outs, nout, srcs, n_, me_,
                    p.count(me_), r);
    if (!all && me_ != root) return;
    // The other ranks' parts: the full ones (parts 0 .. full - 1) in one get, their loads
    // overlapping; a short last one on its own; empty ones (small calls) not at all.
    const int full = static_cast<int>(p.part ? p.elems / p.part : 0);
    const int skip = me_ < full ? me_ : full;  // my own full part, if any, is not fetched
    auto full_part = [skip](int j) { return j < skip ? j : j + 1; };
    x_.get_lines(indexed([out, &p, full_part, this](int j) { return out + p.first(full_part(j)) * esize_; }),
                 indexed([this, full_part, r](int j) {
                   return static_cast<const char *>(line_slot(me_, r, n_ + full_part(j)));
                 }),
                 indexed(full_part), full - (me_ < full ? 1 : 0), p.part * esize_, r);
    if (full < n_ && full != me_ && p.count(full) > 0) {
      const char *from = line_slot(me_, r, n_ + full);
      x_.get_lines(same(out + p.first(full) * esize_), same(from), same(full), 1, p.count(full) * esize_, r);
    }
  }

  // Pipelined chain to the root, bcast's chain run backwards: virtual rank n - 1 pushes its chunk
  // into n - 2's scratch; each rank reduces what arrived with its own input into the next rank's
  // scratch, the root into its receive buffer. Every link carries the vector once (two-shot's root
  // takes in 2 (n - 1)/n of it); while rank v - 1 reduces chunk r, rank v reduces chunk r + 1.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void reduce_chain(const Round &rd) {
    const uint64_t off = rd.first * esize_;
    const int v = virt();
    const bool has_next = v + 1 < n_;  // what the next rank reduced lies in my scratch
    if (has_next) wait_arrived(0, real(v + 1), rd.r);
    const void *own = send() + off;
    const auto srcs = pair_of(has_next ? static_cast<const void *>(scratch(me_, rd.r)) : own, own);
    void *dst = recv() + off;
    if (v > 0) {
      wait_freed(real(v - 1), rd.r);
      dst = scratch(real(v - 1), rd.r);
    }
    x_.reduce(same(dst), 1, srcs, has_next ? 2 : 1, rd.elems);
    if (v == 0) return;
    x_.barrier();
    tell_arrived(0, real(v - 1), rd.r);
  }

  // Ring (n > 1): n parts; in step s < n - 1 this rank pushes its partial of part me - s into the
  // right neighbour's slot s (step 0: its own input; later: the left's partial reduced with its
  // own). In step n - 1 the part me + 1 is complete: kept and pushed; then n - 2 steps forward
  // complete parts around the ring. Every part is reduced once, by one rank, so every rank gets
  // the same bits.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void allreduce_ring(const Round &rd) {
    const uint64_t slot = slot_bytes();
    const uint64_t part = (rd.elems + n_ - 1) / n_;
    auto first = [&](int j) { return uint64_t(j) * part < rd.elems ? uint64_t(j) * part : rd.elems; };
    auto elems = [&](int j) { return first(j + 1) - first(j); };  // first(n) is rd.elems
    const uint64_t off = rd.first * esize_;
    const int right = mod(me_ + 1), left = mod(me_ - 1);
    auto my_part = [&](int j) { return send() + off + first(j) * esize_; };
    auto out_part = [&](int j) { return recv() + off + first(j) * esize_; };
    wait_freed(right, rd.r);
    for (int s = 0; s < n_; ++s) {
      const int p = mod(me_ - s);
      void *to_right = scratch(right, rd.r) + s * slot;
      if (s == 0) {
        x_.copy(to_right, my_part(p), elems(p) * esize_);
      } else {
        wait_arrived(s - 1, left, rd.r);
        const void *partial = scratch(me_, rd.r) + (s - 1) * slot, *own = my_part(p);
        x_.reduce(pair_of(to_right, static_cast<void *>(out_part(p))), s == n_ - 1 ? 2 : 1, pair_of(partial, own), 2,
                  elems(p));
      }
      x_.barrier();
      tell_arrived(s, right, rd.r);
    }
    for (int t = n_; t < 2 * (n_ - 1) + 1; ++t) {
      const int p = mod(me_ + 1 - (t - n_ + 1));
      wait_arrived(t - 1, left, rd.r);
      const char *got = scratch(me_, rd.r) + (t - 1) * slot;
      x_.copy(out_part(p), got, elems(p) * esize_);
      if (t == 2 * (n_ - 1)) break;  // the last part: nothing to forward
      x_.copy(scratch(right, rd.r) + t * slot, got, elems(p) * esize_);
      x_.barrier();
      tell_arrived(t, right, rd.r);
    }
  }

  // GSB: every rank pushes into the root's slot `me`; the root reduces once and pushes the result
  // into every peer's result slot (slot n); peers copy it out. Root: communicator rank 0.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void allreduce_gsb(const Round &rd) {
    const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_, slot = slot_bytes();
    const int root = 0;
    if (me_ != root) {
      wait_freed(root, rd.r);
      x_.copy(scratch(root, rd.r) + me_ * slot, send() + off, bytes);
      x_.barrier();
      tell_arrived(0, root, rd.r);
      wait_arrived(1, root, rd.r);
      x_.copy(recv() + off, scratch(me_, rd.r) + n_ * slot, bytes);
      return;
    }
    wait_arrived_all(0, all_peers(), rd.r);
    wait_freed_all(all_peers(), rd.r);
    // The result: mine, then every peer's result slot.
    char *out = recv() + off;
    const uint64_t r = rd.r;
    const auto dsts = indexed([this, out, slot, r](int j) {
      return static_cast<void *>(j == 0 ? out : scratch(other(j - 1), r) + n_ * slot);
    });
    x_.reduce(dsts, n_, slots_and_own(r, send() + off), n_, rd.elems);
    x_.barrier();
    for (int q = 0; q < n_; ++q)
      if (q != me_) tell_arrived(1, q, rd.r);
  }

  // BTB: a binomial tree rooted at rank 0. Each rank reduces its input with its children's
  // partials (slot = the child's rank) into its parent's slot `me`; the root's result goes back
  // down the tree through the result slots (slot n).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void allreduce_btb(const Round &rd) {
    const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_, slot = slot_bytes();
    const bool root = me_ == a_.root;
    const uint64_t r = rd.r;
    int children = 0;
    tree_children([&](int c) {
      wait_arrived(0, c, r);
      ++children;
    });
    // Sources: my input, then my children's partials (slot = the child's rank), nearest first.
    const char *own = send() + off, *slots = scratch(me_, r);
    const auto srcs = indexed([this, own, slots, slot](int j) {
      return static_cast<const void *>(j == 0 ? own : slots + tree_child(j - 1) * slot);
    });
    if (root) {
      tree_children([&](int c) { wait_freed(c, r); });
      char *out = recv() + off;
      const auto dsts = indexed([this, out, slot, r](int j) {
        return static_cast<void *>(j == 0 ? out : scratch(tree_child(j - 1), r) + n_ * slot);
      });
      x_.reduce(dsts, 1 + children, srcs, 1 + children, rd.elems);
    } else {
      wait_freed(tree_parent(), r);
      x_.reduce(same(static_cast<void *>(scratch(tree_parent(), r) + me_ * slot)), 1, srcs, 1 + children, rd.elems);
    }
    x_.barrier();
    if (root) {
      tree_children([&](int c) { tell_arrived(1, c, rd.r); });
      return;
    }
    tell_arrived(0, tree_parent(), rd.r);
    wait_arrived(1, tree_parent(), rd.r);
    const char *result = scratch(me_, rd.r) + n_ * slot;
    x_.copy(recv() + off, result, bytes);
    tree_children([&](int c) {
      wait_freed(c, rd.r);
      x_.copy(scratch(c, rd.r) + n_ * slot, result, bytes);
    });
    x_.barrier();
    tree_children([&](int c) { tell_arrived(1, c, rd.r); });
  }

  // Pipelined chain from the root (virtual ranks in order): each rank copies the chunk out and
  // forwards it; while the next rank forwards chunk r, this one handles chunk r + 1.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void bcast_chain(const Round &rd) {
    const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_;
    const int v = virt();
    const char *src = send() + off;
    if (v > 0) {
      wait_arrived(0, real(v - 1), rd.r);
      src = scratch(me_, rd.r);
      x_.copy(recv() + off, src, bytes);
    }
    if (v + 1 < n_) {
      const int next = real(v + 1);
      wait_freed(next, rd.r);
      x_.copy(scratch(next, rd.r), src, bytes);
      x_.barrier();
      tell_arrived(0, next, rd.r);
    }
  }

  // Binomial tree from the root: each rank copies the chunk out and pushes it to its children.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void bcast_binomial(const Round &rd) {
    const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_;
    const char *src = send() + off;
    if (me_ != a_.root) {
      wait_arrived(0, tree_parent(), rd.r);
      src = scratch(me_, rd.r);
      x_.copy(recv() + off, src, bytes);
    }
    tree_children([&](int c) {
      wait_freed(c, rd.r);
      x_.copy(scratch(c, rd.r), src, bytes);
    });
    x_.barrier();
    tree_children([&](int c) { tell_arrived(0, c, rd.r); });
  }

  // The root pushes the round into every peer's scratch; each peer copies it out.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void bcast(const Round &rd) {
    const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_;
    if (me_ == a_.root) {
      for (int q = 0; q < n_; ++q) {
        if (q == me_) continue;
        wait_freed(q, rd.r);
        x_.copy(scratch(q, rd.r), send() + off, bytes);
      }
      x_.barrier();
      for (int q = 0; q < n_; ++q)
        if (q != me_) tell_arrived(0, q, rd.r);
      return;
    }
    wait_arrived(0, a_.root, rd.r);
    x_.copy(recv() + off, scratch(me_, rd.r), bytes);
  }

  // Allgather (every peer gets my block) or alltoall (peer q gets my block q): pushed into slot
  // `me` of each peer's scratch, then every rank copies its slots out into its receive blocks.
  // Software-pipelined over the call's rounds: phase i pushes round i and copies round i - 1 out,
  // so writes to the peers and local copies are in flight together and a round costs one barrier,
  // not two. The last phase only copies out. Round numbers and flags are those of the other
  // schedules (arrive(0, src) = r; freed = r + 2 once round r is copied out), so calls of every
  // kind follow each other on one communicator.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void gather_pipelined(bool personal) {
    for (uint64_t i = 0; i <= a_.rounds && a_.rounds && x_.ok(); ++i) {
      if (i < a_.rounds) push_blocks(round(i), personal);
      if (i > 0) copy_out_blocks(round(i - 1));
      // The pushes need the fence before their arrivals; the last phase only copies out, and its
      // freed signals need none (end_round says why).
      if (i < a_.rounds) x_.barrier();
      else x_.settle();
      for (int q = 0; q < n_; ++q) {
        if (q == me_) continue;
        if (i < a_.rounds) tell_arrived(0, q, round(i).r);
      }
      if (i > 0) signal_freed(round(i - 1).r);
    }
  }
  // Ring allgather (n > 1): in step s < n - 1 this rank pushes block me - s into the right
  // neighbour's slot s (step 0: its own input; later: the block the left pushed in step s - 1,
  // copied out first). Every link carries n - 1 blocks, one at a time per channel; the channels'
  // steps overlap each other's handshakes.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void allgather_ring(const Round &rd) {
    const uint64_t block = a_.count * esize_, off = rd.first * esize_, bytes = rd.elems * esize_, slot = slot_bytes();
    const int right = mod(me_ + 1), left = mod(me_ - 1);
    char *own = recv() + me_ * block + off;
    if (send() + off != own) x_.copy(own, send() + off, bytes);
    if (n_ == 1) return;
    wait_freed(right, rd.r);
    for (int s = 0; s < n_ - 1; ++s) {
      const char *src = send() + off;
      if (s > 0) {
        wait_arrived(s - 1, left, rd.r);
        src = scratch(me_, rd.r) + (s - 1) * slot;
        x_.copy(recv() + mod(me_ - s) * block + off, src, bytes);
      }
      x_.copy(scratch(right, rd.r) + s * slot, src, bytes);
      x_.barrier();
      tell_arrived(s, right, rd.r);
    }
    wait_arrived(n_ - 2, left, rd.r);
    x_.copy(recv() + right * block + off, scratch(me_, rd.r) + (n_ - 2) * slot, bytes);
  }

  // Where the round's block for rank q starts in the send buffer (alltoall: block q; allgather:
  // the one block every rank gets).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE const char *src_block(int q, bool personal, uint64_t off) const {
    return send() + (personal ? q * a_.count * esize_ : 0) + off;
  }
  // The round's block for every peer, once all may take it: push(qs, srcs, k, bytes) with peers
  // qs[j] and their blocks srcs[j], j < k, in push_peer order (Indexed, not arrays); then my own
  // block is copied into place (unless it is there already: in place).
  template <class Push>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void for_each_block(const Round &rd, bool personal, Push &&push) {
    const uint64_t block = a_.count * esize_, off = rd.first * esize_, bytes = rd.elems * esize_;
    wait_freed_all(all_peers(), rd.r);
    const auto qs = indexed([this](int j) { return push_peer(j + 1); });
    const auto srcs = indexed([this, personal, off](int j) { return src_block(push_peer(j + 1), personal, off); });
    push(qs, srcs, n_ - 1, bytes);
    // My own block last: the pushes are what peers wait for (first, it cost small kLL
    // allgathers on 4 H100s 0.5-0.7 us).
    const char *mine = src_block(me_, personal, off);
    if (mine != recv() + me_ * block + off) x_.copy(recv() + me_ * block + off, mine, bytes);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void push_blocks(const Round &rd, bool personal) {
    for_each_block(rd, personal, [&](const auto &qs, const auto &srcs, int k, uint64_t bytes) {
      for (int j = 0; j < k; ++j) x_.copy(scratch(qs[j], rd.r) + me_ * slot_bytes(), srcs[j], bytes);
    });
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void copy_out_blocks(const Round &rd) {
    const uint64_t block = a_.count * esize_, off = rd.first * esize_, bytes = rd.elems * esize_;
    for (int k = 1; k < n_; ++k) {
      const int q = push_peer(-k);  // peer me - k reached me at its step k
      wait_arrived(0, q, rd.r);
      x_.copy(recv() + q * block + off, scratch(me_, rd.r) + q * slot_bytes(), bytes);
    }
  }

  // kLL (one-shot allreduce and reduce, direct bcast, allgather and alltoall): every pusher stores
  // its round as lines into slot `me` of the receiver's line area, and the receiver reads (or
  // reduces) each line as it lands. A round ends with a block barrier and the freed signals: no
  // fence, because every line read was used (its tag checked) before the barrier. Pieces go to
  // the executor as Indexed functions of the piece, never as arrays (run_lines_call says why).
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_lines() {
    for (uint64_t i = 0; i < a_.rounds && x_.ok(); ++i) {
      const Round rd = round(i);
      if (a_.kind == kAllreduce || a_.kind == kReduce) reduce_lines(rd, a_.kind == kAllreduce);
      else if (a_.kind == kBcast) bcast_lines(rd);
      else gather_lines(rd, a_.kind == kAlltoall);
      x_.settle();
      signal_freed(rd.r);
    }
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE char *line_slot(int rank, uint64_t r, int src) const { return lines(rank, r) + src * a_.line_slot; }
  // Every rank but me, in rank order: the j-th (j < n - 1), and all of them as pieces.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE int other(int j) const { return j < me_ ? j : j + 1; }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE auto others() const { return indexed([this](int j) { return other(j); }); }
  // In place, each unit of the input is read (for every push) by the thread that later stores the
  // unit of the result: put_lines and reduce_lines share their units' threads.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void reduce_lines(const Round &rd, bool all) {
    const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_;
    const char *src = send() + off;
    // Rank order, not push_peer's: kLL calls are too small for an incast to cost bandwidth, and
    // on 4 H100s the rotated order took 0.1-0.3 us more per allreduce of 8 B-32 KiB.
    if (all) {
      wait_freed_all(all_peers(), rd.r);
      put_lines_to(n_ - 1, others(), same(src), rd.r, bytes);
    } else if (me_ != a_.root) {
      wait_freed(a_.root, rd.r);
      put_lines_to(1, same(a_.root), same(src), rd.r, bytes);
      return;
    }
    x_.settle();  // in place, another thread may have read a unit for a push that this one overwrites
    const auto srcs = indexed([this, src, &rd](int q) {
      return q == me_ ? static_cast<const void *>(src) : static_cast<const void *>(line_slot(me_, rd.r, q));
    });
    x_.reduce_lines(recv() + off, static_cast<char *const *>(nullptr), 0, srcs, n_, me_, rd.elems, rd.r);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void bcast_lines(const Round &rd) {
    const uint64_t off = rd.first * esize_, bytes = rd.elems * esize_;
    if (me_ != a_.root) {
      char *dst = recv() + off;
      const char *from = line_slot(me_, rd.r, a_.root);
      return x_.get_lines(same(dst), same(from), same(a_.root), 1, bytes, rd.r);
    }
    wait_freed_all(all_peers(), rd.r);
    put_lines_to(n_ - 1, others(), same(send() + off), rd.r, bytes);
  }
  // srcs[j]'s `bytes` as lines into slot `me` of rank peers[j], j < count.
  template <class Peers, class Srcs>
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void put_lines_to(int count, const Peers &peers, const Srcs &srcs, uint64_t r,
                                                      uint64_t bytes) {
    if (count)
      x_.put_lines_each(indexed([this, &peers, r](int j) { return line_slot(peers[j], r, me_); }), srcs, count, bytes, r);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void gather_lines(const Round &rd, bool personal) {
    const uint64_t block = a_.count * esize_, off = rd.first * esize_, bytes = rd.elems * esize_;
    const uint64_t r = rd.r;
    for_each_block(rd, personal,
                   [&](const auto &qs, const auto &srcs, int k, uint64_t n) { put_lines_to(k, qs, srcs, r, n); });
    x_.settle();  // in place (alltoall): every block is pushed before received blocks overwrite it
    char *base = recv() + off;
    x_.get_lines(indexed([this, base, block](int j) { return base + other(j) * block; }),
                 indexed([this, r](int j) { return static_cast<const char *>(line_slot(me_, r, other(j))); }),
                 others(), n_ - 1, bytes, r);
  }

  // Local steps (coll_args.h): one round over this rank's memory only; no flags.
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void local_reduce(const Round &rd) {
    const int ns = a_.pieces < kMaxRanks ? static_cast<int>(a_.pieces) : kMaxRanks;
    const char *first = send();
    const uint64_t stride = a_.src_stride;
    const auto srcs = indexed([first, stride](int j) { return static_cast<const void *>(first + j * stride); });
    x_.reduce(same(static_cast<void *>(recv())), 1, srcs, ns, rd.elems);
  }
  MPIX_HOST_DEVICE MPIX_FORCEINLINE void local_copy(const Round &rd) {
    for (uint32_t j = 0; j < a_.pieces; ++j) {
      const char *src = static_cast<int>(j) == a_.root ? reinterpret_cast<const char *>(a_.own)
                                                       : send() + j * a_.src_stride;
      char *dst = recv() + j * a_.dst_stride;
      if (src && src != dst) x_.copy(dst, src, rd.elems * esize_);
    }
  }

  X &x_;
  const Args &a_;
  const PeerTable *t_;
  int n_, me_;
  uint32_t esize_;
  uint32_t channel_;
  uint64_t base_;          // rounds the channel ran before this call
};

}  // namespace detail

// Runs channels first, first + step, ... of a kLL call (two-shot or not, as TwoShot says), in that
// order, then finishes it; inlined whole (Schedule::run_lines_call says why). A device kernel
// calls it with an executor of its own, which no outlined step receives.
template <bool TwoShot, class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_lines_schedule(X &x, const Args &a, uint32_t first, uint32_t step) {
  const uint64_t base = x.cursor();
  for (uint32_t c = first; c < channel_count(a); c += step)
    detail::Schedule<X>(x, a, c).template run_lines_call<TwoShot>();
  x.finish(base + a.rounds);
}

// The same for a kSimple call of path P.
template <Path P, class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_simple_schedule(X &x, const Args &a, uint32_t first, uint32_t step) {
  const uint64_t base = x.cursor();
  for (uint32_t c = first; c < channel_count(a); c += step) detail::Schedule<X>(x, a, c).template run<P>();
  x.finish(base + a.rounds);
}

// A call of path P, whichever protocol P runs.
template <Path P, class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void run_path_schedule(X &x, const Args &a, uint32_t first, uint32_t step) {
  if constexpr (P == Path::kLines || P == Path::kTwoShotLines)
    run_lines_schedule<P == Path::kTwoShotLines>(x, a, first, step);
  else
    run_simple_schedule<P>(x, a, first, step);
}

// Runs channels first, first + step, ... of the call, in that order, then finishes it.
template <class X>
MPIX_HOST_DEVICE void run_schedule(X &x, const Args &a, uint32_t first, uint32_t step) {
  with_path(path_of(a), [&](auto path) { run_path_schedule<decltype(path)::value>(x, a, first, step); });
}


}  // namespace mpix::coll
