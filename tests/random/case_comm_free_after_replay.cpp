// A case the random test found (notes: F2), as a fixed sequence: MPI_Comm_free of a communicator
// whose collectives were replayed from a graph, while an eager collective on it is still queued.
// collectives.md: MPI_Comm_free "first waits for the communicator's enqueued collectives", so the
// queued bcast must run to the end with the communicator's memory still there, and deliver.
// Host backend, 2 or more ranks. Exit 0 when every rank's buffer holds the root's data.
#include <mpi.h>
#include <mpix/mpix_st.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPIX_Host_stream s = nullptr;
  MPIX_Host_stream_create(&s);
  std::vector<short> small(100), big(1660);
  int failures = 0;
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  failures += MPIX_Bcast_stream(small.data(), 0, MPI_SHORT, 0, c, s) != MPI_SUCCESS;  // set-up
  MPIX_Host_graph g = nullptr;
  MPIX_Host_stream_begin_capture(s);
  failures += MPIX_Bcast_stream(small.data(), 100, MPI_SHORT, 0, c, s) != MPI_SUCCESS;
  MPIX_Host_stream_end_capture(s, &g);
  for (int i = 0; i < 3; ++i) MPIX_Host_graph_launch(g, s);
  failures += MPIX_Host_stream_synchronize(s) != MPI_SUCCESS;
  MPIX_Host_graph_destroy(g);
  // The stream is busy for a while; the bcast queued behind it; the communicator freed.
  MPIX_Host_stream_enqueue(s, [](void *) { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }, nullptr);
  for (size_t i = 0; i < big.size(); ++i) big[i] = rank == 0 ? static_cast<short>(i * 7 + 1) : -1;
  failures += MPIX_Bcast_stream(big.data(), static_cast<int>(big.size()), MPI_SHORT, 0, c, s) != MPI_SUCCESS;
  failures += MPI_Comm_free(&c) != MPI_SUCCESS;
  failures += MPIX_Host_stream_synchronize(s) != MPI_SUCCESS;
  for (size_t i = 0; i < big.size(); ++i)
    if (big[i] != static_cast<short>(i * 7 + 1)) {
      std::fprintf(stderr, "rank %d: element %zu of the queued bcast is %d, want %d\n", rank, i, big[i],
                   static_cast<short>(i * 7 + 1));
      ++failures;
      break;
    }
  MPIX_Host_stream_destroy(s);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("comm_free_after_replay (%d ranks): %s\n", size, total ? "FAILED" : "PASSED");
  MPI_Finalize();
  return total ? 1 : 0;
}
