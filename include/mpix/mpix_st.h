/* mpix-st: stream-triggered MPI active-target RMA.
 *
 * Source-compatible with HPE Cray MPICH's stream-triggered API. Link with -lmpixst (before -lmpi):
 * the library interposes MPI_Win_{create,allocate,free,post,start,complete,wait} and
 * MPI_{Put,Get,Accumulate} through the PMPI profiling interface; windows and epochs it does not
 * manage pass straight to the underlying MPI.
 *
 * A `stream` argument is a cudaStream_t / hipStream_t on the GPU backends and an MPIX_Host_stream
 * on the host backend (MPIX_ST_BACKEND=host, or no GPU). Every *_stream call only enqueues work
 * and returns; the stream executes signals, waits and copies in order.
 */
#ifndef MPIX_ST_H
#define MPIX_ST_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPIX_ST_VERSION_MAJOR 0
#define MPIX_ST_VERSION_MINOR 1

/* Assert bit for MPI_Win_start that opens a stream-triggered access epoch. It lies above every
 * MPI_MODE_* bit of MPICH (1024..16384) and Open MPI (1..16). */
#ifndef MPIX_MODE_STREAM
#define MPIX_MODE_STREAM (1 << 20)
#endif

/* Error class for exhausted library resources (triggered-op budget, flag slots, mappings).
 * It is created at first use with MPI_Add_error_class; compare MPI_Error_class of a returned code with it. */
int MPIX_St_error_class_resource(void);

/* ---- Stream-triggered active-target RMA ---------------------------------------------------- */
int MPIX_Win_post_stream(MPI_Group group, MPI_Win win, void *stream);
int MPIX_Win_complete_stream(MPI_Win win, void *stream);
int MPIX_Win_wait_stream(MPI_Win win, void *stream);

/* Raises a pending watchdog report (MPIX_ST_WATCHDOG_MS) of stream work on `win` through the
 * window's error handler, or of any window (freed ones included) through MPI_COMM_SELF's when
 * `win` is MPI_WIN_NULL; MPI_SUCCESS when none is pending. Reports otherwise come out of the
 * window's next epoch call or, on the host backend, the synchronisation of the stream. */
int MPIX_St_check(MPI_Win win);

/* ---- Stream-ordered collectives ------------------------------------------------------------- *
 * MPI's semantics and argument order, with the stream last. Each call is enqueued on `stream` and
 * returns at once; the stream runs it (one kernel launch per call where every rank of `comm` is
 * on one node), so nothing waits on the host. Buffers are device memory on GPU backends (any
 * memory on the host backend). MPI_IN_PLACE where MPI allows it. Reductions take 8-, 32- and
 * 64-bit integers, float, double, MPIX_ST_FLOAT16 and MPIX_ST_BFLOAT16 (below) with MPI_SUM,
 * MPI_PROD, MPI_MAX, MPI_MIN (and MPI_BAND, MPI_BOR, MPI_BXOR on integers); every rank gets
 * bit-identical results. Collectives on one
 * communicator run in the order they were called, on one stream (or streams ordered by the
 * application). The first call on a communicator is collective set-up and cannot be captured into
 * a graph; later ones can. Algorithms: MPIX_ST_<COLL>_ALGO (README, "Collectives"). */
/* Element types for half precision, which MPI does not define: MPIX_ST_FLOAT16 (IEEE 754 binary16)
 * and MPIX_ST_BFLOAT16 (bfloat16: the upper 16 bits of a float). Handles of committed 2-byte
 * contiguous types that the library makes in MPI_Init / MPI_Init_thread and frees in MPI_Finalize;
 * MPI_DATATYPE_NULL before MPI_Init and after MPI_Finalize. Do not free them. The stream
 * reductions take them (and MPICH's MPIX_C_FLOAT16, where mpi.h defines it) with MPI_SUM,
 * MPI_PROD, MPI_MAX and MPI_MIN: elements are combined in float and rounded to nearest-even each
 * time a result is stored. Every other MPI call sees a plain 2-byte type. */
extern MPI_Datatype MPIX_ST_FLOAT16;
extern MPI_Datatype MPIX_ST_BFLOAT16;

int MPIX_Allreduce_stream(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, void *stream);
int MPIX_Reduce_stream(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                       MPI_Comm comm, void *stream);
int MPIX_Bcast_stream(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm, void *stream);
int MPIX_Allgather_stream(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, void *stream);
int MPIX_Alltoall_stream(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, void *stream);

/* ---- Two-sided messages on streams: HPE's MPIX_Queue ------------------------------------------ *
 * Sends and receives recorded on a queue bound to a stream (HPE Cray MPICH's spelling).
 * MPIX_Enqueue_send / MPIX_Enqueue_recv record an operation and return a request; MPIX_Enqueue_start
 * makes the stream start every operation recorded since the last start, MPIX_Enqueue_wait makes it
 * wait there for every started one. The stream moves the data (node-local peers: through mapped
 * mailboxes); the host only enqueues. Matching is MPI's order per source and tag, decided when the
 * calls are made: MPI_ANY_SOURCE and MPI_ANY_TAG are refused. The requests also complete on the
 * host (MPI_Wait, MPI_Test and the like); MPI_Get_count of their status is the received count.
 * The first two-sided call on a communicator is collective (it makes the communicator's mailbox
 * memory). doc/guide/two-sided.md has the limits of this version. */
#ifndef MPIX_QUEUE_NULL
typedef struct mpix_st_queue *MPIX_Queue;
#define MPIX_QUEUE_NULL ((MPIX_Queue)0)
#endif
int MPIX_Create_queue(void *stream, MPIX_Queue *queue);
int MPIX_Free_queue(MPIX_Queue queue);
int MPIX_Enqueue_send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPIX_Queue queue, MPI_Request *request);
int MPIX_Enqueue_recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                      MPIX_Queue queue, MPI_Request *request);
int MPIX_Enqueue_start(MPIX_Queue queue);
int MPIX_Enqueue_wait(MPIX_Queue queue);

/* ---- MPICH's enqueue spelling ----------------------------------------------------------------- *
 * A program written for MPICH's stream API (MPICH 4.1+) runs GPU-driven on mpix-st: a GPU stream
 * wrapped in an MPIX_Stream (info "type" = "cudaStream_t", "hipStream_t" or, on the host backend,
 * "MPIX_Host_stream"; "value" = the handle's bytes, set with MPIX_Info_set_hex), a communicator
 * bound to it with MPIX_Stream_comm_create, and the *_enqueue collectives on that communicator,
 * which are the *_stream calls above on the bound stream. Where mpi.h declares MPIX_Stream itself
 * (MPICH 4.1 and later), the MPI's own stream calls stay in charge and mpix-st does not define them. */
#ifndef MPIX_STREAM_NULL
typedef struct mpix_st_stream *MPIX_Stream;
#define MPIX_STREAM_NULL ((MPIX_Stream)0)
#define MPIX_ST_DEFINES_MPIX_STREAM 1
int MPIX_Info_set_hex(MPI_Info info, const char *key, const void *value, int value_size);
int MPIX_Stream_create(MPI_Info info, MPIX_Stream *stream);
int MPIX_Stream_free(MPIX_Stream *stream);
int MPIX_Stream_comm_create(MPI_Comm comm, MPIX_Stream stream, MPI_Comm *newcomm);
int MPIX_Allreduce_enqueue(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm);
int MPIX_Bcast_enqueue(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int MPIX_Allgather_enqueue(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm);
int MPIX_Alltoall_enqueue(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm);
/* Two-sided messages on the bound stream (the engine of MPIX_Queue above): sends start at the call;
 * receives when a wait (MPIX_Recv_enqueue, MPIX_Wait_enqueue, MPIX_Waitall_enqueue, or MPI_Wait on
 * the host) needs them. The stream waits free the requests. */
int MPIX_Send_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPIX_Recv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                      MPI_Status *status);
int MPIX_Isend_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                       MPI_Request *request);
int MPIX_Irecv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                       MPI_Request *request);
int MPIX_Wait_enqueue(MPI_Request *request, MPI_Status *status);
int MPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]);
#endif

/* ---- Host backend streams (in-order worker threads) ------------------------------------------ */
typedef struct mpix_host_stream *MPIX_Host_stream;
int MPIX_Host_stream_create(MPIX_Host_stream *stream);
/* Enqueue a host function (the host backend's "kernel"); it runs in stream order. */
int MPIX_Host_stream_enqueue(MPIX_Host_stream stream, void (*fn)(void *), void *arg);
/* Waits until everything enqueued so far has run. Returns MPI_SUCCESS, or the error class of a
 * failed stream operation (e.g. a watchdog timeout), whose message MPI_Error_string gives. */
int MPIX_Host_stream_synchronize(MPIX_Host_stream stream);
int MPIX_Host_stream_destroy(MPIX_Host_stream stream);

/* ---- Host backend graphs (the host backend's stream capture) -------------------------------- *
 * Between begin and end of capture, work enqueued on the stream (MPIX_*_stream epochs,
 * MPIX_Host_stream_enqueue tasks) is recorded instead of run. The graph replays the recorded
 * work, in order, each time it is launched; each replay of captured epochs is the next epoch,
 * exactly as on CUDA/HIP graphs (README, "Graph capture"). Synchronizing a capturing stream is
 * an error. Free graphs that hold epochs of a window before MPI_Win_free of that window. */
typedef struct mpix_host_graph *MPIX_Host_graph;
int MPIX_Host_stream_begin_capture(MPIX_Host_stream stream);
int MPIX_Host_stream_end_capture(MPIX_Host_stream stream, MPIX_Host_graph *graph);
int MPIX_Host_graph_launch(MPIX_Host_graph graph, MPIX_Host_stream stream);
int MPIX_Host_graph_destroy(MPIX_Host_graph graph);

/* ---- Introspection ----------------------------------------------------------------------------- */
/* Name of the backend in use: "host", "cuda" or "hip". Selects it on first call. */
const char *MPIX_St_backend_name(void);
/* Number of stream operations (kernel launches, host tasks) the library has enqueued so far in
 * this process. Lets tests and benchmarks verify the one-operation-per-call design. */
unsigned long long MPIX_St_stream_ops_enqueued(void);

#ifdef __cplusplus
}
#endif
#endif /* MPIX_ST_H */
