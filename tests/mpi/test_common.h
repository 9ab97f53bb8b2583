// Shared helpers of the multi-rank tests: MPI start-up, failure accounting with rank/context in
// every message, byte-exact comparisons, windows of both kinds, epochs in both modes, streams.
//
// One source builds two programs: against xdev_host (host backend: MPIX_Host_stream, windows over
// shared memory or malloc memory) and, with -DMPIX_TEST_CUDA, against xdev_cuda (CUDA streams,
// windows over cudaMalloc memory).
#pragma once
#include <mpi.h>
#include <mpix/mpix_st.h>

#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/common/error_text.h"
#include "xdev.h"

namespace mt {

#ifdef MPIX_TEST_CUDA
constexpr bool kCuda = true;
#else
constexpr bool kCuda = false;
#endif

inline int g_rank = 0, g_size = 1, g_local_rank = 0;
inline long g_failures = 0;
inline long g_printed = 0;
inline const char *g_test = "test";
inline std::string g_context;  // what is being tested now: printed with every failure

// ---- failure reporting -----------------------------------------------------------------------

inline void vreport(const char *file, int line, const char *fmt, va_list ap) {
  ++g_failures;
  if (++g_printed > 60) {
    if (g_printed == 61) std::fprintf(stderr, "[rank %d] (further failures not printed)\n", g_rank);
    return;
  }
  char msg[2048];
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  std::fprintf(stderr, "[rank %d] FAIL %s:%d [%s] %s\n", g_rank, file, line, g_context.c_str(), msg);
  std::fflush(stderr);
}

inline void report(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(file, line, fmt, ap);
  va_end(ap);
}

#define MT_CHECK(cond)                                                        \
  do {                                                                        \
    if (!(cond)) ::mt::report(__FILE__, __LINE__, "check failed: %s", #cond); \
  } while (0)
#define MT_CHECKF(cond, ...)                                    \
  do {                                                          \
    if (!(cond)) ::mt::report(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

// The library's message for an error code (see ../common/error_text.h).
inline std::string error_string(int rc) { return mpix_test::error_text(rc); }

inline int error_class(int rc) {
  int cls = -1;
  if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) return -1;
  return cls;
}

inline const char *class_name(int cls) {
  switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_WIN: return "MPI_ERR_WIN";
    case MPI_ERR_RMA_SYNC: return "MPI_ERR_RMA_SYNC";
    case MPI_ERR_RMA_RANGE: return "MPI_ERR_RMA_RANGE";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_OP: return "MPI_ERR_OP";
    case MPI_ERR_RANK: return "MPI_ERR_RANK";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_DISP: return "MPI_ERR_DISP";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_SIZE: return "MPI_ERR_SIZE";
    case MPI_ERR_NO_MEM: return "MPI_ERR_NO_MEM";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER";
    case MPI_ERR_COMM: return "MPI_ERR_COMM";
    case MPI_ERR_ASSERT: return "MPI_ERR_ASSERT";
    case MPI_ERR_INFO: return "MPI_ERR_INFO";
    case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
    case MPI_ERR_TAG: return "MPI_ERR_TAG";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN";
    default: return "(other class)";
  }
}

// An unexpected failure of a call that must succeed: report and abort (no hang, no cascade).
inline void ok_at(int rc, const char *what, const char *file, int line) {
  if (rc == MPI_SUCCESS) return;
  std::fprintf(stderr, "[rank %d] UNEXPECTED FAILURE %s:%d [%s] %s returned %d (%s): %s\n", g_rank, file, line,
               g_context.c_str(), what, rc, class_name(error_class(rc)), error_string(rc).c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
}
#define MT_OK(call) ::mt::ok_at((call), #call, __FILE__, __LINE__)

// Checks that `rc` is an error of class `cls` whose message starts with "mpix-st:". Returns the
// message ("" when rc was MPI_SUCCESS).
inline std::string expect_error_at(int rc, int cls, const char *what, const char *file, int line) {
  if (rc == MPI_SUCCESS) {
    report(file, line, "%s: expected an error of class %s, got MPI_SUCCESS", what, class_name(cls));
    return "";
  }
  const int got = error_class(rc);
  const std::string msg = error_string(rc);
  if (got != cls)
    report(file, line, "%s: expected error class %s (%d), got %s (%d): \"%s\"", what, class_name(cls), cls,
           class_name(got), got, msg.c_str());
  if (msg.rfind("mpix-st:", 0) != 0 || msg.size() <= std::strlen("mpix-st: "))
    report(file, line, "%s: error message does not start with \"mpix-st:\" or is empty: \"%s\"", what, msg.c_str());
  return msg;
}
#define MT_EXPECT_ERROR(call, cls) ::mt::expect_error_at((call), (cls), #call, __FILE__, __LINE__)

inline bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

// Whether calls captured back to back merge into one node (MPIX_ST_GRAPH_MERGE, on unless 0).
inline bool graph_merging() {
  const char *env = std::getenv("MPIX_ST_GRAPH_MERGE");
  return !(env && std::string(env) == "0");
}

// ---- start-up and end ------------------------------------------------------------------------

inline void init(int *argc, char ***argv, const char *name) {
  g_test = name;
  for (int i = 1; i < *argc; ++i)
    if (std::strcmp((*argv)[i], "--strict-messages") == 0) mpix_test::g_strict_messages = true;
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &g_local_rank);
  MPI_Comm_free(&node);
  xdev::init(g_local_rank);
  if (g_rank == 0 && !mpix_test::mpi_shows_added_strings())
    std::printf(
        "note: this MPI's MPI_Error_string cannot show texts added to codes of predefined error classes; "
        "%s\n",
        mpix_test::g_strict_messages ? "strict mode: message checks will fail"
                                     : "message checks read the texts the library registered instead "
                                       "(--strict-messages to require MPI_Error_string)");
  const char *backend = MPIX_St_backend_name();
  const char *want = kCuda ? "cuda" : "host";
  if (std::strcmp(backend, want) != 0) {
    std::fprintf(stderr, "[rank %d] %s: backend is \"%s\", this program was built for \"%s\" (set MPIX_ST_BACKEND)\n",
                 g_rank, name, backend, want);
    MPI_Abort(MPI_COMM_WORLD, 4);
  }
}

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Sums failures over the ranks; every rank returns the same exit status.
inline int finish() {
  long total = 0;
  MPI_Allreduce(&g_failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) {
    if (total == 0)
      std::printf("%s (%d ranks, %s backend): PASSED\n", g_test, g_size, MPIX_St_backend_name());
    else
      std::printf("%s (%d ranks, %s backend): FAILED, %ld failed checks over all ranks\n", g_test, g_size,
                  MPIX_St_backend_name(), total);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}

// Prints on rank 0 (progress and timings: they show where a hang or slowdown happened).
inline void note(const char *fmt, ...) {
  if (g_rank != 0) return;
  va_list ap;
  va_start(ap, fmt);
  std::vprintf(fmt, ap);
  va_end(ap);
  std::printf("\n");
  std::fflush(stdout);
}

inline std::string fmt(const char *f, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

// ---- deterministic data -----------------------------------------------------------------------

inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline uint64_t key(uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0) {
  return mix(mix(mix(mix(a) ^ b) ^ c) ^ d);
}

// Byte i of the pattern named `k` (depends on k and i only, never periodic in small strides).
inline uint8_t pattern_byte(uint64_t k, uint64_t i) { return static_cast<uint8_t>(mix(k ^ (i >> 3)) >> ((i & 7) * 8)); }

inline void fill_pattern(uint8_t *dst, size_t n, uint64_t k) {
  size_t i = 0;
  for (; i < n && (i & 7); ++i) dst[i] = pattern_byte(k, i);
  for (; i + 8 <= n; i += 8) {
    uint64_t v = mix(k ^ (i >> 3));
    std::memcpy(dst + i, &v, 8);  // little-endian: byte j of v is pattern_byte(k, i + j)
  }
  for (; i < n; ++i) dst[i] = pattern_byte(k, i);
}

inline std::vector<uint8_t> pattern(size_t n, uint64_t k) {
  std::vector<uint8_t> v(n);
  fill_pattern(v.data(), n, k);
  return v;
}

// Byte-for-byte comparison; prints the first differing byte and how many differ.
inline bool same_bytes_at(const void *got_p, const void *want_p, size_t n, const std::string &what, const char *file,
                          int line) {
  const uint8_t *got = static_cast<const uint8_t *>(got_p), *want = static_cast<const uint8_t *>(want_p);
  if (n == 0 || std::memcmp(got, want, n) == 0) return true;
  size_t first = n, count = 0, last = 0;
  for (size_t i = 0; i < n; ++i) {
    if (got[i] == want[i]) continue;
    if (first == n) first = i;
    last = i;
    ++count;
  }
  report(file, line, "%s: %zu of %zu bytes differ (bytes %zu..%zu); first at byte %zu: got 0x%02x, want 0x%02x",
         what.c_str(), count, n, first, last, first, got[first], want[first]);
  return false;
}
#define MT_SAME_BYTES(got, want, n, what) ::mt::same_bytes_at((got), (want), (n), (what), __FILE__, __LINE__)

// ---- device memory ----------------------------------------------------------------------------

// Host-to-device copy that has landed when it returns. (CUDA: cudaMemcpy from pageable memory may
// return before its DMA completes, and the library's streams are non-blocking, so a kernel could
// read stale data: reading a byte back through the same legacy stream waits for the copy.)
inline void to_device(void *dst, const void *src, size_t n) {
  if (n == 0) return;
  xdev::copy_to_device(dst, src, n);
  if (kCuda) {
    unsigned char last;
    xdev::copy_to_host(&last, static_cast<const unsigned char *>(dst) + n - 1, 1);
  }
}

inline std::vector<uint8_t> read_device(const void *src, size_t n) {
  std::vector<uint8_t> v(n);
  if (n) xdev::copy_to_host(v.data(), src, n);
  return v;
}

// A device buffer (host backend: plain host memory) holding `n` bytes.
struct DevBuf {
  uint8_t *p = nullptr;
  size_t n = 0;
  DevBuf() = default;
  explicit DevBuf(size_t bytes) : p(static_cast<uint8_t *>(xdev::alloc(bytes))), n(bytes) {}
  DevBuf(const DevBuf &) = delete;
  DevBuf &operator=(const DevBuf &) = delete;
  DevBuf(DevBuf &&o) noexcept : p(o.p), n(o.n) { o.p = nullptr, o.n = 0; }
  DevBuf &operator=(DevBuf &&o) noexcept {
    std::swap(p, o.p);
    std::swap(n, o.n);
    return *this;
  }
  ~DevBuf() {
    if (p) xdev::free(p);
  }
  void upload(const void *src, size_t bytes, size_t off = 0) { to_device(p + off, src, bytes); }
  void upload(const std::vector<uint8_t> &v, size_t off = 0) { upload(v.data(), v.size(), off); }
  std::vector<uint8_t> download(size_t off, size_t bytes) const { return read_device(p + off, bytes); }
  std::vector<uint8_t> download() const { return read_device(p, n); }
};

// A zeroed 64-bit word in device memory (xdev::stamp and xdev::append count in them), and its value.
inline uint64_t *device_counter() {
  auto *c = static_cast<uint64_t *>(xdev::alloc(8));
  xdev::fill(c, 0, 8);
  return c;
}
inline uint64_t read_counter(const uint64_t *c) {
  uint64_t v = 0;
  xdev::copy_to_host(&v, c, 8);
  return v;
}

// ---- streams ----------------------------------------------------------------------------------

inline void *stream_create() { return xdev::stream_create(); }
inline void stream_destroy(void *s) { xdev::stream_destroy(s); }

// Returns the stream's status (host backend: MPIX_Host_stream_synchronize's code).
inline int stream_sync_rc(void *s) {
#ifdef MPIX_TEST_CUDA
  xdev::stream_sync(s);  // aborts on a CUDA error
  return MPI_SUCCESS;
#else
  return MPIX_Host_stream_synchronize(static_cast<MPIX_Host_stream>(s));
#endif
}
#define MT_SYNC(s) MT_OK(::mt::stream_sync_rc(s))

#ifdef MPIX_ST_DEFINES_MPIX_STREAM
// The info "type" naming this build's streams for MPIX_Stream_create.
inline const char *stream_type() { return kCuda ? "cudaStream_t" : "MPIX_Host_stream"; }
// An MPIX_Stream wrapping stream s (MPICH's spelling: the stream communicators' and enqueue calls').
inline MPIX_Stream wrap_stream(void *s) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "type", stream_type());
  MT_OK(MPIX_Info_set_hex(info, "value", &s, sizeof s));
  MPIX_Stream stream = MPIX_STREAM_NULL;
  MT_OK(MPIX_Stream_create(info, &stream));
  MPI_Info_free(&info);
  return stream;
}
#endif

// The report that the stream's earlier work left (a watchdog or freed-window event): GPU backends
// keep it in the library until asked for (MPIX_St_check(MPI_WIN_NULL) raises any window's, freed
// ones included); the host backend returns it from the stream's synchronisation.
// A stream with a queue of HPE's spelling on it (MPIX_Create_queue), synchronised and freed at
// the end of its scope.
struct StreamQueue {
  void *stream = nullptr;
  MPIX_Queue q = MPIX_QUEUE_NULL;
  StreamQueue() {
    stream = stream_create();
    MT_OK(MPIX_Create_queue(stream, &q));
  }
  ~StreamQueue() {
    MT_SYNC(stream);
    MT_OK(MPIX_Free_queue(q));
    stream_destroy(stream);
  }
  StreamQueue(const StreamQueue &) = delete;
  StreamQueue &operator=(const StreamQueue &) = delete;
};

inline int stream_report_rc(void *s) {
#ifdef MPIX_TEST_CUDA
  xdev::stream_sync(s);
  return MPIX_St_check(MPI_WIN_NULL);
#else
  return stream_sync_rc(s);
#endif
}

#ifndef MPIX_TEST_CUDA
// Host backend: runs `fn` on the stream, in stream order.
inline void stream_call(void *s, std::function<void()> fn) {
  auto *heap = new std::function<void()>(std::move(fn));
  int rc = MPIX_Host_stream_enqueue(
      static_cast<MPIX_Host_stream>(s),
      [](void *arg) {
        auto *f = static_cast<std::function<void()> *>(arg);
        (*f)();
        delete f;
      },
      heap);
  ok_at(rc, "MPIX_Host_stream_enqueue", __FILE__, __LINE__);
}
#endif

// ---- groups -----------------------------------------------------------------------------------

inline MPI_Group group_of(const std::vector<int> &ranks, MPI_Comm comm = MPI_COMM_WORLD) {
  MPI_Group all, g;
  MPI_Comm_group(comm, &all);
  MT_OK(MPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &g));
  MPI_Group_free(&all);
  return g;
}

struct Group {
  MPI_Group g = MPI_GROUP_NULL;
  explicit Group(const std::vector<int> &ranks, MPI_Comm comm = MPI_COMM_WORLD) : g(group_of(ranks, comm)) {}
  Group(const Group &) = delete;
  Group &operator=(const Group &) = delete;
  ~Group() {
    if (g != MPI_GROUP_NULL && g != MPI_GROUP_EMPTY) MPI_Group_free(&g);
  }
  operator MPI_Group() const { return g; }
};

// ---- windows ----------------------------------------------------------------------------------

enum class WinKind { allocate, create };
inline const char *kind_name(WinKind k) { return k == WinKind::allocate ? "MPI_Win_allocate" : "MPI_Win_create"; }
// Host backend: allocate gives shared memory, create is over private (aligned_alloc) memory reached with
// cross-memory attach. CUDA: both are device memory.
inline const WinKind kAllKinds[] = {WinKind::allocate, WinKind::create};

struct TestWin {
  MPI_Win win = MPI_WIN_NULL;
  uint8_t *base = nullptr;  // device memory (host backend: host memory)
  size_t bytes = 0;
  int disp_unit = 1;
  WinKind kind = WinKind::allocate;
  bool own_memory = false;
};

// Collective. Window memory starts as the pattern `init_key` (0: zeros) of its owner's rank.
// `info_pairs`: more info keys and values for the window's creation.
inline TestWin make_window(WinKind kind, size_t bytes, int disp_unit = 1, MPI_Comm comm = MPI_COMM_WORLD,
                           uint64_t init_key = 0,
                           const std::vector<std::pair<const char *, const char *>> &info_pairs = {}) {
  TestWin w;
  w.bytes = bytes;
  w.disp_unit = disp_unit;
  w.kind = kind;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpix_st_memory", "device");
  for (const auto &[k, v] : info_pairs) MPI_Info_set(info, k, v);
  if (kind == WinKind::allocate) {
    MT_OK(MPI_Win_allocate(static_cast<MPI_Aint>(bytes), disp_unit, info, comm, &w.base, &w.win));
  } else {
    w.base = static_cast<uint8_t *>(xdev::alloc(bytes));
    w.own_memory = true;
    MT_OK(MPI_Win_create(w.base, static_cast<MPI_Aint>(bytes), disp_unit, info, comm, &w.win));
  }
  MPI_Info_free(&info);
  MT_OK(MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN));
  if (bytes) {
    if (init_key) {
      int r;
      MPI_Comm_rank(comm, &r);
      auto v = pattern(bytes, key(init_key, static_cast<uint64_t>(r)));
      to_device(w.base, v.data(), bytes);
    } else {
      xdev::fill(w.base, 0, bytes);
    }
  }
  MPI_Barrier(comm);
  return w;
}

inline void free_window(TestWin &w) {
  MT_OK(MPI_Win_free(&w.win));
  if (w.own_memory) xdev::free(w.base);
  w.base = nullptr;
}

// Whether the underlying MPI creates windows here: an unmanaged window (info mpix_st=false) goes
// straight to it. Where it cannot (Open MPI's one-sided components may not run in a container, or
// with OMPI_MCA_osc=sm), the library's windows get a zero-size stand-in from the MPI, and RMA calls
// in fence and lock epochs on them are refused: expect_stand_in_refusal checks that. Collective.
inline bool mpi_creates_windows() {
  static int creates = -1;
  if (creates < 0) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpix_st", "false");
    char bytes[64];
    MPI_Win win = MPI_WIN_NULL;
    const int rc = MPI_Win_create(bytes, sizeof bytes, 1, info, MPI_COMM_WORLD, &win);
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS) MPI_Win_free(&win);
    int mine = rc == MPI_SUCCESS ? 1 : 0;
    MPI_Allreduce(&mine, &creates, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!creates)
      note("this MPI cannot create windows here (%s): the library's windows have a zero-size stand-in, "
           "fence and lock epochs are checked to refuse RMA", error_string(rc).c_str());
  }
  return creates;
}

// A put in a fence epoch on a window whose underlying MPI window is a stand-in: refused, saying why.
inline void expect_stand_in_refusal(TestWin &w, const void *src, int target) {
  MT_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win));
  const std::string msg =
      MT_EXPECT_ERROR(MPI_Put(src, 8, MPI_BYTE, target, 0, 8, MPI_BYTE, w.win), MPI_ERR_WIN);
  MT_CHECKF(contains(msg, "stand-in"), "the refusal should say the MPI's window is a stand-in: %s", msg.c_str());
#ifdef OPEN_MPI
  MT_CHECKF(contains(msg, "OMPI_MCA_osc"), "the refusal should name OMPI_MCA_osc: %s", msg.c_str());
#endif
  MT_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
}

// ---- epochs in either mode --------------------------------------------------------------------

enum class Mode { stream, host };
inline const char *mode_name(Mode m) { return m == Mode::stream ? "stream-triggered" : "host-driven"; }
inline const Mode kAllModes[] = {Mode::stream, Mode::host};

inline int post_rc(Mode m, MPI_Group g, MPI_Win w, void *s, int assert_bits = 0) {
  return m == Mode::stream ? MPIX_Win_post_stream(g, w, s) : MPI_Win_post(g, assert_bits, w);
}
inline int start_rc(Mode m, MPI_Group g, MPI_Win w, int assert_bits = 0) {
  return MPI_Win_start(g, assert_bits | (m == Mode::stream ? MPIX_MODE_STREAM : 0), w);
}
inline int complete_rc(Mode m, MPI_Win w, void *s) {
  return m == Mode::stream ? MPIX_Win_complete_stream(w, s) : MPI_Win_complete(w);
}
inline int wait_rc(Mode m, MPI_Win w, void *s) {
  return m == Mode::stream ? MPIX_Win_wait_stream(w, s) : MPI_Win_wait(w);
}

#define MT_POST(m, g, w, s) MT_OK(::mt::post_rc((m), (g), (w), (s)))
#define MT_START(m, g, w) MT_OK(::mt::start_rc((m), (g), (w)))
#define MT_COMPLETE(m, w, s) MT_OK(::mt::complete_rc((m), (w), (s)))
#define MT_WAIT(m, w, s) MT_OK(::mt::wait_rc((m), (w), (s)))

// One PSCW epoch in the ring (64 bytes to the right neighbour at offset `off`), checked on arrival.
// `tag` makes the data unique.
inline void pscw_ring(Mode mode, TestWin &w, void *s, uint64_t tag, size_t off) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  Group to_right({right}), from_left({left});
  DevBuf src(64);
  src.upload(pattern(64, key(tag, static_cast<uint64_t>(g_rank))));
  MT_POST(mode, from_left, w.win, s);
  MT_START(mode, to_right, w.win);
  MT_OK(MPI_Put(src.p, 64, MPI_BYTE, right, static_cast<MPI_Aint>(off), 64, MPI_BYTE, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  auto want = pattern(64, key(tag, static_cast<uint64_t>(left)));
  auto got = read_device(w.base + off, 64);
  MT_SAME_BYTES(got.data(), want.data(), 64, fmt("%s epoch at offset %zu", mode_name(mode), off));
}

}  // namespace mt
