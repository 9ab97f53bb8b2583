// Stream collectives after a call refused on some ranks (host backend). A call refused on every
// rank leaves the communicator working. A call refused on one rank only, while the others
// enqueued it, must never let a later call succeed with wrong values: the refusing rank's next
// call, and every other rank's next call once the refusing rank has made one, are refused with
// MPI_ERR_OTHER naming the call, the refused call's number and the refusing rank; the calls the
// others had enqueued end on the watchdog (MPIX_ST_WATCHDOG_MS is short here), never with
// success. Every call that returns success, and whose stream then synchronises without error,
// has exactly the right values. A new communicator works afterwards. Across (virtual) nodes the
// ranks agree on each call: a call refused on one rank is refused on all, and the communicator
// keeps working.
//   --measure   prints the host time of a call (enqueue only) over --calls=N calls of --count=C ints
//               (C = 0: the host side alone)
#include <cmath>
#include <vector>

#include "test_common.h"

using namespace mt;

namespace {

long g_cases = 0;

struct Comm {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  explicit Comm(MPI_Comm parent = MPI_COMM_WORLD) {
    MPI_Comm_dup(parent, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
  }
  ~Comm() { MPI_Comm_free(&comm); }
};

// One allreduce of `count` ints: rank r contributes base + r + i at element i.
int allreduce(const Comm &c, void *s, DevBuf &in, DevBuf &out, int count, int base) {
  std::vector<int32_t> v(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) v[static_cast<size_t>(i)] = base + c.rank + i;
  in.upload(v.data(), v.size() * sizeof(int32_t));
  xdev::fill(out.p, 0xee, static_cast<size_t>(count) * 4);
  return MPIX_Allreduce_stream(in.p, out.p, count, MPI_INT, MPI_SUM, c.comm, s);
}

// Whether out holds the sum of allreduce(..., base)'s contributions over every rank.
bool right_sum(const Comm &c, DevBuf &out, int count, int base) {
  auto got = read_device(out.p, static_cast<size_t>(count) * 4);
  for (int i = 0; i < count; ++i) {
    int32_t want = 0;
    for (int r = 0; r < c.size; ++r) want += base + r + i;
    int32_t g = 0;
    std::memcpy(&g, got.data() + 4 * i, 4);
    if (g != want) return false;
  }
  return true;
}

// A call that must be refused: class, and a message naming the call and containing each part.
void refused_at(int rc, int cls, const char *call, std::vector<std::string> parts, const char *what, const char *file,
                int line) {
  ++g_cases;
  const std::string m = expect_error_at(rc, cls, what, file, line);
  if (rc == MPI_SUCCESS) return;
  parts.emplace_back(call);
  for (const std::string &p : parts)
    if (!contains(m, p)) report(file, line, "%s: message \"%s\" lacks \"%s\"", what, m.c_str(), p.c_str());
}
#define REFUSED(expr, cls, call, ...) refused_at((expr), (cls), (call), {__VA_ARGS__}, #expr, __FILE__, __LINE__)

// A correct allreduce that must succeed with the right values.
void works(const Comm &c, void *s, int count, int base, const char *what) {
  DevBuf in(4096), out(4096);
  MT_OK(allreduce(c, s, in, out, count, base));
  MT_SYNC(s);
  ++g_cases;
  MT_CHECKF(right_sum(c, out, count, base), "%s: wrong values", what);
}

// A call the other ranks enqueued, whose results need the refusing rank, waits for it until the
// watchdog ends it: the stream's synchronisation reports that. `receives`: the call was enqueued
// here and gives this rank values (a reduce's non-root ranks get none, and need nothing from the
// root); `right`: whether they are right.
template <typename Right>
void sync_after_failure(void *s, bool receives, Right &&right, const char *what) {
  const int rc = stream_sync_rc(s);
  ++g_cases;
  if (receives && rc == MPI_SUCCESS && !right())
    report(__FILE__, __LINE__, "%s: the stream synchronised without error, with wrong values", what);
  stream_sync_rc(s);  // a second report, if any, is taken too
}

// ---- refused on every rank ------------------------------------------------------------------

void refused_everywhere(void *s) {
  g_context = "refused on every rank";
  {
    Comm c;
    DevBuf a(256), b(256);
    // The first call on the communicator refused everywhere: the set-up is made, and works.
    REFUSED(MPIX_Allreduce_stream(a.p, b.p, 4, MPI_INT, MPI_OP_NULL, c.comm, s), MPI_ERR_OP, "MPIX_Allreduce_stream");
    works(c, s, 16, 1, "after a refused first call");
    for (int round = 0; round < 3; ++round) {
      REFUSED(MPIX_Allreduce_stream(a.p, b.p, -1, MPI_INT, MPI_SUM, c.comm, s), MPI_ERR_COUNT, "MPIX_Allreduce_stream");
      REFUSED(MPIX_Reduce_stream(a.p, b.p, 4, MPI_INT, MPI_SUM, c.size, c.comm, s), MPI_ERR_ROOT, "MPIX_Reduce_stream");
      REFUSED(MPIX_Bcast_stream(nullptr, 4, MPI_INT, 0, c.comm, s), MPI_ERR_BUFFER, "MPIX_Bcast_stream");
      REFUSED(MPIX_Allgather_stream(a.p, 2, MPI_INT, b.p, 3, MPI_INT, c.comm, s), MPI_ERR_TYPE, "MPIX_Allgather_stream");
      works(c, s, 8 + round, 100 * round, "after calls refused everywhere");
    }
    // Refused on every rank for different reasons (the rounds still agree).
    if (c.rank == 0)
      REFUSED(MPIX_Allreduce_stream(nullptr, b.p, 4, MPI_INT, MPI_SUM, c.comm, s), MPI_ERR_BUFFER, "MPIX_Allreduce_stream");
    else
      REFUSED(MPIX_Allreduce_stream(a.p, b.p, 4, MPI_INT, MPI_LAND, c.comm, s), MPI_ERR_OP, "MPIX_Allreduce_stream");
    works(c, s, 33, 7, "after a call refused everywhere for different reasons");
  }
}

// ---- refused on one rank --------------------------------------------------------------------

enum class Bad { buffer, root, count, stream };
const char *bad_name(Bad b) {
  return b == Bad::buffer ? "a NULL buffer" : b == Bad::root ? "a bad root" : b == Bad::count ? "a negative count" : "a destroyed stream";
}

// Rank `who` refuses call 2 (call 1 when first_call) of the communicator; the others enqueue it.
void refused_on_one(void *s, Bad bad, int who, bool first_call) {
  g_context = fmt("%s on rank %d only%s", bad_name(bad), who, first_call ? ", first call" : "");
  Comm c;
  DevBuf in(4096), out(4096);
  if (!first_call) works(c, s, 16, 3, "before the refused call");
  const bool me = c.rank == who;
  const char *call = bad == Bad::root ? "MPIX_Reduce_stream" : "MPIX_Allreduce_stream";
  const int count = 16;
  int rc = MPI_SUCCESS;
  void *gone = nullptr;
  if (me && bad == Bad::stream) {
    gone = stream_create();
    stream_destroy(gone);
  }
  if (bad == Bad::root) {
    std::vector<int32_t> v(count, c.rank + 1);
    in.upload(v.data(), v.size() * 4);
    rc = MPIX_Reduce_stream(in.p, out.p, count, MPI_INT, MPI_SUM, me ? -1 : 0, c.comm, s);
  } else {
    std::vector<int32_t> v(count);
    for (int i = 0; i < count; ++i) v[static_cast<size_t>(i)] = 3 + c.rank + i;  // as allreduce(..., 3) does
    in.upload(v.data(), v.size() * 4);
    rc = MPIX_Allreduce_stream(in.p, me && bad == Bad::buffer ? nullptr : out.p, me && bad == Bad::count ? -4 : count,
                               MPI_INT, MPI_SUM, c.comm, me && bad == Bad::stream ? gone : s);
  }
  const int cls = bad == Bad::buffer ? MPI_ERR_BUFFER : bad == Bad::root ? MPI_ERR_ROOT : bad == Bad::count ? MPI_ERR_COUNT : MPI_ERR_ARG;
  const std::string refused_no = fmt("call %d", first_call ? 1 : 2), on_rank = fmt("rank %d", who);
  // The others enqueue it, or (a rank that comes late) find that the refusing rank has already
  // told the refusal from theirs, and refuse it too.
  bool enqueued = false;
  if (me) refused_at(rc, cls, call, {}, "the refused call", __FILE__, __LINE__);
  else if (rc != MPI_SUCCESS) refused_at(rc, MPI_ERR_OTHER, call, {refused_no, on_rank}, "the call, late", __FILE__, __LINE__);
  else enqueued = true;
  // The refusing rank's next call (correct arguments) is refused: its rounds would pair with the
  // others' refused call.
  if (me) {
    REFUSED(allreduce(c, s, in, out, count, 50), MPI_ERR_OTHER, "MPIX_Allreduce_stream", refused_no, on_rank);
    MT_SYNC(s);  // it enqueued nothing
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // Every other rank's next call is refused too (the refusing rank has made its next call).
  if (!me) REFUSED(allreduce(c, s, in, out, count, 60), MPI_ERR_OTHER, "MPIX_Allreduce_stream", refused_no, on_rank);
  const bool receives = enqueued && bad != Bad::root;  // the reduce's root is rank 0, which refused it
  sync_after_failure(s, receives, [&] { return right_sum(c, out, count, 3); }, "the call the refusing rank did not make");
  // And every later call, of every collective, on every rank.
  REFUSED(allreduce(c, s, in, out, count, 70), MPI_ERR_OTHER, "MPIX_Allreduce_stream", refused_no, on_rank);
  REFUSED(MPIX_Bcast_stream(in.p, 4, MPI_INT, 0, c.comm, s), MPI_ERR_OTHER, "MPIX_Bcast_stream", refused_no, on_rank);
  REFUSED(MPIX_Allgather_stream(in.p, 1, MPI_INT, out.p, 1, MPI_INT, c.comm, s), MPI_ERR_OTHER, "MPIX_Allgather_stream",
          refused_no, on_rank);
  MT_SYNC(s);
  MPI_Barrier(MPI_COMM_WORLD);
  // A new communicator works.
  Comm fresh;
  works(fresh, s, 40, 9, "a new communicator after the failure");
}

// ---- arguments that differ without a refusal ------------------------------------------------

// Counts that differ (4 on rank 0, 8 elsewhere; both valid): MPI calls this erroneous, and the call
// itself cannot be told from a correct one on any rank. Once every rank has made it, each rank's
// later calls find the difference within a few calls (each compares with one peer per call) and
// refuse from then on; a call that succeeds before that, with its stream, has the right values.
void counts_differ(void *s) {
  g_context = "counts that differ";
  Comm c;
  DevBuf in(4096), out(4096);
  works(c, s, 8, 1, "before the mismatch");
  MT_OK(allreduce(c, s, in, out, c.rank == 0 ? 4 : 8, 2));
  stream_sync_rc(s);
  MPI_Barrier(MPI_COMM_WORLD);
  int refused_after = -1;
  for (int k = 0; k < c.size + 1; ++k) {
    const int rc = allreduce(c, s, in, out, 8, 10 + k);
    const int sync = stream_sync_rc(s);
    if (rc != MPI_SUCCESS) {
      if (refused_after < 0) refused_after = k;
      refused_at(rc, MPI_ERR_OTHER, "MPIX_Allreduce_stream", {"call 2", "differ"}, "a call after the mismatch",
                 __FILE__, __LINE__);
    } else if (refused_after >= 0) {
      report(__FILE__, __LINE__, "call %d after the mismatch succeeded after an earlier one was refused", k);
    } else if (sync == MPI_SUCCESS && !right_sum(c, out, 8, 10 + k)) {
      report(__FILE__, __LINE__, "call %d after the mismatch succeeded with wrong values", k);
    }
  }
  ++g_cases;
  MT_CHECKF(refused_after >= 0, "no call within %d after the mismatch was refused", c.size + 1);
  stream_sync_rc(s);
  MPI_Barrier(MPI_COMM_WORLD);
}

// ---- across nodes ---------------------------------------------------------------------------

// Every peer on another (virtual) node, or some: the ranks agree on each call before anything is
// enqueued, so a call refused on one rank is refused on every rank, the others' refusal naming it,
// and the communicator keeps working; differing counts are refused on every rank alike.
void across_nodes(void *s) {
  for (int who = 0; who < g_size; ++who) {
    g_context = fmt("across nodes, a NULL buffer on rank %d", who);
    Comm c;
    DevBuf in(4096), out(4096);
    works(c, s, 16, 1, "before the refused call");
    const int rc = MPIX_Allreduce_stream(in.p, c.rank == who ? nullptr : out.p, 16, MPI_INT, MPI_SUM, c.comm, s);
    if (c.rank == who) REFUSED(rc, MPI_ERR_BUFFER, "MPIX_Allreduce_stream");
    else refused_at(rc, MPI_ERR_OTHER, "MPIX_Allreduce_stream", {fmt("rank %d refused", who)}, "the others", __FILE__, __LINE__);
    MT_SYNC(s);
    works(c, s, 24, 2, "after a call refused on every rank");
    g_context = "across nodes, counts that differ";
    REFUSED(allreduce(c, s, in, out, c.rank == who ? 4 : 8, 3), MPI_ERR_OTHER, "MPIX_Allreduce_stream", "differ");
    MT_SYNC(s);
    works(c, s, 8, 4, "after differing counts");
  }
}

// ---- the cost of a call ---------------------------------------------------------------------

// count 0: the call's host side alone (checks, the call board), no stream work.
void measure(void *s, int calls, int count) {
  Comm c;
  DevBuf in(64), out(64);
  works(c, s, 1, 0, "warm-up");
  MPI_Barrier(c.comm);
  const double t0 = now_s();
  for (int i = 0; i < calls; ++i) MT_OK(MPIX_Allreduce_stream(in.p, out.p, count, MPI_INT, MPI_SUM, c.comm, s));
  const double t1 = now_s();
  MT_SYNC(s);
  const double t2 = now_s();
  double mine[2] = {(t1 - t0) / calls * 1e6, (t2 - t0) / calls * 1e6}, most[2];
  MPI_Reduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  note("measure: %d allreduces of %d int on %d ranks: %.2f us a call enqueued on the host (slowest rank), %.2f us "
       "a call until the stream finished",
       calls, count, g_size, most[0], most[1]);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "coll_after_error");
  int calls = 20000, count = 1;
  bool only_measure = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--measure") == 0) only_measure = true;
    if (std::strncmp(argv[i], "--calls=", 8) == 0) calls = std::atoi(argv[i] + 8);
    if (std::strncmp(argv[i], "--count=", 8) == 0) count = std::atoi(argv[i] + 8);
  }
  void *s = stream_create();
  const char *vnode = std::getenv("MPIX_ST_VNODE_SIZE");  // set by the runs across virtual nodes
  if (only_measure) {
    measure(s, calls, count);
  } else if (vnode && std::atoi(vnode) > 0 && std::atoi(vnode) < g_size) {
    refused_everywhere(s);
    across_nodes(s);
  } else {
    refused_everywhere(s);
    refused_on_one(s, Bad::buffer, g_size - 1, false);
    refused_on_one(s, Bad::root, 0, false);
    refused_on_one(s, Bad::count, 1 % g_size, false);
    refused_on_one(s, Bad::stream, 0, false);
    refused_on_one(s, Bad::buffer, 0, true);
    counts_differ(s);
    refused_everywhere(s);
  }
  stream_destroy(s);
  long total = 0;
  MPI_Reduce(&g_cases, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  note("coll_after_error: %ld checked cases over %d ranks", total, g_size);
  return finish();
}
