// The launch trace (MPIX_ST_TRACE, kernels/launch_trace.h): what MPI_Finalize writes.
//
// Each rank runs ring epochs on one window from one stream (post from the left, start to the
// right, one put): some eagerly, then a block of epochs captured once (merged into one launch
// each) and replayed. After MPI_Finalize each rank reads its own <prefix>.<rank>.csv and checks:
//  - the header names this backend and the clock, `records` is what the file holds, `dropped` 0;
//  - every launch is enter, waited, ops_done, signalled, trail_done, exit (or enter, waited,
//    exit), each stamp no earlier than the one before;
//  - there is one launch per stream operation the library enqueued eagerly plus one per captured
//    operation per replay; launches that move data are the eager completes and the replayed
//    epochs; the replayed ones hold every part (lead, waits, data, signals, trailing waits,
//    counts: post, complete and wait in one);
//  - the put data arrived (the epochs ran, traced);
//  - allreduces on a stream of their own, eager and replayed, each one launch of enter, waited,
//    ops_done, exit whose enter names a collective allreduce, and their sums right.
// --records N (MPIX_ST_TRACE_RECORDS): a log of N records; the file then holds N and reports the
// rest as dropped.
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "test_common.h"

using namespace mt;

namespace {

// Large enough that a GPU spreads the complete's copy over many blocks: the finishing block then
// writes the stamps block 0 handed over (launch_trace.h).
constexpr size_t kPut = 256 * 1024;
constexpr int kEager = 5, kCaptured = 3, kReplays = 7;
constexpr int kCollEager = 4, kCollCaptured = 2;
constexpr unsigned kTraceCollective = 64;  // launch_trace.h: the enter info of a collective call

struct Expected {
  unsigned long long launches = 0;  // every launch the library made
  unsigned long long data_launches = kEager + static_cast<unsigned long long>(kCaptured) * kReplays;
  unsigned long long replayed = static_cast<unsigned long long>(kCaptured) * kReplays;
  unsigned long long allreduces = kCollEager + static_cast<unsigned long long>(kCollCaptured) * kReplays;
  uint64_t capacity = 0;  // 0: the default (large enough)
};

void epoch(TestWin &w, DevBuf &src, void *s) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group from_left({left}), to_right({right});
  MT_OK(MPIX_Win_post_stream(from_left, w.win, s));
  MT_OK(MPI_Win_start(to_right, MPIX_MODE_STREAM, w.win));
  MT_OK(MPI_Put(src.p, kPut, MPI_BYTE, right, 0, kPut, MPI_BYTE, w.win));
  MT_OK(MPIX_Win_complete_stream(w.win, s));
  MT_OK(MPIX_Win_wait_stream(w.win, s));
}

Expected run_epochs() {
  g_context = "traced epochs";
  Expected e;
  void *s = stream_create();
  TestWin w = make_window(WinKind::allocate, kPut);
  DevBuf src(kPut);
  src.upload(pattern(kPut, key(0x7ace, static_cast<uint64_t>(g_rank))));
  const unsigned long long ops0 = MPIX_St_stream_ops_enqueued();
  for (int k = 0; k < kEager; ++k) epoch(w, src, s);
  const unsigned long long eager_ops = MPIX_St_stream_ops_enqueued() - ops0;
  MT_CHECKF(eager_ops == 3ull * kEager, "%d eager epochs took %llu stream operations, not 3 each", kEager, eager_ops);
  xdev::stream_begin_capture(s);
  const unsigned long long ops1 = MPIX_St_stream_ops_enqueued();
  for (int k = 0; k < kCaptured; ++k) epoch(w, src, s);
  const unsigned long long captured_ops = MPIX_St_stream_ops_enqueued() - ops1;
  void *graph = xdev::stream_end_capture(s);
  for (int r = 0; r < kReplays; ++r) xdev::graph_launch(graph, s);
  MT_SYNC(s);
  MPI_Barrier(MPI_COMM_WORLD);
  const int left = (g_rank + g_size - 1) % g_size;
  auto want = pattern(kPut, key(0x7ace, static_cast<uint64_t>(left)));
  auto got = read_device(w.base, kPut);
  MT_SAME_BYTES(got.data(), want.data(), kPut, "the last replayed epoch's put");
  xdev::graph_destroy(graph);
  free_window(w);
  stream_destroy(s);
  MT_CHECKF(captured_ops == kCaptured, "%d captured epochs took %llu stream operations, not one each (merged)",
            kCaptured, captured_ops);
  e.launches = eager_ops + captured_ops * kReplays;
  return e;
}

// Allreduces of every rank's (rank + 1) on a stream of their own: eager, then captured and
// replayed. The first call sets up the communicator's collective state.
void run_allreduces() {
  g_context = "traced allreduces";
  constexpr int kCount = 1024;
  void *s = stream_create();
  DevBuf send(kCount * sizeof(int)), recv(kCount * sizeof(int));
  const std::vector<int> mine(kCount, g_rank + 1);
  send.upload(mine.data(), mine.size() * sizeof(int));
  for (int k = 0; k < kCollEager; ++k)
    MT_OK(MPIX_Allreduce_stream(send.p, recv.p, kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD, s));
  xdev::stream_begin_capture(s);
  for (int k = 0; k < kCollCaptured; ++k)
    MT_OK(MPIX_Allreduce_stream(send.p, recv.p, kCount, MPI_INT, MPI_SUM, MPI_COMM_WORLD, s));
  void *graph = xdev::stream_end_capture(s);
  for (int r = 0; r < kReplays; ++r) xdev::graph_launch(graph, s);
  MT_SYNC(s);
  xdev::graph_destroy(graph);
  std::vector<int> got(kCount);
  const std::vector<uint8_t> bytes = recv.download();
  std::memcpy(got.data(), bytes.data(), bytes.size());
  const int want = g_size * (g_size + 1) / 2;
  MT_CHECKF(got[0] == want && got[kCount - 1] == want, "sums %d and %d, not %d", got[0], got[kCount - 1], want);
  stream_destroy(s);
}

struct Record {
  unsigned long long t;
  unsigned window;
  std::string event;
  unsigned info;
};

// The rank's own file, checked against what it ran. Failures are counted in g_failures.
void check_file(const std::string &path, const std::string &backend, const Expected &e) {
  g_context = "trace file " + path;
  std::ifstream in(path);
  MT_CHECKF(in.good(), "cannot open it");
  if (!in.good()) return;
  std::map<std::string, std::string> header;
  std::vector<Record> records;
  bool columns = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# ", 0) == 0) {
      const size_t sp = line.find(' ', 2);
      header[line.substr(2, sp - 2)] = sp == std::string::npos ? "" : line.substr(sp + 1);
      continue;
    }
    if (!columns) {
      MT_CHECKF(line == "t_ns,window,event,info", "column line \"%s\"", line.c_str());
      columns = true;
      continue;
    }
    std::stringstream ss(line);
    Record r;
    char c1 = 0, c2 = 0;
    ss >> r.t >> c1 >> r.window >> c2;
    std::getline(ss, r.event, ',');
    ss >> r.info;
    MT_CHECKF(c1 == ',' && c2 == ',' && !ss.fail(), "unreadable line \"%s\"", line.c_str());
    records.push_back(r);
  }
  MT_CHECKF(header["backend"] == backend, "backend \"%s\", this process runs \"%s\"", header["backend"].c_str(),
            backend.c_str());
  MT_CHECKF(!header["clock"].empty(), "no clock named");
  MT_CHECKF(header["rank"] == std::to_string(g_rank), "rank \"%s\"", header["rank"].c_str());
  const unsigned long long written = std::stoull(header["records"].empty() ? "0" : header["records"]);
  const unsigned long long dropped = std::stoull(header["dropped"].empty() ? "0" : header["dropped"]);
  MT_CHECKF(written == records.size(), "header says %llu records, the file holds %zu", written, records.size());
  if (e.capacity) {
    // Six records a launch at most: the log overflowed, and says by how much.
    MT_CHECKF(written == e.capacity, "a log of %llu records wrote %llu", static_cast<unsigned long long>(e.capacity),
              written);
    MT_CHECKF(written + dropped >= 3 * e.launches && dropped > 0, "%llu written + %llu dropped for %llu launches",
              written, dropped, e.launches);
    return;
  }
  MT_CHECKF(dropped == 0, "%llu records dropped", dropped);

  // Launches in claim order: each starts at enter.
  static const char *full[] = {"enter", "waited", "ops_done", "signalled", "trail_done", "exit"};
  static const char *bare[] = {"enter", "waited", "exit"};
  static const char *collective[] = {"enter", "waited", "ops_done", "exit"};
  unsigned long long launches = 0, with_data = 0, all_parts = 0, allreduces = 0;
  for (size_t i = 0; i < records.size();) {
    MT_CHECKF(records[i].event == "enter", "record %zu: a launch starts with \"%s\"", i, records[i].event.c_str());
    if (records[i].event != "enter") return;
    const unsigned parts = records[i].info;
    const bool coll = (parts & kTraceCollective) != 0;
    const bool short_form = !coll && i + 2 < records.size() && records[i + 2].event == "exit";
    const size_t n = coll ? 4 : short_form ? 3 : 6;
    const char **names = coll ? collective : short_form ? bare : full;
    for (size_t k = 0; k < n; ++k) {
      if (i + k >= records.size()) {
        MT_CHECKF(false, "the last launch ends after %zu records", k);
        return;
      }
      const Record &r = records[i + k];
      MT_CHECKF(r.event == names[k], "launch %llu, record %zu: \"%s\" where \"%s\" belongs", launches, k,
                r.event.c_str(), names[k]);
      MT_CHECKF(r.window == records[i].window, "launch %llu: records of windows %u and %u", launches,
                records[i].window, r.window);
      if (k > 0)
        MT_CHECKF(r.t >= records[i + k - 1].t, "launch %llu: %s at %llu before %s at %llu", launches,
                  r.event.c_str(), r.t, records[i + k - 1].event.c_str(), records[i + k - 1].t);
    }
    i += n;
    if (coll) {
      allreduces += parts == kTraceCollective;  // kind 0 in the high byte: allreduce
      continue;
    }
    with_data += (parts & 4) != 0;  // kTraceOps
    all_parts += parts == 63;       // lead, waits, ops, signals, trail, counts
    ++launches;
  }
  MT_CHECKF(allreduces == e.allreduces, "%llu collective allreduce launches traced, %llu allreduces ran", allreduces,
            e.allreduces);
  MT_CHECKF(launches == e.launches, "%llu launches traced, the library enqueued %llu", launches, e.launches);
  MT_CHECKF(with_data == e.data_launches, "%llu launches moved data, %llu epochs did", with_data, e.data_launches);
  MT_CHECKF(all_parts == e.replayed, "%llu launches held post, complete and wait, %llu replayed epochs did",
            all_parts, e.replayed);
}

}  // namespace

int main(int argc, char **argv) {
  // The prefix is this process's own: each rank reads back only the file it wrote.
  const std::string prefix = "/tmp/mpixst-launch-trace-" + std::to_string(getpid());
  setenv("MPIX_ST_TRACE", prefix.c_str(), 1);
  uint64_t capacity = 0;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--records") capacity = std::strtoull(argv[i + 1], nullptr, 10);
  if (capacity) setenv("MPIX_ST_TRACE_RECORDS", std::to_string(capacity).c_str(), 1);
  init(&argc, &argv, "launch_trace");
  Expected e = run_epochs();
  run_allreduces();
  e.capacity = capacity;
  const std::string backend = MPIX_St_backend_name();
  const int rank = g_rank;
  const long before = g_failures;
  int rc = finish();  // MPI_Finalize writes the file
  const std::string path = prefix + "." + std::to_string(rank) + ".csv";
  check_file(path, backend, e);
  std::remove(path.c_str());
  if (g_failures != before) {
    std::printf("[rank %d] launch_trace: the trace file failed %ld checks\n", rank, g_failures - before);
    rc = 1;
  }
  return rc;
}
