/* A program built against an installed mpix-st (find_package(mpixst) or pkg-config mpixst), as an
 * application would be: 2 ranks, host backend. Each rank exposes a window to the other and puts its
 * data into the peer's window in stream-triggered epochs; the data of each epoch is written by a
 * task on the stream just before the epoch's complete. Prints "consumer: rank R OK" on success. */
#include <mpix/mpix_st.h>
#include <stdio.h>
#include <string.h>

#define N 1024
#define EPOCHS 3

static int g_rank;

#define CHECK(call)                                                                       \
  do {                                                                                    \
    int rc_ = (call);                                                                     \
    if (rc_ != MPI_SUCCESS) {                                                             \
      char msg_[MPI_MAX_ERROR_STRING];                                                    \
      int len_ = 0;                                                                       \
      MPI_Error_string(rc_, msg_, &len_);                                                 \
      fprintf(stderr, "consumer: rank %d: %s failed: %s\n", g_rank, #call, msg_);         \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                       \
    }                                                                                     \
  } while (0)

struct fill {
  int *src;
  int epoch;
};

static void fill_source(void *arg) { /* runs on the stream, in order with the epochs */
  struct fill *f = (struct fill *)arg;
  for (int i = 0; i < N; ++i) f->src[i] = g_rank * 1000000 + f->epoch * 10000 + i;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (g_rank == 0) fprintf(stderr, "consumer: run with 2 ranks, not %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (strcmp(MPIX_St_backend_name(), "host") != 0) {
    fprintf(stderr, "consumer: rank %d: backend %s, want host (MPIX_ST_BACKEND=host)\n", g_rank,
            MPIX_St_backend_name());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  const int peer = 1 - g_rank;

  MPIX_Host_stream stream;
  CHECK(MPIX_Host_stream_create(&stream));
  int *win_mem = NULL;
  MPI_Win win;
  CHECK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win));
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  for (int i = 0; i < N; ++i) win_mem[i] = -1;
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Group world, other;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &peer, &other);

  static int src[EPOCHS][N];
  struct fill fills[EPOCHS];
  const unsigned long long ops_before = MPIX_St_stream_ops_enqueued();
  for (int e = 0; e < EPOCHS; ++e) {
    fills[e].src = src[e];
    fills[e].epoch = e;
    CHECK(MPIX_Win_post_stream(other, win, (void *)stream));
    CHECK(MPI_Win_start(other, MPIX_MODE_STREAM, win));
    CHECK(MPI_Put(src[e], N, MPI_INT, peer, 0, N, MPI_INT, win));
    CHECK(MPIX_Host_stream_enqueue(stream, fill_source, &fills[e]));
    CHECK(MPIX_Win_complete_stream(win, (void *)stream));
    CHECK(MPIX_Win_wait_stream(win, (void *)stream));
  }
  CHECK(MPIX_Host_stream_synchronize(stream));
  const unsigned long long ops = MPIX_St_stream_ops_enqueued() - ops_before;

  int bad = 0;
  if (ops < 3 * EPOCHS) {
    fprintf(stderr, "consumer: rank %d: %llu stream operations for %d epochs: the library's calls did not run\n",
            g_rank, ops, EPOCHS);
    bad = 1;
  }
  for (int i = 0; i < N && !bad; ++i) {
    const int want = peer * 1000000 + (EPOCHS - 1) * 10000 + i;
    if (win_mem[i] != want) {
      fprintf(stderr, "consumer: rank %d: window[%d] = %d, want %d\n", g_rank, i, win_mem[i], want);
      bad = 1;
    }
  }
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  MPI_Group_free(&other);
  MPI_Group_free(&world);
  CHECK(MPI_Win_free(&win));
  CHECK(MPIX_Host_stream_destroy(stream));
  if (!any_bad) printf("consumer: rank %d OK (%s backend, %llu stream operations)\n", g_rank, MPIX_St_backend_name(), ops);
  MPI_Finalize();
  return any_bad;
}
