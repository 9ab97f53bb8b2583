// The model-based random test of mpix-st (doc/guide/reliability-random-test.md).
//
// A plan is a sequence of global steps drawn from a seed: every rank draws the same plan (the
// generator runs on every rank, in step with the execution), so collective calls and epochs
// match. A step holds, for every rank, a list of calls of the library's API, each with the error
// class the reference model expects of it (MPI_SUCCESS for legal calls). The model (model.cpp)
// keeps what every rank's windows and buffers must hold after each step, from what MPI and the
// library's man pages and handbook say; the runner (runner.cpp) makes the calls, compares every
// return code's class with the model's, and at each synchronisation compares window memory and
// result buffers byte for byte.
#pragma once
#include <mpi.h>
#include <mpix/mpix_st.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "rng.h"

namespace rt {

// ---- element types, operators --------------------------------------------------------------------

enum Elem : int {
  eByte, eChar, eShort, eInt, eInt32, eLong, eLongLong, eInt64, eUnsigned, eFloat, eDouble, eInt8, eUint8,
  eUint32, eUint64, kElems
};
MPI_Datatype elem_type(int e);
const char *elem_name(int e);
int elem_size(int e);
bool elem_float(int e);
bool elem_signed(int e);
// Element types MPI_Accumulate takes (doc/guide/rma-epochs.md, "Supported operations and types").
bool acc_elem_ok(int e);

enum AccOp : int { oSum, oMax, oMin, oReplace, oProd, oBand, oBor, oBxor, oNull, kOps };
MPI_Op op_handle(int o);
const char *op_name(int o);

// ---- datatypes ----------------------------------------------------------------------------------

// A datatype as the plan describes it; built with MPI's constructors by whoever needs it.
struct TypeDesc {
  enum Kind { named, contiguous, vector, hvector, indexed, indexed_block, hindexed, structure, resized, subarray } kind =
      named;
  int elem = eByte;  // named: the element; derived: the basic element at the bottom
  int child = -1;    // index of the inner type in the table
  int count = 0, blocklen = 0;
  int64_t stride = 0;
  std::vector<int> blens;
  std::vector<int64_t> disps;
  int64_t lb = 0, extent = 0;                 // resized
  int sizes[2] = {0, 0}, subsizes[2] = {0, 0}, starts[2] = {0, 0};  // subarray (2-d, C order)
  int order = MPI_ORDER_C;
};

// Where each byte of (type, count) lies, in type-map order, relative to the buffer pointer:
// byte i of the packed stream is at off[i]. [lo, hi) covers every byte.
struct Layout {
  std::vector<int64_t> off;
  int64_t lo = 0, hi = 0;
  int64_t bytes() const { return static_cast<int64_t>(off.size()); }
};
using LayoutP = std::shared_ptr<const Layout>;

class TypeTable {
 public:
  TypeTable();
  int named(int e) const { return e; }  // the first kElems entries are the named types
  int add(const TypeDesc &d);
  const TypeDesc &at(int id) const { return t_[id]; }
  std::string describe(int id) const;
  bool is_named(int id) const { return t_[id].kind == TypeDesc::named; }
  int elem_of(int id) const { return t_[id].elem; }
  // Builds the MPI datatype (committed unless asked otherwise); the caller frees derived ones.
  MPI_Datatype build(int id, bool commit = true) const;
  // The layout of (type, count); nullptr when it overlaps itself or cannot be built.
  LayoutP layout(int id, int count);

 private:
  std::vector<TypeDesc> t_;
  std::map<std::pair<int, int>, LayoutP> cache_;
};

// ---- the plan -------------------------------------------------------------------------------------

enum class WinKind { allocate, create, create_unmanaged, create_mixed_info, allocate_shared, dynamic };
const char *win_kind_name(WinKind k);
inline bool kind_managed(WinKind k) { return k == WinKind::allocate || k == WinKind::create; }

enum class Op {
  // windows
  WinCreate, WinFree,
  // active-target epochs
  Post, PostStream, Start, Complete, CompleteStream, Wait, WaitStream, TestLoop, Fence,
  // RMA
  Put, Get, Acc, FetchOp, LockAll, UnlockAll, Stamp, Delay,
  // streams and graphs
  StreamCreate, StreamDestroy, StreamSync, CaptureBegin, CaptureEnd, GraphLaunch, GraphDestroy,
  // collectives
  CommCreate, CommFree, MStreamCreate, MStreamFree, Coll,
  // the host
  HostWrite, Check, Barrier,
};
const char *op_name_of(Op op);

// Special object references in calls.
constexpr int kNullRef = -2;  // MPI_WIN_NULL, a NULL stream, ...
constexpr int kProcNull = -3;  // target MPI_PROC_NULL
constexpr int kStaleRef = -4;  // (unused marker)

enum CallFlags : unsigned {
  fNullOrigin = 1u << 0,    // a NULL origin buffer
  fUncommitted = 1u << 1,   // the origin type is not committed
  fDeadStream = 1u << 2,    // the stream argument was destroyed
  fStaleWin = 1u << 3,      // the window argument was freed
  fInPlace = 1u << 4,       // MPI_IN_PLACE as sendbuf
  fDynamic = 1u << 5,       // target_disp is an address in a dynamic window
  fNoCheck = 1u << 6,       // MPI_MODE_NOCHECK
  fMixedClose = 1u << 7,    // closes a stream-opened exposure epoch with the host call or the reverse
  fRecvInPlace = 1u << 8,   // MPI_IN_PLACE as recvbuf
  fSameBuffers = 1u << 9,   // sendbuf == recvbuf
  fDeadGraph = 1u << 10,    // the graph argument was destroyed
  fFirstColl = 1u << 11,    // the first collective on the communicator
  fEnqueue = 1u << 12,      // MPICH's *_enqueue spelling
  fNullTypeArg = 1u << 13,  // MPI_DATATYPE_NULL
};

enum class Coll { allreduce, reduce, bcast, allgather, alltoall };
const char *coll_name(Coll c);

struct Call {
  Op op = Op::Barrier;
  int win = -1, stream = -1, graph = -1, comm = -1, mstream = -1;
  std::vector<int> group;  // world ranks
  int assert_bits = 0;
  // RMA: target (window rank, kProcNull or a bad rank), displacement in units of the target,
  // counts and types (TypeTable ids), the origin buffer and the offset in it, the operator.
  int target = 0;
  int64_t disp = 0;
  int ocount = 0, tcount = 0, otype = eByte, ttype = eByte;
  int buf = -1, buf2 = -1;
  int64_t buf_off = 0;
  int mop = oNull;
  unsigned flags = 0;
  // Window creation (this rank's arguments), host writes.
  WinKind kind = WinKind::allocate;
  int64_t size = 0, offset = 0, len = 0;
  int unit = 1;
  uint64_t data_key = 0;
  // Collectives.
  Coll coll = Coll::allreduce;
  int root = 0;
  // What the model expects: an error class (MPI_SUCCESS for a legal call); `expect_alt`: a second
  // class the model accepts where MPI and the man pages allow either.
  int expect = MPI_SUCCESS, expect_alt = -1;
  std::string why;  // for a call that must fail: what is wrong with it
  // Checks: the windows and buffers to compare with the model, the buffers to free afterwards.
  std::vector<int> check_wins, check_bufs, free_bufs;
};

struct Step {
  int index = 0;
  std::string title;
  std::vector<std::vector<Call>> calls;  // by rank
};

// Groups of steps that can be left out of a plan (--avoid) or drawn (--with), e.g. while a bug the
// group finds is open (the notes list which); see the generator for what each holds.
struct Features {
  std::set<std::string> off;
  bool on(const std::string &f) const { return !off.count(f); }
};
const std::vector<std::string> &all_features();
// Groups that are off unless asked for with --with (behaviour the man pages and the library do
// not agree on yet).
const std::vector<std::string> &default_off_features();

struct Config {
  uint64_t seed = 1;
  int nranks = 2;
  int steps = 200;
  Features features;
  int illegal_percent = 12;  // chance that a rank's part of a step gets an illegal call
};

// ---- the reference model ----------------------------------------------------------------------------

// One RMA operation as the model applies it.
struct RmaEffect {
  int kind = 0;  // 0 put, 1 get, 2 accumulate, 3 a stream task rewrites the buffer (its next generation)
  int win = -1, origin = 0, target = 0;
  int buf = -1;
  int64_t buf_off = 0;
  LayoutP ol, tl;
  int64_t toff = 0;  // target byte offset of the displacement
  int elem = eByte, op = oSum;
};

struct CollEffect {
  Coll coll = Coll::allreduce;
  std::vector<int> members;  // world ranks, in communicator order
  std::vector<int> send, recv;  // buffers by communicator rank (-1: none)
  std::vector<char> in_place;
  int count = 0, elem = eInt, op = oSum, root = 0;
};

struct Effect {
  enum Kind { round, coll } kind = round;
  std::vector<RmaEffect> rma;
  CollEffect c;
};

struct WinRank {
  int64_t size = 0, bzone = 0, azone = 0;  // [0, bzone): bytes; [bzone, size): accumulate elements
  int unit = 1;
  std::vector<uint8_t> img;
};

struct WinM {
  bool alive = false, created = false;
  WinKind kind = WinKind::allocate;
  bool managed = true;
  int acc_elem = eInt;
  std::vector<WinRank> r;
  std::vector<std::map<int, bool>> pending;  // by rank: streams with unsynchronised work (true: a graph's)
  std::set<int> graphs;                       // live graphs holding epochs of it
};

struct StreamM {
  bool alive = false, capturing = false;
  int pending_error = MPI_SUCCESS;  // what its next synchronisation reports
  int bound = 0;                    // MPIX_Streams wrapping it
};

struct BufM {
  int owner = 0;
  std::vector<uint8_t> init, bytes;  // at creation; now
  bool check = false;                // compared at checks
  bool alive = true;
  uint64_t stamp_key = 0, gen = 0;   // rewritten by a stream task: generation gen of stamp_key
  int step = -1;                     // the step that made it
  int graph = -1;  // owned by a graph: freed with it
};

struct GraphM {
  bool alive = false;
  bool stale = false;  // a window of it was freed: a launch does nothing and reports MPI_ERR_WIN
  std::vector<std::vector<Call>> calls;  // by rank: the captured calls, for a rank that runs them eagerly instead
  std::vector<Effect> effects;
  std::set<int> wins, comms;
  std::vector<int> bufs;
};

struct CommM {
  bool alive = false;
  int kind = 0;  // 0 dup of MPI_COMM_WORLD, 1 split, 2 MPIX_Stream_comm_create
  std::vector<int> members;  // world ranks in communicator order
  int mstream = -1;          // kind 2: the MPIX_Stream it is bound to
  bool set_up = false;       // a first collective has been made on it
  bool replayed = false;     // a graph holding collectives on it has been launched
  std::vector<std::map<int, bool>> pending;  // by world rank
  std::set<int> graphs;
  int color = 0;
};

struct MStreamM {
  bool alive = false;
  std::vector<int> stream;  // by rank: the host stream it wraps
  int comms = 0;            // bound communicators
};

class Model {
 public:
  explicit Model(const Config &cfg);
  const Config &cfg;
  int n;
  TypeTable types;
  std::vector<WinM> wins;
  std::vector<std::vector<StreamM>> streams;  // by rank
  std::vector<BufM> bufs;
  std::vector<GraphM> graphs;
  std::vector<CommM> comms;
  std::vector<MStreamM> mstreams;
  // An open capture: every rank captures one stream.
  bool capturing = false;
  int capture_graph = -1;
  std::vector<int> capture_stream;

  int new_buf(int owner, std::vector<uint8_t> init, bool check);
  int step = 0;  // the step being drawn
  void apply(const Effect &e);
  void apply_rma(const std::vector<RmaEffect> &ops);
  void apply_coll(const CollEffect &c);
  // Streams of rank r with unsynchronised work on window w / communicator c.
  bool quiescent(int w) const;
  void sync_stream(int r, int s);
  void retire_graph_buffers(int g);
};

// Data of accumulate zones and collective inputs: small integral values, so sums, maxima and
// minima are exact and the same in any order, in every element type.
std::vector<uint8_t> clean_values(int elem, int64_t count, uint64_t k);
int64_t clean_span(int elem);

// A byte range of a target that an operation of the epoch being drawn touches.
struct Claim {
  int64_t lo, hi;
  int kind;  // 0 put, 1 get, 2 accumulate
  int origin, op;
};

class Generator {
 public:
  explicit Generator(const Config &cfg);
  Model m;
  // The next step of the plan (index = steps made so far); teardown steps once the random part is
  // over (`done()` after the last).
  Step next();
  bool done() const { return done_; }
  int made() const { return index_; }

 private:
  const Config &cfg_;
  Rng rng_;
  int index_ = 0;
  bool done_ = false, torn_down_ = false;
  std::vector<Step> queued_;  // steps drawn ahead (setup, teardown, a sync a step needs first)

  Step begin(const std::string &title);
  void setup();
  void teardown();
  Step random_step();
  // Step kinds.
  Step round();
  Step sync_step(bool all, bool check);
  Step host_write();
  Step win_create();
  Step win_free();
  Step stream_step();
  Step capture_begin();
  Step capture_end();
  Step graph_launch();
  Step graph_destroy();
  Step probe();
  Step comm_create();
  Step comm_free();
  Step coll_step();
  Step fence_round();
  Call check_call(int r, bool everything);
  std::pair<int, int64_t> origin_buf(int owner, const Layout &l, bool get, int elem, bool clean, int graph);
  int draw_rma(int w, int o, int t, std::vector<Claim> &claims, int graph, Call *out, RmaEffect *eff);
  uint64_t bufs_drawn_ = 0;
  // Helpers.
  int live_stream(int r, int avoid = -1);
  int stream_for_window(int w, int r, bool captured);
  int stream_for_comm(int c, int r, bool captured);
  bool needs_sync_for_launch(int g);
  int pick_live_window(bool managed_only);
  int new_type(int elem, int depth, int64_t max_bytes);
  void mark_pending(std::vector<std::map<int, bool>> &pending, int r, int s, bool graph);
  bool allow(const char *feature) const { return cfg_.features.on(feature); }
};

std::string describe(const Call &c, const Model &m);
std::string describe_step(const Step &s, const Model &m);

}  // namespace rt
