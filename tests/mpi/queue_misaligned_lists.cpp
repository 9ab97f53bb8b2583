// Two-sided stream messages, one-way traffic of one channel beyond its 8 mailboxes, the two sides'
// calls grouping the messages differently: rank 0 starts its sends in groups of `first`, then the
// rest; rank 1 waits for its receives in groups of `second`, then the rest. Each side's lists hold
// one round of 8 (n = 8r .. 8r + 7) of a channel, whatever the groups, so the sender's stream only
// waits for the receiver's, and nothing waits for itself; with lists of any 8 consecutive messages,
// sends [1..8] would wait for the receive of 0, which a receive list [0..7] makes only once 1..7
// arrived: both streams waiting forever. Byte-exact at the receiver.
#include "test_common.h"

using namespace mt;

namespace {

constexpr size_t kBytes = 64;
constexpr int kMessages = 27;

// Groups of `head`, then the rest, and, to vary them, a single message after each group.
bool group_ends(int i, int head) { return i == head - 1 || i == head || i == kMessages - 1 || (i > head && (i - head) % 9 == 0); }

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "queue_misaligned_lists");
  const int partner = g_rank ^ 1;
  const bool active = partner < g_size;
  const int cases[][2] = {{1, 9}, {9, 1}, {3, 5}, {8, 7}, {5, 13}};
  {
    StreamQueue Q;
    DevBuf out(kMessages * kBytes), in(kMessages * kBytes), self(8);
    std::vector<MPI_Request> reqs(kMessages, MPI_REQUEST_NULL);
    // The first two-sided call on a communicator is collective: a message to itself on every rank.
    MT_OK(MPIX_Enqueue_send(self.p, 8, MPI_BYTE, g_rank, 0, MPI_COMM_WORLD, Q.q, &reqs[0]));
    MT_OK(MPIX_Enqueue_recv(self.p, 8, MPI_BYTE, g_rank, 0, MPI_COMM_WORLD, Q.q, &reqs[1]));
    MT_OK(MPIX_Enqueue_start(Q.q));
    MT_OK(MPIX_Enqueue_wait(Q.q));
    MT_OK(MPI_Waitall(2, reqs.data(), MPI_STATUSES_IGNORE));
    int round = 0;
    for (const auto &c : cases) {
      const int sends = c[0], receives = c[1];
      ++round;
      if (active && g_rank % 2 == 0) {
        for (int i = 0; i < kMessages; ++i) out.upload(pattern(kBytes, key(g_rank, 100 * round + i)), i * kBytes);
        for (int i = 0; i < kMessages; ++i) {
          g_context = fmt("groups %d/%d, send %d", sends, receives, i);
          MT_OK(MPIX_Enqueue_send(out.p + i * kBytes, kBytes, MPI_BYTE, partner, 3, MPI_COMM_WORLD, Q.q, &reqs[i]));
          if (group_ends(i, sends)) MT_OK(MPIX_Enqueue_start(Q.q));
        }
      } else if (active) {
        for (int i = 0; i < kMessages; ++i) {
          g_context = fmt("groups %d/%d, receive %d", sends, receives, i);
          MT_OK(MPIX_Enqueue_recv(in.p + i * kBytes, kBytes, MPI_BYTE, partner, 3, MPI_COMM_WORLD, Q.q, &reqs[i]));
          if (group_ends(i, receives)) {
            MT_OK(MPIX_Enqueue_start(Q.q));
            MT_OK(MPIX_Enqueue_wait(Q.q));
          }
        }
      }
      if (active) {
        if (g_rank % 2 == 0) MT_OK(MPIX_Enqueue_wait(Q.q));
        MT_OK(MPI_Waitall(kMessages, reqs.data(), MPI_STATUSES_IGNORE));
        MT_SYNC(Q.stream);
      }
      if (active && g_rank % 2 == 1) {
        const std::vector<uint8_t> got = in.download();
        for (int i = 0; i < kMessages; ++i) {
          g_context = fmt("groups %d/%d, message %d", sends, receives, i);
          const std::vector<uint8_t> want = pattern(kBytes, key(partner, 100 * round + i));
          MT_CHECK(std::equal(want.begin(), want.end(), got.begin() + i * kBytes));
        }
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  return finish();
}
