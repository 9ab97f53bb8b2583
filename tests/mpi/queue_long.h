// Steps shared by the tests of two-sided messages longer than a mailbox (queue_large, queue_direct).
#pragma once
#include <cstdlib>

#include "test_common.h"

namespace mt {

constexpr size_t kLongMargin = 64;  // bytes after each receive buffer that nothing may write

// MPIX_ST_P2P_SLOT_KIB where set, else the backend's default mailbox.
inline size_t long_slot_bytes() {
  if (const char *v = std::getenv("MPIX_ST_P2P_SLOT_KIB")) return std::strtoul(v, nullptr, 10) << 10;
  return kCuda ? 1u << 20 : 16u << 10;
}

// A message of `sent` bytes to the right into a receive of `room` on tag 5, then a short one on the
// same channel (tag 13), which must arrive intact whatever happened to the first. `sends_first`:
// the sends start and every rank passes a barrier before the receives are called (each sender's
// buffer is published before its receiver's list goes out: direct pulls).
inline void long_into(StreamQueue &Q, size_t sent, size_t room, bool sends_first) {
  g_context = fmt("%zu bytes into a receive of %zu", sent, room);
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  const size_t after = 100;
  DevBuf out(sent), in(room + kLongMargin), out2(after), in2(after);
  out.upload(pattern(sent, key(g_rank, sent, room, 3)));
  out2.upload(pattern(after, key(g_rank, sent, room, 4)));
  const auto fill = pattern(room + kLongMargin, key(g_rank, 5));
  in.upload(fill);
  MPI_Request r[4];
  MT_OK(MPIX_Enqueue_send(out.p, static_cast<int>(sent), MPI_BYTE, right, 5, MPI_COMM_WORLD, Q.q, &r[0]));
  MT_OK(MPIX_Enqueue_send(out2.p, static_cast<int>(after), MPI_BYTE, right, 13, MPI_COMM_WORLD, Q.q, &r[1]));
  if (sends_first) {
    MT_OK(MPIX_Enqueue_start(Q.q));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MT_OK(MPIX_Enqueue_recv(in.p, static_cast<int>(room), MPI_BYTE, left, 5, MPI_COMM_WORLD, Q.q, &r[2]));
  MT_OK(MPIX_Enqueue_recv(in2.p, static_cast<int>(after), MPI_BYTE, left, 13, MPI_COMM_WORLD, Q.q, &r[3]));
  MT_OK(MPIX_Enqueue_start(Q.q));
  MT_OK(MPIX_Enqueue_wait(Q.q));
  MT_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));  // a send completes whatever its receiver took
  MT_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
  MPI_Status st;
  const int rc = MPI_Wait(&r[2], &st);
  MT_OK(MPI_Wait(&r[3], MPI_STATUS_IGNORE));
  MT_SYNC(Q.stream);
  auto want = fill;
  if (sent <= room) {
    MT_OK(rc);
    int got = -1;
    MPI_Get_count(&st, MPI_BYTE, &got);
    MT_CHECKF(got == static_cast<int>(sent), "MPI_Get_count %d, want %zu", got, sent);
    const auto s = pattern(sent, key(left, sent, room, 3));
    std::copy(s.begin(), s.end(), want.begin());
  } else {
    MT_CHECKF(error_class(rc) == MPI_ERR_TRUNCATE, "MPI_Wait returned %s, want MPI_ERR_TRUNCATE (%s)",
              class_name(error_class(rc)), error_string(rc).c_str());
  }
  MT_SAME_BYTES(in.download().data(), want.data(), want.size(), sent <= room ? "the message, nothing after" : "nothing written");
  const auto next = pattern(after, key(left, sent, room, 4));
  MT_SAME_BYTES(in2.download().data(), next.data(), after, "the channel's next message");
}

// A long message of `n` bytes to this rank itself, on tag 6.
inline void long_self(StreamQueue &Q, size_t n) {
  g_context = "a long message to itself";
  DevBuf out(n), in(n);
  out.upload(pattern(n, key(g_rank, 6)));
  MPI_Request r[2];
  MT_OK(MPIX_Enqueue_send(out.p, static_cast<int>(n), MPI_BYTE, g_rank, 6, MPI_COMM_WORLD, Q.q, &r[0]));
  MT_OK(MPIX_Enqueue_recv(in.p, static_cast<int>(n), MPI_BYTE, g_rank, 6, MPI_COMM_WORLD, Q.q, &r[1]));
  MT_OK(MPIX_Enqueue_start(Q.q));
  MT_OK(MPIX_Enqueue_wait(Q.q));
  MT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  MT_SYNC(Q.stream);
  const auto want = pattern(n, key(g_rank, 6));
  MT_SAME_BYTES(in.download().data(), want.data(), n, "to itself");
}

}  // namespace mt
