// Two-sided stream messages, many lists enqueued ahead of a stream that cannot move: in each pair
// (0,1), (2,3), ... the even rank's stream first waits for a message its partner sends only after a
// barrier, and before that barrier the even rank starts kLists sends, each its own list (toward
// another node, each list's puts complete on a counter of their own: none may make the host wait
// for the held stream, or the barrier is never reached). Then the partner receives them, in MPI's
// order per tag, byte-exact.
#include "test_common.h"

using namespace mt;

namespace {

constexpr int kLists = 100;
constexpr size_t kBytes = 64;
constexpr int kHoldTag = 99;

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "queue_lists_ahead");
  const int partner = g_rank ^ 1;
  const bool active = partner < g_size;
  {
    StreamQueue Q;
    DevBuf out(kLists * kBytes), in(kLists * kBytes), hold(8);
    std::vector<MPI_Request> reqs(kLists + 1, MPI_REQUEST_NULL);
    // The first two-sided call on a communicator is collective: a message to itself on every rank.
    MT_OK(MPIX_Enqueue_send(hold.p, 8, MPI_BYTE, g_rank, 0, MPI_COMM_WORLD, Q.q, &reqs[0]));
    MT_OK(MPIX_Enqueue_recv(in.p, 8, MPI_BYTE, g_rank, 0, MPI_COMM_WORLD, Q.q, &reqs[1]));
    MT_OK(MPIX_Enqueue_start(Q.q));
    MT_OK(MPIX_Enqueue_wait(Q.q));
    MT_OK(MPI_Waitall(2, reqs.data(), MPI_STATUSES_IGNORE));
    if (active && g_rank % 2 == 0) {
      for (int i = 0; i < kLists; ++i) out.upload(pattern(kBytes, key(g_rank, i)), i * kBytes);
      MT_OK(MPIX_Enqueue_recv(hold.p, 8, MPI_BYTE, partner, kHoldTag, MPI_COMM_WORLD, Q.q, &reqs[kLists]));
      MT_OK(MPIX_Enqueue_start(Q.q));
      MT_OK(MPIX_Enqueue_wait(Q.q));  // the stream holds here until the partner's message
      for (int i = 0; i < kLists; ++i) {
        g_context = fmt("send list %d", i);
        MT_OK(MPIX_Enqueue_send(out.p + i * kBytes, kBytes, MPI_BYTE, partner, i % 8, MPI_COMM_WORLD, Q.q, &reqs[i]));
        MT_OK(MPIX_Enqueue_start(Q.q));
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (active && g_rank % 2 == 1) {
      MT_OK(MPIX_Enqueue_send(hold.p, 8, MPI_BYTE, partner, kHoldTag, MPI_COMM_WORLD, Q.q, &reqs[kLists]));
      MT_OK(MPIX_Enqueue_start(Q.q));
      for (int i = 0; i < kLists; ++i)
        MT_OK(MPIX_Enqueue_recv(in.p + i * kBytes, kBytes, MPI_BYTE, partner, i % 8, MPI_COMM_WORLD, Q.q, &reqs[i]));
      MT_OK(MPIX_Enqueue_start(Q.q));
      MT_OK(MPIX_Enqueue_wait(Q.q));
    }
    MT_OK(MPI_Waitall(kLists + 1, reqs.data(), MPI_STATUSES_IGNORE));
    MT_SYNC(Q.stream);
    if (active && g_rank % 2 == 1) {
      const std::vector<uint8_t> got = in.download();
      for (int i = 0; i < kLists; ++i) {
        g_context = fmt("message %d", i);
        const std::vector<uint8_t> want = pattern(kBytes, key(partner, i));
        MT_CHECK(std::equal(want.begin(), want.end(), got.begin() + i * kBytes));
      }
    }
  }
  return finish();
}
