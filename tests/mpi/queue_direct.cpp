// Direct pulls of long node-local messages (doc/guide/two-sided.md, Long messages): a receive
// whose process mapped the send buffer's allocation reads the message straight from it. The
// program runs with MPIX_ST_P2P_DIRECT=require, where a long receive completed on the host whose
// message went through the mailbox fails: every send here is called before its receive is waited
// for, with a barrier between, so each sender's host has published its buffer first and every
// message must be pulled.
//   - exchanges right and left of several long sizes, byte-exact, the bytes after each buffer
//     untouched, MPI_Get_count the length; sends from two offsets of one allocation;
//   - a shorter message into a longer receive; a longer one: MPI_ERR_TRUNCATE, nothing written (the
//     receive drops it, nothing pulled), and the channel's next message intact;
//   - a long message to itself;
//   - an exchange captured into a graph after its buffers were published, replayed with new data;
//   - GPU backends, on a communicator of their own: sends from more allocations than a pair's keys
//     (work::kSourceEntries): the first ones are pulled, the others arrive through the mailbox and
//     say so (require), all intact. (The host backend reads any buffer by cross-memory attach: one
//     key.)
#include "queue_long.h"

#include <cstdlib>
#include <cstring>

using namespace mt;

namespace {

size_t g_slot = 0;
constexpr size_t kMargin = kLongMargin;
constexpr int kKeys = 32;  // work::kSourceEntries

int right() { return (g_rank + 1) % g_size; }
int left() { return (g_rank + g_size - 1) % g_size; }

// Sends of `sizes` right (tag 1) and left (tag 2) from `out` at `at[i]`, a barrier, then their
// receives and the wait point.
void exchange(StreamQueue &Q, const std::vector<size_t> &sizes, DevBuf &out, const std::vector<size_t> &at) {
  g_context = fmt("exchange of %zu long messages (first %zu bytes)", sizes.size(), sizes[0]);
  std::vector<DevBuf> in;
  std::vector<MPI_Request> reqs(4 * sizes.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < sizes.size(); ++i)
    for (int dir = 0; dir < 2; ++dir) {
      out.upload(pattern(sizes[i], key(g_rank, i, dir, 1)), at[2 * i + dir]);
      in.emplace_back(sizes[i] + kMargin);
      in.back().upload(pattern(sizes[i] + kMargin, key(g_rank, i, dir, 2)));
    }
  for (size_t i = 0; i < sizes.size(); ++i)
    for (int dir = 0; dir < 2; ++dir)
      MT_OK(MPIX_Enqueue_send(out.p + at[2 * i + dir], static_cast<int>(sizes[i]), MPI_BYTE, dir ? left() : right(),
                              1 + dir, MPI_COMM_WORLD, Q.q, &reqs[4 * i + 2 * dir]));
  MT_OK(MPIX_Enqueue_start(Q.q));
  MPI_Barrier(MPI_COMM_WORLD);  // every buffer published before a receive goes in a list
  for (size_t i = 0; i < sizes.size(); ++i)
    for (int dir = 0; dir < 2; ++dir)
      MT_OK(MPIX_Enqueue_recv(in[2 * i + dir].p, static_cast<int>(sizes[i] + kMargin), MPI_BYTE,
                              dir ? right() : left(), 1 + dir, MPI_COMM_WORLD, Q.q, &reqs[4 * i + 2 * dir + 1]));
  MT_OK(MPIX_Enqueue_start(Q.q));
  MT_OK(MPIX_Enqueue_wait(Q.q));
  std::vector<MPI_Status> st(reqs.size());
  MT_OK(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data()));
  MT_SYNC(Q.stream);
  for (size_t i = 0; i < sizes.size(); ++i)
    for (int dir = 0; dir < 2; ++dir) {
      const int from = dir ? right() : left();
      auto want = pattern(sizes[i] + kMargin, key(g_rank, i, dir, 2));
      const auto sent = pattern(sizes[i], key(from, i, dir, 1));
      std::copy(sent.begin(), sent.end(), want.begin());
      MT_SAME_BYTES(in[2 * i + dir].download().data(), want.data(), want.size(),
                    fmt("message %zu (%zu bytes) from the %s, and the margin", i, sizes[i], dir ? "right" : "left"));
      int got = -1;
      MPI_Get_count(&st[4 * i + 2 * dir + 1], MPI_BYTE, &got);
      MT_CHECKF(got == static_cast<int>(sizes[i]), "message %zu: MPI_Get_count %d, want %zu", i, got, sizes[i]);
    }
}

void exchanges(StreamQueue &Q) {
  const size_t s = g_slot;
  const std::vector<size_t> sizes = {s + 1, 3 * s + 5, 8 * s};
  size_t total = 0;
  std::vector<size_t> at;
  for (size_t n : sizes)
    for (int dir = 0; dir < 2; ++dir) at.push_back(total), total += n + 4096 + 8;  // unaligned offsets
  DevBuf out(total);
  exchange(Q, sizes, out, at);
  exchange(Q, sizes, out, at);  // the same buffers again: published once
}

// Published by an eager exchange first, then captured and replayed with new data each time.
void captured(StreamQueue &Q) {
  const size_t n = 6 * g_slot + 40;
  DevBuf out(n), in(n);
  g_context = "eager exchange before the capture";
  {
    MPI_Request r[2];
    out.upload(pattern(n, key(g_rank, 99, 10)));
    MT_OK(MPIX_Enqueue_send(out.p, static_cast<int>(n), MPI_BYTE, right(), 10, MPI_COMM_WORLD, Q.q, &r[0]));
    MT_OK(MPIX_Enqueue_start(Q.q));
    MPI_Barrier(MPI_COMM_WORLD);
    MT_OK(MPIX_Enqueue_recv(in.p, static_cast<int>(n), MPI_BYTE, left(), 10, MPI_COMM_WORLD, Q.q, &r[1]));
    MT_OK(MPIX_Enqueue_start(Q.q));
    MT_OK(MPIX_Enqueue_wait(Q.q));
    MT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    MT_SYNC(Q.stream);
    const auto want = pattern(n, key(left(), 99, 10));
    MT_SAME_BYTES(in.download().data(), want.data(), n, "eager");
  }
  g_context = "a captured exchange of long messages";
  MPI_Request r[2];
  xdev::stream_begin_capture(Q.stream);
  MT_OK(MPIX_Enqueue_send(out.p, static_cast<int>(n), MPI_BYTE, right(), 10, MPI_COMM_WORLD, Q.q, &r[0]));
  MT_OK(MPIX_Enqueue_recv(in.p, static_cast<int>(n), MPI_BYTE, left(), 10, MPI_COMM_WORLD, Q.q, &r[1]));
  MT_OK(MPIX_Enqueue_start(Q.q));
  MT_OK(MPIX_Enqueue_wait(Q.q));
  void *graph = xdev::stream_end_capture(Q.stream);
  MT_CHECKF(graph != nullptr, "the capture made a graph");
  MT_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  for (int rep = 0; rep < 3 && graph && !g_failures; ++rep) {
    out.upload(pattern(n, key(g_rank, rep, 10)));
    MPI_Barrier(MPI_COMM_WORLD);  // the data is in before any peer's replay may read it
    xdev::graph_launch(graph, Q.stream);
    MT_SYNC(Q.stream);
    MPI_Barrier(MPI_COMM_WORLD);  // and read before the next upload
    const auto want = pattern(n, key(left(), rep, 10));
    MT_SAME_BYTES(in.download().data(), want.data(), n, fmt("replay %d", rep));
  }
  if (graph) xdev::graph_destroy(graph);
}

// More allocations than a pair has keys (GPU backends), on a communicator of their own: the first
// kKeys messages to the right are pulled, later ones travel through the mailbox, which require
// reports; all arrive intact.
void keys_used_up(StreamQueue &Q) {
  if (!kCuda) return;
  g_context = "more send allocations than keys";
  MPI_Comm comm;  // keys are per communicator: a fresh one has them all
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const size_t n = g_slot + 512;
  const int count = kKeys + 4;
  // Distinct allocations, all alive: a freed one's address may come back as the same allocation
  // (the runtime's handle says so, and the key it had still reaches it).
  std::vector<DevBuf> outs;
  for (int i = 0; i < count; ++i) outs.emplace_back(n);
  for (int i = 0; i < count && !g_failures; ++i) {
    DevBuf &out = outs[i];
    DevBuf in(n);
    out.upload(pattern(n, key(g_rank, i, 11)));
    MPI_Request r[2];
    MT_OK(MPIX_Enqueue_send(out.p, static_cast<int>(n), MPI_BYTE, right(), 11, comm, Q.q, &r[0]));
    MT_OK(MPIX_Enqueue_start(Q.q));
    MPI_Barrier(comm);
    MT_OK(MPIX_Enqueue_recv(in.p, static_cast<int>(n), MPI_BYTE, left(), 11, comm, Q.q, &r[1]));
    MT_OK(MPIX_Enqueue_start(Q.q));
    MT_OK(MPIX_Enqueue_wait(Q.q));
    MT_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    const int rc = MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MT_SYNC(Q.stream);
    if (i < kKeys) {
      MT_OK(rc);
    } else {
      MT_CHECKF(error_class(rc) == MPI_ERR_OTHER && contains(error_string(rc), "through the mailbox"),
                "message %d: MPI_Wait returned %s (%s), want MPI_ERR_OTHER for a message through the mailbox", i,
                class_name(error_class(rc)), error_string(rc).c_str());
    }
    const auto want = pattern(n, key(left(), i, 11));
    MT_SAME_BYTES(in.download().data(), want.data(), n, fmt("message %d", i));
  }
  MPI_Comm_free(&comm);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "queue_direct");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  g_slot = long_slot_bytes();
  const char *mode = std::getenv("MPIX_ST_P2P_DIRECT");
  MT_CHECKF(mode && std::strcmp(mode, "require") == 0, "runs with MPIX_ST_P2P_DIRECT=require (it is %s)",
            mode ? mode : "unset");
  note("mailbox %zu bytes", g_slot);
  {
    StreamQueue Q;
    exchanges(Q);
    long_into(Q, 3 * g_slot + 5, 5 * g_slot, true);  // shorter than the receive
    long_into(Q, 3 * g_slot + 5, 2 * g_slot, true);  // longer: dropped
    long_self(Q, 5 * g_slot + 3);
    captured(Q);
    keys_used_up(Q);
  }
  return finish();
}
