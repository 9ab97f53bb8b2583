// MPI_Accumulate on one window kind (argument: allocate | create): MPI_SUM, MPI_MAX, MPI_MIN and
// MPI_REPLACE on int32, int64, float and double, both epoch modes.
//  - every rank accumulates into the same elements of every rank (itself included), several
//    epochs in a row: integer and float results must be exact (values are small integers, so
//    float sums do not depend on order); MPI_REPLACE leaves one of the origins' values;
//  - one origin per target: MPI_REPLACE exact; accumulates of one origin to one location keep
//    their program order inside an epoch; the MPI datatype aliases of the 4 element types.
// Accumulates must be atomic per element across origins: concurrent origins lose no update.
#include <algorithm>
#include <type_traits>

#include "test_common.h"

using namespace mt;

namespace {

// Elements per (type, op) region: large, so that concurrent origins overlap (--elements=N).
size_t kN = 1 << 15;
constexpr int kEpochs = 4;      // accumulate epochs before the check

const MPI_Op kOps[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_REPLACE};
const char *op_name(int i) {
  static const char *n[] = {"MPI_SUM", "MPI_MAX", "MPI_MIN", "MPI_REPLACE"};
  return n[i];
}

// The value origin `o` contributes at element i (small integers: exact in every type).
template <typename T>
T value(int o, size_t i, int salt) {
  const long long base =
      static_cast<long long>((i * 2654435761u + static_cast<size_t>(o) * 40503u + static_cast<size_t>(salt) * 977u) %
                             2001) -
      1000;
  if constexpr (std::is_same_v<T, int64_t>) return static_cast<T>(base) * (int64_t{1} << 34) + static_cast<T>(o);
  return static_cast<T>(base);
}
template <typename T>
T initial(int t, size_t i) {
  return value<T>(1000 + t, i, 99);
}

template <typename T>
struct TypeInfo;
template <>
struct TypeInfo<int32_t> {
  static MPI_Datatype type() { return MPI_INT; }
  static constexpr const char *name = "int32 (MPI_INT)";
};
template <>
struct TypeInfo<int64_t> {
  static MPI_Datatype type() { return MPI_INT64_T; }
  static constexpr const char *name = "int64 (MPI_INT64_T)";
};
template <>
struct TypeInfo<float> {
  static MPI_Datatype type() { return MPI_FLOAT; }
  static constexpr const char *name = "float";
};
template <>
struct TypeInfo<double> {
  static MPI_Datatype type() { return MPI_DOUBLE; }
  static constexpr const char *name = "double";
};

template <typename T>
std::string show(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return fmt("%.17g", static_cast<double>(v));
  else
    return fmt("%lld", static_cast<long long>(v));
}

// Region r of the window: (type index, op index) -> byte offset. 8-byte elements for all types.
size_t region_offset(int type_index, int op_index) { return (static_cast<size_t>(type_index) * 4 + op_index) * kN * 8; }

// All ranks accumulate into the same elements of all ranks, kEpochs times.
template <typename T>
void fill_sources(int type_index, std::vector<DevBuf> &src) {
  std::vector<T> v(kN);
  for (int op = 0; op < 4; ++op) {
    for (size_t i = 0; i < kN; ++i) v[i] = value<T>(g_rank, i, op);
    src[type_index * 4 + op].upload(v.data(), kN * sizeof(T));
  }
}

template <typename T>
void init_window(int type_index, TestWin &w) {
  std::vector<T> v(kN);
  for (size_t i = 0; i < kN; ++i) v[i] = initial<T>(g_rank, i);
  for (int op = 0; op < 4; ++op) to_device(w.base + region_offset(type_index, op), v.data(), kN * sizeof(T));
}

template <typename T>
void check_all_origins(int type_index, const TestWin &w) {
  for (int op = 0; op < 4; ++op) {
    std::vector<T> got(kN);
    xdev::copy_to_host(got.data(), w.base + region_offset(type_index, op), kN * sizeof(T));
    size_t bad = 0, first = kN;
    T first_got{}, first_want{};
    for (size_t i = 0; i < kN; ++i) {
      T want = initial<T>(g_rank, i);
      bool ok;
      if (op == 3) {  // MPI_REPLACE: the value of one of the origins
        ok = false;
        for (int o = 0; o < g_size; ++o) ok = ok || got[i] == value<T>(o, i, op);
        want = value<T>(0, i, op);
      } else {
        for (int e = 0; e < kEpochs; ++e)
          for (int o = 0; o < g_size; ++o) {
            const T v = value<T>(o, i, op);
            want = op == 0 ? static_cast<T>(want + v) : op == 1 ? std::max(want, v) : std::min(want, v);
          }
        ok = got[i] == want;
      }
      if (!ok && bad++ == 0) first = i, first_got = got[i], first_want = want;
    }
    MT_CHECKF(bad == 0,
              "%s %s, %d origins x %d epochs into the same %zu elements: %zu elements wrong; first: element %zu is %s, "
              "want %s%s",
              TypeInfo<T>::name, op_name(op), g_size, kEpochs, kN, bad, first, show(first_got).c_str(),
              show(first_want).c_str(), op == 3 ? " (or another origin's value)" : "");
  }
}

template <typename T>
void accumulate_all(int type_index, std::vector<DevBuf> &src, const TestWin &w) {
  for (int t = 0; t < g_size; ++t)
    for (int op = 0; op < 4; ++op)
      MT_OK(MPI_Accumulate(src[type_index * 4 + op].p, static_cast<int>(kN), TypeInfo<T>::type(), t,
                           static_cast<MPI_Aint>(region_offset(type_index, op)), static_cast<int>(kN),
                           TypeInfo<T>::type(), kOps[op], w.win));
}

void all_origins_phase(Mode mode, WinKind kind, void *s) {
  g_context = fmt("%s, %s, all origins into the same elements", mode_name(mode), kind_name(kind));
  TestWin w = make_window(kind, 4 * 4 * kN * 8);
  init_window<int32_t>(0, w);
  init_window<int64_t>(1, w);
  init_window<float>(2, w);
  init_window<double>(3, w);
  std::vector<DevBuf> src;
  for (int i = 0; i < 16; ++i) src.emplace_back(kN * 8);
  fill_sources<int32_t>(0, src);
  fill_sources<int64_t>(1, src);
  fill_sources<float>(2, src);
  fill_sources<double>(3, src);
  std::vector<int> everyone(g_size);
  for (int r = 0; r < g_size; ++r) everyone[r] = r;
  Group all(everyone);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int e = 0; e < kEpochs; ++e) {
    MT_POST(mode, all, w.win, s);
    MT_START(mode, all, w.win);
    accumulate_all<int32_t>(0, src, w);
    accumulate_all<int64_t>(1, src, w);
    accumulate_all<float>(2, src, w);
    accumulate_all<double>(3, src, w);
    MT_COMPLETE(mode, w.win, s);
    MT_WAIT(mode, w.win, s);
  }
  if (mode == Mode::stream) MT_SYNC(s);
  check_all_origins<int32_t>(0, w);
  check_all_origins<int64_t>(1, w);
  check_all_origins<float>(2, w);
  check_all_origins<double>(3, w);
  free_window(w);
}

// One origin per target (ring): exact MPI_REPLACE, program order of one origin's accumulates to
// one location, datatype aliases, zero counts, MPI_PROC_NULL, element displacements.
void single_origin_phase(Mode mode, WinKind kind, void *s) {
  g_context = fmt("%s, %s, one origin per target", mode_name(mode), kind_name(kind));
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  constexpr int n = 1000;
  TestWin w = make_window(kind, 8 * 8 * n, 8);  // disp_unit 8: target_disp counts 8-byte slots
  // Window: 8 regions of n 8-byte slots. Values the origin sends, by region.
  std::vector<int32_t> i32(n), i32b(n);
  std::vector<int64_t> i64(n), ll(n), lg(n);
  std::vector<float> f(n);
  std::vector<double> d(n), d2(n);
  for (int i = 0; i < n; ++i) {
    i32[i] = value<int32_t>(g_rank, i, 1);
    i32b[i] = value<int32_t>(g_rank, i, 2);
    i64[i] = value<int64_t>(g_rank, i, 3);
    ll[i] = value<int64_t>(g_rank, i, 4);
    lg[i] = value<int64_t>(g_rank, i, 5);
    f[i] = value<float>(g_rank, i, 6);
    d[i] = value<double>(g_rank, i, 7);
    d2[i] = value<double>(g_rank, i, 8);
  }
  DevBuf b_i32(n * 4), b_i32b(n * 4), b_i64(n * 8), b_ll(n * 8), b_lg(n * 8), b_f(n * 4), b_d(n * 8), b_d2(n * 8),
      b_small(64);
  b_i32.upload(i32.data(), n * 4);
  b_i32b.upload(i32b.data(), n * 4);
  b_i64.upload(i64.data(), n * 8);
  b_ll.upload(ll.data(), n * 8);
  b_lg.upload(lg.data(), n * 8);
  b_f.upload(f.data(), n * 4);
  b_d.upload(d.data(), n * 8);
  b_d2.upload(d2.data(), n * 8);
  const int32_t five = 5, seven = 7, one = 1;
  b_small.upload(&five, 4, 0);
  b_small.upload(&seven, 4, 8);
  b_small.upload(&one, 4, 16);
  // Initial window: region 0..7 zero except region 7 (ordering) = 100.
  std::vector<uint8_t> init(8 * 8 * n, 0);
  const int32_t hundred = 100;
  std::memcpy(init.data() + 7 * 8 * n, &hundred, 4);
  to_device(w.base, init.data(), init.size());
  MPI_Barrier(MPI_COMM_WORLD);

  Group to_right({right}), from_left({left});
  MT_POST(mode, from_left, w.win, s);
  MT_START(mode, to_right, w.win);
  // Region r starts at slot r * n (target_disp r * n); 4-byte arrays fill the first half of it.
  MT_OK(MPI_Accumulate(b_i32.p, n, MPI_INT32_T, right, 0 * n, n, MPI_INT32_T, MPI_REPLACE, w.win));
  MT_OK(MPI_Accumulate(b_i32b.p, n, MPI_INT, right, 1 * n, n, MPI_INT, MPI_SUM, w.win));
  MT_OK(MPI_Accumulate(b_i64.p, n, MPI_INT64_T, right, 2 * n, n, MPI_INT64_T, MPI_REPLACE, w.win));
  MT_OK(MPI_Accumulate(b_ll.p, n, MPI_LONG_LONG, right, 3 * n, n, MPI_LONG_LONG, MPI_SUM, w.win));
  if (sizeof(long) == 8) MT_OK(MPI_Accumulate(b_lg.p, n, MPI_LONG, right, 4 * n, n, MPI_LONG, MPI_MIN, w.win));
  MT_OK(MPI_Accumulate(b_f.p, n, MPI_FLOAT, right, 5 * n, n, MPI_FLOAT, MPI_REPLACE, w.win));
  MT_OK(MPI_Accumulate(b_d.p, n, MPI_DOUBLE, right, 6 * n, n, MPI_DOUBLE, MPI_MAX, w.win));
  MT_OK(MPI_Accumulate(b_d2.p, n - 1, MPI_DOUBLE, right, 6 * n + 1, n - 1, MPI_DOUBLE, MPI_SUM, w.win));  // overlaps
  // Program order at one location: 100 + 5, replaced by 7, + 1 = 8.
  MT_OK(MPI_Accumulate(b_small.p, 1, MPI_INT, right, 7 * n, 1, MPI_INT, MPI_SUM, w.win));
  MT_OK(MPI_Accumulate(b_small.p + 8, 1, MPI_INT, right, 7 * n, 1, MPI_INT, MPI_REPLACE, w.win));
  MT_OK(MPI_Accumulate(b_small.p + 16, 1, MPI_INT, right, 7 * n, 1, MPI_INT, MPI_SUM, w.win));
  // No effect: zero count, MPI_PROC_NULL.
  MT_OK(MPI_Accumulate(b_small.p, 0, MPI_INT, right, 7 * n + 1, 0, MPI_INT, MPI_SUM, w.win));
  MT_OK(MPI_Accumulate(b_small.p, 1, MPI_INT, MPI_PROC_NULL, 7 * n + 1, 1, MPI_INT, MPI_SUM, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);

  std::vector<uint8_t> want = init;
  auto put_at = [&](size_t byte, const void *p, size_t bytes) { std::memcpy(want.data() + byte, p, bytes); };
  std::vector<int32_t> w_i32(n), w_i32b(n);
  std::vector<int64_t> w_i64(n), w_ll(n), w_lg(n);
  std::vector<float> w_f(n);
  std::vector<double> w_d(n);
  for (int i = 0; i < n; ++i) {
    w_i32[i] = value<int32_t>(left, i, 1);
    w_i32b[i] = value<int32_t>(left, i, 2);
    w_i64[i] = value<int64_t>(left, i, 3);
    w_ll[i] = value<int64_t>(left, i, 4);
    w_lg[i] = std::min<int64_t>(0, value<int64_t>(left, i, 5));
    w_f[i] = value<float>(left, i, 6);
    w_d[i] = std::max(0.0, value<double>(left, i, 7));
  }
  for (int i = 1; i < n; ++i) w_d[i] += value<double>(left, i - 1, 8);
  put_at(0, w_i32.data(), n * 4);
  put_at(1 * 8 * n, w_i32b.data(), n * 4);
  put_at(2 * 8 * n, w_i64.data(), n * 8);
  put_at(3 * 8 * n, w_ll.data(), n * 8);
  if (sizeof(long) == 8) put_at(4 * 8 * n, w_lg.data(), n * 8);
  put_at(5 * 8 * n, w_f.data(), n * 4);
  put_at(6 * 8 * n, w_d.data(), n * 8);
  const int32_t eight = 8;
  put_at(7 * 8 * n, &eight, 4);
  auto got = read_device(w.base, w.bytes);
  const char *names[] = {"int32 REPLACE (MPI_INT32_T)",
                         "int32 SUM (MPI_INT)",
                         "int64 REPLACE",
                         "int64 SUM (MPI_LONG_LONG)",
                         "int64 MIN (MPI_LONG)",
                         "float REPLACE",
                         "double MAX then overlapping SUM",
                         "program order SUM, REPLACE, SUM; zero count; MPI_PROC_NULL"};
  for (int r = 0; r < 8; ++r)
    MT_SAME_BYTES(got.data() + r * 8 * n, want.data() + r * 8 * n, 8 * n, fmt("region %d: %s", r, names[r]));
  free_window(w);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "accumulate");
  WinKind kind = WinKind::allocate;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "create") == 0) kind = WinKind::create;
    if (std::strcmp(argv[i], "allocate") == 0) kind = WinKind::allocate;
    if (std::strncmp(argv[i], "--elements=", 11) == 0) kN = std::strtoull(argv[i] + 11, nullptr, 10);
  }
  const double t0 = now_s();
  {
    void *s = stream_create();
    for (Mode mode : kAllModes) {
      single_origin_phase(mode, kind, s);
      all_origins_phase(mode, kind, s);
    }
    stream_destroy(s);
  }
  note("accumulate (%s): %.2f s", kind_name(kind), now_s() - t0);
  return finish();
}
