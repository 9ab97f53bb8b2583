// MPICH's enqueue spelling on mpix-st: a stream wrapped in an MPIX_Stream (info type and a value
// set with MPIX_Info_set_hex), a communicator bound to it, and MPIX_Allreduce/Bcast/Allgather/
// Alltoall_enqueue checked against host references; misuse gets the documented error classes.
#include "test_common.h"

using namespace mt;

namespace {

void collectives(MPI_Comm comm, void *s) {
  g_context = "enqueue collectives";
  const int n = 1000;
  DevBuf in(n * 4), out(n * 4 * g_size);
  std::vector<int32_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = g_rank * 1000 + i;
  in.upload(v.data(), v.size() * 4);
  MT_OK(MPIX_Allreduce_enqueue(in.p, out.p, n, MPI_INT32_T, MPI_SUM, comm));
  MT_SYNC(s);
  std::vector<uint8_t> got = out.download(0, n * 4);
  const int32_t *r = reinterpret_cast<const int32_t *>(got.data());
  for (int i = 0; i < n; ++i) {
    int32_t want = 0;
    for (int q = 0; q < g_size; ++q) want += q * 1000 + i;
    MT_CHECKF(r[i] == want, "allreduce element %d: %d, want %d", i, r[i], want);
  }
  MT_OK(MPIX_Allgather_enqueue(in.p, n, MPI_INT32_T, out.p, n, MPI_INT32_T, comm));
  MT_SYNC(s);
  got = out.download();
  r = reinterpret_cast<const int32_t *>(got.data());
  for (int q = 0; q < g_size; ++q)
    for (int i = 0; i < n; i += 97) MT_CHECKF(r[q * n + i] == q * 1000 + i, "allgather block %d element %d", q, i);
  // Alltoall: block q of rank r holds r * 100 + q.
  std::vector<int32_t> blocks(g_size * 4);
  for (int q = 0; q < g_size; ++q)
    for (int i = 0; i < 4; ++i) blocks[q * 4 + i] = g_rank * 100 + q;
  DevBuf a(blocks.size() * 4), b(blocks.size() * 4);
  a.upload(blocks.data(), blocks.size() * 4);
  MT_OK(MPIX_Alltoall_enqueue(a.p, 4, MPI_INT32_T, b.p, 4, MPI_INT32_T, comm));
  MT_SYNC(s);
  got = b.download();
  r = reinterpret_cast<const int32_t *>(got.data());
  for (int q = 0; q < g_size; ++q) MT_CHECKF(r[q * 4] == q * 100 + g_rank, "alltoall block %d: %d", q, r[q * 4]);
  int32_t token = g_rank == g_size - 1 ? 4242 : -1;
  DevBuf t(4);
  t.upload(&token, 4);
  MT_OK(MPIX_Bcast_enqueue(t.p, 1, MPI_INT32_T, g_size - 1, comm));
  MT_SYNC(s);
  got = t.download();
  std::memcpy(&token, got.data(), 4);
  MT_CHECKF(token == 4242, "bcast: %d", token);
}

void misuse(void *s) {
  g_context = "misuse";
  DevBuf a(64), b(64);
  MPI_Info info;
  MPI_Info_create(&info);
  MPIX_Stream bad = MPIX_STREAM_NULL;
  MPI_Info_set(info, "type", "ze_command_list_handle_t");
  MT_EXPECT_ERROR(MPIX_Stream_create(info, &bad), MPI_ERR_INFO_VALUE);
  MPI_Info_set(info, "type", stream_type());
  MT_EXPECT_ERROR(MPIX_Stream_create(info, &bad), MPI_ERR_INFO_VALUE);  // no value
  MPI_Info_set(info, "value", "zz");
  MT_EXPECT_ERROR(MPIX_Stream_create(info, &bad), MPI_ERR_INFO_VALUE);
  MT_EXPECT_ERROR(MPIX_Stream_create(info, nullptr), MPI_ERR_ARG);
  MT_EXPECT_ERROR(MPIX_Info_set_hex(MPI_INFO_NULL, "value", &s, sizeof s), MPI_ERR_INFO);
  MT_EXPECT_ERROR(MPIX_Info_set_hex(info, "value", &s, -1), MPI_ERR_ARG);
  MPI_Info_free(&info);
  // A stream made without type and value wraps nothing: enqueueing on its communicator fails.
  MPIX_Stream plain = MPIX_STREAM_NULL;
  MT_OK(MPIX_Stream_create(MPI_INFO_NULL, &plain));
  MPI_Comm comm;
  MT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, plain, &comm));
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MT_EXPECT_ERROR(MPIX_Allreduce_enqueue(a.p, b.p, 4, MPI_INT, MPI_SUM, comm), MPI_ERR_COMM);
  MT_EXPECT_ERROR(MPIX_Allreduce_enqueue(a.p, b.p, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COMM);
  // Bound streams are not freed.
  MT_EXPECT_ERROR(MPIX_Stream_free(&plain), MPI_ERR_OTHER);
  MT_OK(MPI_Comm_free(&comm));
  MT_OK(MPIX_Stream_free(&plain));
  MT_CHECK(plain == MPIX_STREAM_NULL);
  MT_EXPECT_ERROR(MPIX_Stream_free(&plain), MPI_ERR_ARG);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "enqueue_api");
  void *s = stream_create();
  MPIX_Stream stream = wrap_stream(s);
  MPI_Comm comm;
  MT_OK(MPIX_Stream_comm_create(MPI_COMM_WORLD, stream, &comm));
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  collectives(comm, s);
  misuse(s);
  MT_OK(MPI_Comm_free(&comm));
  MT_OK(MPIX_Stream_free(&stream));
  stream_destroy(s);
  return finish();
}
