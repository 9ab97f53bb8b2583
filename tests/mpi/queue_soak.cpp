// Two-sided stream messages, soak: 10^4 messages per rank to its right neighbour (and 1 in 10 to
// itself), byte-exact. Sizes 0..4096 bytes (mostly small), tags 0..15 in turn (channels shared by
// two tags, at most 7 of a batch's messages per channel), batches of 50 messages per start/wait alternating HPE's and MPICH's spelling (HPE's requests
// freed before they complete), 20 batches in flight between stream synchronisations; every
// message's bytes are checked.
#include "test_common.h"

using namespace mt;

namespace {

constexpr int kMessages = 10000;
constexpr int kBatch = 50;
constexpr int kBatchesInFlight = 20;

struct Msg {
  int peer, tag;
  size_t bytes, at;
  uint64_t id;
};

size_t size_of(uint64_t h) {
  switch (h % 8) {
    case 0: return 0;
    case 1: return 4096;
    case 2: return h % 4097;
    default: return (h >> 8) % 257;
  }
}

// The messages rank `src` sends in batch b, in order (the receiver derives the same list).
std::vector<Msg> batch(int src, int b) {
  std::vector<Msg> v;
  size_t at = 0;
  for (int i = 0; i < kBatch; ++i) {
    const uint64_t id = static_cast<uint64_t>(b) * kBatch + i;
    const uint64_t h = key(src, id, 11);
    // Tags in turn: each channel gets at most 7 of a batch's messages to a peer (a channel holds 8).
    Msg m{h % 10 == 0 ? src : (src + 1) % g_size, (3 * i + b) % 16, size_of(h >> 24), at, id};
    at += m.bytes;
    v.push_back(m);
  }
  return v;
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "queue_soak");
  const int left = (g_rank + g_size - 1) % g_size;
  void *s = stream_create();
  MPIX_Queue q;
  MT_OK(MPIX_Create_queue(s, &q));
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", kCuda ? "cudaStream_t" : "MPIX_Host_stream");
  MT_OK(MPIX_Info_set_hex(info, "value", &s, sizeof s));
  MPIX_Stream ms;
  MT_OK(MPIX_Stream_create(info, &ms));
  MPI_Info_free(&info);
  MPI_Comm scomm;
  MT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, ms, &scomm));

  const size_t slot = kBatch * 4096;
  DevBuf out(slot * kBatchesInFlight), in(2 * slot * kBatchesInFlight);
  std::vector<MPI_Request> reqs;
  long checked = 0;
  const double t0 = now_s();
  const int batches = kMessages / kBatch;
  for (int b0 = 0; b0 < batches; b0 += kBatchesInFlight) {
    g_context = fmt("batches %d..%d", b0, b0 + kBatchesInFlight - 1);
    std::vector<uint8_t> host(out.n);
    for (int b = b0; b < b0 + kBatchesInFlight; ++b)
      for (const Msg &m : batch(g_rank, b))
        fill_pattern(host.data() + (b - b0) * slot + m.at, m.bytes, key(g_rank, m.id, 12));
    out.upload(host);
    for (int b = b0; b < b0 + kBatchesInFlight; ++b) {
      const bool hpe = b % 2 == 0;
      const MPI_Comm comm = hpe ? MPI_COMM_WORLD : scomm;
      char *o = reinterpret_cast<char *>(out.p) + (b - b0) * slot;
      char *from_left = reinterpret_cast<char *>(in.p) + 2 * (b - b0) * slot, *from_self = from_left + slot;
      // Receives first (from the left neighbour, then from itself), in each sender's order.
      auto post_recvs = [&](int src, char *base) {
        for (const Msg &m : batch(src, b)) {
          if (m.peer != g_rank) continue;
          reqs.emplace_back();
          if (hpe) MT_OK(MPIX_Enqueue_recv(base + m.at, 4096, MPI_BYTE, src, m.tag, comm, q, &reqs.back()));
          else MT_OK(MPIX_Irecv_enqueue(base + m.at, 4096, MPI_BYTE, src, m.tag, comm, &reqs.back()));
        }
      };
      if (left != g_rank) post_recvs(left, from_left);
      post_recvs(g_rank, from_self);
      for (const Msg &m : batch(g_rank, b)) {
        reqs.emplace_back();
        if (hpe) MT_OK(MPIX_Enqueue_send(o + m.at, static_cast<int>(m.bytes), MPI_BYTE, m.peer, m.tag, comm, q, &reqs.back()));
        else MT_OK(MPIX_Isend_enqueue(o + m.at, static_cast<int>(m.bytes), MPI_BYTE, m.peer, m.tag, comm, &reqs.back()));
      }
      if (hpe) {
        MT_OK(MPIX_Enqueue_start(q));
        MT_OK(MPIX_Enqueue_wait(q));
        for (MPI_Request &r : reqs) MT_OK(MPI_Request_free(&r));  // they complete on the stream later
      } else {
        MT_OK(MPIX_Waitall_enqueue(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
      }
      reqs.clear();
    }
    MT_SYNC(s);
    const auto got = in.download();
    for (int b = b0; b < b0 + kBatchesInFlight; ++b) {
      auto verify = [&](int src, size_t base) {
        for (const Msg &m : batch(src, b)) {
          if (m.peer != g_rank) continue;
          const auto want = pattern(m.bytes, key(src, m.id, 12));
          if (!MT_SAME_BYTES(got.data() + base + m.at, want.data(), m.bytes, fmt("message %llu from rank %d",
                                                                                 (unsigned long long)m.id, src)))
            return;
          ++checked;
        }
      };
      if (left != g_rank) verify(left, 2 * (b - b0) * slot);
      verify(g_rank, 2 * (b - b0) * slot + slot);
    }
  }
  const double dt = now_s() - t0;
  long total = 0;
  MPI_Allreduce(&checked, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  note("queue_soak: %ld messages checked byte-exact over %d ranks in %.2f s", total, g_size, dt);
  MT_CHECKF(total == static_cast<long>(kMessages) * g_size, "%ld messages checked, want %ld", total,
            static_cast<long>(kMessages) * g_size);
  MPI_Comm_free(&scomm);
  MT_OK(MPIX_Stream_free(&ms));
  MT_OK(MPIX_Free_queue(q));
  stream_destroy(s);
  return finish();
}
