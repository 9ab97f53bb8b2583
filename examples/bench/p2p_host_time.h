// p2p_bench --host-time: what one two-sided call costs the CPU, beside one raw stream operation
// of the same stream (a one-block kernel launch on GPUs, a task on the host backend) and NCCL's
// send and receive where built. Rank 0 makes the sending calls while rank 1 makes the receiving
// ones, 8-byte messages; each figure is the fastest of blocks of 100 calls (on a shared machine
// other processes' time slices fall into some blocks, not the calls' cost).
#pragma once
#include <mpi.h>
#include <mpix/mpix_st.h>

#include <string>
#include <vector>

#include "p2p_vendor.h"

namespace p2p_bench {

// What the measurement calls through (each two-sided way's communicator already has its mailboxes).
struct HostTimeSetup {
  int rank = 0, peer = 1;
  void *stream = nullptr;
  MPI_Comm queue_comm = MPI_COMM_NULL, stream_comm = MPI_COMM_NULL;  // stream_comm: null where undefined
  MPIX_Queue queue = MPIX_QUEUE_NULL;
  char *send = nullptr, *recv = nullptr;  // device buffers of at least 8 bytes
  Vendor *vendor = nullptr;                // NCCL, or null
};

struct HostTime {
  std::string way, side, calls;  // e.g. "queue", "send", "MPIX_Enqueue_send + ..."
  double us = 0;                 // host time per call
  double stream_ops = 0;         // the library's stream operations per call (MPIX_St_stream_ops_enqueued)
};

// Every rank takes part; rank 0 gets every row (its sending calls, rank 1's receiving ones), others
// an empty list. `calls`: per figure, in blocks of 100.
std::vector<HostTime> host_times(const HostTimeSetup &s, int calls);

void print_host_times(const std::vector<HostTime> &rows);
// The rows as the JSON member "host_time_us" (after a member: starts with ",\n").
void write_host_times_json(FILE *f, const std::vector<HostTime> &rows);

}  // namespace p2p_bench
