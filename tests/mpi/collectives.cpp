// Stream collectives (MPIX_Allreduce/Reduce/Bcast/Allgather/Alltoall_stream) checked element for
// element against a host reference:
//  - every collective x algorithm (allreduce: oneshot, twoshot, ring, gsb, btb; reduce: direct,
//    twoshot, chain; bcast: direct, chain, binomial) x element type x operator, counts 0, 1, odd, and larger than
//    the scratch (many rounds; the test runs with a small MPIX_ST_COLL_SCRATCH_KIB), unaligned
//    buffers, MPI_IN_PLACE, every root;
//  - a communicator split with reordered ranks and a sub-communicator of part of the ranks;
//  - 1,000 collectives enqueued with one synchronisation, mixed with stream-triggered RMA epochs
//    on the same stream, and collectives on two communicators on two streams;
//  - collectives captured into a graph and replayed, each replay reducing new data;
//  - bad arguments: the MPI error class and a message, never a crash or a hang.
// Inputs are small integers (exact in every type and in any order), so integer and floating point
// results are compared exactly. Half and bfloat16 (MPIX_ST_FLOAT16, MPIX_ST_BFLOAT16) take inputs
// that make the library round, yet in a way no order of combination changes (see half_input).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "test_common.h"
#include "tests/common/half_reference.h"

using namespace mt;

namespace {

long g_cases = 0;

// ---- element types and operators ---------------------------------------------------------------

enum class Op { sum, prod, max, min, band, bor, bxor };
const Op kOps[] = {Op::sum, Op::prod, Op::max, Op::min, Op::band, Op::bor, Op::bxor};
const char *op_name(Op o) {
  const char *names[] = {"SUM", "PROD", "MAX", "MIN", "BAND", "BOR", "BXOR"};
  return names[static_cast<int>(o)];
}
MPI_Op mpi_op(Op o) {
  const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR};
  return ops[static_cast<int>(o)];
}

template <typename T>
T apply(Op o, T a, T b) {
  switch (o) {
    case Op::sum: return static_cast<T>(a + b);
    case Op::prod: return static_cast<T>(a * b);
    case Op::max: return std::max(a, b);
    case Op::min: return std::min(a, b);
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    if (o == Op::band) return a & b;
    if (o == Op::bor) return a | b;
    return a ^ b;
  }
  return b;
}

// Rank r's element i of call `salt`: small values whose sums and products stay exact and in range
// (products use 1 and -1, or 1 and 2 for unsigned types, whose wrap-around is defined anyway).
template <typename T>
T input(Op o, int r, uint64_t i, uint64_t salt) {
  const uint64_t h = mix(salt * 1315423911u + static_cast<uint64_t>(r) * 2654435761u + i);
  if (o == Op::prod) {
    if constexpr (std::is_signed_v<T>) return (h & 1) ? T(1) : T(-1);
    return (h & 1) ? T(1) : T(2);
  }
  const int v = static_cast<int>(h % 15) - (std::is_signed_v<T> ? 7 : 0);
  return static_cast<T>(v);
}

// ---- half and bfloat16 ------------------------------------------------------------------------------
// Elements as bits; values and rounding come from the independent reference (half_reference.h).
struct F16 {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};
half_ref::Format format_of(F16) { return half_ref::kBinary16; }
half_ref::Format format_of(BF16) { return half_ref::kBfloat16; }

// Ranks of the communicator a reduction case runs on (half inputs pick two of them).
int g_case_ranks = 1;

// Rank r's element i. SUM and PROD: two ranks per element (chosen by i) hold random values, the
// others the identity (0 or 1), so exactly one combination is inexact (x + 0 and x * 1 are exact):
// the library must give round(x op y), in any order and at whatever step it rounds. x op y is
// exact in float and double: magnitudes lie in [2^-4, 2^8) for binary16 and [2^-8, 2^8) for
// bfloat16, so a sum spans at most 24 significant bits and a product has at most 22; the reference
// rounds the exact double once, so truncation or a wrong format shows. PROD may overflow binary16:
// infinity is the right answer then. MAX and MIN: every rank holds any value but NaN and -0
// (subnormals and infinities included); the result is exact.
template <typename T>
T half_input(Op o, int r, uint64_t i, uint64_t salt) {
  const uint64_t h = mix(salt * 1315423911u + static_cast<uint64_t>(r) * 2654435761u + i);
  const half_ref::Format f = format_of(T{});
  if (o == Op::max || o == Op::min) {
    uint16_t b = static_cast<uint16_t>(h);
    while (half_ref::is_nan(f, b) || b == 0x8000u) b = static_cast<uint16_t>(b * 31u + 7u);
    return T{b};
  }
  const uint64_t pick = mix(salt * 977u + i);
  const int a = static_cast<int>(pick % g_case_ranks), b = (a + 1) % g_case_ranks;
  if (r != a && r != b) return T{half_ref::encode(f, o == Op::sum ? 0.0 : 1.0)};
  const int lo = f.exp_bits == 5 ? -4 : -8, span = 8 - lo;  // binade 2^e, e in [lo, 8)
  const int e = lo + static_cast<int>((h >> 20) % span);
  const double mant = 1.0 + double((h >> 32) & ((1u << f.mant_bits) - 1)) / double(1u << f.mant_bits);
  return T{half_ref::encode(f, ((h >> 40) & 1 ? -1.0 : 1.0) * std::ldexp(mant, e))};
}

// One combination, rounded once, as the reference of the order-free inputs above.
template <typename T>
T half_apply(Op o, T a, T b) {
  const half_ref::Format f = format_of(T{});
  const double x = half_ref::decode(f, a.bits), y = half_ref::decode(f, b.bits);
  switch (o) {
    case Op::sum: return T{half_ref::encode(f, x + y)};
    case Op::prod: return T{half_ref::encode(f, x * y)};
    case Op::max: return x < y ? b : a;
    default: return y < x ? b : a;
  }
}
F16 apply(Op o, F16 a, F16 b) { return half_apply(o, a, b); }
BF16 apply(Op o, BF16 a, BF16 b) { return half_apply(o, a, b); }
template <>
F16 input<F16>(Op o, int r, uint64_t i, uint64_t salt) {
  return half_input<F16>(o, r, i, salt);
}
template <>
BF16 input<BF16>(Op o, int r, uint64_t i, uint64_t salt) {
  return half_input<BF16>(o, r, i, salt);
}

template <typename T>
struct TypeInfo;
#define TYPE_INFO(T, M)                                  \
  template <>                                            \
  struct TypeInfo<T> {                                   \
    static MPI_Datatype type() { return M; }             \
    static const char *name() { return #M; }             \
  };
TYPE_INFO(int8_t, MPI_INT8_T)
TYPE_INFO(uint8_t, MPI_UINT8_T)
TYPE_INFO(int32_t, MPI_INT32_T)
TYPE_INFO(uint32_t, MPI_UINT32_T)
TYPE_INFO(int64_t, MPI_INT64_T)
TYPE_INFO(uint64_t, MPI_UINT64_T)
TYPE_INFO(float, MPI_FLOAT)
TYPE_INFO(double, MPI_DOUBLE)
TYPE_INFO(F16, MPIX_ST_FLOAT16)
TYPE_INFO(BF16, MPIX_ST_BFLOAT16)
#undef TYPE_INFO

template <typename T>
bool op_allowed(Op o) {
  return std::is_integral_v<T> || (o != Op::band && o != Op::bor && o != Op::bxor);
}

template <typename T>
std::vector<uint8_t> as_bytes(const std::vector<T> &v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// The protocol MPIX_ST_COLL_PROTOCOL names for the calls of a case.
const char *protocol() {
  const char *v = getenv("MPIX_ST_COLL_PROTOCOL");
  return v && *v ? v : "auto";
}

struct Comm {
  MPI_Comm comm;
  int rank, size;
};

// Whether the communicator's ranks lie on more than one (virtual) node: MPIX_ST_VNODE_SIZE=k puts
// world ranks r and r' on one node when r / k == r' / k.
bool spans_nodes(const Comm &c) {
  const char *v = getenv("MPIX_ST_VNODE_SIZE");
  const int k = v ? std::atoi(v) : 0;
  if (k <= 0) return false;
  int world = 0, lo = 0, hi = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  MPI_Allreduce(&world, &lo, 1, MPI_INT, MPI_MIN, c.comm);
  MPI_Allreduce(&world, &hi, 1, MPI_INT, MPI_MAX, c.comm);
  return lo / k != hi / k;
}


// ---- reductions ----------------------------------------------------------------------------------

// One allreduce or reduce of `count` elements (unaligned by `shift` elements), checked.
template <typename T>
void reduce_case(const Comm &c, void *s, bool all, Op o, uint64_t count, int root, bool in_place, size_t shift,
                 uint64_t salt) {
  const char *algo = getenv(all ? "MPIX_ST_ALLREDUCE_ALGO" : "MPIX_ST_REDUCE_ALGO");
  g_context = fmt("%s(%s, %s) %s %s count=%llu root=%d%s shift=%zu np=%d", all ? "allreduce" : "reduce",
                  algo ? algo : "auto", protocol(), TypeInfo<T>::name(), op_name(o), (unsigned long long)count, root,
                  in_place ? " in-place" : "", shift, c.size);
  const size_t bytes = count * sizeof(T), off = shift * sizeof(T);
  g_case_ranks = c.size;
  std::vector<T> mine(count), want(count);
  for (uint64_t i = 0; i < count; ++i) {
    mine[i] = input<T>(o, c.rank, i, salt);
    T acc = input<T>(o, 0, i, salt);
    for (int r = 1; r < c.size; ++r) acc = apply(o, acc, input<T>(o, r, i, salt));
    want[i] = acc;
  }
  DevBuf send(bytes + off + 1), recv(bytes + off + 1);
  const bool receives = all || c.rank == root;
  const bool place = in_place && receives;
  // Bytes around the result must stay as they were.
  std::vector<uint8_t> guard = pattern(bytes + off + 1, key(salt, 77));
  recv.upload(guard);
  if (place) recv.upload(as_bytes(mine), off);
  else send.upload(as_bytes(mine), off);
  const void *sb = place ? MPI_IN_PLACE : static_cast<const void *>(send.p + off);
  if (all)
    MT_OK(MPIX_Allreduce_stream(sb, recv.p + off, static_cast<int>(count), TypeInfo<T>::type(), mpi_op(o), c.comm, s));
  else
    MT_OK(MPIX_Reduce_stream(sb, recv.p + off, static_cast<int>(count), TypeInfo<T>::type(), mpi_op(o), root, c.comm,
                             s));
  MT_SYNC(s);
  ++g_cases;
  std::vector<uint8_t> got = recv.download();
  if (receives) {
    std::vector<uint8_t> w = guard;
    if (bytes) std::memcpy(w.data() + off, as_bytes(want).data(), bytes);
    MT_SAME_BYTES(got.data(), w.data(), w.size(), "result");
  } else if (!in_place) {
    MT_SAME_BYTES(got.data(), guard.data(), guard.size(), "a non-root's receive buffer is untouched");
  }
}

template <typename T>
void reductions_of_type(const Comm &c, void *s, uint64_t big) {
  for (Op o : kOps) {
    if (!op_allowed<T>(o)) continue;
    const uint64_t counts[] = {1, 7, 1001};
    for (uint64_t n : counts) reduce_case<T>(c, s, true, o, n, 0, false, 0, key(n, int(o)));
    reduce_case<T>(c, s, false, o, 7, c.size - 1, false, 0, key(8, int(o)));
  }
  reduce_case<T>(c, s, true, Op::sum, big, 0, false, 1, key(big, 1));
  reduce_case<T>(c, s, true, Op::max, big, 0, true, 0, key(big, 2));
  reduce_case<T>(c, s, true, Op::sum, 0, 0, false, 0, 3);
  for (int root = 0; root < c.size; ++root) {
    reduce_case<T>(c, s, false, Op::sum, big, root, root % 2 == 0, 1, key(big, 4, root));
    reduce_case<T>(c, s, false, Op::min, 1, root, false, 0, key(1, 5, root));
  }
}

void reductions(const Comm &c, void *s, uint64_t big) {
  reductions_of_type<int8_t>(c, s, big);
  reductions_of_type<uint8_t>(c, s, big);
  reductions_of_type<int32_t>(c, s, big);
  reductions_of_type<uint32_t>(c, s, big);
  reductions_of_type<int64_t>(c, s, big);
  reductions_of_type<uint64_t>(c, s, big);
  reductions_of_type<float>(c, s, big);
  reductions_of_type<double>(c, s, big);
  reductions_of_type<F16>(c, s, big);
  reductions_of_type<BF16>(c, s, big);
}

#ifdef MPIX_C_FLOAT16
// MPICH's own binary16 handle reduces as MPIX_ST_FLOAT16 does.
void mpich_float16(const Comm &c, void *s) {
  g_context = fmt("allreduce MPIX_C_FLOAT16 SUM np=%d", c.size);
  const uint64_t count = 257;
  g_case_ranks = c.size;
  std::vector<F16> mine(count), want(count);
  for (uint64_t i = 0; i < count; ++i) {
    mine[i] = input<F16>(Op::sum, c.rank, i, 555);
    F16 acc = input<F16>(Op::sum, 0, i, 555);
    for (int r = 1; r < c.size; ++r) acc = apply(Op::sum, acc, input<F16>(Op::sum, r, i, 555));
    want[i] = acc;
  }
  DevBuf send(count * 2), recv(count * 2);
  send.upload(as_bytes(mine));
  MT_OK(MPIX_Allreduce_stream(send.p, recv.p, static_cast<int>(count), MPIX_C_FLOAT16, MPI_SUM, c.comm, s));
  MT_SYNC(s);
  ++g_cases;
  MT_SAME_BYTES(recv.download().data(), as_bytes(want).data(), count * 2, "result");
}
#endif

// ---- data movement -------------------------------------------------------------------------------

uint64_t block_key(int from, int to, uint64_t salt) { return key(salt, static_cast<uint64_t>(from), static_cast<uint64_t>(to)); }

// `bytes` as elements of `type` (of `esize` bytes; bytes a multiple of it).
void bcast_case(const Comm &c, void *s, size_t bytes, int root, size_t shift, uint64_t salt,
                MPI_Datatype type = MPI_BYTE, size_t esize = 1) {
  const char *algo = getenv("MPIX_ST_BCAST_ALGO");
  g_context = fmt("bcast(%s, %s) bytes=%zu esize=%zu root=%d shift=%zu np=%d", algo ? algo : "auto", protocol(), bytes,
                  esize, root, shift, c.size);
  DevBuf buf(bytes + shift + 1);
  std::vector<uint8_t> guard = pattern(bytes + shift + 1, key(salt, c.rank, 9));
  std::vector<uint8_t> want = pattern(bytes, block_key(root, 0, salt));
  buf.upload(guard);
  if (c.rank == root) buf.upload(want, shift);
  MT_OK(MPIX_Bcast_stream(buf.p + shift, static_cast<int>(bytes / esize), type, root, c.comm, s));
  MT_SYNC(s);
  ++g_cases;
  std::vector<uint8_t> w = guard;
  std::copy(want.begin(), want.end(), w.begin() + shift);
  MT_SAME_BYTES(buf.download().data(), w.data(), w.size(), "broadcast buffer");
}

// Allgather (personal = false) or alltoall of `count` elements of `type` (size `esize`) per block.
void blocks_case(const Comm &c, void *s, bool personal, int count, MPI_Datatype type, size_t esize, bool in_place,
                 uint64_t salt) {
  g_context = fmt("%s(%s) count=%d esize=%zu%s np=%d", personal ? "alltoall" : "allgather", protocol(), count, esize,
                  in_place ? " in-place" : "", c.size);
  const size_t block = static_cast<size_t>(count) * esize, n = static_cast<size_t>(c.size);
  const size_t send_bytes = personal ? block * n : block;
  DevBuf send(send_bytes + 1), recv(block * n + 1);
  std::vector<uint8_t> sent(send_bytes), want(block * n + 1);
  for (size_t q = 0; q < (personal ? n : 1); ++q) {
    std::vector<uint8_t> b = pattern(block, block_key(c.rank, personal ? int(q) : -1, salt));
    std::copy(b.begin(), b.end(), sent.begin() + q * block);
  }
  for (size_t q = 0; q < n; ++q) {
    std::vector<uint8_t> b = pattern(block, block_key(int(q), personal ? c.rank : -1, salt));
    std::copy(b.begin(), b.end(), want.begin() + q * block);
  }
  want[block * n] = 0xA5;
  std::vector<uint8_t> initial(block * n + 1, 0x5A);
  initial[block * n] = 0xA5;
  if (in_place) {
    if (personal) std::copy(sent.begin(), sent.end(), initial.begin());
    else std::copy(sent.begin(), sent.end(), initial.begin() + c.rank * block);
  } else {
    send.upload(sent);
  }
  recv.upload(initial);
  const void *sb = in_place ? MPI_IN_PLACE : static_cast<const void *>(send.p);
  if (personal)
    MT_OK(MPIX_Alltoall_stream(sb, count, type, recv.p, count, type, c.comm, s));
  else
    MT_OK(MPIX_Allgather_stream(sb, count, type, recv.p, count, type, c.comm, s));
  MT_SYNC(s);
  ++g_cases;
  MT_SAME_BYTES(recv.download().data(), want.data(), want.size(), "received blocks");
}

void movements(const Comm &c, void *s, size_t big) {
  const size_t sizes[] = {0, 1, 13, 4096, big};
  for (size_t bytes : sizes)
    for (int root = 0; root < c.size; ++root) bcast_case(c, s, bytes, root, root % 2, key(bytes, root));
  // Half types only move bytes here.
  bcast_case(c, s, 2 * 333, c.size - 1, 0, key(333, 1), MPIX_ST_FLOAT16, 2);
  bcast_case(c, s, 2 * 333, 0, 1, key(333, 2), MPIX_ST_BFLOAT16, 2);
  for (bool personal : {false, true}) {
    const int counts[] = {0, 1, 7, 333};
    for (int count : counts) {
      blocks_case(c, s, personal, count, MPI_INT, 4, false, key(count, personal));
      blocks_case(c, s, personal, count, MPI_BYTE, 1, true, key(count, personal, 1));
      blocks_case(c, s, personal, count, personal ? MPIX_ST_BFLOAT16 : MPIX_ST_FLOAT16, 2, false,
                  key(count, personal, 4));
    }
    blocks_case(c, s, personal, static_cast<int>(big / 8), MPI_DOUBLE, 8, false, key(big, personal, 2));
    blocks_case(c, s, personal, static_cast<int>(big / 8), MPI_DOUBLE, 8, true, key(big, personal, 3));
  }
}

// Allgather across nodes both ways (MPIX_ST_ALLGATHER_ACROSS): direct, and over rails with the
// node-local fan-out; counts 0, 1, odd and several chunks, in place and not.
void allgather_across(const Comm &c, void *s, size_t big) {
  const char *was = std::getenv("MPIX_ST_ALLGATHER_ACROSS");
  const std::string kept = was ? was : "";
  for (const char *way : {"direct", "rails"}) {
    setenv("MPIX_ST_ALLGATHER_ACROSS", way, 1);
    for (int count : {0, 1, 7, 333}) {
      blocks_case(c, s, false, count, MPI_INT, 4, false, key(count, 11));
      blocks_case(c, s, false, count, MPI_BYTE, 1, true, key(count, 12));
    }
    blocks_case(c, s, false, static_cast<int>(big / 8), MPI_DOUBLE, 8, false, key(big, 13));
    blocks_case(c, s, false, static_cast<int>(big / 8), MPI_DOUBLE, 8, true, key(big, 14));
  }
  if (was) setenv("MPIX_ST_ALLGATHER_ACROSS", kept.c_str(), 1);
  else unsetenv("MPIX_ST_ALLGATHER_ACROSS");
}

// Every collective with every algorithm the environment can select.
void all_collectives(const Comm &c, void *s, uint64_t big_elems) {
  if (spans_nodes(c)) {
    // Across nodes the algorithm variables pick node-local steps only; MPIX_ST_<COLL>_LEADERS
    // (set by the ctest run, one run per value) picks how the nodes' leaders exchange.
    reductions(c, s, big_elems);
    movements(c, s, big_elems * 8 + 3);
    allgather_across(c, s, big_elems * 8 + 3);
    return;
  }
  for (const char *algo : {"oneshot", "twoshot", "ring", "gsb", "btb"}) {
    setenv("MPIX_ST_ALLREDUCE_ALGO", algo, 1);
    // Reduce's algorithms ride along: two-shot with allreduce's, the chain with the ring, direct
    // with the rest.
    const bool two = std::strcmp(algo, "twoshot") == 0, ring = std::strcmp(algo, "ring") == 0;
    setenv("MPIX_ST_REDUCE_ALGO", two ? "twoshot" : ring ? "chain" : "direct", 1);
    reductions(c, s, big_elems);
#ifdef MPIX_C_FLOAT16
    mpich_float16(c, s);
#endif
  }
  unsetenv("MPIX_ST_ALLREDUCE_ALGO");
  unsetenv("MPIX_ST_REDUCE_ALGO");
  for (const char *algo : {"direct", "chain", "binomial"}) {
    setenv("MPIX_ST_BCAST_ALGO", algo, 1);
    // Allgather's ring rides along with the chain, direct with the rest.
    setenv("MPIX_ST_ALLGATHER_ALGO", std::strcmp(algo, "chain") == 0 ? "ring" : "direct", 1);
    movements(c, s, big_elems * 8 + 3);
  }
  unsetenv("MPIX_ST_BCAST_ALGO");
  unsetenv("MPIX_ST_ALLGATHER_ALGO");
  // Both protocols of the one-shot, direct and two-shot algorithms (auto, above, takes kLL for
  // small calls): kLL forced on every size (many rounds of its line areas), kSimple forced on the
  // small ones.
  for (const char *proto : {"ll", "simple"}) {
    setenv("MPIX_ST_COLL_PROTOCOL", proto, 1);
    for (const char *algo : {"oneshot", "twoshot"}) {
      const bool two = std::strcmp(algo, "twoshot") == 0;
      setenv("MPIX_ST_ALLREDUCE_ALGO", algo, 1);
      setenv("MPIX_ST_REDUCE_ALGO", two ? "twoshot" : "direct", 1);
      reductions(c, s, big_elems);
    }
    unsetenv("MPIX_ST_ALLREDUCE_ALGO");
    unsetenv("MPIX_ST_REDUCE_ALGO");
    setenv("MPIX_ST_BCAST_ALGO", "direct", 1);
    movements(c, s, big_elems * 8 + 3);
    unsetenv("MPIX_ST_BCAST_ALGO");
  }
  unsetenv("MPIX_ST_COLL_PROTOCOL");
}

// ---- many calls, other streams, epochs in between --------------------------------------------------

// 1,000 allreduces (alternating algorithms by size) and allgathers on one stream with one
// synchronisation, with a stream-triggered ring epoch every 10 calls; every result is kept and
// checked afterwards.
void many_calls(const Comm &c, void *s, int calls) {
  g_context = fmt("%d calls, one synchronisation, np=%d", calls, c.size);
  const int small = 5, large = 3000;
  DevBuf send(static_cast<size_t>(calls) * large * 8), recv(static_cast<size_t>(calls) * large * 8);
  std::vector<int64_t> in(static_cast<size_t>(calls) * large);
  for (int k = 0; k < calls; ++k)
    for (int i = 0; i < large; ++i) in[size_t(k) * large + i] = input<int64_t>(Op::sum, c.rank, i, key(k, 31));
  send.upload(in.data(), in.size() * 8);
  TestWin win = make_window(WinKind::allocate, 64);
  const int right = (c.rank + 1) % c.size, left = (c.rank + c.size - 1) % c.size;
  Group from_left(std::vector<int>{left}), to_right(std::vector<int>{right});
  DevBuf token(8);
  int epochs = 0;
  for (int k = 0; k < calls; ++k) {
    const int n = (k % 3 == 0) ? large : small;
    const size_t at = size_t(k) * large * 8;
    if (k % 2 == 0)
      MT_OK(MPIX_Allreduce_stream(send.p + at, recv.p + at, n, MPI_INT64_T, MPI_SUM, c.comm, s));
    else
      MT_OK(MPIX_Allgather_stream(send.p + at, n / c.size, MPI_INT64_T, recv.p + at, n / c.size, MPI_INT64_T,
                                  c.comm, s));
    if (k % 10 == 9) {
      const int64_t v = int64_t(k) * 1000 + c.rank;
      token.upload(&v, 8);  // before the epoch is enqueued: read when the stream runs it
      MT_OK(MPIX_Win_post_stream(from_left.g, win.win, s));
      MT_OK(MPI_Win_start(to_right.g, MPIX_MODE_STREAM, win.win));
      MT_OK(MPI_Put(token.p, 8, MPI_BYTE, right, 8 * (epochs % 8), 8, MPI_BYTE, win.win));
      MT_OK(MPIX_Win_complete_stream(win.win, s));
      MT_OK(MPIX_Win_wait_stream(win.win, s));
      MT_SYNC(s);  // the token buffer is reused: this epoch must have read it
      ++epochs;
      int64_t got = 0;
      xdev::copy_to_host(&got, static_cast<uint8_t *>(win.base) + 8 * ((epochs - 1) % 8), 8);
      MT_CHECKF(got == int64_t(k) * 1000 + left, "epoch after call %d: got %lld", k, (long long)got);
    }
  }
  MT_SYNC(s);
  std::vector<uint8_t> out = recv.download();
  for (int k = 0; k < calls; ++k) {
    const int n = (k % 3 == 0) ? large : small;
    const int64_t *got = reinterpret_cast<const int64_t *>(out.data() + size_t(k) * large * 8);
    int bad = 0;
    if (k % 2 == 0) {
      for (int i = 0; i < n && bad < 3; ++i) {
        int64_t want = 0;
        for (int r = 0; r < c.size; ++r) want += input<int64_t>(Op::sum, r, i, key(k, 31));
        if (got[i] != want) {
          ++bad;
          report(__FILE__, __LINE__, "call %d allreduce element %d: got %lld want %lld", k, i, (long long)got[i],
                 (long long)want);
        }
      }
    } else {
      const int b = n / c.size;
      for (int q = 0; q < c.size; ++q)
        for (int i = 0; i < b && bad < 3; ++i) {
          const int64_t want = input<int64_t>(Op::sum, q, i, key(k, 31));
          if (got[q * b + i] != want) {
            ++bad;
            report(__FILE__, __LINE__, "call %d allgather block %d element %d: got %lld want %lld", k, q, i,
                   (long long)got[q * b + i], (long long)want);
          }
        }
    }
  }
  g_cases += calls;
  free_window(win);
}

// Two communicators (world and a duplicate), each on its own stream, calls interleaved.
void two_streams(const Comm &c, void *s) {
  g_context = fmt("two streams, np=%d", c.size);
  MPI_Comm dup;
  MT_OK(MPI_Comm_dup(c.comm, &dup));
  void *s2 = stream_create();
  const int n = 777, calls = 50;
  DevBuf a(size_t(calls) * n * 4), b(size_t(calls) * n * 4), ra(size_t(calls) * n * 4), rb(size_t(calls) * n * 4);
  std::vector<int32_t> va(size_t(calls) * n), vb(size_t(calls) * n);
  for (size_t i = 0; i < va.size(); ++i) {
    va[i] = input<int32_t>(Op::sum, c.rank, i, 41);
    vb[i] = input<int32_t>(Op::max, c.rank, i, 42);
  }
  a.upload(va.data(), va.size() * 4);
  b.upload(vb.data(), vb.size() * 4);
  for (int k = 0; k < calls; ++k) {
    MT_OK(MPIX_Allreduce_stream(a.p + size_t(k) * n * 4, ra.p + size_t(k) * n * 4, n, MPI_INT32_T, MPI_SUM, c.comm, s));
    MT_OK(MPIX_Allreduce_stream(b.p + size_t(k) * n * 4, rb.p + size_t(k) * n * 4, n, MPI_INT32_T, MPI_MAX, dup, s2));
  }
  MT_SYNC(s);
  MT_SYNC(s2);
  std::vector<uint8_t> ga = ra.download(), gb = rb.download();
  int bad = 0;
  for (size_t i = 0; i < va.size() && bad < 3; ++i) {
    int32_t wa = 0, wb = input<int32_t>(Op::max, 0, i, 42);
    for (int r = 0; r < c.size; ++r) {
      wa += input<int32_t>(Op::sum, r, i, 41);
      wb = std::max(wb, input<int32_t>(Op::max, r, i, 42));
    }
    const int32_t *pa = reinterpret_cast<const int32_t *>(ga.data()), *pb = reinterpret_cast<const int32_t *>(gb.data());
    if (pa[i] != wa || pb[i] != wb) {
      ++bad;
      report(__FILE__, __LINE__, "element %zu: sum %d (want %d), max %d (want %d)", i, pa[i], wa, pb[i], wb);
    }
  }
  g_cases += 2 * calls;
  stream_destroy(s2);
  MT_OK(MPI_Comm_free(&dup));
}

// A graph of two collectives (stamp new input, allreduce XOR, append the result to a history;
// then an allgather) replayed `replays` times: every replay's results are checked.
void graph_replays(const Comm &c, void *s, int replays) {
  g_context = fmt("graph of collectives, %d replays, np=%d", replays, c.size);
  if (spans_nodes(c)) {
    // Steps across nodes are one-shot triggered operations: capture is refused, nothing enqueued.
    DevBuf in(8), out(8);
    MT_OK(MPIX_Allreduce_stream(in.p, out.p, 0, MPI_UINT8_T, MPI_BXOR, c.comm, s));
    xdev::stream_begin_capture(s);
    const int rc = MPIX_Allreduce_stream(in.p, out.p, 8, MPI_UINT8_T, MPI_BXOR, c.comm, s);
    xdev::graph_destroy(xdev::stream_end_capture(s));
    const std::string msg = expect_error_at(rc, MPI_ERR_UNSUPPORTED_OPERATION, "captured collective across nodes",
                                            __FILE__, __LINE__);
    if (!msg.empty() && !contains(msg, "captured"))
      report(__FILE__, __LINE__, "capture refusal lacks \"captured\": %s", msg.c_str());
    ++g_cases;
    return;
  }
  const size_t bytes = 1000;  // uint8 XOR: exact in any order
  DevBuf in(bytes), out(bytes), hist(bytes * replays), gat(bytes * c.size), ghist(bytes * c.size * replays);
  uint64_t *stamp_count = static_cast<uint64_t *>(xdev::alloc(8));
  uint64_t *hist_count = static_cast<uint64_t *>(xdev::alloc(8));
  uint64_t *ghist_count = static_cast<uint64_t *>(xdev::alloc(8));
  for (uint64_t *p : {stamp_count, hist_count, ghist_count}) xdev::fill(p, 0, 8);
  // The communicator's first call sets it up, which a capture cannot hold.
  MT_OK(MPIX_Allreduce_stream(in.p, out.p, 0, MPI_UINT8_T, MPI_BXOR, c.comm, s));
  xdev::stream_begin_capture(s);
  xdev::stamp(s, in.p, bytes, stamp_count, static_cast<uint64_t>(c.rank) + 1);
  MT_OK(MPIX_Allreduce_stream(in.p, out.p, static_cast<int>(bytes), MPI_UINT8_T, MPI_BXOR, c.comm, s));
  xdev::append(s, hist.p, out.p, bytes, hist_count);
  MT_OK(MPIX_Allgather_stream(in.p, static_cast<int>(bytes), MPI_BYTE, gat.p, static_cast<int>(bytes), MPI_BYTE,
                              c.comm, s));
  xdev::append(s, ghist.p, gat.p, bytes * c.size, ghist_count);
  void *graph = xdev::stream_end_capture(s);
  for (int k = 0; k < replays; ++k) xdev::graph_launch(graph, s);
  MT_SYNC(s);
  xdev::graph_destroy(graph);
  std::vector<uint8_t> h = hist.download(), g = ghist.download();
  int bad = 0;
  for (int k = 0; k < replays && bad < 3; ++k) {
    const uint64_t gen = static_cast<uint64_t>(k) + 1;
    for (size_t i = 0; i < bytes && bad < 3; ++i) {
      uint8_t want = 0;
      for (int r = 0; r < c.size; ++r) want ^= xdev::stamp_byte(static_cast<uint64_t>(r) + 1, gen, i);
      if (h[k * bytes + i] != want) {
        ++bad;
        report(__FILE__, __LINE__, "replay %d byte %zu: allreduce got %u want %u", k, i, h[k * bytes + i], want);
      }
      for (int r = 0; r < c.size; ++r) {
        const uint8_t w = xdev::stamp_byte(static_cast<uint64_t>(r) + 1, gen, i);
        const uint8_t got = g[(size_t(k) * c.size + r) * bytes + i];
        if (got != w && bad < 3) {
          ++bad;
          report(__FILE__, __LINE__, "replay %d rank %d byte %zu: allgather got %u want %u", k, r, i, got, w);
        }
      }
    }
  }
  g_cases += 2 * replays;
  for (uint64_t *p : {stamp_count, hist_count, ghist_count}) xdev::free(p);
}

// ---- bad arguments ------------------------------------------------------------------------------

void bad_arguments(const Comm &c, void *s) {
  g_context = "bad arguments";
  DevBuf a(64), b(64);
  int host_int = 0;
  MPI_Datatype strided;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  auto checked = [&](int rc, int cls, const char *what, const char *part) {
    std::string msg = expect_error_at(rc, cls, what, __FILE__, __LINE__);
    if (!msg.empty() && !contains(msg, part)) report(__FILE__, __LINE__, "%s: message lacks \"%s\": %s", what, part, msg.c_str());
    ++g_cases;
  };
  checked(MPIX_Allreduce_stream(a.p, b.p, -1, MPI_INT, MPI_SUM, c.comm, s), MPI_ERR_COUNT, "negative count", "negative count");
  checked(MPIX_Allreduce_stream(a.p, b.p, 4, MPI_INT, MPI_SUM, MPI_COMM_NULL, s), MPI_ERR_COMM, "null comm", "MPI_COMM_NULL");
  checked(MPIX_Allreduce_stream(a.p, b.p, 4, MPI_DATATYPE_NULL, MPI_SUM, c.comm, s), MPI_ERR_TYPE, "null type", "MPI_DATATYPE_NULL");
  checked(MPIX_Allreduce_stream(a.p, b.p, 4, MPI_SHORT, MPI_SUM, c.comm, s), MPI_ERR_TYPE, "short", "reductions take");
  checked(MPIX_Allreduce_stream(a.p, b.p, 4, MPI_FLOAT, MPI_BXOR, c.comm, s), MPI_ERR_OP, "float xor", "integer types only");
  checked(MPIX_Allreduce_stream(a.p, b.p, 4, MPIX_ST_FLOAT16, MPI_BAND, c.comm, s), MPI_ERR_OP, "half and", "integer types only");
  checked(MPIX_Reduce_stream(a.p, b.p, 4, MPIX_ST_BFLOAT16, MPI_BOR, 0, c.comm, s), MPI_ERR_OP, "bfloat16 or", "integer types only");
  checked(MPIX_Allreduce_stream(a.p, b.p, 4, MPIX_ST_BFLOAT16, MPI_BXOR, c.comm, s), MPI_ERR_OP, "bfloat16 xor", "integer types only");
  checked(MPIX_Allreduce_stream(a.p, b.p, 4, MPI_INT, MPI_OP_NULL, c.comm, s), MPI_ERR_OP, "null op", "MPI_OP_NULL");
  checked(MPIX_Allreduce_stream(a.p, b.p, 4, MPI_INT, MPI_LAND, c.comm, s), MPI_ERR_OP, "land", "supported operations");
  checked(MPIX_Allreduce_stream(nullptr, b.p, 4, MPI_INT, MPI_SUM, c.comm, s), MPI_ERR_BUFFER, "null send", "is NULL");
  checked(MPIX_Allreduce_stream(a.p, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM, c.comm, s), MPI_ERR_BUFFER, "in-place recv", "MPI_IN_PLACE");
  checked(MPIX_Allreduce_stream(a.p, a.p, 4, MPI_INT, MPI_SUM, c.comm, s), MPI_ERR_BUFFER, "aliased", "the same");
  checked(MPIX_Reduce_stream(a.p, b.p, 4, MPI_INT, MPI_SUM, c.size, c.comm, s), MPI_ERR_ROOT, "root = size", "root");
  checked(MPIX_Reduce_stream(a.p, b.p, 4, MPI_INT, MPI_SUM, -1, c.comm, s), MPI_ERR_ROOT, "root -1", "root");
  checked(MPIX_Bcast_stream(a.p, 2, strided, 0, c.comm, s), MPI_ERR_TYPE, "strided bcast", "not contiguous");
  checked(MPIX_Bcast_stream(nullptr, 4, MPI_INT, 0, c.comm, s), MPI_ERR_BUFFER, "null bcast", "is NULL");
  checked(MPIX_Allgather_stream(a.p, 2, MPI_INT, b.p, 3, MPI_INT, c.comm, s), MPI_ERR_TYPE, "block mismatch", "differ");
  checked(MPIX_Alltoall_stream(a.p, -2, MPI_INT, b.p, 1, MPI_INT, c.comm, s), MPI_ERR_COUNT, "negative send count", "negative");
  if (kCuda)
    checked(MPIX_Allreduce_stream(&host_int, b.p, 1, MPI_INT, MPI_SUM, c.comm, s), MPI_ERR_BUFFER, "host memory", "not memory");
  else
    checked(MPIX_Allreduce_stream(a.p, b.p, 4, MPI_INT, MPI_SUM, c.comm, nullptr), MPI_ERR_ARG, "null stream", "NULL");
  setenv("MPIX_ST_COLL_PROTOCOL", "bogus", 1);
  checked(MPIX_Allreduce_stream(a.p, b.p, 4, MPI_INT, MPI_SUM, c.comm, s), MPI_ERR_ARG, "bogus protocol", "bogus");
  unsetenv("MPIX_ST_COLL_PROTOCOL");
  setenv("MPIX_ST_ALLREDUCE_ALGO", "bogus", 1);
  checked(MPIX_Allreduce_stream(a.p, b.p, 4, MPI_INT, MPI_SUM, c.comm, s), MPI_ERR_ARG, "bogus algorithm", "bogus");
  unsetenv("MPIX_ST_ALLREDUCE_ALGO");
  if (spans_nodes(c)) {
    // Each leaders variable, MPIX_ST_ALLGATHER_ACROSS and MPIX_ST_COLL_PIPELINE refuse what they do
    // not name (the ring is for allreduce only).
    enum Call { allreduce, reduce, bcast, allgather };
    struct Leaders {
      Call call;
      const char *var, *value;
    };
    for (const Leaders &l : {Leaders{allreduce, "MPIX_ST_ALLREDUCE_LEADERS", "bogus"},
                             Leaders{reduce, "MPIX_ST_REDUCE_LEADERS", "bogus"},
                             Leaders{reduce, "MPIX_ST_REDUCE_LEADERS", "ring"},
                             Leaders{bcast, "MPIX_ST_BCAST_LEADERS", "bogus"},
                             Leaders{bcast, "MPIX_ST_BCAST_LEADERS", "ring"},
                             Leaders{allgather, "MPIX_ST_ALLGATHER_ACROSS", "bogus"},
                             Leaders{allreduce, "MPIX_ST_COLL_PIPELINE", "2"}}) {
      const char *was = std::getenv(l.var);
      const std::string kept = was ? was : "", what = std::string(l.var) + "=" + l.value;
      setenv(l.var, l.value, 1);
      const int rc = l.call == allreduce ? MPIX_Allreduce_stream(a.p, b.p, 4, MPI_INT, MPI_SUM, c.comm, s)
                     : l.call == reduce  ? MPIX_Reduce_stream(a.p, b.p, 4, MPI_INT, MPI_SUM, 0, c.comm, s)
                     : l.call == bcast   ? MPIX_Bcast_stream(a.p, 4, MPI_INT, 0, c.comm, s)
                                         : MPIX_Allgather_stream(a.p, 1, MPI_INT, b.p, 1, MPI_INT, c.comm, s);
      checked(rc, MPI_ERR_ARG, what.c_str(), l.var);
      if (was) setenv(l.var, kept.c_str(), 1);
      else unsetenv(l.var);
    }
  }
  MPI_Type_free(&strided);
  // The communicator still works.
  reduce_case<int32_t>(c, s, true, Op::sum, 5, 0, false, 0, 99);
}

Comm make_comm(MPI_Comm comm) {
  Comm c{comm, 0, 1};
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.size);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return c;
}

}  // namespace

int main(int argc, char **argv) {
  init(&argc, &argv, "collectives");
  int calls = 1000;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--calls=", 8) == 0) calls = std::atoi(argv[i] + 8);
  void *s = stream_create();
  const Comm world = make_comm(MPI_COMM_WORLD);
  // Larger than one round of the scratch the tests run with (MPIX_ST_COLL_SCRATCH_KIB).
  const uint64_t big = 5000;
  all_collectives(world, s, big);

  // Reordered ranks: the reverse of world.
  MPI_Comm reversed;
  MT_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, g_size - g_rank, &reversed));
  const Comm rev = make_comm(reversed);
  reductions_of_type<double>(rev, s, big);
  movements(rev, s, 999);

  // A sub-communicator of part of the ranks (the others sit it out).
  MPI_Comm part;
  MT_OK(MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &part));
  const Comm sub = make_comm(part);
  reductions_of_type<int32_t>(sub, s, 777);
  movements(sub, s, 500);

  many_calls(world, s, calls);
  two_streams(world, s);
  graph_replays(world, s, 100);
  bad_arguments(world, s);

  MT_OK(MPI_Comm_free(&reversed));
  MT_OK(MPI_Comm_free(&part));
  stream_destroy(s);
  long total = 0;
  MPI_Reduce(&g_cases, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_rank == 0) std::printf("collectives: %ld checked cases over %d ranks\n", total, g_size);
  return finish();
}
