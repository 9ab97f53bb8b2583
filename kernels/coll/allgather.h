// The steps of allgather, and of alltoall, a personal allgather (peer q gets block q): pipelined
// direct pushes, the ring, and kLL lines (schedule.h: Schedule).
#pragma once
#include <cstdint>

#include "schedule.h"

namespace mpix::coll::detail {

// Allgather (every peer gets my block) or alltoall (peer q gets my block q): pushed into slot
// `me` of each peer's scratch, then every rank copies its slots out into its receive blocks.
// Software-pipelined over the call's rounds: phase i pushes round i and copies round i - 1 out,
// so writes to the peers and local copies are in flight together and a round costs one barrier,
// not two. The last phase only copies out. Round numbers and flags are those of the other
// schedules (arrive(0, src) = r; freed = r + 2 once round r is copied out), so calls of every
// kind follow each other on one communicator.
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::gather_pipelined(bool personal) {
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
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::allgather_ring(const Round &rd) {
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
template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE const char *Schedule<X>::src_block(int q, bool personal, uint64_t off) const {
  return send() + (personal ? q * a_.count * esize_ : 0) + off;
}

// The round's block for every peer, once all may take it: push(qs, srcs, k, bytes) with peers
// qs[j] and their blocks srcs[j], j < k, in push_peer order (Indexed, not arrays); then my own
// block is copied into place (unless it is there already: in place).
template <class X>
template <class Push>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::for_each_block(const Round &rd, bool personal, Push &&push) {
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

template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::push_blocks(const Round &rd, bool personal) {
  for_each_block(rd, personal, [&](const auto &qs, const auto &srcs, int k, uint64_t bytes) {
    for (int j = 0; j < k; ++j) x_.copy(scratch(qs[j], rd.r) + me_ * slot_bytes(), srcs[j], bytes);
  });
}

template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::copy_out_blocks(const Round &rd) {
  const uint64_t block = a_.count * esize_, off = rd.first * esize_, bytes = rd.elems * esize_;
  for (int k = 1; k < n_; ++k) {
    const int q = push_peer(-k);  // peer me - k reached me at its step k
    wait_arrived(0, q, rd.r);
    x_.copy(recv() + q * block + off, scratch(me_, rd.r) + q * slot_bytes(), bytes);
  }
}

template <class X>
MPIX_HOST_DEVICE MPIX_FORCEINLINE void Schedule<X>::gather_lines(const Round &rd, bool personal) {
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

}  // namespace mpix::coll::detail
