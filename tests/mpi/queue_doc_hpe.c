/* HPE Cray MPICH's stream-triggered two-sided API as its documentation shows it (MPIX_Queue with
 * the documented two-argument MPIX_Create_queue): every rank receives from its left neighbour and
 * sends to its right one, on a queue bound to a GPU stream, with a start and a wait per iteration
 * and one stream synchronisation at the end. C99, built unchanged against mpix/mpix_st.h; only the
 * lines marked "device" differ between the CUDA build and the host backend (MPIX_Host_stream). */
#include <mpi.h>
#include <mpix/mpix_st.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MPIX_TEST_CUDA /* device */
#include <cuda_runtime_api.h>
typedef cudaStream_t stream_t;
#define STREAM_CREATE(s) cudaStreamCreateWithFlags(s, cudaStreamNonBlocking)
#define STREAM_SYNC(s) cudaStreamSynchronize(s)
#define STREAM_DESTROY(s) cudaStreamDestroy(s)
#define DEV_ALLOC(p, n) cudaMalloc((void **)(p), n)
#define DEV_FREE(p) cudaFree(p)
#define TO_DEV(d, h, n) cudaMemcpy(d, h, n, cudaMemcpyHostToDevice)
#define TO_HOST(h, d, n) cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost)
#else
typedef MPIX_Host_stream stream_t;
#define STREAM_CREATE(s) MPIX_Host_stream_create(s)
#define STREAM_SYNC(s) MPIX_Host_stream_synchronize(s)
#define STREAM_DESTROY(s) MPIX_Host_stream_destroy(s)
#define DEV_ALLOC(p, n) (*(p) = malloc(n))
#define DEV_FREE(p) free(p)
#define TO_DEV(d, h, n) memcpy(d, h, n)
#define TO_HOST(h, d, n) memcpy(h, d, n)
#endif

#define N 1024
#define ITERS 10

int main(int argc, char **argv) {
  int rank, size, i, it, errors = 0, total = 0;
  int *sbuf, *rbuf, host[N];
  stream_t stream;
  MPIX_Queue queue;
  MPI_Request reqs[2 * ITERS];
  MPI_Status statuses[2 * ITERS];

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  STREAM_CREATE(&stream);
  DEV_ALLOC(&sbuf, N * sizeof(int) * ITERS);
  DEV_ALLOC(&rbuf, N * sizeof(int) * ITERS);
  for (it = 0; it < ITERS; it++) {
    for (i = 0; i < N; i++) host[i] = rank * 100000 + it * N + i;
    TO_DEV(sbuf + it * N, host, sizeof host);
  }

  MPIX_Create_queue(stream, &queue);
  for (it = 0; it < ITERS; it++) {
    MPIX_Enqueue_recv(rbuf + it * N, N, MPI_INT, (rank + size - 1) % size, 0, MPI_COMM_WORLD, queue, &reqs[2 * it]);
    MPIX_Enqueue_send(sbuf + it * N, N, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, queue, &reqs[2 * it + 1]);
    MPIX_Enqueue_start(queue);
    MPIX_Enqueue_wait(queue);
  }
  STREAM_SYNC(stream);
  MPI_Waitall(2 * ITERS, reqs, statuses);
  MPIX_Free_queue(queue);

  for (it = 0; it < ITERS; it++) {
    int count = -1, left = (rank + size - 1) % size;
    TO_HOST(host, rbuf + it * N, sizeof host);
    for (i = 0; i < N; i++)
      if (host[i] != left * 100000 + it * N + i) errors++;
    MPI_Get_count(&statuses[2 * it], MPI_INT, &count);
    if (count != N || statuses[2 * it].MPI_SOURCE != left) errors++;
  }
  MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("queue_doc_hpe: %s (%d errors)\n", total ? "FAILED" : "PASSED", total);
  DEV_FREE(sbuf);
  DEV_FREE(rbuf);
  STREAM_DESTROY(stream);
  MPI_Finalize();
  return total != 0;
}
