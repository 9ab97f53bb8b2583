// 10,000 stream-triggered epochs enqueued back to back in a ring (rank r puts to r+1), one stream
// synchronisation at the end, on both window kinds; then host-driven epochs with the same checks.
// Each epoch i:
//   - puts the distinct 8-byte source src[i] into slot i of the right neighbour's window;
//   - (host backend) puts an 8-byte staging buffer that a host function enqueued on the same stream
//     just before rewrote with this epoch's value (values produced on the stream: the put must
//     read it when the stream runs, not at MPI_Put);
//   - accumulates 1 into a counter;
//   - (host backend) the target enqueues, after its wait, a host function that checks slot i
//     already holds the epoch's values (the wait really orders the data).
// Then: every slot byte for byte, the counter, and MPIX_St_stream_ops_enqueued() grew by exactly
// 3 per epoch (post + complete + wait) on every rank.
#include <atomic>

#include "test_common.h"

using namespace mt;

namespace {

uint64_t value_of(int origin, int epoch, int which) {
  return key(0xe90c, static_cast<uint64_t>(origin), static_cast<uint64_t>(epoch), static_cast<uint64_t>(which));
}

void run(WinKind kind, Mode mode, int epochs, void *s) {
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  g_context = fmt("%s, %s, %d epochs", mode_name(mode), kind_name(kind), epochs);
  // Window: [slots A: epochs x 8][slots B: epochs x 8][counter: 8]
  const size_t a_off = 0, b_off = static_cast<size_t>(epochs) * 8, c_off = 2 * b_off;
  TestWin w = make_window(kind, c_off + 8);
  DevBuf src(static_cast<size_t>(epochs) * 8), one(8), staging(8);
  std::vector<uint64_t> values(static_cast<size_t>(epochs));
  for (int i = 0; i < epochs; ++i) values[i] = value_of(g_rank, i, 0);
  src.upload(values.data(), values.size() * 8);
  const int64_t one_value = 1;
  one.upload(&one_value, 8);
  Group to_right({right}), from_left({left});
#ifndef MPIX_TEST_CUDA
  std::atomic<long> early{0};  // target-side checks that found an epoch's data missing after its wait
  std::atomic<long> first_early{-1};
#endif
  const bool use_b = !kCuda;  // the staging-buffer puts need host functions on the stream
  MPI_Barrier(MPI_COMM_WORLD);
  const unsigned long long ops_before = MPIX_St_stream_ops_enqueued();
  const double t0 = now_s();
  for (int i = 0; i < epochs; ++i) {
    MT_POST(mode, from_left, w.win, s);
    MT_START(mode, to_right, w.win);
    MT_OK(MPI_Put(src.p + 8 * i, 1, MPI_UINT64_T, right, static_cast<MPI_Aint>(a_off + 8 * static_cast<size_t>(i)), 1,
                  MPI_UINT64_T, w.win));
    if (use_b) {
#ifndef MPIX_TEST_CUDA
      const uint64_t v = value_of(g_rank, i, 1);
      if (mode == Mode::stream)
        stream_call(s, [p = staging.p, v] { std::memcpy(p, &v, 8); });
      else
        staging.upload(&v, 8);  // host-driven: the put reads it at MPI_Win_complete
      MT_OK(MPI_Put(staging.p, 8, MPI_BYTE, right, static_cast<MPI_Aint>(b_off + 8 * static_cast<size_t>(i)), 8,
                    MPI_BYTE, w.win));
#endif
    }
    MT_OK(MPI_Accumulate(one.p, 1, MPI_INT64_T, right, static_cast<MPI_Aint>(c_off), 1, MPI_INT64_T, MPI_SUM, w.win));
    MT_COMPLETE(mode, w.win, s);
    MT_WAIT(mode, w.win, s);
#ifndef MPIX_TEST_CUDA
    auto check = [&early, &first_early, base = w.base, a_off, b_off, i, left] {
      uint64_t a, b;
      std::memcpy(&a, base + a_off + 8 * static_cast<size_t>(i), 8);
      std::memcpy(&b, base + b_off + 8 * static_cast<size_t>(i), 8);
      if (a != value_of(left, i, 0) || b != value_of(left, i, 1)) {
        long none = -1;
        first_early.compare_exchange_strong(none, i);
        ++early;
      }
    };
    if (mode == Mode::stream)
      stream_call(s, check);
    else
      check();
#endif
  }
  const double t_enqueue = now_s() - t0;
  const unsigned long long ops = MPIX_St_stream_ops_enqueued() - ops_before;
  if (mode == Mode::stream) {
    MT_CHECKF(ops == 3ull * static_cast<unsigned long long>(epochs),
              "MPIX_St_stream_ops_enqueued() grew by %llu over %d epochs, want exactly %llu (3 per epoch)", ops, epochs,
              3ull * static_cast<unsigned long long>(epochs));
  } else {
    MT_CHECKF(ops == 0, "host-driven epochs enqueued %llu stream operations, want 0", ops);
  }
  if (mode == Mode::stream) MT_SYNC(s);
  const double t_total = now_s() - t0;
#ifndef MPIX_TEST_CUDA
  MT_CHECKF(early.load() == 0, "%ld epochs' data was not in the window right after their wait (first: epoch %ld)",
            early.load(), first_early.load());
#endif
  // Whole window, byte for byte.
  std::vector<uint8_t> want(w.bytes, 0);
  for (int i = 0; i < epochs; ++i) {
    const uint64_t a = value_of(left, i, 0), b = value_of(left, i, 1);
    std::memcpy(want.data() + a_off + 8 * static_cast<size_t>(i), &a, 8);
    if (use_b) std::memcpy(want.data() + b_off + 8 * static_cast<size_t>(i), &b, 8);
  }
  const int64_t count = epochs;
  std::memcpy(want.data() + c_off, &count, 8);
  auto got = read_device(w.base, w.bytes);
  if (!MT_SAME_BYTES(got.data(), want.data(), w.bytes, "final window")) {
    for (int i = 0; i < epochs; ++i) {
      if (std::memcmp(got.data() + a_off + 8 * i, want.data() + a_off + 8 * i, 8) != 0) {
        report(__FILE__, __LINE__, "first wrong slot: epoch %d (source slot)", i);
        break;
      }
    }
    int64_t c;
    std::memcpy(&c, got.data() + c_off, 8);
    report(__FILE__, __LINE__, "counter is %lld, want %d", static_cast<long long>(c), epochs);
  }
  note("many_epochs: %s, %s: %d epochs, enqueue %.3f s, total %.3f s (%.1f us per epoch)", mode_name(mode),
       kind_name(kind), epochs, t_enqueue, t_total, 1e6 * t_total / epochs);
  free_window(w);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "many_epochs");
  int epochs = 10000;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--epochs=", 9) == 0) epochs = std::atoi(argv[i] + 9);
  {
    void *s = stream_create();
    for (WinKind kind : kAllKinds) run(kind, Mode::stream, epochs, s);
    for (WinKind kind : kAllKinds) run(kind, Mode::host, std::max(1, epochs / 10), s);
    stream_destroy(s);
  }
  return finish();
}
