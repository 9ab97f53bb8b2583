// The description of one stream-ordered collective call, shared by the core, the host backend and
// the device kernel (doc/design.md, Collectives). Plain data: it travels to the GPU by value as
// kernel parameters.
//
// Every rank of a communicator owns a scratch area that all its node-local peers map (two halves,
// used by alternate rounds) and a flag area they store to. A call is cut into rounds that fit a
// half; rounds are numbered by a device-resident cursor, so a captured call replays as the next
// rounds. Flags only grow:
//   arrive(step, src) = r   src's data of step `step` of round r lies in my scratch half r & 1
//   freed(src)        = r+2 src has finished reading its own scratch for round r: I may write
//                            round r + 2 (the same half) into it
// freed starts at 2, so rounds 1 and 2 need nobody's permission.
//
// Channels: the scratch halves are cut into `regions` equal shares (fixed per communicator), and
// a call's rounds into `channels` <= regions slices. Channel c runs the whole schedule on share c
// with its own flags and its own round counter, with no synchronisation between channels (NCCL's
// channels): a call that uses fewer channels leaves the others' counters and flags as they were,
// so each channel is the protocol above on its own. The device runs a channel per block, so a
// slow block or a flag's round trip stalls only its own slice, and no grid-wide barrier remains.
// Every rank runs channels in increasing order within a block or thread, so any number of blocks
// is deadlock-free as long as all of them are resident.
//
// Protocols. kSimple is the above: data into a slot, then a barrier whose system-scope fence
// orders it before the arrive flag. kLL (small calls, one-shot and direct algorithms only) stores
// the data with its round in the same words (lines.h) into a line area beside the halves,
// so a reader polls the data itself: no fence and no arrive flag. Rounds, halves, channels and
// freed flags are those of kSimple, so calls of both protocols follow each other on one
// communicator; the line area is separate so raw data of a kSimple round is never taken for a tag.
#pragma once
#include <cstdint>

#include "kernels/work_items.h"

namespace mpix::coll {

enum Kind : uint8_t { kAllreduce = 0, kReduce = 1, kBcast = 2, kAllgather = 3, kAlltoall = 4,
  // Steps of collectives across nodes that touch only this rank's memory (src/coll/multinode_steps.cpp):
  //   kLocalReduce  recvbuf = op over `pieces` sources sendbuf + j * src_stride, in j order
  //   kLocalCopy    piece j (< pieces) of count elements: recvbuf + j * dst_stride <- sendbuf +
  //                 j * src_stride, except piece `root`, which comes from `own` (0: skipped)
  // They run as one round of a one-rank table (their own cursor), so draining counts them.
  kLocalReduce = 5, kLocalCopy = 6 };

// Algorithms (node-local, one launch per call). Allreduce:
//   kOneShot  every rank pushes its vector into every peer's scratch; each reduces alone
//   kTwoShot  reduce-scatter then allgather, both by direct pushes: rank j reduces the j-th n-th
//             and pushes the result to every peer
//   kRing     reduce-scatter and allgather around the ring, 2(n-1) steps of an n-th each
//   kGsb      gather to the root's shared buffer, one reduction there, broadcast ([Faraji 2018])
//   kBtb      binomial tree reduction to the root, then down the same tree ([Faraji 2018])
// Reduce: kOneShot (every rank pushes into the root's scratch), kTwoShot (reduce-scatter, then
// every rank pushes its reduced part into the root's scratch), kChain (pipelined chain to the root
// in chunks: each rank adds its input to what its predecessor pushed and pushes that on).
// Bcast: kOneShot (the root pushes into every peer's scratch: IPC multicast), kChain (pipelined
// chain in chunks, [Chu 2019]), kBinomial (binomial tree). Allgather: kOneShot (direct pushes) and
// kRing (n - 1 steps, each rank forwarding what its left neighbour pushed). Alltoall: kOneShot.
enum Algo : uint8_t { kAuto = 0, kOneShot = 1, kTwoShot = 2, kRing = 3, kGsb = 4, kBtb = 5, kChain = 6, kBinomial = 7 };

enum Dtype : uint8_t {
  kInt8 = 0, kUint8 = 1, kInt32 = 2, kUint32 = 3, kInt64 = 4, kUint64 = 5, kFloat = 6, kDouble = 7,
  kBytes = 8,  // no arithmetic: moved only (bcast, allgather, alltoall)
  kHalf = 9, kBfloat16 = 10,  // IEEE binary16 and bfloat16, reduced in float (half_float.h)
};
enum Protocol : uint8_t { kSimple = 0, kLL = 1 };

enum Op : uint8_t { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kBand = 4, kBor = 5, kBxor = 6, kNoOp = 7 };

inline constexpr uint32_t elem_size(uint8_t d) {
  return d == kInt8 || d == kUint8 || d == kBytes ? 1u
         : d == kHalf || d == kBfloat16           ? 2u
         : d == kInt32 || d == kUint32 || d == kFloat ? 4u
                                                     : 8u;
}

// Flag area of a rank (64-bit words), for a communicator of n ranks, per channel: arrive flags for
// every step of a round (a ring has 2(n-1)) and source, freed flags, the rounds of calls run (the
// communicator's cursor: channel 0's word counts, the others are unused), the rounds this channel
// ran (its round numbers continue from there), the calls enqueued outside captures that ran
// (channel 0's word counts: MPI_Comm_free's drain; replays of captured calls advance the cursor but
// not this count). Channel c's words start at c * words(n).
struct FlagLayout {
  static constexpr int steps(int n) { return n > 2 ? 2 * (n - 1) : 2; }
  static constexpr uint64_t arrive(int step, int src, int n) { return static_cast<uint64_t>(step) * n + src; }
  static constexpr uint64_t freed(int src, int n) { return static_cast<uint64_t>(steps(n)) * n + src; }
  static constexpr uint64_t cursor(int n) { return static_cast<uint64_t>(steps(n) + 1) * n; }
  static constexpr uint64_t channel_cursor(int n) { return cursor(n) + 1; }
  static constexpr uint64_t eager_calls(int n) { return cursor(n) + 2; }
  static constexpr uint64_t words(int n) { return cursor(n) + 3; }
};

// Addresses of every rank's scratch and flags as this process reaches them, by communicator rank.
struct PeerTable {
  uint64_t scratch;  // base of that rank's scratch (two halves of Args::half_bytes)
  uint64_t flags;    // base of that rank's flag area
};

struct Args {
  uint8_t kind, algo, dtype, op;
  uint8_t proto;        // Protocol
  uint8_t counted;      // 1: enqueued outside a capture, finish() counts it in eager_calls
  int32_t rank, size, root;
  uint64_t count;       // elements: of the whole vector (allreduce, reduce, bcast) or of one rank's
                        // block (allgather, alltoall)
  uint64_t sendbuf, recvbuf;
  uint64_t table;       // PeerTable[size], memory the executing stream reads
  uint64_t half_bytes;  // bytes of one scratch half (of all channels together)
  uint64_t rounds;      // rounds of this call (the cursor advances by this much)
  uint64_t round_elems; // elements one channel moves in one round (see the schedules)
  uint64_t line_region_bytes;  // kLL: bytes of one channel's line area in one half (after both
                               // scratch halves: channel c, half h at (2c + h) * this)
  uint32_t comm_id;     // diagnostics: named in watchdog reports
  uint32_t pieces;      // local steps: sources (kLocalReduce) or pieces (kLocalCopy)
  uint32_t channels;    // slices of every round, each with its scratch share and flags (0 means 1)
  uint32_t regions;     // shares the scratch halves are cut into (>= channels; 0 means 1)
  uint32_t threads;     // device backends: threads of a channel's block (0: the backend's most)
  uint32_t taken;       // device backends: the communicator's reports taken at enqueue (work::fault_skips)
  uint64_t src_stride, dst_stride, own;  // local steps, bytes and an address (see Kind)
  uint64_t watchdog_ns;  // 0: waits never time out
  uint64_t mailbox;      // work::WatchdogMailbox (device backends)
  // Device backends: the communicator's fault word (work::fault_skips, host-mapped; 0: none), so a
  // call queued behind one that timed out ends its waits at once instead of waiting its own watchdog.
  uint64_t fault;
  uint64_t barrier;      // device backends: zeroed words counting finished blocks, reset at exit
  uint64_t trace;        // MPIX_ST_TRACE's log (work::TraceLog, launch_trace.h) the backend stamps; 0: off
  // The call's geometry (set_geometry in geometry.h, from the fields above), so that a
  // kernel divides nothing before its first wait.
  uint64_t channel_half;  // a channel's share of a scratch half (of the part the call uses)
  uint64_t slot;          // bytes of one slot of that share
  uint64_t line_slot;     // kLL: bytes of one source's lines in a channel's line area
  uint64_t last_share;    // elements each channel takes of the last round (the others: round_elems)
};
static_assert(sizeof(Args) <= 256, "collective arguments are kernel parameters");

MPIX_HOST_DEVICE inline uint32_t channel_count(const Args &a) { return a.channels ? a.channels : 1; }
MPIX_HOST_DEVICE inline uint32_t region_count(const Args &a) { return a.regions ? a.regions : 1; }

}  // namespace mpix::coll
