// The call board of a node-local communicator's stream collectives (doc/guide/collectives.md,
// "After an error"): host shared memory every rank of the communicator maps, where each rank
// publishes what became of each of its calls, so that a call refused on some ranks and enqueued on
// others is found without a host collective per call.
//
// Every call on the communicator gets the next number on every rank (calls are made in the same
// order everywhere), refused or not. A rank records call k in its own row: whether it refused it
// or, if it enqueued it, what decides the call's rounds (collective, count, element type, operator,
// root, the algorithm and protocol settings), and a digest of every record up to k. Two ranks
// whose digests at k are equal agree on calls 1..k: their rounds are in step.
//
//   - A rank that refused a call enqueues nothing more until it has confirmed that every rank
//     refused that call too: its next call waits (here, on the host) until every rank has
//     recorded the refused call and compares digests. Only an error path waits.
//   - Every call of every rank compares its digest with one peer's (a different peer each call),
//     which costs a read of one cache line: differing arguments that no rank refused are found
//     within a few calls.
//   - A difference, once found, marks the board failed, with the refused (or differing) call and
//     the ranks in its message; every later call of every rank reads the mark (one word, written
//     once) and is refused with that message. The rank that refused never runs another round, so
//     no later call of any rank pairs with a round of a different call.
#pragma once
#include <cstdint>
#include <string>

#include "core/result.h"

namespace mpix::coll {

class CallBoard {
 public:
  // Bytes of the shared memory for `size` ranks.
  static uint64_t bytes(int size);
  // `memory`: that many bytes, zeroed, mapped by every rank alike.
  CallBoard(void *memory, int rank, int size);

  // What decides a call's rounds, packed (see record()).
  struct Signature {
    uint64_t count = 0;  // elements (of one block: allgather, alltoall)
    uint64_t packed = 0; // kind | dtype << 8 | op << 16 | algorithm << 24 | protocol << 28 | root << 32
  };
  static Signature signature(uint8_t kind, uint8_t dtype, uint8_t op, int root, uint8_t algo, uint8_t protocol,
                             uint64_t count);

  // The failure every call on this communicator reports, if the board is marked failed.
  core::Result failure() const;
  // Before this rank enqueues call next_call(): confirms an earlier refusal of this rank (waiting for
  // the other ranks to record it; watchdog_ns bounds the wait when not 0) and compares with one
  // peer. An error marks the board failed.
  core::Result check_before_enqueue(uint64_t watchdog_ns);
  // Records the next call: enqueued with `sig`, or refused (sig ignored).
  void record(bool refused, const Signature &sig);
  // Marks the board failed: this rank could not complete what it recorded (an enqueue that failed
  // after the call was recorded).
  void fail(const std::string &why);
  uint64_t next_call() const { return calls_ + 1; }

 private:
  struct Entry;
  struct Row;
  struct Header;
  Header *header() const;
  Row *row(int r) const;
  // Rank r's entry for call k, if it is still in its ring; false if r has not recorded k or k has
  // left the ring.
  bool read_entry(int r, uint64_t k, uint64_t *digest, Signature *sig) const;
  uint64_t decided(int r) const;
  // Compares this rank's record with rank q's at call k (both have recorded it); on a difference,
  // marks the board failed naming the first call that differs and returns the failure.
  core::Result compare(int q, uint64_t k);
  std::string describe(int r, uint64_t k, const Signature &sig) const;
  core::Result mark_failed(const std::string &message);

  char *memory_;
  int rank_, size_;
  uint64_t calls_ = 0;         // calls recorded by this rank
  uint64_t digest_ = 0;        // over calls 1..calls_
  uint64_t unconfirmed_ = 0;   // the latest refusal of this rank not yet confirmed (0: none)
  uint64_t peer_turn_ = 0;     // which peer the next comparison reads
};

}  // namespace mpix::coll
