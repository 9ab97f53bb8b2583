// p2p_bench: stream-ordered ping-pong between two ranks, per message size, four ways in one run:
//   enqueue     MPIX_Isend_enqueue / MPIX_Irecv_enqueue / MPIX_Waitall_enqueue on a stream
//               communicator (MPICH's spelling; where mpix-st defines it)
//   queue       MPIX_Enqueue_send / MPIX_Enqueue_recv / MPIX_Enqueue_start / MPIX_Enqueue_wait on an
//               MPIX_Queue (HPE's spelling)
//   host_mpi    MPI_Isend / MPI_Irecv after a stream synchronisation, from the device buffers where
//               the MPI reads them (xdev::mpi_reads_device_memory), else staged through pinned memory
//   rma_stream  stream epochs as rma_bench's (MPIX_Win_post_stream, MPI_Win_start with
//               MPIX_MODE_STREAM, MPI_Put, MPIX_Win_complete_stream, MPIX_Win_wait_stream), one put
//               per hop: rank 1 puts the pong after its wait for the ping
// Per size and way: --iters round trips enqueued back to back and one stream synchronisation, the
// slower rank's time per round trip; the median of --reps such repetitions. Sizes run from
// --min-bytes to the largest two-sided message (doc/guide/two-sided.md), times --step. After each
// way the last message received must hold the peer's pattern (exit 1 otherwise).
// Usage: mpiexec -n 2 p2p_bench [--iters N] [--reps N] [--warmup N] [--min-bytes B] [--max-bytes B]
//                               [--step F] [--json FILE]
#include <mpix/mpix_st.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.h"
#include "xdev.h"

namespace {

// The largest message one mailbox takes (doc/guide/two-sided.md, "What they take": Sizes), unless
// MPIX_ST_P2P_SLOT_KIB (decimal KiB, as the library reads it) sets it.
constexpr size_t kMailboxBytesHost = size_t(16) << 10;
constexpr size_t kMailboxBytesGpu = size_t(1) << 20;
size_t mailbox_bytes() {
  const char *kib = std::getenv("MPIX_ST_P2P_SLOT_KIB");
  if (kib && *kib && std::strspn(kib, "0123456789") == std::strlen(kib)) return std::strtoull(kib, nullptr, 10) << 10;
  return std::strcmp(MPIX_St_backend_name(), "host") == 0 ? kMailboxBytesHost : kMailboxBytesGpu;
}

struct Options {
  int iters = 100, reps = 5, warmup = 10, step = 4;
  size_t min_bytes = 8, max_bytes = 0;  // 0: the mailbox size
  std::string json;
};

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--iters") o.iters = std::max(1, std::atoi(next().c_str()));
    else if (a == "--reps") o.reps = std::max(1, std::atoi(next().c_str()));
    else if (a == "--warmup") o.warmup = std::max(0, std::atoi(next().c_str()));
    else if (a == "--step") o.step = std::max(2, std::atoi(next().c_str()));
    else if (a == "--min-bytes") o.min_bytes = std::max<size_t>(1, std::strtoull(next().c_str(), nullptr, 10));
    else if (a == "--max-bytes") o.max_bytes = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--json") o.json = next();
    else {
      std::fprintf(stderr, "p2p_bench: unknown option %s\n", a.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  return o;
}

// What every way uses: this rank, its stream, device buffers, and each way's communicator.
struct Pair {
  int rank = 0, peer = 1;
  void *stream = nullptr;
  char *send = nullptr, *recv = nullptr, *win_buf = nullptr;  // device memory
  char *host_send = nullptr, *host_recv = nullptr;            // staging (null: MPI reads device memory)
  MPI_Comm queue_comm = MPI_COMM_NULL, stream_comm = MPI_COMM_NULL;
  MPIX_Queue queue = MPIX_QUEUE_NULL;
  MPI_Win win = MPI_WIN_NULL;
  MPI_Group peer_group = MPI_GROUP_NULL;
};

// One round trip of each way (rank 0 pings, rank 1 answers), enqueued where the way allows.
constexpr int kTag = 0;

void enqueue_round_trip(const Pair &p, int n) {
#ifdef MPIX_ST_DEFINES_MPIX_STREAM
  MPI_Request r[2];
  if (p.rank == 0) {
    MPIX_Isend_enqueue(p.send, n, MPI_BYTE, p.peer, kTag, p.stream_comm, &r[0]);
    MPIX_Irecv_enqueue(p.recv, n, MPI_BYTE, p.peer, kTag, p.stream_comm, &r[1]);
    MPIX_Waitall_enqueue(2, r, MPI_STATUSES_IGNORE);  // frees the requests
  } else {
    MPIX_Irecv_enqueue(p.recv, n, MPI_BYTE, p.peer, kTag, p.stream_comm, &r[0]);
    MPIX_Wait_enqueue(&r[0], MPI_STATUS_IGNORE);
    MPIX_Isend_enqueue(p.send, n, MPI_BYTE, p.peer, kTag, p.stream_comm, &r[1]);
    MPIX_Wait_enqueue(&r[1], MPI_STATUS_IGNORE);  // a send: nothing on the stream, frees the request
  }
#else
  (void)p, (void)n;
#endif
}

void queue_round_trip(const Pair &p, int n) {
  MPI_Request r[2];
  if (p.rank == 0) {
    MPIX_Enqueue_send(p.send, n, MPI_BYTE, p.peer, kTag, p.queue_comm, p.queue, &r[0]);
    MPIX_Enqueue_recv(p.recv, n, MPI_BYTE, p.peer, kTag, p.queue_comm, p.queue, &r[1]);
    MPIX_Enqueue_start(p.queue);
    MPIX_Enqueue_wait(p.queue);
  } else {
    MPIX_Enqueue_recv(p.recv, n, MPI_BYTE, p.peer, kTag, p.queue_comm, p.queue, &r[0]);
    MPIX_Enqueue_start(p.queue);  // no sends: nothing on the stream
    MPIX_Enqueue_wait(p.queue);
    MPIX_Enqueue_send(p.send, n, MPI_BYTE, p.peer, kTag, p.queue_comm, p.queue, &r[1]);
    MPIX_Enqueue_start(p.queue);
  }
  // The stream completes them; freed requests go on until their lists ran (MPIX_Enqueue_send(3)).
  MPI_Request_free(&r[0]);
  MPI_Request_free(&r[1]);
}

void host_round_trip(const Pair &p, int n) {
  const bool staged = p.host_send != nullptr;
  MPI_Request r[2];
  auto recv = [&] { MPI_Irecv(staged ? p.host_recv : p.recv, n, MPI_BYTE, p.peer, kTag, MPI_COMM_WORLD, &r[0]); };
  auto send = [&] {
    xdev::stream_sync(p.stream);  // the data is the stream's: what was enqueued before must have run
    if (staged) xdev::copy_to_host(p.host_send, p.send, n);
    MPI_Isend(staged ? p.host_send : p.send, n, MPI_BYTE, p.peer, kTag, MPI_COMM_WORLD, &r[1]);
  };
  recv();
  if (p.rank == 1) {
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    if (staged) xdev::copy_to_device(p.recv, p.host_recv, n);
  }
  send();
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);  // rank 1: r[0] is null by now
  if (p.rank == 0 && staged) xdev::copy_to_device(p.recv, p.host_recv, n);
}

void rma_round_trip(const Pair &p, int n) {
  auto put = [&] {
    MPI_Win_start(p.peer_group, MPIX_MODE_STREAM, p.win);
    MPI_Put(p.send, n, MPI_BYTE, p.peer, 0, n, MPI_BYTE, p.win);
    MPIX_Win_complete_stream(p.win, p.stream);
  };
  MPIX_Win_post_stream(p.peer_group, p.win, p.stream);
  if (p.rank == 0) put();
  MPIX_Win_wait_stream(p.win, p.stream);
  if (p.rank == 1) put();
}

struct Way {
  const char *name;
  void (*round_trip)(const Pair &, int);
  bool into_window;  // where the received data lands
};

// Median over o.reps of the slower rank's microseconds per round trip; *ok: the data arrived.
double measure(const Pair &p, const Options &o, const Way &w, int n, int pattern, bool *ok) {
  xdev::fill(p.send, pattern + p.rank, n);
  xdev::fill(w.into_window ? p.win_buf : p.recv, 0, n);
  auto body = [&] { w.round_trip(p, n); };
  if (o.warmup > 0) bench::timed(o.warmup, p.stream, body);
  std::vector<double> us;
  for (int r = 0; r < o.reps; ++r) us.push_back(bench::timed(o.iters, p.stream, body) * 1e6);
  std::sort(us.begin(), us.end());
  std::vector<char> got(n);
  xdev::copy_to_host(got.data(), w.into_window ? p.win_buf : p.recv, n);
  *ok = std::all_of(got.begin(), got.end(), [&](char c) { return c == static_cast<char>(pattern + p.peer); });
  return us[us.size() / 2];
}

void write_json(const std::string &path, const Options &o, const std::vector<Way> &ways,
                const std::vector<size_t> &sizes, const std::vector<std::vector<double>> &us, size_t mailbox,
                bool staged, bool ok) {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "p2p_bench: cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(f, "{\n  \"benchmark\": \"p2p_bench\",\n  \"backend\": \"%s\",\n", MPIX_St_backend_name());
  std::fprintf(f,
               "  \"config\": {\"ranks\": 2, \"iters\": %d, \"reps\": %d, \"warmup\": %d, \"step\": %d, "
               "\"min_bytes\": %zu, \"max_bytes\": %zu, \"mailbox_bytes\": %zu, \"host_mpi\": \"%s\"},\n",
               o.iters, o.reps, o.warmup, o.step, sizes.front(), sizes.back(), mailbox, staged ? "staged" : "direct");
  std::fprintf(f, "  \"data_check\": \"%s\",\n  \"round_trip_us\": [", ok ? "passed" : "failed");
  for (size_t s = 0; s < sizes.size(); ++s) {
    std::fprintf(f, "%s\n    {\"bytes\": %zu", s ? "," : "", sizes[s]);
    for (size_t w = 0; w < ways.size(); ++w) std::fprintf(f, ", \"%s\": %.3f", ways[w].name, us[s][w]);
    std::fprintf(f, "}");
  }
  std::fprintf(f, "\n  ]\n}\n");
  std::fclose(f);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  Pair p;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (p.rank == 0) std::fprintf(stderr, "p2p_bench runs on exactly 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  Options o = parse(argc, argv);
  bench::init_device();
  const size_t mailbox = mailbox_bytes();
  if (o.max_bytes == 0) o.max_bytes = mailbox;
  if (o.max_bytes > mailbox || o.min_bytes > o.max_bytes) {
    if (p.rank == 0)
      std::fprintf(stderr, "p2p_bench: sizes must lie in [1, %zu] (one two-sided message on this backend)\n", mailbox);
    MPI_Finalize();
    return 2;
  }
  std::vector<size_t> sizes;
  for (size_t b = o.min_bytes; b < o.max_bytes; b *= o.step) sizes.push_back(b);
  sizes.push_back(o.max_bytes);

  p.peer = 1 - p.rank;
  p.stream = xdev::stream_create();
  p.send = static_cast<char *>(xdev::alloc(o.max_bytes));
  p.recv = static_cast<char *>(xdev::alloc(o.max_bytes));
  p.win_buf = static_cast<char *>(xdev::alloc(o.max_bytes));
  const bool staged = !xdev::mpi_reads_device_memory();
  p.host_send = staged ? static_cast<char *>(xdev::alloc_pinned(o.max_bytes)) : nullptr;
  p.host_recv = staged ? static_cast<char *>(xdev::alloc_pinned(o.max_bytes)) : nullptr;
  // Each two-sided way on a communicator of its own (its own mailboxes and message numbers).
  MPI_Comm_dup(MPI_COMM_WORLD, &p.queue_comm);
  MPIX_Create_queue(p.stream, &p.queue);
  std::vector<Way> ways;
#ifdef MPIX_ST_DEFINES_MPIX_STREAM
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", xdev::stream_info_type());
  MPIX_Info_set_hex(info, "value", &p.stream, sizeof p.stream);
  MPIX_Stream mpix_stream;
  MPIX_Stream_create(info, &mpix_stream);
  MPI_Info_free(&info);
  MPIX_Stream_comm_create(MPI_COMM_WORLD, mpix_stream, &p.stream_comm);
  ways.push_back({"enqueue", enqueue_round_trip, false});
#endif
  ways.push_back({"queue", queue_round_trip, false});
  ways.push_back({"host_mpi", host_round_trip, false});
  ways.push_back({"rma_stream", rma_round_trip, true});
  MPI_Win_create(p.win_buf, static_cast<MPI_Aint>(o.max_bytes), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p.win);
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &p.peer, &p.peer_group);

  if (p.rank == 0) {
    std::printf("p2p_bench backend=%s ranks=2 bytes=%zu..%zu (x%d) iters=%d reps=%d warmup=%d host=%s mailbox=%zu\n",
                MPIX_St_backend_name(), sizes.front(), sizes.back(), o.step, o.iters, o.reps, o.warmup,
                staged ? "staged" : "direct", mailbox);
    std::printf("round trip (us), median of %d repetitions of %d back-to-back round trips\n%10s", o.reps, o.iters,
                "bytes");
    for (const Way &w : ways) std::printf(" %10s", w.name);
    std::printf("\n");
    std::fflush(stdout);
  }
  std::vector<std::vector<double>> us(sizes.size(), std::vector<double>(ways.size()));
  bool ok = true;
  for (size_t s = 0; s < sizes.size(); ++s) {
    for (size_t w = 0; w < ways.size(); ++w) {
      bool arrived = false;
      us[s][w] = measure(p, o, ways[w], static_cast<int>(sizes[s]), 1 + 2 * static_cast<int>(w), &arrived);
      ok = ok && arrived;
    }
    if (p.rank == 0) {
      std::printf("%10zu", sizes[s]);
      for (double t : us[s]) std::printf(" %10.2f", t);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  int all_ok = 0, mine = ok ? 1 : 0;
  MPI_Allreduce(&mine, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (p.rank == 0) {
    std::printf("data_check=%s\n", all_ok ? "passed" : "FAILED");
    if (!o.json.empty()) write_json(o.json, o, ways, sizes, us, mailbox, staged, all_ok);
  }

  MPI_Win_free(&p.win);
  MPIX_Free_queue(p.queue);
  MPI_Comm_free(&p.queue_comm);
#ifdef MPIX_ST_DEFINES_MPIX_STREAM
  MPI_Comm_free(&p.stream_comm);
  MPIX_Stream_free(&mpix_stream);
#endif
  xdev::stream_destroy(p.stream);
  for (char *b : {p.send, p.recv, p.win_buf}) xdev::free(b);
  for (char *b : {p.host_send, p.host_recv})
    if (b) xdev::free_pinned(b);
  MPI_Group_free(&p.peer_group);
  MPI_Group_free(&world);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
