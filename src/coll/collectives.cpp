#include "collectives.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "backend/backend.h"
#include "call_board.h"
#include "context.h"
#include "core/config.h"
#include "core/epochs.h"
#include "kernels/coll/geometry.h"
#include "multinode.h"
#include "settings/settings.h"

namespace mpix::coll {
namespace {

using settings::Id;

// MPIX_ST_<COLL>_ALGO of a collective.
Id algorithm_setting(Kind k) {
  switch (k) {
    case kAllreduce: return Id::MPIX_ST_ALLREDUCE_ALGO;
    case kReduce: return Id::MPIX_ST_REDUCE_ALGO;
    case kBcast: return Id::MPIX_ST_BCAST_ALGO;
    case kAllgather: return Id::MPIX_ST_ALLGATHER_ALGO;
    default: return Id::MPIX_ST_ALLTOALL_ALGO;
  }
}

// A call setting read now: its value, or MPI_ERR_ARG naming what the table accepts.
core::Result read_call_setting(Id id, settings::Value *v) {
  std::string why;
  return settings::read(id, v, &why) ? core::ok() : core::fail(MPI_ERR_ARG, why);
}

// Bytes a rank pushes in a call: its vector or block to each of its peers.
uint64_t bytes_pushed(const Context &c, uint64_t count, uint32_t esize) {
  return count * esize * static_cast<uint64_t>(c.size > 1 ? c.size - 1 : 1);
}

// kLL (kernels/coll/args.h) while a call pushes at most kLLMaxPushedBytes in all or kLLMaxPeerBytes to
// each peer: lines carry the data with its flag, so a call needs no fence and no flag round trip,
// at twice the bytes on the link. Per peer, since each peer's lines travel on their own link: on
// 4 H200s (one job), 32 KiB allreduces took 1.07x NCCL's time with kLL and 1.62x with kSimple
// (96 KiB pushed); 128 KiB allgathers 1.29x and 1.96x; at 64 KiB a peer both were 1.6x.
constexpr uint64_t kLLMaxPushedBytes = 64 * 1024;
constexpr uint64_t kLLMaxPeerBytes = 32 * 1024;
bool lines_fit(const Call &call, const Context &c) {
  const uint64_t per_peer = call.count * elem_size(call.dtype);  // a vector or block to each peer
  return bytes_pushed(c, call.count, elem_size(call.dtype)) <= kLLMaxPushedBytes || per_peer <= kLLMaxPeerBytes;
}

// Does kLL move the call in one round of every line area (each channel's share in one slot)? A
// second round costs a freed-flag round trip more: on 4 H100s (one job, forced kLL) one-shot
// allreduces of 64 and 128 KiB took 12.0 and 12.3 us with 64 line areas (one round) against 17.5
// and 29.0 with 16 (two and four), NCCL 11.2-12.2; a direct reduce 10.0 and 10.5 against 12.6
// and 19.7.
bool lines_in_one_round(const Call &call, const Context &c, Algo algo) {
  return call.count <=
         line_round_capacity(call.kind, algo, c.size, c.line_region_bytes, elem_size(call.dtype)) * c.line_regions;
}

// auto's kLL: two-shot while one round holds the call; one-shot and direct calls within the limits
// above, or while one round holds the call, its busiest rank pushes at most kLLMaxPushedOneRound
// and each peer gets at most kLLMaxPeerOneRound (a reduce's ranks push their vector to the root
// once; the others push to n - 1 peers). Replayed, one job each, kLL forced against kSimple:
// on 4 H100s direct allgathers of 256 KiB-1 MiB received (768 KiB pushed at most) took 10.3-13.3
// us against 17.0-17.5, alltoalls alike 10.6-13.6 against 17.5-17.7, bcasts of 64-256 KiB 7.7-9.9
// against 11.7 (the chain 10.6-10.8); from 1.5 MiB pushed kLL gained nothing or lost (2 MiB
// allgather 18.5 against 19.6, 512 KiB bcast 14.7 against the chain's 11.2-11.5, 512 KiB one-shot
// allreduce 22.1-24.3 against 19.4), while a 512 KiB reduce took 11.0 against the chain's 12.2.
// On 2 H100s, from 64 KiB to 512 KiB a peer kLL took 0.64-0.92x kSimple's time in every
// collective (one-shot allreduce 7.8, 9.2, 11.6 us at 128, 256, 512 KiB against 11.6, 11.9, 12.6),
// at 1 MiB a peer 1.02-1.10x (bcast 11.5 against 10.5, allreduce 15.1 against 14.1).
constexpr uint64_t kLLMaxPushedOneRound = 1 << 20;
constexpr uint64_t kLLMaxPeerOneRound = 512 * 1024;
bool lines_chosen(const Call &call, const Context &c, Algo algo) {
  if (algo == kTwoShot) return lines_in_one_round(call, c, algo);
  if (lines_fit(call, c)) return true;
  const uint64_t bytes = call.count * elem_size(call.dtype);
  const uint64_t busiest = call.kind == kReduce ? bytes : bytes_pushed(c, call.count, elem_size(call.dtype));
  return bytes <= kLLMaxPeerOneRound && busiest <= kLLMaxPushedOneRound && lines_in_one_round(call, c, algo);
}

// Channels of a kLL call: one per line_channel_bytes pushed, but no more than kLinePreferredChannels
// unless the call needs more areas to finish in one round. On 4 H100s (one job, kLL forced) a
// 64 KiB one-shot allreduce (96 channels' worth pushed) took 9.8 us on 64 channels and 10.6 on 96,
// a 128 KiB one 10.5 on 64 and 10.9-11.0 on 128, while a 512 KiB reduce took 11.0 us on the 128 it
// needs for one round against the chain's 12.2.
constexpr uint32_t kLinePreferredChannels = 64;
// per_channel: elements one channel moves in a round (line_round_capacity).
uint32_t line_channels_for(const Call &call, const Context &c, uint64_t per_channel, uint64_t line_pushed) {
  const uint64_t wanted = std::min<uint64_t>((line_pushed + c.line_channel_bytes - 1) / c.line_channel_bytes,
                                             kLinePreferredChannels);
  const uint64_t one_round = per_channel ? (call.count + per_channel - 1) / per_channel : 1;
  return static_cast<uint32_t>(std::clamp<uint64_t>(std::max(wanted, one_round), 1, c.line_regions));
}

// Allreduce on more than two ranks: kLL one-shot up to kOneShotLinesMaxBytes, then kLL two-shot,
// while each moves the call in one round (on 4 H100s, one job: two-shot in lines took 16.3 us at
// 256 KiB against one-shot's 18.3-18.6 in either protocol, NCCL 11.7-11.9; with areas that hold
// 256 KiB one-shots in one round, 13.4-14.0 against 14.5-15.2 there, and 12.7-13.6 against
// 10.5-11.0 at 128 KiB); then one-shot up to kOneShotMaxBytes (at 512 KiB
// 20.4-20.7 us against two-shot's 23.6-24.4 in three jobs; equal at 1 MiB); above it two-shot
// (each rank reduces an n-th instead of the whole vector), and the ring from kRingMinBytesMany.
// On 4 H100s, once pushes went round the peers from me + 1 (no incast), two-shot took 43.2 us at
// 4 MiB against the ring's 48.4-48.7, 69.3-69.8 at 8 MiB against 70.0-72.0, and the two met at
// 16 MiB (110 against 107-110); NCCL 43, 64, 104.
// On two ranks, one-shot up to kRingMinBytes, then the ring, whose halves overlap the link and the
// reduction (measured on 2 H200s: equal at 2 MiB, ring 0.71x one-shot's time at 16 MiB, 0.69x at
// 128 MiB).
// Allgather on more than two ranks from kRingGatherMinBytes received: the ring (each link carries
// one stream of blocks). On 4 H100s direct and ring met at 16 MiB received (59-65 us both); from
// 32 MiB the ring took 0.73-0.93x direct's time (128 MiB: 339-347 us against 400-431, NCCL 352-360).
// Reduce on more than two ranks, wherever kLL does not serve the direct algorithm: the pipelined
// chain (every link carries the vector once; direct's root takes in n - 1 vectors, two-shot's
// 2 (n - 1)/n of one). On 4 H200s (one job) the chain took 12.5 us at 64-256 KiB against direct's
// 15-16 (kSimple; kLL direct took 9.3 at 32 KiB, the chain 12.4), 16 us at 1 MiB against 17.6, and
// reached 0.95 and 0.94x NCCL's bus bandwidth at 16 and 128 MiB (two-shot 0.70 and 0.58). On two
// ranks every algorithm moves one vector: direct.
// Bcast on more than two ranks: direct while kLL serves it, else the pipelined chain (the root's
// links carry the data once instead of n - 1 times): on 4 H100s (one job, replayed) the chain took
// 10.6-10.8 us at 64-256 KiB against direct's 11.7 in kSimple (7.7-9.9 in kLL), and 11.2-11.5 at
// 512 KiB against 13.5. Thresholds: README, "Collectives".
constexpr uint64_t kOneShotLinesMaxBytes = 128 * 1024;
constexpr uint64_t kOneShotMaxBytes = 512 * 1024;
constexpr uint64_t kRingMinBytes = 4 << 20;
constexpr uint64_t kRingMinBytesMany = 16 << 20;
constexpr uint64_t kRingGatherMinBytes = 16 << 20;

Algo choose(const Call &call, const Context &c, Algo requested) {
  if (requested != kAuto) return requested;
  const uint64_t bytes = call.count * elem_size(call.dtype);
  if (call.kind == kAllreduce && c.size <= 2) return bytes >= kRingMinBytes ? kRing : kOneShot;
  if (call.kind == kAllreduce) {
    if (bytes <= kOneShotLinesMaxBytes && lines_in_one_round(call, c, kOneShot)) return kOneShot;  // kLL
    if (lines_in_one_round(call, c, kTwoShot)) return kTwoShot;  // kLL
    if (bytes <= kOneShotMaxBytes) return kOneShot;
    return bytes < kRingMinBytesMany ? kTwoShot : kRing;
  }
  if (call.kind == kReduce) return c.size > 2 && !lines_chosen(call, c, kOneShot) ? kChain : kOneShot;
  if (call.kind == kBcast) return c.size <= 2 || lines_chosen(call, c, kOneShot) ? kOneShot : kChain;
  if (call.kind == kAllgather && c.size > 2 && bytes * c.size >= kRingGatherMinBytes) return kRing;
  return kOneShot;
}

// Channels of a call (kernels/coll/args.h): one per `per_channel` bytes of what a rank pushes, at most
// `most` (the communicator's scratch regions, or its line areas).
uint32_t channels_for(uint64_t pushed, uint64_t per_channel, uint32_t most) {
  return static_cast<uint32_t>(std::clamp<uint64_t>((pushed + per_channel - 1) / per_channel, 1, most));
}

// Threads of a channel's block, by the bytes the channel pushes in the call. Measured on 2 H200s
// with 64 KiB channels (coll_bench --graph, bcast, allreduce and allgather, 8 B-16 MiB, every call
// forced to 128, 256 or 512 threads): calls pushing up to 4 KiB a channel were fastest with 128
// (8 B bcast 6.4 us, 6.7 with 256, 8.0 with 512); 32-64 KiB a channel (calls of 32 KiB-2 MiB) with
// 256 (256 KiB allgather 15.7 us, 17.8 with 128, 17.6 with 512); 128 KiB a channel (16 MiB) within
// 4% of each other. From 1 MiB a channel, 512 keeps the size that reached NCCL's bandwidth at 128 MiB.
uint32_t threads_for(uint64_t pushed_per_channel) {
  if (pushed_per_channel <= 4 * 1024) return 128;
  return pushed_per_channel < (1u << 20) ? 256 : 512;
}
// kLL: a thread per 8-byte unit a channel pushes (each unit waits for its line in turn, so a
// thread's units do not overlap), 128 to 256: on 2 H100s a one-channel 4 KiB allreduce took 1.5 us
// longer with 512 threads than a 2 KiB one with 256.
uint32_t line_threads_for(uint64_t pushed_per_channel) {
  return static_cast<uint32_t>(std::clamp<uint64_t>((pushed_per_channel / kLinePayload + 127) / 128 * 128, 128, 256));
}

// The protocol MPIX_ST_COLL_PROTOCOL names (auto, simple, ll), read at each call like the
// algorithms. kLL serves the one-shot, direct and two-shot algorithms; others run kSimple.
core::Result protocol_from_env(bool *forced, Protocol *out) {
  *forced = false;
  *out = kSimple;
  settings::Value v;
  if (core::Result r = read_call_setting(Id::MPIX_ST_COLL_PROTOCOL, &v)) return r;
  if (v.text == "auto") return core::ok();
  *forced = true;
  if (v.text == "ll") *out = kLL;  // else simple
  return core::ok();
}

// setting: 0 auto, 1 simple, 2 ll (what the call board compares across ranks).
core::Result choose_protocol(const Call &call, const Context &c, Algo algo, Protocol *out, uint8_t *setting) {
  bool forced = false;
  if (core::Result r = protocol_from_env(&forced, out)) return r;
  *setting = !forced ? 0 : *out == kLL ? 2 : 1;
  const bool lines_serve = (algo == kOneShot && call.kind <= kAlltoall) || is_two_shot(call.kind, algo);
  if (!lines_serve) *out = kSimple;
  else if (!forced) *out = lines_chosen(call, c, algo) ? kLL : kSimple;
  return core::ok();
}

struct AlgoName {
  const char *name;
  Algo algo;
};
constexpr AlgoName kAllreduceAlgos[] = {{"oneshot", kOneShot}, {"twoshot", kTwoShot}, {"ring", kRing},
                                        {"gsb", kGsb},         {"btb", kBtb}};
constexpr AlgoName kBcastAlgos[] = {{"direct", kOneShot}, {"chain", kChain}, {"binomial", kBinomial}};
constexpr AlgoName kReduceAlgos[] = {{"direct", kOneShot}, {"twoshot", kTwoShot}, {"chain", kChain}};
constexpr AlgoName kAllgatherAlgos[] = {{"direct", kOneShot}, {"ring", kRing}};
constexpr AlgoName kDirectOnly[] = {{"direct", kOneShot}};

}  // namespace

core::Result algorithm_from_env(Kind kind, Algo *out) {
  *out = kAuto;
  const Id id = algorithm_setting(kind);
  settings::Value v;
  if (core::Result r = read_call_setting(id, &v)) return r;
  if (v.text == "auto") return core::ok();
  const AlgoName *first = kDirectOnly, *last = kDirectOnly + 1;
  if (kind == kAllreduce) first = std::begin(kAllreduceAlgos), last = std::end(kAllreduceAlgos);
  if (kind == kBcast) first = std::begin(kBcastAlgos), last = std::end(kBcastAlgos);
  if (kind == kReduce) first = std::begin(kReduceAlgos), last = std::end(kReduceAlgos);
  if (kind == kAllgather) first = std::begin(kAllgatherAlgos), last = std::end(kAllgatherAlgos);
  for (const AlgoName *a = first; a != last; ++a) {
    if (v.text == a->name) {
      *out = a->algo;
      return core::ok();
    }
  }
  // The table lists a word this collective has no algorithm for (the collective suites try each).
  return core::fail(MPI_ERR_INTERN, std::string(settings::entry(id).name) + "=" + v.text +
                                        ": the settings table and the collective's algorithms disagree");
}

core::Result protocol_setting_readable() {
  bool forced = false;
  Protocol p = kSimple;
  return protocol_from_env(&forced, &p);
}

core::Result launch(void *stream, Args a) {
  // set_geometry and the schedules take every round but the last to be full: a launch whose
  // rounds disagree with its count would move the wrong elements, so it is refused here.
  const uint64_t per_round = a.round_elems * channel_count(a);
  if (a.count == 0 || per_round == 0 || a.rounds != (a.count + per_round - 1) / per_round)
    return core::fail(MPI_ERR_INTERN, "collective launch with " + std::to_string(a.rounds) + " rounds for " +
                                          std::to_string(a.count) + " elements of " + std::to_string(per_round) +
                                          " a round");
  set_geometry(a);
  gpu::Backend &be = gpu::backend();
  if (be.enqueue_collective(stream, a)) return core::fail(MPI_ERR_OTHER, "enqueue on the stream failed: " + be.last_error());
  return core::ok();
}

namespace {

// Everything about a node-local call that can refuse it, checked before anything is enqueued or
// recorded: *a becomes its launch (a->count 0: nothing to launch), *protocol_setting what
// MPIX_ST_COLL_PROTOCOL said.
core::Result prepare_node_local(Context &c, const Call &call, Algo requested, Args *out, uint8_t *protocol_setting) {
  *protocol_setting = 0;
  // A collective of this communicator that timed out earlier is reported by the next call on it.
  if (core::Result r = core::take_watchdog_error(c.id, nullptr)) return r;
  if (c.size > kMaxRanks)
    return core::fail(MPI_ERR_UNSUPPORTED_OPERATION, "stream collectives handle communicators of up to " +
                                                         std::to_string(kMaxRanks) + " ranks on one node");
  Args &a = *out;
  a = Args{};
  if (call.count == 0) return core::ok();
  a.kind = call.kind;
  a.algo = choose(call, c, requested);
  a.dtype = call.dtype;
  a.op = call.op;
  a.rank = c.rank;
  a.size = c.size;
  a.root = call.root;
  a.count = call.count;
  a.sendbuf = reinterpret_cast<uint64_t>(call.sendbuf);
  a.recvbuf = reinterpret_cast<uint64_t>(call.recvbuf);
  a.table = reinterpret_cast<uint64_t>(c.table);
  a.half_bytes = c.half_bytes;
  a.regions = c.regions;
  const uint64_t pushed = bytes_pushed(c, call.count, elem_size(a.dtype));
  Protocol proto = kSimple;
  if (core::Result r = choose_protocol(call, c, static_cast<Algo>(a.algo), &proto, protocol_setting)) return r;
  a.proto = proto;
  if (proto == kLL) {
    // Two-shot pushes n - 1 parts of an n-th and then its result part n - 1 times.
    const uint64_t line_pushed = is_two_shot(a.kind, a.algo) ? 2 * pushed / c.size : pushed;
    a.line_region_bytes = c.line_region_bytes;
    a.round_elems = line_round_capacity(a.kind, a.algo, a.size, a.line_region_bytes, elem_size(a.dtype));
    a.channels = line_channels_for(call, c, a.round_elems, line_pushed);
    a.threads = line_threads_for(line_pushed / a.channels);
  } else {
    a.channels = channels_for(pushed, c.channel_bytes, c.regions);
    a.threads = threads_for(pushed / a.channels);
    a.round_elems = round_capacity(a.kind, a.algo, a.size, call_channel_half_bytes(a), elem_size(a.dtype));
  }
  if (a.round_elems == 0)
    return core::fail(MPI_ERR_UNSUPPORTED_OPERATION, "the collective scratch (MPIX_ST_COLL_SCRATCH_KIB) is too small "
                                                     "for " + std::to_string(c.size) + " ranks");
  const uint64_t per_round = a.round_elems * a.channels;
  a.rounds = (call.count + per_round - 1) / per_round;
  a.comm_id = c.id;
  a.watchdog_ns = core::config().watchdog_ns;
  return core::ok();
}

core::Result launch_node_local(Context &c, const Call &call, const Args &args, bool capturing) {
  if (args.count == 0) return core::ok();
  // MPI_Comm_free waits until the calls enqueued outside captures have run. A captured call runs
  // at each replay instead, which the host may never see (a graph the program launches itself):
  // it advances the cursor but is not counted.
  Args a = args;
  a.counted = capturing ? 0 : 1;
  if (core::Result r = launch(call.stream, a)) return r;
  if (!capturing) ++c.eager_calls_enqueued;
  return core::ok();
}

}  // namespace

core::Result enqueue(const Call &call, core::Result local) {
  gpu::Backend &be = gpu::backend();
  bool capturing = false;
  if (call.stream_ok && be.capture_status(call.stream, &capturing) && !local)
    local = core::fail(MPI_ERR_OTHER, "cannot tell whether the stream is capturing: " + be.last_error());
  Algo requested = kAuto;
  if (!local) local = algorithm_from_env(call.kind, &requested);
  // Made the first time on every rank alike, whatever this rank thinks of the call.
  Context *c = nullptr;
  if (core::Result r = context_of(call.comm, capturing, &c)) return r;
  std::lock_guard<std::mutex> lock(c->calls_mu);
  if (c->net) return enqueue_multinode(*c, call, capturing, local);
  Args a{};
  uint8_t protocol_setting = 0;
  if (!local) local = prepare_node_local(*c, call, requested, &a, &protocol_setting);
  CallBoard *board = c->board.get();
  if (!board) return local ? local : launch_node_local(*c, call, a, capturing);  // one rank
  if (local) {
    if (core::Result f = board->failure()) return f;
    board->record(true, CallBoard::Signature{});
    return local;
  }
  if (core::Result r = board->check_before_enqueue(core::config().watchdog_ns)) return r;
  board->record(false, CallBoard::signature(call.kind, call.dtype, call.op, call.root, requested, protocol_setting,
                                            call.count));
  if (core::Result r = launch_node_local(*c, call, a, capturing)) {
    board->fail("call " + std::to_string(board->next_call() - 1) + " on the communicator could not be enqueued on "
                "rank " + std::to_string(c->rank) + " (" + r.message + ")");
    return r;
  }
  return core::ok();
}

core::Result enqueue_node_local(Context &c, const Call &call, Algo requested, bool capturing) {
  Args a{};
  uint8_t protocol_setting = 0;
  if (core::Result r = prepare_node_local(c, call, requested, &a, &protocol_setting)) return r;
  return launch_node_local(c, call, a, capturing);
}

}  // namespace mpix::coll
