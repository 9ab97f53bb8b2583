// p2p_bench: stream-ordered point-to-point messages between two ranks, per message size, every way in
// one run:
//   enqueue     MPIX_Isend_enqueue / MPIX_Irecv_enqueue / MPIX_Waitall_enqueue on a stream
//               communicator (MPICH's spelling; where mpix-st defines it)
//   queue       MPIX_Enqueue_send / MPIX_Enqueue_recv / MPIX_Enqueue_start / MPIX_Enqueue_wait on an
//               MPIX_Queue (HPE's spelling)
//   host_mpi    MPI_Isend / MPI_Irecv after a stream synchronisation, from the device buffers where
//               the MPI reads them (xdev::mpi_reads_device_memory), else staged through pinned memory
//   rma_stream  stream epochs as rma_bench's (MPIX_Win_post_stream, MPI_Win_start with
//               MPIX_MODE_STREAM, MPI_Put, MPIX_Win_complete_stream, MPIX_Win_wait_stream), one epoch
//               per hop: rank 1 puts its answer after its wait for rank 0's epoch
//   nccl        ncclSend / ncclRecv on a communicator of both ranks (a hop's messages as one NCCL
//               group), where the CUDA build found NCCL (p2p_vendor_nccl.cpp). NCCL takes one rank per
//               GPU: where the ranks share one, or NCCL fails to start, the run prints
//               "nccl: skipped (why)", says so in the JSON, and goes on without it.
// Every way runs rounds on the stream: rank 0 sends, rank 1 receives all of it and then answers with
// one message.
//   Latency (the default): a round is a round trip, one message of the size each way. Sizes run from
//   --min-bytes to a mailbox (doc/guide/two-sided.md; --max-bytes goes further), times --step.
//   Host time (--host-time): instead of rounds, what each way's calls cost the CPU per message
//   (p2p_host_time.h), beside one raw stream operation; JSON "host_time_us". --calls per way (2000;
//   more for a profile).
//   Bandwidth (--bandwidth): a round is --window messages of the size from rank 0, into consecutive
//   slices of rank 1's buffer, then an 8-byte acknowledgement back; GB/s = window x bytes / time per
//   round. rma_stream puts the window in one epoch, as its latency round trip has one epoch per hop
//   (an epoch per message would make every message wait for its own post). Sizes run up to
//   --max-bytes (default 256 MiB on GPUs, 1 MiB on the host backend); between nodes the two-sided
//   ways stop at the mailbox (cells above it: "over the mailbox"), node-local they move longer
//   messages in chunks. Above 1 MiB per round a timing has fewer rounds (bench::iters_for, as
//   coll_bench: about --iters MiB, at least 5); the rows say how many.
// Timing, both modes: the rounds enqueued back to back and one stream synchronisation, the slower
// rank's time per round, after --warmup rounds (at most a timing's); the median of --reps such timings
// (bench::timed_eager, as coll_bench: of an even count, the mean of the middle two).
// --graph: the ways that can be captured (enqueue, queue, rma_stream, nccl) are also captured once,
// the rounds of one timing into one graph (bench::timed_graph, as coll_bench --graph), and each
// replay timed: replayed columns beside the eager ones. host_mpi is host work: it is reported "not
// capturable".
// Data: after each way, eagerly and again after its replays, every message received in the last round
// must hold the peer's pattern (exit 1 otherwise).
// Output: the configuration, then a row per size (replayed columns only for the ways that can be
// captured; a cell without a value reads "-"; the reasons on lines above the table).
// JSON (--json FILE): "config" (with "mode", "graph", and in bandwidth mode "window" and "ack_bytes"),
// "nccl" ({"status": "measured", "version"}, {"status": "skipped", "reason"} or {"status": "not
// built"}), "data_check", then rows by size: "round_trip_us" (latency, eager: the schema of earlier
// runs) and, with --graph, "replayed_round_trip_us"; or "bandwidth_GBs" and "replayed_bandwidth_GBs",
// whose rows add "rounds". A row is {"bytes": B, "<way>": value, ...}, the value a number or the reason
// there is none ("not capturable", "over the mailbox").
// Usage: mpiexec -n 2 p2p_bench [--iters N] [--reps N] [--warmup N] [--min-bytes B] [--max-bytes B]
//                               [--step F] [--bandwidth] [--window N] [--graph] [--host-time] [--calls N]
//                               [--json FILE]
#include <mpix/mpix_st.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.h"
#include "library_view.h"
#include "p2p_host_time.h"
#include "p2p_vendor.h"
#include "xdev.h"

namespace {

bool host_backend() { return std::strcmp(MPIX_St_backend_name(), "host") == 0; }

// Bandwidth mode: the default largest size, and the acknowledgement closing a round.
constexpr size_t kBandwidthMaxGpu = size_t(256) << 20;
constexpr size_t kBandwidthMaxHost = size_t(1) << 20;
constexpr int kAckBytes = 8;

// Why a cell has no value.
constexpr const char *kOverMailbox = "over the mailbox";
constexpr const char *kNotCapturable = "not capturable";

struct Options {
  int iters = 100, reps = 5, warmup = 10, step = 4, window = 8, calls = 2000;
  size_t min_bytes = 8, max_bytes = 0;  // 0: the mailbox (latency), kBandwidthMax* (bandwidth)
  bool bandwidth = false, graph = false, host_time = false;
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
    else if (a == "--window") o.window = std::max(1, std::atoi(next().c_str()));
    else if (a == "--min-bytes") o.min_bytes = std::max<size_t>(1, std::strtoull(next().c_str(), nullptr, 10));
    else if (a == "--max-bytes") o.max_bytes = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--bandwidth") o.bandwidth = true;
    else if (a == "--graph") o.graph = true;
    else if (a == "--host-time") o.host_time = true;
    else if (a == "--calls") o.calls = std::max(100, std::atoi(next().c_str()));
    else if (a == "--json") o.json = next();
    else {
      std::fprintf(stderr, "p2p_bench: unknown option %s\n", a.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  return o;
}

// Fills in the default largest size (latency: a mailbox); false (with a message from rank 0) where
// the sizes cannot run: latency rows are one message of every way, so they end at `largest`, the
// longest two-sided message between the two ranks; counts are ints.
bool settle_sizes(Options &o, size_t mailbox, size_t largest, int rank) {
  if (o.max_bytes == 0) o.max_bytes = !o.bandwidth ? mailbox : host_backend() ? kBandwidthMaxHost : kBandwidthMaxGpu;
  const size_t limit = o.bandwidth ? size_t(INT_MAX) : std::min(largest, size_t(INT_MAX));
  if (o.max_bytes <= limit && o.min_bytes <= o.max_bytes) return true;
  if (rank == 0)
    std::fprintf(stderr, "p2p_bench: sizes must lie in [1, %zu] (%s)\n", limit,
                 o.bandwidth ? "a count of bytes in an int" : "one two-sided message between these ranks");
  return false;
}

std::vector<size_t> size_list(const Options &o) {
  std::vector<size_t> sizes;
  for (size_t b = o.min_bytes; b < o.max_bytes; b *= o.step) sizes.push_back(b);
  sizes.push_back(o.max_bytes);
  return sizes;
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
  p2p_bench::Vendor *vendor = nullptr;  // NCCL, where built and started
  std::vector<MPI_Request> requests;    // one round's (made once: no allocation in a timed round)
};

// One round of every way: rank 0 sends `count` messages of `bytes` (message k lands at k * bytes in
// rank 1's receive buffer or window), rank 1 receives them all, then answers with one message of
// `reply` bytes. A latency round trip is {n, 1, n}; a bandwidth round {n, window, kAckBytes}.
struct Round {
  int bytes, count, reply;
};

// This rank's part of a round: `in` messages of `in_bytes` received, `out` of `out_bytes` sent.
struct Side {
  int in, in_bytes, out, out_bytes;
};
Side side_of(const Pair &p, const Round &r) {
  return p.rank == 0 ? Side{1, r.reply, r.count, r.bytes} : Side{r.count, r.bytes, 1, r.reply};
}

// Each way's round: rank 0 sends then receives, rank 1 receives then sends, enqueued where the way
// allows. One tag: the two directions use separate channels (and mailboxes) anyway.
constexpr int kTag = 0;

void enqueue_round(Pair &p, const Round &r) {
#ifdef MPIX_ST_DEFINES_MPIX_STREAM
  const Side s = side_of(p, r);
  MPI_Request *q = p.requests.data();
  auto sends = [&](MPI_Request *at) {
    for (int k = 0; k < s.out; ++k)
      MPIX_Isend_enqueue(p.send, s.out_bytes, MPI_BYTE, p.peer, kTag, p.stream_comm, &at[k]);
  };
  auto recvs = [&](MPI_Request *at) {
    for (int k = 0; k < s.in; ++k)
      MPIX_Irecv_enqueue(p.recv + size_t(k) * s.in_bytes, s.in_bytes, MPI_BYTE, p.peer, kTag, p.stream_comm, &at[k]);
  };
  if (p.rank == 0) {
    sends(q);
    recvs(q + s.out);
    MPIX_Waitall_enqueue(s.out + s.in, q, MPI_STATUSES_IGNORE);  // frees the requests
  } else {
    recvs(q);
    MPIX_Waitall_enqueue(s.in, q, MPI_STATUSES_IGNORE);
    sends(q + s.in);
    MPIX_Waitall_enqueue(s.out, q + s.in, MPI_STATUSES_IGNORE);  // sends: nothing on the stream, frees them
  }
#else
  (void)p, (void)r;
#endif
}

void queue_round(Pair &p, const Round &r) {
  const Side s = side_of(p, r);
  MPI_Request *q = p.requests.data();
  auto sends = [&](MPI_Request *at) {
    for (int k = 0; k < s.out; ++k)
      MPIX_Enqueue_send(p.send, s.out_bytes, MPI_BYTE, p.peer, kTag, p.queue_comm, p.queue, &at[k]);
  };
  auto recvs = [&](MPI_Request *at) {
    for (int k = 0; k < s.in; ++k)
      MPIX_Enqueue_recv(p.recv + size_t(k) * s.in_bytes, s.in_bytes, MPI_BYTE, p.peer, kTag, p.queue_comm, p.queue,
                        &at[k]);
  };
  if (p.rank == 0) {
    sends(q);
    recvs(q + s.out);
    MPIX_Enqueue_start(p.queue);
    MPIX_Enqueue_wait(p.queue);
  } else {
    recvs(q);
    MPIX_Enqueue_start(p.queue);  // no sends: nothing on the stream
    MPIX_Enqueue_wait(p.queue);
    sends(q + s.in);
    MPIX_Enqueue_start(p.queue);
  }
  // The stream completes them; freed requests go on until their lists ran (MPIX_Enqueue_send(3)).
  for (int k = 0; k < s.in + s.out; ++k) MPI_Request_free(&q[k]);
}

void host_round(Pair &p, const Round &r) {
  const Side s = side_of(p, r);
  const bool staged = p.host_send != nullptr;
  char *send = staged ? p.host_send : p.send, *recv = staged ? p.host_recv : p.recv;
  const size_t received = size_t(s.in) * s.in_bytes;
  MPI_Request *q = p.requests.data();
  for (int k = 0; k < s.in; ++k)
    MPI_Irecv(recv + size_t(k) * s.in_bytes, s.in_bytes, MPI_BYTE, p.peer, kTag, MPI_COMM_WORLD, &q[k]);
  if (p.rank == 1) {
    MPI_Waitall(s.in, q, MPI_STATUSES_IGNORE);
    if (staged) xdev::copy_to_device(p.recv, p.host_recv, received);
  }
  xdev::stream_sync(p.stream);  // the data is the stream's: what was enqueued before must have run
  if (staged) xdev::copy_to_host(p.host_send, p.send, s.out_bytes);
  for (int k = 0; k < s.out; ++k)
    MPI_Isend(send, s.out_bytes, MPI_BYTE, p.peer, kTag, MPI_COMM_WORLD, &q[s.in + k]);  // one buffer, read only
  MPI_Waitall(s.in + s.out, q, MPI_STATUSES_IGNORE);  // rank 1: its receives are null by now
  if (p.rank == 0 && staged) xdev::copy_to_device(p.recv, p.host_recv, received);
}

void rma_round(Pair &p, const Round &r) {
  const Side s = side_of(p, r);
  auto put = [&] {
    MPI_Win_start(p.peer_group, MPIX_MODE_STREAM, p.win);
    for (int k = 0; k < s.out; ++k)
      MPI_Put(p.send, s.out_bytes, MPI_BYTE, p.peer, MPI_Aint(k) * s.out_bytes, s.out_bytes, MPI_BYTE, p.win);
    MPIX_Win_complete_stream(p.win, p.stream);
  };
  MPIX_Win_post_stream(p.peer_group, p.win, p.stream);
  if (p.rank == 0) put();
  MPIX_Win_wait_stream(p.win, p.stream);
  if (p.rank == 1) put();
}

void nccl_round(Pair &p, const Round &r) {
  const Side s = side_of(p, r);
  auto send = [&] { p.vendor->send(p.send, s.out_bytes, s.out, p.peer, p.stream); };
  auto recv = [&] { p.vendor->recv(p.recv, s.in_bytes, s.in, p.peer, p.stream); };
  if (p.rank == 0) {
    send();
    recv();
  } else {
    recv();
    send();
  }
}

struct Way {
  const char *name;
  void (*round)(Pair &, const Round &);
  bool into_window;  // where the received data lands
  bool two_sided;    // between nodes, a message takes at most one mailbox
  bool capturable;   // can be captured into a graph (--graph)
};

// A table cell: a value (us per round trip, or GB/s), or why there is none.
struct Cell {
  double value = 0;
  const char *none = nullptr;
};

struct Row {
  size_t bytes;
  int rounds;
  std::vector<Cell> eager, replayed;  // replayed: empty without --graph
};

char *received_area(const Pair &p, const Way &w) { return w.into_window ? p.win_buf : p.recv; }

// Whether every message this rank received in the last round holds the peer's pattern.
bool arrived(const Pair &p, const Way &w, const Side &s, int pattern) {
  std::vector<char> got(size_t(s.in) * s.in_bytes);
  xdev::copy_to_host(got.data(), received_area(p, w), got.size());
  return std::all_of(got.begin(), got.end(), [&](char c) { return c == static_cast<char>(pattern + p.peer); });
}

// Seconds per round, eager and (replayed >= 0) replayed; ok: the data arrived both times.
struct Times {
  double eager = 0, replayed = -1;
  bool ok = true;
};

Times measure(Pair &p, const Options &o, const Way &w, const Round &r, int rounds, int pattern) {
  const Side s = side_of(p, r);
  const size_t received = size_t(s.in) * s.in_bytes;
  auto body = [&] { w.round(p, r); };
  xdev::fill(p.send, pattern + p.rank, s.out_bytes);
  xdev::fill(received_area(p, w), 0, received);
  if (o.warmup > 0) bench::timed(std::min(o.warmup, rounds), p.stream, body);
  Times t;
  t.eager = bench::timed_eager(rounds, o.reps, p.stream, body).median;
  t.ok = arrived(p, w, s, pattern);
  if (o.graph && w.capturable) {
    xdev::fill(received_area(p, w), 0, received);  // what the replays deliver, not the eager rounds
    t.replayed = bench::timed_graph(rounds, o.reps, p.stream, body).median;
    t.ok = arrived(p, w, s, pattern) && t.ok;
  }
  return t;
}

// The figure of a round taking `sec`: us per round trip, or GB/s of rank 0's messages.
Cell cell_of(const Options &o, const Round &r, double sec) {
  return {o.bandwidth ? double(r.count) * r.bytes / sec / 1e9 : sec * 1e6, nullptr};
}

// One size, every way; *ok turns false where a way's data did not arrive.
Row measure_size(Pair &p, const Options &o, const std::vector<Way> &ways, size_t bytes, size_t largest, bool *ok) {
  const int n = static_cast<int>(bytes);
  const Round r = o.bandwidth ? Round{n, o.window, kAckBytes} : Round{n, 1, n};
  Row row{bytes, o.bandwidth ? bench::iters_for(size_t(o.window) * bytes, o.iters) : o.iters, {}, {}};
  for (size_t w = 0; w < ways.size(); ++w) {
    const Way &way = ways[w];
    const bool refused = way.two_sided && bytes > largest;  // by the library: no measurement, no failure
    const Times t = refused ? Times{} : measure(p, o, way, r, row.rounds, 1 + 2 * static_cast<int>(w));
    *ok = *ok && t.ok;
    row.eager.push_back(refused ? Cell{0, kOverMailbox} : cell_of(o, r, t.eager));
    if (!o.graph) continue;
    if (!way.capturable) row.replayed.push_back({0, kNotCapturable});
    else row.replayed.push_back(refused ? Cell{0, kOverMailbox} : cell_of(o, r, t.replayed));
  }
  return row;
}

// ---- output (rank 0) ---------------------------------------------------------------------------------

std::string nccl_text(const p2p_bench::VendorChoice &v) {
  return v.vendor ? v.vendor->name() : v.built ? "skipped" : "not built";
}

// The names of the ways whose `property` is `value`, comma-separated.
std::string names_where(const std::vector<Way> &ways, bool Way::*property, bool value) {
  std::string out;
  for (const Way &w : ways)
    if (w.*property == value) out += (out.empty() ? "" : ", ") + std::string(w.name);
  return out;
}

void print_header(const Options &o, const std::vector<Way> &ways, const std::vector<size_t> &sizes, size_t mailbox,
                  size_t largest, bool staged, const p2p_bench::VendorChoice &nccl) {
  std::printf("p2p_bench backend=%s ranks=2 bytes=%zu..%zu (x%d) iters=%d reps=%d warmup=%d host=%s mailbox=%zu",
              MPIX_St_backend_name(), sizes.front(), sizes.back(), o.step, o.iters, o.reps, o.warmup,
              staged ? "staged" : "direct", mailbox);
  std::printf(" mode=%s", o.bandwidth ? "bandwidth" : "latency");
  if (o.bandwidth) std::printf(" window=%d ack=%d", o.window, kAckBytes);
  std::printf(" graph=%s nccl=%s\n", o.graph ? "yes" : "no", nccl_text(nccl).c_str());
  if (!nccl.skipped.empty()) std::printf("nccl: skipped (%s)\n", nccl.skipped.c_str());
  if (o.bandwidth)
    std::printf("bandwidth (GB/s) = window x bytes / time per round, median of %d repetitions of `rounds` "
                "back-to-back rounds (%d, fewer above 1 MiB per round)\n", o.reps, o.iters);
  else
    std::printf("round trip (us), median of %d repetitions of %d back-to-back round trips\n", o.reps, o.iters);
  const std::string two_sided = names_where(ways, &Way::two_sided, true);
  if (o.bandwidth && sizes.back() > largest && !two_sided.empty())
    std::printf("-: over the mailbox (%s: messages between nodes of at most %zu bytes)\n", two_sided.c_str(), largest);
  if (o.graph)
    std::printf("after |: replayed, the rounds of a timing captured once into a graph; not capturable: %s\n",
                names_where(ways, &Way::capturable, false).c_str());
  std::printf("%10s", "bytes");
  if (o.bandwidth) std::printf(" %7s", "rounds");
  for (const Way &w : ways) std::printf(" %10s", w.name);
  if (o.graph) std::printf(" |");
  for (const Way &w : ways)
    if (o.graph && w.capturable) std::printf(" %10s", w.name);
  std::printf("\n");
  std::fflush(stdout);
}

void print_row(const Options &o, const std::vector<Way> &ways, const Row &row) {
  auto cell = [&](const Cell &c) {  // GB/s of small messages need the third digit
    if (c.none) std::printf(" %10s", "-");
    else std::printf(o.bandwidth ? " %10.3f" : " %10.2f", c.value);
  };
  std::printf("%10zu", row.bytes);
  if (o.bandwidth) std::printf(" %7d", row.rounds);
  for (const Cell &c : row.eager) cell(c);
  if (o.graph) std::printf(" |");
  for (size_t w = 0; w < row.replayed.size(); ++w)
    if (ways[w].capturable) cell(row.replayed[w]);
  std::printf("\n");
  std::fflush(stdout);
}

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

void write_nccl_json(FILE *f, const p2p_bench::VendorChoice &v) {
  if (v.vendor) std::fprintf(f, "  \"nccl\": {\"status\": \"measured\", \"version\": %s},\n",
                             json_string(v.vendor->name()).c_str());
  else if (v.built) std::fprintf(f, "  \"nccl\": {\"status\": \"skipped\", \"reason\": %s},\n",
                                 json_string(v.skipped).c_str());
  else std::fprintf(f, "  \"nccl\": {\"status\": \"not built\"},\n");
}

void write_rows_json(FILE *f, const char *key, const std::vector<Way> &ways, const std::vector<Row> &rows,
                     bool replayed, bool with_rounds) {
  std::fprintf(f, ",\n  \"%s\": [", key);
  for (size_t s = 0; s < rows.size(); ++s) {
    std::fprintf(f, "%s\n    {\"bytes\": %zu", s ? "," : "", rows[s].bytes);
    if (with_rounds) std::fprintf(f, ", \"rounds\": %d", rows[s].rounds);
    const std::vector<Cell> &cells = replayed ? rows[s].replayed : rows[s].eager;
    for (size_t w = 0; w < ways.size(); ++w) {
      if (cells[w].none) std::fprintf(f, ", \"%s\": \"%s\"", ways[w].name, cells[w].none);
      else std::fprintf(f, ", \"%s\": %.3f", ways[w].name, cells[w].value);
    }
    std::fprintf(f, "}");
  }
  std::fprintf(f, "\n  ]");
}

void write_json(const std::string &path, const Options &o, const std::vector<Way> &ways, const std::vector<Row> &rows,
                size_t mailbox, bool staged, const p2p_bench::VendorChoice &nccl, bool ok) {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "p2p_bench: cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(f, "{\n  \"benchmark\": \"p2p_bench\",\n  \"backend\": \"%s\",\n", MPIX_St_backend_name());
  std::fprintf(f,
               "  \"config\": {\"ranks\": 2, \"iters\": %d, \"reps\": %d, \"warmup\": %d, \"step\": %d, "
               "\"min_bytes\": %zu, \"max_bytes\": %zu, \"mailbox_bytes\": %zu, \"host_mpi\": \"%s\", "
               "\"mode\": \"%s\", \"graph\": %s",
               o.iters, o.reps, o.warmup, o.step, rows.front().bytes, rows.back().bytes, mailbox,
               staged ? "staged" : "direct", o.bandwidth ? "bandwidth" : "latency", o.graph ? "true" : "false");
  if (o.bandwidth) std::fprintf(f, ", \"window\": %d, \"ack_bytes\": %d", o.window, kAckBytes);
  std::fprintf(f, "},\n");
  write_nccl_json(f, nccl);
  std::fprintf(f, "  \"data_check\": \"%s\"", ok ? "passed" : "failed");
  const char *eager = o.bandwidth ? "bandwidth_GBs" : "round_trip_us";
  const char *replayed = o.bandwidth ? "replayed_bandwidth_GBs" : "replayed_round_trip_us";
  write_rows_json(f, eager, ways, rows, false, o.bandwidth);
  if (o.graph) write_rows_json(f, replayed, ways, rows, true, o.bandwidth);
  std::fprintf(f, "\n}\n");
  std::fclose(f);
}

// --host-time: one round of each way first (a communicator's first two-sided call makes its
// mailboxes, NCCL connects), then the calls timed; rank 0 prints and writes the JSON. True where the
// warm-up rounds' data arrived.
bool host_time_mode(Pair &p, const Options &o, const std::vector<Way> &ways, const p2p_bench::VendorChoice &nccl) {
  const int calls = o.calls;
  const Round warm{8, 1, 8};
  bool ok = true;
  for (size_t w = 0; w < ways.size(); ++w) {
    if (ways[w].into_window) continue;  // the RMA epoch has no per-message call to time
    xdev::fill(p.send, 1 + 2 * int(w) + p.rank, 8);
    ways[w].round(p, warm);
    xdev::stream_sync(p.stream);
    ok = arrived(p, ways[w], side_of(p, warm), 1 + 2 * int(w)) && ok;
  }
  const p2p_bench::HostTimeSetup s{p.rank, p.peer, p.stream, p.queue_comm, p.stream_comm,
                                   p.queue, p.send, p.recv, p.vendor};
  const std::vector<p2p_bench::HostTime> rows = p2p_bench::host_times(s, calls);
  if (p.rank != 0) return ok;
  std::printf("p2p_bench backend=%s ranks=2 mode=host_time calls=%d nccl=%s\n", MPIX_St_backend_name(), calls,
              nccl_text(nccl).c_str());
  if (!nccl.skipped.empty()) std::printf("nccl: skipped (%s)\n", nccl.skipped.c_str());
  p2p_bench::print_host_times(rows);
  if (o.json.empty()) return ok;
  FILE *f = std::fopen(o.json.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "p2p_bench: cannot write %s\n", o.json.c_str());
    return ok;
  }
  std::fprintf(f, "{\n  \"benchmark\": \"p2p_bench\",\n  \"backend\": \"%s\",\n", MPIX_St_backend_name());
  std::fprintf(f, "  \"config\": {\"ranks\": 2, \"mode\": \"host_time\", \"calls\": %d, \"bytes\": 8},\n", calls);
  write_nccl_json(f, nccl);
  std::fprintf(f, "  \"data_check\": \"%s\"", ok ? "passed" : "failed");
  p2p_bench::write_host_times_json(f, rows);
  std::fprintf(f, "\n}\n");
  std::fclose(f);
  return ok;
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
  const size_t mailbox = library_view::mailbox_bytes();
  // Messages between nodes are at most a mailbox; node-local ones of any length move in chunks.
  const std::vector<long> node = library_view::node_of_each_rank(MPI_COMM_WORLD);
  const size_t largest = node[0] != node[1] ? mailbox : size_t(INT_MAX);
  if (!settle_sizes(o, mailbox, largest, p.rank)) {
    MPI_Finalize();
    return 2;
  }
  const std::vector<size_t> sizes = size_list(o);

  p.peer = 1 - p.rank;
  p.stream = xdev::stream_create();
  // Rank 1 receives a bandwidth round's window into consecutive slices; every buffer holds an ack.
  const size_t out_bytes = std::max<size_t>(kAckBytes, o.max_bytes);
  const size_t in_bytes = std::max<size_t>(kAckBytes, size_t(o.bandwidth ? o.window : 1) * o.max_bytes);
  p.send = static_cast<char *>(xdev::alloc(out_bytes));
  p.recv = static_cast<char *>(xdev::alloc(in_bytes));
  p.win_buf = static_cast<char *>(xdev::alloc(in_bytes));
  const bool staged = !xdev::mpi_reads_device_memory();
  p.host_send = staged ? static_cast<char *>(xdev::alloc_pinned(out_bytes)) : nullptr;
  p.host_recv = staged ? static_cast<char *>(xdev::alloc_pinned(in_bytes)) : nullptr;
  p.requests.resize(size_t(o.bandwidth ? o.window : 1) + 1);
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
  ways.push_back({"enqueue", enqueue_round, false, true, true});
#endif
  ways.push_back({"queue", queue_round, false, true, true});
  ways.push_back({"host_mpi", host_round, false, false, false});
  ways.push_back({"rma_stream", rma_round, true, false, true});
  const p2p_bench::VendorChoice nccl = p2p_bench::make_vendor(MPI_COMM_WORLD);
  std::unique_ptr<p2p_bench::Vendor> vendor(nccl.vendor);
  p.vendor = vendor.get();
  if (vendor) ways.push_back({"nccl", nccl_round, false, false, vendor->capturable()});
  MPI_Win_create(p.win_buf, static_cast<MPI_Aint>(in_bytes), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p.win);
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &p.peer, &p.peer_group);

  std::vector<Row> rows;
  bool ok = true;
  if (o.host_time) {
    ok = host_time_mode(p, o, ways, nccl);
  } else {
    if (p.rank == 0) print_header(o, ways, sizes, mailbox, largest, staged, nccl);
    for (size_t bytes : sizes) {
      rows.push_back(measure_size(p, o, ways, bytes, largest, &ok));
      if (p.rank == 0) print_row(o, ways, rows.back());
    }
  }
  int all_ok = 0, mine = ok ? 1 : 0;
  MPI_Allreduce(&mine, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (p.rank == 0) {
    std::printf("data_check=%s\n", all_ok ? "passed" : "FAILED");
    if (!o.json.empty() && !o.host_time) write_json(o.json, o, ways, rows, mailbox, staged, nccl, all_ok);
  }

  MPI_Win_free(&p.win);
  MPIX_Free_queue(p.queue);
  MPI_Comm_free(&p.queue_comm);
#ifdef MPIX_ST_DEFINES_MPIX_STREAM
  MPI_Comm_free(&p.stream_comm);
  MPIX_Stream_free(&mpix_stream);
#endif
  vendor.reset();  // its graphs are gone; before the stream it used
  xdev::stream_destroy(p.stream);
  for (char *b : {p.send, p.recv, p.win_buf}) xdev::free(b);
  for (char *b : {p.host_send, p.host_recv})
    if (b) xdev::free_pinned(b);
  MPI_Group_free(&p.peer_group);
  MPI_Group_free(&world);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
