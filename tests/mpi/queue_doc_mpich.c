/* MPICH's stream API as its documentation shows it: an MPIX_Stream wrapping a GPU stream (info
 * "type" and a "value" set with MPIX_Info_set_hex), a stream communicator of
 * MPIX_Stream_comm_create, blocking MPIX_Send_enqueue / MPIX_Recv_enqueue from rank 0 to rank 1,
 * then an exchange with MPIX_Isend_enqueue / MPIX_Irecv_enqueue / MPIX_Waitall_enqueue. C99, built
 * unchanged against mpix/mpix_st.h; only the lines marked "device" differ between the CUDA build and
 * the host backend (MPIX_Host_stream). */
#include <mpi.h>
#include <mpix/mpix_st.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MPIX_TEST_CUDA /* device */
#include <cuda_runtime_api.h>
typedef cudaStream_t stream_t;
#define STREAM_TYPE "cudaStream_t"
#define STREAM_CREATE(s) cudaStreamCreateWithFlags(s, cudaStreamNonBlocking)
#define STREAM_SYNC(s) cudaStreamSynchronize(s)
#define STREAM_DESTROY(s) cudaStreamDestroy(s)
#define DEV_ALLOC(p, n) cudaMalloc((void **)(p), n)
#define DEV_FREE(p) cudaFree(p)
#define TO_DEV(d, h, n) cudaMemcpy(d, h, n, cudaMemcpyHostToDevice)
#define TO_HOST(h, d, n) cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost)
#else
typedef MPIX_Host_stream stream_t;
#define STREAM_TYPE "MPIX_Host_stream"
#define STREAM_CREATE(s) MPIX_Host_stream_create(s)
#define STREAM_SYNC(s) MPIX_Host_stream_synchronize(s)
#define STREAM_DESTROY(s) MPIX_Host_stream_destroy(s)
#define DEV_ALLOC(p, n) (*(p) = malloc(n))
#define DEV_FREE(p) free(p)
#define TO_DEV(d, h, n) memcpy(d, h, n)
#define TO_HOST(h, d, n) memcpy(h, d, n)
#endif

#define N 1000

int main(int argc, char **argv) {
  int rank, size, i, errors = 0, total = 0;
  float *d_x, *d_y, x[N], y[N];
  stream_t stream;
  MPI_Info info;
  MPIX_Stream mpi_stream;
  MPI_Comm stream_comm;
  MPI_Request reqs[2];

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  STREAM_CREATE(&stream);
  DEV_ALLOC(&d_x, N * sizeof(float));
  DEV_ALLOC(&d_y, N * sizeof(float));
  for (i = 0; i < N; i++) x[i] = (float)(rank * N + i);
  TO_DEV(d_x, x, sizeof x);

  MPI_Info_create(&info);
  MPI_Info_set(info, "type", STREAM_TYPE);
  MPIX_Info_set_hex(info, "value", &stream, sizeof(stream));
  MPIX_Stream_create(info, &mpi_stream);
  MPI_Info_free(&info);
  MPIX_Stream_comm_create(MPI_COMM_WORLD, mpi_stream, &stream_comm);

  /* Blocking: rank 0 to rank 1 (the other ranks take part in the communicator only). */
  if (rank == 0) {
    MPIX_Send_enqueue(d_x, N, MPI_FLOAT, 1, 0, stream_comm);
  } else if (rank == 1) {
    MPIX_Recv_enqueue(d_y, N, MPI_FLOAT, 0, 0, stream_comm, MPI_STATUS_IGNORE);
  } else {
    MPIX_Send_enqueue(d_x, 0, MPI_FLOAT, MPI_PROC_NULL, 0, stream_comm);
  }
  STREAM_SYNC(stream);
  if (rank == 1) {
    TO_HOST(y, d_y, sizeof y);
    for (i = 0; i < N; i++)
      if (y[i] != (float)i) errors++;
  }

  /* Nonblocking: every rank with its neighbours. */
  MPIX_Irecv_enqueue(d_y, N, MPI_FLOAT, (rank + size - 1) % size, 1, stream_comm, &reqs[0]);
  MPIX_Isend_enqueue(d_x, N, MPI_FLOAT, (rank + 1) % size, 1, stream_comm, &reqs[1]);
  MPIX_Waitall_enqueue(2, reqs, MPI_STATUSES_IGNORE);
  STREAM_SYNC(stream);
  TO_HOST(y, d_y, sizeof y);
  for (i = 0; i < N; i++)
    if (y[i] != (float)(((rank + size - 1) % size) * N + i)) errors++;

  MPI_Comm_free(&stream_comm);
  MPIX_Stream_free(&mpi_stream);
  MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("queue_doc_mpich: %s (%d errors)\n", total ? "FAILED" : "PASSED", total);
  DEV_FREE(d_x);
  DEV_FREE(d_y);
  STREAM_DESTROY(stream);
  MPI_Finalize();
  return total != 0;
}
