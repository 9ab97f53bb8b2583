// Two-sided stream messages: MPI's order per source and tag with many tags and many messages in
// flight. Every rank sends to every rank (itself included) 2 messages of each of 11 tags (tags 8, 9
// and 17 share channels with 0 and 1), interleaved, sizes 0..3000 bytes, all in one start; each
// receiver posts them channel by channel in the reverse order (the order across channels differs
// from the sender's, within a channel it is the same), buffers sometimes longer than the message.
// Both spellings; completion by the stream or on the host. Then one direction only: rank 0 sends
// 3 rounds of a channel's mailboxes (24 messages) in one start, so its stream waits for the
// receiver's rounds, and the lists of each round come in turn.
#include "test_common.h"

using namespace mt;

namespace {

const int kTags[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 17};
constexpr int kNumTags = sizeof kTags / sizeof kTags[0];
constexpr int kPerTag = 2;

size_t msg_bytes(uint64_t seed, int src, int dst, int tag, int k) {
  const uint64_t h = key(seed, src * 1000 + dst, tag, k);
  return h % 5 == 0 ? 0 : h % 3001;
}
size_t slack(uint64_t seed, int src, int dst, int tag, int k) { return key(seed, src, dst, tag * 100 + k) % 2 ? 100 : 0; }

struct Msg {
  int peer, tag, k;
  size_t bytes, cap, at;  // at: offset in the arena
  MPI_Request req = MPI_REQUEST_NULL;
};

// The messages this rank sends (to = true) or receives, in the order it makes the calls.
std::vector<Msg> plan(uint64_t seed, bool to) {
  std::vector<Msg> v;
  size_t at = 0;
  for (int peer = 0; peer < g_size; ++peer) {
    if (to) {
      for (int k = 0; k < kPerTag; ++k)
        for (int t = 0; t < kNumTags; ++t) {
          const int tag = kTags[(t + g_rank) % kNumTags];  // an order per sender
          Msg m{peer, tag, k, msg_bytes(seed, g_rank, peer, tag, k), 0, at};
          m.cap = m.bytes;
          at += m.bytes;
          v.push_back(m);
        }
    } else {
      // The sender's order restricted to each channel, channels from the last to the first.
      for (int ch = 7; ch >= 0; --ch)
        for (int k = 0; k < kPerTag; ++k)
          for (int t = 0; t < kNumTags; ++t) {
            const int tag = kTags[(t + peer) % kNumTags];
            if (tag % 8 != ch) continue;
            Msg m{peer, tag, k, msg_bytes(seed, peer, g_rank, tag, k), 0, at};
            m.cap = m.bytes + slack(seed, peer, g_rank, tag, k);
            at += m.cap;
            v.push_back(m);
          }
    }
  }
  return v;
}

size_t arena_bytes(const std::vector<Msg> &v) {
  size_t n = 1;
  for (const Msg &m : v) n = std::max(n, m.at + m.cap);
  return n;
}

void check(uint64_t seed, std::vector<Msg> &recvs, DevBuf &in, std::vector<MPI_Status> &st) {
  const auto got = in.download();
  for (size_t i = 0; i < recvs.size(); ++i) {
    const Msg &m = recvs[i];
    const auto want = pattern(m.bytes, key(seed, m.peer * 1000 + g_rank, m.tag, m.k));
    MT_SAME_BYTES(got.data() + m.at, want.data(), m.bytes, fmt("from %d tag %d #%d", m.peer, m.tag, m.k));
    if (st.empty()) continue;
    int count = -1;
    MPI_Get_count(&st[i], MPI_BYTE, &count);
    MT_CHECKF(count == static_cast<int>(m.bytes) && st[i].MPI_SOURCE == m.peer && st[i].MPI_TAG == m.tag,
              "status of the message from %d tag %d #%d: count %d (want %zu) source %d tag %d", m.peer, m.tag, m.k,
              count, m.bytes, st[i].MPI_SOURCE, st[i].MPI_TAG);
  }
}

void fill(uint64_t seed, std::vector<Msg> &sends, DevBuf &out) {
  std::vector<uint8_t> host(out.n);
  for (const Msg &m : sends) fill_pattern(host.data() + m.at, m.bytes, key(seed, g_rank * 1000 + m.peer, m.tag, m.k));
  out.upload(host);
}

// HPE's spelling: one start, then MPIX_Enqueue_wait (or only MPI_Waitall on the host).
void hpe(uint64_t seed, MPI_Comm comm, bool stream_wait) {
  g_context = fmt("MPIX_Queue, seed %llu, %s", (unsigned long long)seed, stream_wait ? "stream wait" : "host wait");
  void *s = stream_create();
  MPIX_Queue q;
  MT_OK(MPIX_Create_queue(s, &q));
  auto sends = plan(seed, true), recvs = plan(seed, false);
  DevBuf out(arena_bytes(sends)), in(arena_bytes(recvs));
  fill(seed, sends, out);
  for (Msg &m : sends)
    MT_OK(MPIX_Enqueue_send(out.p + m.at, static_cast<int>(m.bytes), MPI_BYTE, m.peer, m.tag, comm, q, &m.req));
  for (Msg &m : recvs)
    MT_OK(MPIX_Enqueue_recv(in.p + m.at, static_cast<int>(m.cap), MPI_BYTE, m.peer, m.tag, comm, q, &m.req));
  MT_OK(MPIX_Enqueue_start(q));
  if (stream_wait) MT_OK(MPIX_Enqueue_wait(q));
  std::vector<MPI_Request> reqs;
  for (Msg &m : recvs) reqs.push_back(m.req);
  std::vector<MPI_Status> st(reqs.size());
  MT_OK(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), st.data()));
  reqs.clear();
  for (Msg &m : sends) reqs.push_back(m.req);
  MT_OK(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
  MT_SYNC(s);
  check(seed, recvs, in, st);
  MT_OK(MPIX_Free_queue(q));
  stream_destroy(s);
}

// MPICH's spelling: sends start at their call; one MPIX_Waitall_enqueue.
void mpich(uint64_t seed) {
  g_context = fmt("MPICH spelling, seed %llu", (unsigned long long)seed);
  void *s = stream_create();
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", kCuda ? "cudaStream_t" : "MPIX_Host_stream");
  MT_OK(MPIX_Info_set_hex(info, "value", &s, sizeof s));
  MPIX_Stream ms;
  MT_OK(MPIX_Stream_create(info, &ms));
  MPI_Info_free(&info);
  MPI_Comm comm;
  MT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &comm));
  auto sends = plan(seed, true), recvs = plan(seed, false);
  DevBuf out(arena_bytes(sends)), in(arena_bytes(recvs));
  fill(seed, sends, out);
  std::vector<MPI_Request> reqs;
  for (Msg &m : recvs) {
    MT_OK(MPIX_Irecv_enqueue(in.p + m.at, static_cast<int>(m.cap), MPI_BYTE, m.peer, m.tag, comm, &m.req));
    reqs.push_back(m.req);
  }
  for (Msg &m : sends) {
    MT_OK(MPIX_Isend_enqueue(out.p + m.at, static_cast<int>(m.bytes), MPI_BYTE, m.peer, m.tag, comm, &m.req));
    reqs.push_back(m.req);
  }
  std::vector<MPI_Status> st(reqs.size());
  MT_OK(MPIX_Waitall_enqueue(static_cast<int>(reqs.size()), reqs.data(), st.data()));
  MT_SYNC(s);
  st.resize(recvs.size());
  if (kCuda) st.clear();  // stream-filled counts: host backend only
  check(seed, recvs, in, st);
  MPI_Comm_free(&comm);
  MT_OK(MPIX_Stream_free(&ms));
  stream_destroy(s);
}

// Rank 0 sends 3 * 8 messages of one tag to rank 1 in one start (three send lists, the later ones
// waiting for rank 1's receive lists); rank 1 receives them in one wait (three receive lists).
void one_way_rounds() {
  if (g_size < 2) return;
  MPI_Comm pair;  // ranks 0 and 1 (a new communicator: its channels start at round 0)
  MPI_Comm_split(MPI_COMM_WORLD, g_rank <= 1 ? 0 : MPI_UNDEFINED, g_rank, &pair);
  if (pair == MPI_COMM_NULL) return;
  g_context = "one-way rounds";
  const int n = 24, bytes = 333;
  void *s = stream_create();
  MPIX_Queue q;
  MT_OK(MPIX_Create_queue(s, &q));
  DevBuf buf(n * bytes);
  if (g_rank == 0) buf.upload(pattern(n * bytes, key(77)));
  std::vector<MPI_Request> r(n);
  const unsigned long long before = MPIX_St_stream_ops_enqueued();
  for (int i = 0; i < n; ++i) {
    if (g_rank == 0) MT_OK(MPIX_Enqueue_send(buf.p + i * bytes, bytes, MPI_BYTE, 1, 12, pair, q, &r[i]));
    else MT_OK(MPIX_Enqueue_recv(buf.p + i * bytes, bytes, MPI_BYTE, 0, 12, pair, q, &r[i]));
  }
  MT_OK(MPIX_Enqueue_start(q));
  MT_OK(MPIX_Enqueue_wait(q));
  const unsigned long long ops = MPIX_St_stream_ops_enqueued() - before;
  MT_CHECKF(ops == 3, "%llu stream operations for 24 messages of one channel, want 3", ops);
  MT_OK(MPI_Waitall(n, r.data(), MPI_STATUSES_IGNORE));
  MT_SYNC(s);
  if (g_rank == 1) {
    const auto want = pattern(n * bytes, key(77));
    MT_SAME_BYTES(buf.download().data(), want.data(), n * bytes, "24 messages in three rounds");
  }
  MT_OK(MPIX_Free_queue(q));
  stream_destroy(s);
  MPI_Comm_free(&pair);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "queue_order");
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  hpe(1, MPI_COMM_WORLD, true);
  hpe(2, dup, true);
  hpe(3, MPI_COMM_WORLD, false);
  mpich(4);
  mpich(5);
  one_way_rounds();
  MPI_Comm_free(&dup);
  return finish();
}
