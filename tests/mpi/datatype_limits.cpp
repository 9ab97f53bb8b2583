// Datatypes the library refuses before any flattening work (doc/guide/datatypes.md, "Limits"), in
// puts, gets and accumulates of both modes, on the origin and on the target side, into a 4 KiB
// window:
//  - 2^30 one-byte blocks spread over 2 GiB: the target's true extent lies outside the window
//    (MPI_ERR_RMA_RANGE); as the origin of a 4 KiB put, the byte counts differ (MPI_ERR_TYPE);
//  - 2^30 blocks piled on one byte (a vector of stride 0, whose true extent fits the window):
//    more pieces than the library carries (MPI_ERR_TYPE), found within the first 2^22;
//  - one contiguous GiB as a vector of 2^30 one-element blocks, against such a pile: the run is
//    one piece at once, the pile refused;
//  - a derived datatype never committed, as origin or target: MPI_ERR_TYPE; once committed, the
//    same call moves its data.
// Every refusal must come within 1 s and name the call; the epoch then goes on and its valid puts
// land byte for byte. A struct array of 2^22 + 1 elements mixing int and float (more signature
// changes than one instance may have written out) moves its 32 MiB exactly.
#include "test_common.h"

using namespace mt;

namespace {

constexpr size_t kBytes = 4096;
constexpr int kBlocks = 1 << 30;
int g_right = 0, g_left = 0;
double g_slowest = 0;
std::string g_slowest_call;
long g_cases = 0;

void refused_at(int rc, double seconds, int cls, const char *call, const char *part, const char *what,
                const char *file, int line) {
  ++g_cases;
  if (seconds > g_slowest) g_slowest = seconds, g_slowest_call = what;
  const std::string m = expect_error_at(rc, cls, what, file, line);
  if (seconds > 1.0) report(file, line, "%s: refused after %.3f s (more than 1 s)", what, seconds);
  if (rc == MPI_SUCCESS) return;
  if (!contains(m, call)) report(file, line, "%s: message \"%s\" does not name %s", what, m.c_str(), call);
  if (!contains(m, part)) report(file, line, "%s: message \"%s\" does not mention \"%s\"", what, m.c_str(), part);
}
#define REFUSED(expr, cls, call, part)                                                                \
  do {                                                                                                \
    const double t0_ = now_s();                                                                       \
    const int rc_ = (expr);                                                                           \
    refused_at(rc_, now_s() - t0_, (cls), (call), (part), #expr, __FILE__, __LINE__);                 \
  } while (0)

MPI_Datatype vector_of(int count, int stride, MPI_Datatype basic) {
  MPI_Datatype t;
  MT_OK(MPI_Type_vector(count, 1, stride, basic, &t));
  MT_OK(MPI_Type_commit(&t));
  return t;
}

// Blocks far apart, piled up, and end to end: refused before (or within the cap of) flattening.
void many_blocks(Mode mode, void *s) {
  g_context = fmt("2^30 blocks, %s", mode_name(mode));
  TestWin w = make_window(WinKind::allocate, kBytes);
  Group to({g_right}), from({g_left});
  // The buffers are never read: every call below is refused when it is made.
  DevBuf buf(kBytes);
  double t0 = now_s();
  MPI_Datatype far = vector_of(kBlocks, 2, MPI_BYTE), far_int = vector_of(kBlocks, 2, MPI_INT);
  MPI_Datatype piled = vector_of(kBlocks, 0, MPI_BYTE), piled_int = vector_of(kBlocks / 4, 0, MPI_INT);
  MPI_Datatype run = vector_of(kBlocks, 1, MPI_BYTE);
  note("  %s: types made and committed in %.3f s", mode_name(mode), now_s() - t0);
  MT_POST(mode, from, w.win, s);
  MT_START(mode, to, w.win);
  // Spread over 2 GiB: outside the window.
  REFUSED(MPI_Put(buf.p, kBlocks, MPI_BYTE, g_right, 0, 1, far, w.win), MPI_ERR_RMA_RANGE, "MPI_Put", "outside rank");
  REFUSED(MPI_Get(buf.p, kBlocks, MPI_BYTE, g_right, 0, 1, far, w.win), MPI_ERR_RMA_RANGE, "MPI_Get", "outside rank");
  REFUSED(MPI_Accumulate(buf.p, kBlocks, MPI_INT, g_right, 0, 1, far_int, MPI_SUM, w.win), MPI_ERR_RMA_RANGE,
          "MPI_Accumulate", "outside rank");
  // As the origin of a 4 KiB put: 2^30 bytes against 4,096.
  REFUSED(MPI_Put(buf.p, 1, far, g_right, 0, kBytes, MPI_BYTE, w.win), MPI_ERR_TYPE, "MPI_Put", "1073741824 bytes");
  REFUSED(MPI_Get(buf.p, 1, far, g_right, 0, kBytes, MPI_BYTE, w.win), MPI_ERR_TYPE, "MPI_Get", "1073741824 bytes");
  // Piled on one byte: the true extent fits, the pieces do not.
  REFUSED(MPI_Put(buf.p, kBlocks, MPI_BYTE, g_right, 0, 1, piled, w.win), MPI_ERR_TYPE, "MPI_Put", "pieces");
  REFUSED(MPI_Get(buf.p, kBlocks, MPI_BYTE, g_right, 0, 1, piled, w.win), MPI_ERR_TYPE, "MPI_Get", "pieces");
  REFUSED(MPI_Accumulate(buf.p, kBlocks / 4, MPI_INT, g_right, 0, 1, piled_int, MPI_SUM, w.win), MPI_ERR_TYPE,
          "MPI_Accumulate", "pieces");
  REFUSED(MPI_Put(buf.p, 1, piled, g_right, 0, 1, piled, w.win), MPI_ERR_TYPE, "MPI_Put", "origin datatype");
  REFUSED(MPI_Get(buf.p, 1, piled, g_right, 0, 1, piled, w.win), MPI_ERR_TYPE, "MPI_Get", "origin datatype");
  // One contiguous GiB (one piece at once) against the pile.
  REFUSED(MPI_Put(buf.p, 1, run, g_right, 0, 1, piled, w.win), MPI_ERR_TYPE, "MPI_Put", "target datatype");
  // The epoch goes on: a valid put lands.
  auto data = pattern(256, key(0xd1, static_cast<uint64_t>(g_rank), static_cast<uint64_t>(mode)));
  buf.upload(data);
  MT_OK(MPI_Put(buf.p, 256, MPI_BYTE, g_right, 1024, 256, MPI_BYTE, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  auto want = pattern(256, key(0xd1, static_cast<uint64_t>(g_left), static_cast<uint64_t>(mode)));
  auto got = read_device(w.base + 1024, 256);
  MT_SAME_BYTES(got.data(), want.data(), 256, "put after the refusals");
  for (MPI_Datatype *t : {&far, &far_int, &piled, &piled_int, &run}) MPI_Type_free(t);
  free_window(w);
}

// A datatype never committed, on either side of puts, gets and accumulates; then committed.
void uncommitted(Mode mode, void *s) {
  g_context = fmt("uncommitted datatype, %s", mode_name(mode));
  TestWin w = make_window(WinKind::allocate, kBytes);
  Group to({g_right}), from({g_left});
  MPI_Datatype every_other;  // ints 0, 2, 4, 6
  MT_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &every_other));
  std::vector<int> mine(8), result(8, -1);
  for (int i = 0; i < 8; ++i) mine[static_cast<size_t>(i)] = 1000 * (g_rank + 1) + i;
  DevBuf src(sizeof(int) * 8), dst(sizeof(int) * 8);
  src.upload(mine.data(), sizeof(int) * 8);
  MT_POST(mode, from, w.win, s);
  MT_START(mode, to, w.win);
  const char *why = "not committed";
  REFUSED(MPI_Put(src.p, 1, every_other, g_right, 0, 4, MPI_INT, w.win), MPI_ERR_TYPE, "MPI_Put", why);
  REFUSED(MPI_Put(src.p, 4, MPI_INT, g_right, 0, 1, every_other, w.win), MPI_ERR_TYPE, "MPI_Put", why);
  REFUSED(MPI_Get(dst.p, 1, every_other, g_right, 0, 4, MPI_INT, w.win), MPI_ERR_TYPE, "MPI_Get", why);
  REFUSED(MPI_Get(dst.p, 4, MPI_INT, g_right, 0, 1, every_other, w.win), MPI_ERR_TYPE, "MPI_Get", why);
  REFUSED(MPI_Accumulate(src.p, 1, every_other, g_right, 0, 4, MPI_INT, MPI_SUM, w.win), MPI_ERR_TYPE,
          "MPI_Accumulate", why);
  REFUSED(MPI_Accumulate(src.p, 4, MPI_INT, g_right, 0, 1, every_other, MPI_SUM, w.win), MPI_ERR_TYPE,
          "MPI_Accumulate", why);
  // Committed now: the same put moves its data (ints 0..3 of mine to ints 0, 2, 4, 6 there).
  MT_OK(MPI_Type_commit(&every_other));
  MT_OK(MPI_Put(src.p, 4, MPI_INT, g_right, 0, 1, every_other, w.win));
  MT_OK(MPI_Accumulate(src.p, 1, every_other, g_right, 64, 4, MPI_INT, MPI_SUM, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  std::vector<int> got(8 + 16 + 4);
  auto bytes = read_device(w.base, sizeof(int) * got.size());
  std::memcpy(got.data(), bytes.data(), bytes.size());
  std::vector<int> want(got.size(), 0);
  for (int i = 0; i < 4; ++i) want[static_cast<size_t>(2 * i)] = 1000 * (g_left + 1) + i;  // the put
  for (int i = 0; i < 4; ++i) want[static_cast<size_t>(16 + i)] = 1000 * (g_left + 1) + 2 * i;  // the accumulate
  MT_SAME_BYTES(got.data(), want.data(), sizeof(int) * want.size(), "committed after the refusals");
  MPI_Type_free(&every_other);
  free_window(w);
}

// 2^22 + 1 structs of an int and a float: one period of the signature repeated, not 2^23 runs.
void struct_array(Mode mode, void *s) {
  g_context = fmt("struct array, %s", mode_name(mode));
  constexpr int kCount = (1 << 22) + 1;
  constexpr size_t kArrayBytes = size_t(kCount) * 8;
  int bl[2] = {1, 1};
  MPI_Aint disp[2] = {0, 4};
  MPI_Datatype types[2] = {MPI_INT, MPI_FLOAT}, pair, array;
  MT_OK(MPI_Type_create_struct(2, bl, disp, types, &pair));
  MT_OK(MPI_Type_contiguous(kCount, pair, &array));
  MT_OK(MPI_Type_commit(&pair));
  MT_OK(MPI_Type_commit(&array));
  TestWin w = make_window(WinKind::allocate, kArrayBytes);
  Group to({g_right}), from({g_left});
  auto data = pattern(kArrayBytes, key(0xd3, static_cast<uint64_t>(g_rank), static_cast<uint64_t>(mode)));
  DevBuf src(kArrayBytes);
  src.upload(data);
  MT_POST(mode, from, w.win, s);
  MT_START(mode, to, w.win);
  const double t0 = now_s();
  MT_OK(MPI_Put(src.p, 1, array, g_right, 0, kCount, pair, w.win));
  note("  %s: the put of %d structs recorded in %.3f s", mode_name(mode), kCount, now_s() - t0);
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  auto want = pattern(kArrayBytes, key(0xd3, static_cast<uint64_t>(g_left), static_cast<uint64_t>(mode)));
  auto got = read_device(w.base, kArrayBytes);
  MT_SAME_BYTES(got.data(), want.data(), kArrayBytes, "struct array");
  MPI_Type_free(&array);
  MPI_Type_free(&pair);
  free_window(w);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "datatype_limits");
  g_right = (g_rank + 1) % g_size;
  g_left = (g_rank + g_size - 1) % g_size;
  // --only=<blocks|uncommitted|structs>: one part alone.
  std::string only;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--only=", 7) == 0) only = argv[i] + 7;
  void *s = stream_create();
  for (Mode mode : kAllModes) {
    if (only.empty() || only == "blocks") many_blocks(mode, s);
    if (only.empty() || only == "uncommitted") uncommitted(mode, s);
    if (only.empty() || only == "structs") struct_array(mode, s);
  }
  stream_destroy(s);
  double slowest = 0;
  MPI_Allreduce(&g_slowest, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  note("datatype_limits: %ld refused calls on rank 0; the slowest refusal on any rank took %.3f s (on rank 0: %.3f s, %s)",
       g_cases, slowest, g_slowest, g_slowest_call.c_str());
  return finish();
}
