// Puts that must land byte for byte and touch nothing else, in a ring (rank r puts to r+1), both
// epoch modes, both window kinds. Written for the staged inter-node path (MPIX_ST_OFI_STAGING=1:
// puts land in a host mirror of the target window and the target's wait copies the put ranges
// into the window), and valid everywhere (node-local peers, remote peers without staging).
// Before each epoch the target fills its window with a fresh pattern; afterwards every byte
// outside the put ranges must still hold it (a wait that copied more than the put ranges from the
// mirror would bring back stale bytes).
//  a. One put per epoch of 1 B, 7 B, 4 KiB, 1 MiB + 3 B and 4 MiB, at the window's start, at an odd
//     offset, and ending at the window's (odd) end.
//  b. 64 puts to one target in one epoch (the most a staged epoch carries per target): scattered,
//     non-adjacent ranges of different lengths, issued out of address order; in stream mode a
//     second such epoch over other ranges is enqueued before the one synchronisation.
//  c. --expect-refusals (staged mode only; checked where the right neighbour is on another node,
//     per MPIX_ST_VNODE_SIZE and the physical nodes): the 65th put to one target in one epoch is
//     refused with MPI_ERR_UNSUPPORTED_OPERATION while the first 64 land; MPI_Get and
//     MPI_Accumulate to the neighbour are refused with the same class, write nothing, and the
//     epoch goes on (a put after them lands). Without the option this part is skipped.
//  e. A window created with info mpix_st_staged_get_accumulate=true (a staged window then copies
//     its data into its host mirror at each post): in one epoch each rank gets 64 bytes of its
//     right neighbour's window at an odd offset, adds 1 to 16 int32 elements of it with
//     MPI_Accumulate, and puts 61 bytes; all three must land, nothing else may change, and the
//     get must return what the neighbour's window held at its post. Runs everywhere (with or
//     without staging); after part c, it shows the info key lifts those refusals.
//  d. Stream-triggered epochs enqueued back to back (--epochs=N, default 2000) with one stream
//     synchronisation: in epoch e each rank puts the 8-byte value e * 1000003 + rank into slot e of
//     its right neighbour's window (epochs x 8 bytes). On the host backend the source is one
//     8-byte buffer that a host function on the stream rewrites before each epoch's complete (the
//     staged copy of each epoch must survive until it was sent), and the target checks each slot on
//     its stream right after that epoch's wait; on CUDA each epoch has its own source slot.
#include <algorithm>
#include <atomic>
#include <random>

#include "test_common.h"

using namespace mt;

namespace {

constexpr int kMaxStagedPuts = 64;  // puts to one target in one epoch that a staged window carries

int g_right = 0, g_left = 0;
bool g_expect_refusals = false;
bool g_right_remote = false, g_left_remote = false;  // on another (virtual) node

// Whether each peer is on another node as the library sees it: another physical node (shared-
// memory domain), or another virtual node of MPIX_ST_VNODE_SIZE consecutive world ranks.
void locate_neighbours() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int leader = 0;
  MPI_Allreduce(&g_rank, &leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  std::vector<int> leaders(static_cast<size_t>(g_size));
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD);
  const char *v = std::getenv("MPIX_ST_VNODE_SIZE");
  const long vnode = v && *v ? std::strtol(v, nullptr, 10) : 0;
  auto remote = [&](int peer) {
    return leaders[peer] != leaders[g_rank] || (vnode > 0 && peer / vnode != g_rank / vnode);
  };
  g_right_remote = remote(g_right);
  g_left_remote = remote(g_left);
}

// Refusals are expected from my puts to my right neighbour / of my left neighbour's puts to me.
bool refusing_right() { return g_expect_refusals && g_right_remote; }
bool refusing_left() { return g_expect_refusals && g_left_remote; }

// Data of put `i` of origin `origin` under `tag`.
std::vector<uint8_t> put_data(uint64_t tag, size_t i, int origin, size_t len) {
  return pattern(len, key(0x57a6, tag, i, static_cast<uint64_t>(origin)));
}

struct Range {
  size_t off, len;
};

// `n` non-overlapping, non-adjacent ranges (at least one byte between any two) of different
// lengths, starting at or after `from`, returned in a scattered (not address) order. The same on
// every rank for the same seed. `*end`: one past the highest byte.
std::vector<Range> scattered(int n, uint64_t seed, size_t from, size_t *end) {
  std::mt19937_64 rng(seed);
  auto pick = [&](size_t lo, size_t hi) { return std::uniform_int_distribution<size_t>(lo, hi)(rng); };
  std::vector<Range> r;
  size_t at = from;
  for (int i = 0; i < n; ++i) {
    at += pick(1, 97);  // the gap: never adjacent to the previous range
    size_t len = pick(1, 3000);
    if (i % 16 == 5) len = pick(1, 8);           // a few tiny ones
    if (i % 16 == 11) len = pick(20000, 70000);  // and a few large ones
    r.push_back({at, len});
    at += len;
  }
  *end = at;
  std::shuffle(r.begin(), r.end(), rng);
  // Not in address order: no two consecutive puts are neighbours in the window either.
  return r;
}

// Source buffer holding put_data(tag, i, me) of each range, each at an odd offset.
struct Sources {
  DevBuf buf;
  std::vector<size_t> at;
};
Sources make_sources(const std::vector<Range> &ranges, uint64_t tag) {
  Sources s;
  size_t bytes = 1;
  for (const Range &r : ranges) {
    s.at.push_back(bytes);
    bytes += r.len + 2;
  }
  std::vector<uint8_t> all(bytes, 0);
  for (size_t i = 0; i < ranges.size(); ++i) {
    auto d = put_data(tag, i, g_rank, ranges[i].len);
    std::copy(d.begin(), d.end(), all.begin() + static_cast<ptrdiff_t>(s.at[i]));
  }
  s.buf = DevBuf(bytes);
  s.buf.upload(all);
  return s;
}

// My part of the model: the first `landed` puts of my left neighbour's `ranges` under `tag`.
void apply_left(std::vector<uint8_t> &shadow, const std::vector<Range> &ranges, size_t landed, uint64_t tag) {
  for (size_t i = 0; i < landed && i < ranges.size(); ++i) {
    auto d = put_data(tag, i, g_left, ranges[i].len);
    std::copy(d.begin(), d.end(), shadow.begin() + static_cast<ptrdiff_t>(ranges[i].off));
  }
}

void check_whole(const TestWin &w, const std::vector<uint8_t> &shadow, const std::string &what) {
  auto got = read_device(w.base, w.bytes);
  MT_SAME_BYTES(got.data(), shadow.data(), w.bytes, what + ": my whole window (outside the puts: my own pattern)");
}

// Puts `ranges` from `src` to the right neighbour. With `refuse_after` >= 0, the puts from that
// index on must be refused (MPI_ERR_UNSUPPORTED_OPERATION); the earlier ones must succeed.
void put_ranges(const TestWin &w, const Sources &src, const std::vector<Range> &ranges, int refuse_after = -1) {
  for (size_t i = 0; i < ranges.size(); ++i) {
    const int rc = MPI_Put(src.buf.p + src.at[i], static_cast<int>(ranges[i].len), MPI_BYTE, g_right,
                           static_cast<MPI_Aint>(ranges[i].off), static_cast<int>(ranges[i].len), MPI_BYTE, w.win);
    if (refuse_after >= 0 && static_cast<int>(i) >= refuse_after) {
      const std::string m = expect_error_at(
          rc, MPI_ERR_UNSUPPORTED_OPERATION,
          fmt("put %zu to rank %d in one epoch (a staged epoch carries %d per target)", i + 1, g_right, kMaxStagedPuts)
              .c_str(),
          __FILE__, __LINE__);
      MT_CHECKF(m.empty() || contains(m, "MPI_Put"), "message \"%s\" does not mention MPI_Put", m.c_str());
    } else {
      ok_at(rc,
            fmt("MPI_Put %zu of %zu (%zu bytes at %zu)", i + 1, ranges.size(), ranges[i].len, ranges[i].off).c_str(),
            __FILE__, __LINE__);
    }
  }
}

// ---- a. one put per epoch, sizes 1 B .. 4 MiB ----------------------------------------------------

void sizes(Mode mode, WinKind kind, void *s) {
  const size_t kSizes[] = {1, 7, 4096, (1u << 20) + 3, 4u << 20};
  const size_t kWin = (4u << 20) + 8192 + 5;  // odd: the mirror is rounded up, the window is not
  const size_t kSrcOff = 3;
  TestWin w = make_window(kind, kWin);
  DevBuf src(kSrcOff + (4u << 20));
  Group to_right({g_right}), from_left({g_left});
  int serial = 0;
  for (size_t size : kSizes) {
    for (size_t toff : {size_t{0}, size_t{4099}, kWin - size}) {
      const uint64_t tag = key(0xa, static_cast<uint64_t>(mode), static_cast<uint64_t>(kind), ++serial);
      g_context = fmt("a. %s, %s, %zu bytes at target offset %zu", mode_name(mode), kind_name(kind), size, toff);
      // A fresh pattern in my window (not exposed: my previous epoch has run, my next post is later).
      std::vector<uint8_t> shadow = pattern(kWin, key(tag, 0xf111, static_cast<uint64_t>(g_rank)));
      to_device(w.base, shadow.data(), kWin);
      src.upload(put_data(tag, 0, g_rank, size), kSrcOff);
      MT_POST(mode, from_left, w.win, s);
      MT_START(mode, to_right, w.win);
      MT_OK(MPI_Put(src.p + kSrcOff, static_cast<int>(size), MPI_BYTE, g_right, static_cast<MPI_Aint>(toff),
                    static_cast<int>(size), MPI_BYTE, w.win));
      MT_COMPLETE(mode, w.win, s);
      MT_WAIT(mode, w.win, s);
      if (mode == Mode::stream) MT_SYNC(s);
      apply_left(shadow, {{toff, size}}, 1, tag);
      check_whole(w, shadow, "after the put");
    }
  }
  free_window(w);
}

// ---- b. 64 scattered puts to one target in one epoch ----------------------------------------------

void many_ranges(Mode mode, WinKind kind, void *s) {
  const uint64_t init_key = key(0xb, static_cast<uint64_t>(mode), static_cast<uint64_t>(kind));
  // Two layouts over the same window: the second overlaps the first's ranges and gaps.
  size_t end0 = 0, end1 = 0;
  const std::vector<Range> layout[2] = {scattered(kMaxStagedPuts, key(init_key, 0), 3, &end0),
                                        scattered(kMaxStagedPuts, key(init_key, 1), 1001, &end1)};
  const size_t bytes = std::max(end0, end1) + 77;
  TestWin w = make_window(kind, bytes, 1, MPI_COMM_WORLD, init_key);
  std::vector<uint8_t> shadow = pattern(bytes, key(init_key, static_cast<uint64_t>(g_rank)));
  Group to_right({g_right}), from_left({g_left});
  Sources src[2] = {make_sources(layout[0], key(init_key, 10)), make_sources(layout[1], key(init_key, 11))};
  for (int round = 0; round < 2; ++round) {
    g_context =
        fmt("b. %s, %s, %d puts in one epoch, round %d", mode_name(mode), kind_name(kind), kMaxStagedPuts, round);
    MT_POST(mode, from_left, w.win, s);
    MT_START(mode, to_right, w.win);
    put_ranges(w, src[round], layout[round]);
    MT_COMPLETE(mode, w.win, s);
    MT_WAIT(mode, w.win, s);
    apply_left(shadow, layout[round], layout[round].size(), key(init_key, 10 + static_cast<uint64_t>(round)));
    if (mode == Mode::stream && round == 0) continue;  // both epochs in flight, one synchronisation
    if (mode == Mode::stream) MT_SYNC(s);
    check_whole(w, shadow, round == 0 ? "after the first epoch" : "after both epochs");
  }
  free_window(w);
}

// Buffers of one epoch's MPI_Get (64 bytes into a 0xee canary, at offset 1), MPI_Accumulate (16
// int32 ones) and MPI_Put (61 bytes of put_data(put_tag, 0, me)).
struct GetAccPut {
  DevBuf get_dst{64 + 2}, acc_src{64}, put_src{64};
  std::vector<uint8_t> canary;
  uint64_t put_tag;
  explicit GetAccPut(uint64_t tag) : canary(get_dst.n, 0xee), put_tag(tag) {
    get_dst.upload(canary);
    std::vector<int32_t> ones(16, 1);
    acc_src.upload(ones.data(), 64);
    put_src.upload(put_data(put_tag, 0, g_rank, 61));
  }
};

// ---- c. refusals of a staged window (--expect-refusals) -----------------------------------------

void refusals(Mode mode, WinKind kind, void *s) {
  const uint64_t init_key = key(0xc, static_cast<uint64_t>(mode), static_cast<uint64_t>(kind));
  size_t end = 0;
  const std::vector<Range> ranges = scattered(kMaxStagedPuts + 1, key(init_key, 0), 5, &end);
  // After the 65 ranges: the accumulate's target, the get's source, the put after them.
  const size_t acc_off = (end + 64) / 8 * 8, get_off = acc_off + 64, put_off = get_off + 64 + 1,
               bytes = put_off + 61 + 3;
  TestWin w = make_window(kind, bytes, 1, MPI_COMM_WORLD, init_key);
  std::vector<uint8_t> shadow = pattern(bytes, key(init_key, static_cast<uint64_t>(g_rank)));
  Group to_right({g_right}), from_left({g_left});

  // c1. 65 puts to one target: the 65th is refused where the target is on another node.
  g_context = fmt("c. %s, %s, %d puts to rank %d (%s)", mode_name(mode), kind_name(kind), kMaxStagedPuts + 1, g_right,
                  g_right_remote ? "another node" : "this node");
  Sources src = make_sources(ranges, key(init_key, 1));
  MT_POST(mode, from_left, w.win, s);
  MT_START(mode, to_right, w.win);
  put_ranges(w, src, ranges, refusing_right() ? kMaxStagedPuts : -1);
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  apply_left(shadow, ranges, refusing_left() ? kMaxStagedPuts : ranges.size(), key(init_key, 1));
  check_whole(w, shadow,
              refusing_left() ? "the first 64 puts landed, the refused 65th did not"
                              : "all 65 puts landed (my left neighbour is on this node)");

  // c2. MPI_Get and MPI_Accumulate to a neighbour on another node are refused, write nothing, and
  // the epoch goes on: a put after them lands.
  g_context = fmt("c. %s, %s, MPI_Get and MPI_Accumulate to rank %d (%s)", mode_name(mode), kind_name(kind), g_right,
                  g_right_remote ? "another node" : "this node");
  GetAccPut b(key(init_key, 2));
  MT_POST(mode, from_left, w.win, s);
  MT_START(mode, to_right, w.win);
  if (refusing_right()) {
    std::string m = MT_EXPECT_ERROR(
        MPI_Get(b.get_dst.p + 1, 64, MPI_BYTE, g_right, static_cast<MPI_Aint>(get_off), 64, MPI_BYTE, w.win),
        MPI_ERR_UNSUPPORTED_OPERATION);
    MT_CHECKF(m.empty() || contains(m, "MPI_Get"), "message \"%s\" does not mention MPI_Get", m.c_str());
    m = MT_EXPECT_ERROR(MPI_Accumulate(b.acc_src.p, 16, MPI_INT32_T, g_right, static_cast<MPI_Aint>(acc_off), 16,
                                       MPI_INT32_T, MPI_SUM, w.win),
                        MPI_ERR_UNSUPPORTED_OPERATION);
    MT_CHECKF(m.empty() || contains(m, "MPI_Accumulate"), "message \"%s\" does not mention MPI_Accumulate", m.c_str());
  }
  MT_OK(MPI_Put(b.put_src.p, 61, MPI_BYTE, g_right, static_cast<MPI_Aint>(put_off), 61, MPI_BYTE, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  apply_left(shadow, {{put_off, 61}}, 1, b.put_tag);  // the accumulate's target bytes: unchanged
  check_whole(w, shadow, "after refused MPI_Get/MPI_Accumulate and a put in the same epoch");
  auto got = b.get_dst.download();
  MT_SAME_BYTES(got.data(), b.canary.data(), b.canary.size(), "the refused MPI_Get's destination (0xee: untouched)");
  free_window(w);
}

// ---- e. gets and accumulates through a window that mirrors (info key) ------------------------------

void mirrored(Mode mode, WinKind kind, void *s) {
  const uint64_t init_key = key(0xe, static_cast<uint64_t>(mode), static_cast<uint64_t>(kind));
  const size_t acc_off = 4096, get_off = 8192 + 3, put_off = 12288 + 1, bytes = 16384 + 5;
  TestWin w = make_window(kind, bytes, 1, MPI_COMM_WORLD, init_key, {{"mpix_st_staged_get_accumulate", "true"}});
  std::vector<uint8_t> shadow = pattern(bytes, key(init_key, static_cast<uint64_t>(g_rank)));
  const std::vector<uint8_t> right_window = pattern(bytes, key(init_key, static_cast<uint64_t>(g_right)));
  Group to_right({g_right}), from_left({g_left});
  g_context = fmt("e. %s, %s, MPI_Get, MPI_Accumulate and MPI_Put to rank %d (%s), window mirrored by info key",
                  mode_name(mode), kind_name(kind), g_right, g_right_remote ? "another node" : "this node");
  GetAccPut b(key(init_key, 2));
  MT_POST(mode, from_left, w.win, s);
  MT_START(mode, to_right, w.win);
  MT_OK(MPI_Get(b.get_dst.p + 1, 64, MPI_BYTE, g_right, static_cast<MPI_Aint>(get_off), 64, MPI_BYTE, w.win));
  MT_OK(MPI_Accumulate(b.acc_src.p, 16, MPI_INT32_T, g_right, static_cast<MPI_Aint>(acc_off), 16, MPI_INT32_T, MPI_SUM,
                       w.win));
  MT_OK(MPI_Put(b.put_src.p, 61, MPI_BYTE, g_right, static_cast<MPI_Aint>(put_off), 61, MPI_BYTE, w.win));
  MT_COMPLETE(mode, w.win, s);
  MT_WAIT(mode, w.win, s);
  if (mode == Mode::stream) MT_SYNC(s);
  apply_left(shadow, {{put_off, 61}}, 1, b.put_tag);
  for (size_t i = 0; i < 16; ++i) {  // my left neighbour's +1, with int32 wrap-around
    uint32_t v;
    std::memcpy(&v, shadow.data() + acc_off + 4 * i, 4);
    v += 1;
    std::memcpy(shadow.data() + acc_off + 4 * i, &v, 4);
  }
  check_whole(w, shadow, "after a get, an accumulate and a put into my window");
  std::copy(right_window.begin() + static_cast<ptrdiff_t>(get_off),
            right_window.begin() + static_cast<ptrdiff_t>(get_off + 64), b.canary.begin() + 1);
  auto got = b.get_dst.download();
  MT_SAME_BYTES(got.data(), b.canary.data(), b.canary.size(),
                "the MPI_Get's destination (the neighbour's window at its post, 0xee around it)");
  free_window(w);
}

// ---- d. many stream epochs, one synchronisation -------------------------------------------------

uint64_t slot_value(int epoch, int rank) {
  return static_cast<uint64_t>(epoch) * 1000003u + static_cast<uint64_t>(rank);
}

void enqueue_many(WinKind kind, int epochs, void *s) {
  g_context = fmt("d. stream-triggered, %s, %d epochs enqueued, one synchronisation", kind_name(kind), epochs);
  const size_t bytes = static_cast<size_t>(epochs) * 8;
  TestWin w = make_window(kind, bytes, 1, MPI_COMM_WORLD, key(0xd, static_cast<uint64_t>(kind)));
  Group to_right({g_right}), from_left({g_left});
#ifdef MPIX_TEST_CUDA
  // A source slot per epoch, written before anything is enqueued.
  DevBuf src(bytes);
  std::vector<uint64_t> values(static_cast<size_t>(epochs));
  for (int e = 0; e < epochs; ++e) values[static_cast<size_t>(e)] = slot_value(e, g_rank);
  src.upload(values.data(), bytes);
#else
  // One source, rewritten on the stream before each epoch's complete; the target checks each slot
  // on its stream right after that epoch's wait.
  DevBuf src(8);
  std::atomic<long> missing{0}, first_missing{-1};
#endif
  const double t0 = now_s();
  for (int e = 0; e < epochs; ++e) {
    MT_POST(Mode::stream, from_left, w.win, s);
    MT_START(Mode::stream, to_right, w.win);
#ifdef MPIX_TEST_CUDA
    uint8_t *from = src.p + 8 * static_cast<size_t>(e);
#else
    uint8_t *from = src.p;
    stream_call(s, [from, v = slot_value(e, g_rank)] { std::memcpy(from, &v, 8); });
#endif
    MT_OK(MPI_Put(from, 1, MPI_UINT64_T, g_right, static_cast<MPI_Aint>(8 * static_cast<size_t>(e)), 1, MPI_UINT64_T,
                  w.win));
    MT_COMPLETE(Mode::stream, w.win, s);
    MT_WAIT(Mode::stream, w.win, s);
#ifndef MPIX_TEST_CUDA
    stream_call(s,
                [&missing, &first_missing, at = w.base + 8 * static_cast<size_t>(e), want = slot_value(e, g_left), e] {
                  uint64_t v;
                  std::memcpy(&v, at, 8);
                  if (v != want) {
                    long none = -1;
                    first_missing.compare_exchange_strong(none, e);
                    ++missing;
                  }
                });
#endif
  }
  const double t_enqueue = now_s() - t0;
  MT_SYNC(s);
  const double t_all = now_s() - t0;
  note("d. %s: %d epochs enqueued in %.3f s, ran in %.3f s", kind_name(kind), epochs, t_enqueue, t_all);
#ifndef MPIX_TEST_CUDA
  MT_CHECKF(missing.load() == 0,
            "%ld epochs' slots did not hold their value right after the epoch's wait on the stream (first: epoch %ld)",
            missing.load(), first_missing.load());
#endif
  std::vector<uint64_t> want(static_cast<size_t>(epochs));
  for (int e = 0; e < epochs; ++e) want[static_cast<size_t>(e)] = slot_value(e, g_left);
  auto got = read_device(w.base, bytes);
  if (!MT_SAME_BYTES(got.data(), want.data(), bytes, "all slots")) {
    int shown = 0;
    for (int e = 0; e < epochs && shown < 5; ++e) {
      uint64_t v;
      std::memcpy(&v, got.data() + 8 * static_cast<size_t>(e), 8);
      if (v == want[static_cast<size_t>(e)]) continue;
      ++shown;
      report(__FILE__, __LINE__, "slot %d holds %llu (epoch %lld's value?), want %llu", e,
             static_cast<unsigned long long>(v), static_cast<long long>(v / 1000003u),
             static_cast<unsigned long long>(want[static_cast<size_t>(e)]));
    }
  }
  free_window(w);
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "staged_puts");
  int epochs = 2000;
  bool bad_args = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--expect-refusals") == 0)
      g_expect_refusals = true;
    else if (std::strncmp(argv[i], "--epochs=", 9) == 0)
      epochs = std::atoi(argv[i] + 9);
    else if (std::strcmp(argv[i], "--strict-messages") != 0)
      bad_args = true, report(__FILE__, __LINE__, "unknown argument \"%s\" (--expect-refusals, --epochs=N)", argv[i]);
  }
  if (epochs < 1) bad_args = true, report(__FILE__, __LINE__, "--epochs must be at least 1");
  if (g_size < 2) bad_args = true, report(__FILE__, __LINE__, "needs at least 2 ranks (ring neighbours)");
  if (bad_args) return finish();
  g_right = (g_rank + 1) % g_size;
  g_left = (g_rank + g_size - 1) % g_size;
  locate_neighbours();
  note("staged_puts: %s; %d epochs enqueued in part d",
       g_expect_refusals ? "refusals expected where the right neighbour is on another node"
                         : "no refusals expected (part c skipped)",
       epochs);
  const double t0 = now_s();
  {
    void *s = stream_create();
    for (Mode mode : kAllModes)
      for (WinKind kind : kAllKinds) {
        sizes(mode, kind, s);
        many_ranges(mode, kind, s);
        if (g_expect_refusals) refusals(mode, kind, s);
        mirrored(mode, kind, s);
      }
    for (WinKind kind : kAllKinds) enqueue_many(kind, epochs, s);
    stream_destroy(s);
  }
  note("staged_puts: %.2f s", now_s() - t0);
  return finish();
}
