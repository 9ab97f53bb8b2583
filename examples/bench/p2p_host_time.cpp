// p2p_bench --host-time (p2p_host_time.h).
#include "p2p_host_time.h"

#include <algorithm>
#include <cstdio>

#include "bench_common.h"
#include "xdev.h"

namespace p2p_bench {
namespace {

constexpr int kBytes = 8, kTag = 5, kBlock = 100;

// The fastest block's host time per call, and the library's stream operations per call.
template <typename Call>
void time_calls(int calls, void *stream, Call &&call, double *us, double *ops) {
  MPI_Barrier(MPI_COMM_WORLD);
  const unsigned long long ops0 = MPIX_St_stream_ops_enqueued();
  double best = 1e300;
  for (int b = 0; b < calls; b += kBlock) {
    const int n = std::min(kBlock, calls - b);
    const double t0 = bench::now();
    for (int i = 0; i < n; ++i) call();
    best = std::min(best, (bench::now() - t0) * 1e6 / n);
  }
  *ops = double(MPIX_St_stream_ops_enqueued() - ops0) / calls;
  *us = best;
  xdev::stream_sync(stream);  // the peer's calls match these: both streams drain
}

}  // namespace

std::vector<HostTime> host_times(const HostTimeSetup &s, int calls) {
  const bool sender = s.rank == 0;
  const int peer = s.peer;
  std::vector<HostTime> mine;
  std::vector<std::string> receive_calls;  // each way's receiving calls, as rank 1 made them
  auto add = [&](const char *way, const char *send_calls, const char *recv_calls, auto &&call) {
    HostTime h{way, sender ? "send" : "receive", sender ? send_calls : recv_calls};
    time_calls(calls, s.stream, call, &h.us, &h.stream_ops);
    mine.push_back(h);
    receive_calls.push_back(recv_calls);
  };
  uint64_t *counter = static_cast<uint64_t *>(xdev::alloc(8));
  xdev::fill(counter, 0, 8);
  uint64_t key = 0;
  const char *raw = "xdev::stamp (a one-block kernel; host backend: a stream task)";
  add("stream operation", raw, raw, [&] { xdev::stamp(s.stream, s.recv, kBytes, counter, ++key); });
  add("queue", "MPIX_Enqueue_send + MPIX_Enqueue_start + MPIX_Enqueue_wait + MPI_Request_free",
      "MPIX_Enqueue_recv + MPIX_Enqueue_start + MPIX_Enqueue_wait + MPI_Request_free", [&] {
        MPI_Request r;
        if (sender) MPIX_Enqueue_send(s.send, kBytes, MPI_BYTE, peer, kTag, s.queue_comm, s.queue, &r);
        else MPIX_Enqueue_recv(s.recv, kBytes, MPI_BYTE, peer, kTag, s.queue_comm, s.queue, &r);
        MPIX_Enqueue_start(s.queue);
        MPIX_Enqueue_wait(s.queue);
        MPI_Request_free(&r);
      });
#ifdef MPIX_ST_DEFINES_MPIX_STREAM
  if (s.stream_comm != MPI_COMM_NULL)
    add("enqueue", "MPIX_Isend_enqueue + MPIX_Wait_enqueue", "MPIX_Irecv_enqueue + MPIX_Wait_enqueue", [&] {
      MPI_Request r;
      if (sender) MPIX_Isend_enqueue(s.send, kBytes, MPI_BYTE, peer, kTag, s.stream_comm, &r);
      else MPIX_Irecv_enqueue(s.recv, kBytes, MPI_BYTE, peer, kTag, s.stream_comm, &r);
      MPIX_Wait_enqueue(&r, MPI_STATUS_IGNORE);
    });
#endif
  if (s.vendor)
    add("nccl", "ncclSend in a group", "ncclRecv in a group", [&] {
      if (sender) s.vendor->send(s.send, kBytes, 1, peer, s.stream);
      else s.vendor->recv(s.recv, kBytes, 1, peer, s.stream);
    });
  xdev::free(counter);
  // Rank 0 collects rank 1's rows (same ways, same order).
  std::vector<double> theirs(2 * mine.size()), own;
  for (const HostTime &h : mine) own.insert(own.end(), {h.us, h.stream_ops});
  MPI_Sendrecv(own.data(), int(own.size()), MPI_DOUBLE, peer, 9, theirs.data(), int(theirs.size()), MPI_DOUBLE, peer,
               9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (!sender) return {};
  std::vector<HostTime> rows;
  for (size_t i = 0; i < mine.size(); ++i) {
    rows.push_back(mine[i]);
    rows.push_back({mine[i].way, "receive", receive_calls[i], theirs[2 * i], theirs[2 * i + 1]});
  }
  return rows;
}

// The raw stream operation's time on `side` (the first rows).
double raw_us(const std::vector<HostTime> &rows, const std::string &side) {
  for (const HostTime &h : rows)
    if (h.way == "stream operation" && h.side == side) return h.us;
  return 0;
}

void print_host_times(const std::vector<HostTime> &rows) {
  std::printf("host time per call (us), the fastest block of %d calls, 8-byte messages; x: over one raw stream "
              "operation on the same rank\n", kBlock);
  std::printf("%-17s %-8s %9s %7s %10s  %s\n", "way", "side", "us", "x", "stream_ops", "calls");
  for (const HostTime &h : rows) {
    const double raw = raw_us(rows, h.side);
    std::printf("%-17s %-8s %9.2f %7.2f %10.2f  %s\n", h.way.c_str(), h.side.c_str(), h.us, raw ? h.us / raw : 0,
                h.stream_ops, h.calls.c_str());
  }
}

void write_host_times_json(FILE *f, const std::vector<HostTime> &rows) {
  std::fprintf(f, ",\n  \"host_time_us\": [");
  for (size_t i = 0; i < rows.size(); ++i)
    std::fprintf(f, "%s\n    {\"way\": \"%s\", \"side\": \"%s\", \"us\": %.3f, \"stream_ops\": %.3f, \"calls\": \"%s\"}",
                 i ? "," : "", rows[i].way.c_str(), rows[i].side.c_str(), rows[i].us, rows[i].stream_ops,
                 rows[i].calls.c_str());
  std::fprintf(f, "\n  ]");
}

}  // namespace p2p_bench
