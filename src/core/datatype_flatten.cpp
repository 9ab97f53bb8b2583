#include "datatype_flatten.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace mpix::core {
namespace {

constexpr int kMaxDepth = 64;
constexpr size_t kMaxDescription = 160;
// Types a description visits at most (struct members and nesting; the text is clipped anyway).
constexpr int kDescriptionTypes = 64;

std::mutex g_mu;
std::map<MPI_Datatype, FlatRef> g_flats;     // derived types only
std::map<MPI_Datatype, TypeFacts> g_facts;  // derived types only

const char *combiner_name(int c) {
  switch (c) {
    case MPI_COMBINER_NAMED: return "named";
    case MPI_COMBINER_DUP: return "dup";
    case MPI_COMBINER_CONTIGUOUS: return "contiguous";
    case MPI_COMBINER_VECTOR: return "vector";
    case MPI_COMBINER_HVECTOR: return "hvector";
    case MPI_COMBINER_INDEXED: return "indexed";
    case MPI_COMBINER_HINDEXED: return "hindexed";
    case MPI_COMBINER_INDEXED_BLOCK: return "indexed_block";
    case MPI_COMBINER_HINDEXED_BLOCK: return "hindexed_block";
    case MPI_COMBINER_STRUCT: return "struct";
    case MPI_COMBINER_SUBARRAY: return "subarray";
    case MPI_COMBINER_DARRAY: return "darray";
    case MPI_COMBINER_F90_REAL: return "f90_real";
    case MPI_COMBINER_F90_COMPLEX: return "f90_complex";
    case MPI_COMBINER_F90_INTEGER: return "f90_integer";
    case MPI_COMBINER_RESIZED: return "resized";
    default: return "unknown";
  }
}

bool supported(int combiner) {
  switch (combiner) {
    case MPI_COMBINER_DUP: case MPI_COMBINER_CONTIGUOUS: case MPI_COMBINER_VECTOR: case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED: case MPI_COMBINER_HINDEXED: case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: case MPI_COMBINER_STRUCT: case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_RESIZED:
      return true;
    default:
      return false;
  }
}

std::string clip(std::string s) {
  if (s.size() > kMaxDescription) s = s.substr(0, kMaxDescription - 3) + "...";
  return s;
}

template <typename T>
std::string list(const T *v, int n) {
  std::string s = "[";
  for (int i = 0; i < n && i < 4; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  if (n > 4) s += ", ...";
  return s + "]";
}

bool add_overflows(int64_t a, int64_t b, int64_t *out) { return __builtin_add_overflow(a, b, out); }
bool mul_overflows(int64_t a, int64_t b, int64_t *out) { return __builtin_mul_overflow(a, b, out); }

Result too_large(const std::string &what) {
  return fail(MPI_ERR_TYPE, "datatype " + what + ": displacements overflow 64 bits");
}

Result too_many_segments() {
  return fail(MPI_ERR_TYPE, "datatype has more than " + std::to_string(kMaxSegments) +
                                " contiguous pieces per instance, which the library does not support");
}

Result too_many_runs() {
  return fail(MPI_ERR_TYPE, "datatype's type signature changes basic type more than " +
                                std::to_string(kMaxSignatureRuns) +
                                " times per instance, which the library does not support");
}

bool same_runs(const std::vector<SignatureRun> &a, const std::vector<SignatureRun> &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].basic != b[i].basic || a[i].count != b[i].count) return false;
  return true;
}

// Appends a run, merged with the last one where it is of the same type; false past the limit.
bool add_run(std::vector<SignatureRun> &sig, const SignatureRun &r) {
  if (!sig.empty() && sig.back().basic == r.basic) {
    sig.back().count += r.count;
    return true;
  }
  if (sig.size() >= kMaxSignatureRuns) return false;
  sig.push_back(r);
  return true;
}

// A one-run period repeated is one longer run.
void normalise(Flat &f) {
  if (f.signature.size() == 1 && f.signature_reps > 1) {
    f.signature[0].count *= f.signature_reps;
    f.signature_reps = 1;
  }
}

// Writes out the repetitions of f's signature period, so that a different tail can follow.
Result expand(Flat &f) {
  if (f.signature_reps == 1) return ok();
  std::vector<SignatureRun> all;
  for (uint64_t k = 0; k < f.signature_reps; ++k)
    for (const SignatureRun &r : f.signature)
      if (!add_run(all, r)) return too_many_runs();
  f.signature = std::move(all);
  f.signature_reps = 1;
  return ok();
}

// Counts never overflow: every element of the signature is at least one byte of data, and the
// data's size was checked before.
Result append_signature(Flat &f, const Flat &child, uint64_t times) {
  const uint64_t reps = child.signature_reps * times;
  if (f.signature.empty()) {  // P^reps
    f.signature = child.signature;
    f.signature_reps = reps;
    normalise(f);
    return ok();
  }
  if (same_runs(f.signature, child.signature)) {  // P^a P^b = P^(a + b)
    f.signature_reps += reps;
    normalise(f);
    return ok();
  }
  if (Result r = expand(f)) return r;
  if (child.signature.size() == 1) {
    add_run(f.signature, {child.signature[0].basic, child.signature[0].count * reps});
    return ok();
  }
  for (uint64_t k = 0; k < reps; ++k)
    for (const SignatureRun &r : child.signature)
      if (!add_run(f.signature, r)) return too_many_runs();
  return ok();
}

// Appends `times` copies of the child's segments, the k-th at byte `shift + k * step`, merging
// adjacent runs. Work is bounded by kMaxSegments: a copy that merges whole into the one before it
// is a contiguous child repeated at its own length, which is one run at once; every other copy
// adds a segment (a copy of one segment can merge only with the copy before it if it follows it
// end to end, which every copy then does).
Result append_segments(Flat &f, const Flat &child, int64_t shift, uint64_t times, int64_t step) {
  auto push = [&f](int64_t offset, uint64_t bytes) -> Result {
    int64_t end;
    if (add_overflows(offset, static_cast<int64_t>(bytes), &end)) return too_large("copies");
    if (!f.segments.empty()) {
      Segment &last = f.segments.back();
      if (last.offset + static_cast<int64_t>(last.bytes) == offset) {
        last.bytes += bytes;
        return ok();
      }
    }
    if (f.segments.size() >= kMaxSegments) return too_many_segments();
    f.segments.push_back({offset, bytes});
    return ok();
  };
  // Copies that do not merge whole add at least (pieces of a copy - 1) segments each (one
  // contiguous child: each copy but the first one): a count past the limit is refused at once.
  const uint64_t n = child.segments.size();
  const bool one_run = n == 1 && static_cast<int64_t>(child.segments[0].bytes) == step;
  if (!one_run) {
    const uint64_t at_least = n == 1 ? times - 1 : (times > kMaxSegments ? times : times * (n - 1));
    if (at_least > kMaxSegments - f.segments.size()) return too_many_segments();
  }
  if (one_run) {
    int64_t at, len;
    if (add_overflows(shift, child.segments[0].offset, &at) || mul_overflows(step, static_cast<int64_t>(times), &len))
      return too_large("copies");
    return push(at, static_cast<uint64_t>(len));
  }
  for (uint64_t k = 0; k < times; ++k) {
    int64_t base;
    if (mul_overflows(static_cast<int64_t>(k), step, &base) || add_overflows(base, shift, &base))
      return too_large("copies");
    for (const Segment &s : child.segments) {
      int64_t at;
      if (add_overflows(base, s.offset, &at)) return too_large("copies");
      if (Result r = push(at, s.bytes)) return r;
    }
  }
  return ok();
}

// Appends `times` copies of `child`, the k-th at byte `shift + k * step`.
Result append(Flat &f, const Flat &child, int64_t shift, uint64_t times, int64_t step) {
  if (times == 0 || child.size == 0) return ok();
  if (times > static_cast<uint64_t>(INT64_MAX)) return too_large("copies");
  uint64_t bytes;
  if (__builtin_mul_overflow(child.size, times, &bytes) || __builtin_add_overflow(f.size, bytes, &f.size))
    return fail(MPI_ERR_TYPE, "datatype holds more than 2^64 bytes of data");
  if (Result r = append_segments(f, child, shift, times, step)) return r;
  return append_signature(f, child, times);
}

// Frees the derived handles MPI_Type_get_contents returned (named ones must not be freed).
struct ContentTypes {
  std::vector<MPI_Datatype> v;
  ~ContentTypes() {
    for (MPI_Datatype &t : v)
      if (!is_named(t)) PMPI_Type_free(&t);
  }
};

// A datatype's constructor and its arguments.
struct Contents {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  ContentTypes types;
};

Result read_contents(MPI_Datatype t, Contents *c) {
  int ni = 0, na = 0, nt = 0;
  if (t == MPI_DATATYPE_NULL || PMPI_Type_get_envelope(t, &ni, &na, &nt, &c->combiner) != MPI_SUCCESS)
    return fail(MPI_ERR_TYPE, "not a valid datatype (MPI_DATATYPE_NULL or freed)");
  if (c->combiner == MPI_COMBINER_NAMED) return ok();
  c->ints.resize(static_cast<size_t>(ni));
  c->addrs.resize(static_cast<size_t>(na));
  c->types.v.resize(static_cast<size_t>(nt));
  if (PMPI_Type_get_contents(t, ni, na, nt, c->ints.data(), c->addrs.data(), c->types.v.data()) != MPI_SUCCESS) {
    c->types.v.clear();
    return fail(MPI_ERR_TYPE, "MPI_Type_get_contents failed on a datatype");
  }
  return ok();
}

std::string named_name(MPI_Datatype t) {
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  PMPI_Type_get_name(t, name, &len);
  return len ? name : "(unnamed predefined type)";
}

// One constructor's description, given its member types' ones (the first four of a struct's).
std::string label(const Contents &c, const std::vector<std::string> &kids) {
  const int *ints = c.ints.data();
  const MPI_Aint *addrs = c.addrs.data();
  const std::string of = kids.empty() ? "" : " of " + kids[0];
  switch (c.combiner) {
    case MPI_COMBINER_DUP:
      return clip("dup" + of);
    case MPI_COMBINER_CONTIGUOUS:
      return clip("contiguous(" + std::to_string(ints[0]) + ")" + of);
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      const bool h = c.combiner == MPI_COMBINER_HVECTOR;
      return clip(std::string(h ? "hvector" : "vector") + "(count=" + std::to_string(ints[0]) + ", blocklength=" +
                  std::to_string(ints[1]) + ", stride=" + std::to_string(h ? addrs[0] : ints[2]) + (h ? " bytes" : "") +
                  ")" + of);
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
      const bool h = c.combiner == MPI_COMBINER_HINDEXED;
      const int n = ints[0];
      return clip(std::string(h ? "hindexed" : "indexed") + "(count=" + std::to_string(n) +
                  ", blocklengths=" + list(ints + 1, n) + ", displacements=" +
                  (h ? list(addrs, n) : list(ints + 1 + n, n)) + ")" + of);
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
      const bool h = c.combiner == MPI_COMBINER_HINDEXED_BLOCK;
      const int n = ints[0];
      return clip(std::string(h ? "hindexed_block" : "indexed_block") + "(count=" + std::to_string(n) +
                  ", blocklength=" + std::to_string(ints[1]) + ", displacements=" +
                  (h ? list(addrs, n) : list(ints + 2, n)) + ")" + of);
    }
    case MPI_COMBINER_STRUCT: {
      const int n = ints[0];
      std::string leaves = "[";
      for (size_t j = 0; j < kids.size() && j < 4; ++j) leaves += (j ? ", " : "") + kids[j];
      if (n > 4) leaves += ", ...";
      return clip("struct(count=" + std::to_string(n) + ", blocklengths=" + list(ints + 1, n) +
                  ", displacements=" + list(addrs, n) + ") of " + leaves + "]");
    }
    case MPI_COMBINER_SUBARRAY: {
      const int nd = ints[0];
      return clip("subarray(sizes=" + list(ints + 1, nd) + ", subsizes=" + list(ints + 1 + nd, nd) +
                  ", starts=" + list(ints + 1 + 2 * nd, nd) + ", order=" +
                  (ints[1 + 3 * nd] == MPI_ORDER_C ? "C" : "Fortran") + ")" + of);
    }
    case MPI_COMBINER_RESIZED:
      return clip("resized(lb=" + std::to_string(addrs[0]) + ", extent=" + std::to_string(addrs[1]) + ")" + of);
    default:
      return clip(std::string(combiner_name(c.combiner)) + " datatype" + of);
  }
}

std::string describe_types(MPI_Datatype t, int depth, int *budget) {
  if (--*budget < 0 || depth > kMaxDepth) return "...";
  Contents c;
  if (read_contents(t, &c)) return "(not a valid datatype)";
  if (c.combiner == MPI_COMBINER_NAMED) return named_name(t);
  const size_t n = std::min<size_t>(c.types.v.size(), c.combiner == MPI_COMBINER_STRUCT ? 4 : 1);
  std::vector<std::string> kids;
  for (size_t i = 0; i < n; ++i) kids.push_back(describe_types(c.types.v[i], depth + 1, budget));
  return label(c, kids);
}

Result build(MPI_Datatype t, int depth, Flat *out);

Result build_named(MPI_Datatype t, Flat *f) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  PMPI_Type_size(t, &size);
  PMPI_Type_get_extent(t, &lb, &extent);
  PMPI_Type_get_true_extent(t, &true_lb, &true_extent);
  f->description = named_name(t);
  // Pair types with a hole (MPI_SHORT_INT) are not one contiguous piece.
  if (true_extent != size)
    return fail(MPI_ERR_TYPE, "datatype " + f->description + " has holes, which the library does not support");
  f->size = static_cast<uint64_t>(size);
  f->extent = extent;
  if (size > 0) {
    f->segments.push_back({true_lb, static_cast<uint64_t>(size)});
    f->signature.push_back({t, 1});
  }
  return ok();
}

// A subarray: a row of the fastest dimension, repeated along each slower dimension in turn (every
// dimension one append, so rows that lie end to end merge at once), at the starts' offset.
Result build_subarray(const Contents &c, const Flat &elem, Flat *f) {
  const int nd = c.ints[0];
  const int *sizes = &c.ints[1], *subs = &c.ints[1 + nd], *starts = &c.ints[1 + 2 * nd];
  const bool c_order = c.ints[1 + 3 * nd] == MPI_ORDER_C;
  if (nd == 0) return ok();
  for (int d = 0; d < nd; ++d)
    if (subs[d] == 0) return ok();
  // Byte strides per dimension, in memory order (fastest first).
  std::vector<int64_t> stride(static_cast<size_t>(nd));
  int64_t s = elem.extent, origin = 0;
  for (int k = 0; k < nd; ++k) {
    const int d = c_order ? nd - 1 - k : k;
    stride[d] = s;
    int64_t at;
    if (mul_overflows(static_cast<int64_t>(starts[d]), s, &at) || add_overflows(origin, at, &origin) ||
        (k + 1 < nd && mul_overflows(s, static_cast<int64_t>(sizes[d]), &s)))
      return too_large("subarray");
  }
  const int fast = c_order ? nd - 1 : 0;
  Flat block;
  if (Result r = append(block, elem, 0, static_cast<uint64_t>(subs[fast]), elem.extent)) return r;
  for (int k = 1; k < nd; ++k) {
    const int d = c_order ? nd - 1 - k : k;
    Flat next;
    if (Result r = append(next, block, 0, static_cast<uint64_t>(subs[d]), stride[d])) return r;
    block = std::move(next);
  }
  return append(*f, block, origin, 1, 0);
}

Result build(MPI_Datatype t, int depth, Flat *f) {
  if (depth > kMaxDepth) return fail(MPI_ERR_TYPE, "datatype nesting deeper than " + std::to_string(kMaxDepth));
  Contents c;
  if (Result r = read_contents(t, &c)) return r;
  if (c.combiner == MPI_COMBINER_NAMED) return build_named(t, f);
  if (!supported(c.combiner))
    return fail(MPI_ERR_TYPE, std::string("datatypes built with the ") + combiner_name(c.combiner) +
                                  " constructor are not supported in RMA operations on this window");
  {
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(t, &lb, &extent);
    f->extent = extent;
  }
  // Members, flattened once each.
  std::vector<Flat> kids(c.types.v.size());
  std::vector<std::string> names;
  for (size_t i = 0; i < kids.size(); ++i) {
    if (Result r = build(c.types.v[i], depth + 1, &kids[i])) return r;
    if (i < 4) names.push_back(kids[i].description);
  }
  const std::vector<int> &ints = c.ints;
  const std::vector<MPI_Aint> &addrs = c.addrs;
  const Flat *k0 = kids.empty() ? nullptr : &kids[0];
  const int64_t cext = k0 ? k0->extent : 0;
  Result r;
  switch (c.combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:  // the data stays where it is; only the extent changes
      r = append(*f, *k0, 0, 1, 0);
      break;
    case MPI_COMBINER_CONTIGUOUS:
      r = append(*f, *k0, 0, static_cast<uint64_t>(ints[0]), cext);
      break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      // One block, then the blocks at the stride (one append each: blocks end to end merge at once).
      int64_t stride = addrs.empty() ? 0 : addrs[0];
      if (c.combiner == MPI_COMBINER_VECTOR && mul_overflows(static_cast<int64_t>(ints[2]), cext, &stride))
        return too_large("vector stride");
      Flat block;
      r = append(block, *k0, 0, static_cast<uint64_t>(ints[1]), cext);
      if (!r) r = append(*f, block, 0, static_cast<uint64_t>(ints[0]), stride);
      break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
      const bool h = c.combiner == MPI_COMBINER_HINDEXED;
      const int n = ints[0];
      for (int j = 0; !r && j < n; ++j) {
        int64_t disp = h ? addrs[j] : 0;
        if (!h && mul_overflows(static_cast<int64_t>(ints[1 + n + j]), cext, &disp)) return too_large("displacement");
        r = append(*f, *k0, disp, uint64_t(ints[1 + j]), cext);
      }
      break;
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
      const bool h = c.combiner == MPI_COMBINER_HINDEXED_BLOCK;
      const int n = ints[0];
      for (int j = 0; !r && j < n; ++j) {
        int64_t disp = h ? addrs[j] : 0;
        if (!h && mul_overflows(static_cast<int64_t>(ints[2 + j]), cext, &disp)) return too_large("displacement");
        r = append(*f, *k0, disp, uint64_t(ints[1]), cext);
      }
      break;
    }
    case MPI_COMBINER_STRUCT: {
      const int n = ints[0];
      for (int j = 0; !r && j < n; ++j) r = append(*f, kids[j], addrs[j], uint64_t(ints[1 + j]), kids[j].extent);
      break;
    }
    case MPI_COMBINER_SUBARRAY:
      r = build_subarray(c, *k0, f);
      break;
  }
  if (!r) f->description = label(c, names);
  return r;
}

void set_element(Flat *f) {
  f->element = f->signature.empty() ? MPI_DATATYPE_NULL : f->signature[0].basic;
  for (const SignatureRun &r : f->signature)
    if (r.basic != f->element) f->element = MPI_DATATYPE_NULL;
}

bool bytes_only(const Flat &f) { return f.element == MPI_BYTE || f.element == MPI_PACKED; }

// MPI_Pack of no data: MPICH and Open MPI refuse a datatype that was never committed with
// MPI_ERR_TYPE (their argument checks, on by default), and accept every committed one. The
// library's own communicator returns errors instead of calling the program's handler; it is freed
// when MPI_Finalize deletes MPI_COMM_SELF's attributes.
std::mutex g_probe_mu;
MPI_Comm g_probe_comm = MPI_COMM_NULL;

int free_probe_comm(MPI_Comm, int keyval, void *, void *) {
  std::lock_guard<std::mutex> lock(g_probe_mu);
  if (g_probe_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_probe_comm);
  PMPI_Comm_free_keyval(&keyval);
  return MPI_SUCCESS;
}

bool committed(MPI_Datatype t) {
  MPI_Comm comm;
  {
    std::lock_guard<std::mutex> lock(g_probe_mu);
    if (g_probe_comm == MPI_COMM_NULL) {
      if (PMPI_Comm_dup(MPI_COMM_SELF, &g_probe_comm) != MPI_SUCCESS) return true;  // cannot tell
      PMPI_Comm_set_errhandler(g_probe_comm, MPI_ERRORS_RETURN);
      int keyval = MPI_KEYVAL_INVALID;
      if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_probe_comm, &keyval, nullptr) == MPI_SUCCESS)
        PMPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
    }
    comm = g_probe_comm;
  }
  char in = 0, out = 0;
  int position = 0, cls = MPI_SUCCESS;
  const int rc = PMPI_Pack(&in, 0, t, &out, 1, &position, comm);
  if (rc != MPI_SUCCESS) PMPI_Error_class(rc, &cls);
  return cls != MPI_ERR_TYPE;
}

}  // namespace

bool is_named(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return false;
  int ni, na, nt, combiner;
  if (PMPI_Type_get_envelope(t, &ni, &na, &nt, &combiner) != MPI_SUCCESS) return false;
  return combiner == MPI_COMBINER_NAMED;
}

Result type_facts(MPI_Datatype t, TypeFacts *out) {
  if (t == MPI_DATATYPE_NULL) return fail(MPI_ERR_TYPE, "is MPI_DATATYPE_NULL");
  int ni, na, nt, combiner;
  if (PMPI_Type_get_envelope(t, &ni, &na, &nt, &combiner) != MPI_SUCCESS)
    return fail(MPI_ERR_TYPE, "is not a valid datatype (freed?)");
  const bool named = combiner == MPI_COMBINER_NAMED;
  if (!named) {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_facts.find(t);
    if (it != g_facts.end()) {
      *out = it->second;
      return ok();
    }
  }
  if (!named && !committed(t))
    return fail(MPI_ERR_TYPE, "is not committed (call MPI_Type_commit before using it): " + describe_type(t, 1));
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  PMPI_Type_size_x(t, &size);
  PMPI_Type_get_extent_x(t, &lb, &extent);
  PMPI_Type_get_true_extent_x(t, &true_lb, &true_extent);
  TypeFacts f;
  f.size = static_cast<uint64_t>(size);
  f.lb = lb;
  f.extent = extent;
  f.true_lb = true_lb;
  f.true_extent = true_extent;
  *out = f;
  if (!named) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_facts[t] = f;
  }
  return ok();
}

std::string describe_type(MPI_Datatype t, uint64_t count) {
  int budget = kDescriptionTypes;
  const std::string d = describe_types(t, 0, &budget);
  return count == 1 ? d : std::to_string(count) + " x " + d;
}

Result flatten(MPI_Datatype t, FlatRef *out) {
  const bool named = is_named(t);
  if (!named) {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_flats.find(t);
    if (it != g_flats.end()) {
      *out = it->second;
      return ok();
    }
  }
  auto f = std::make_shared<Flat>();
  if (Result r = build(t, 0, f.get())) return r;
  set_element(f.get());
  *out = f;
  if (!named) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_flats[t] = f;
  }
  return ok();
}

void forget_datatype(MPI_Datatype t) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_flats.erase(t);
  g_facts.erase(t);
}

bool same_signature(const Flat &a, uint64_t count_a, const Flat &b, uint64_t count_b) {
  using u128 = unsigned __int128;
  const u128 bytes_a = u128(a.size) * count_a, bytes_b = u128(b.size) * count_b;
  if (bytes_a != bytes_b) return false;
  if (bytes_a == 0 || bytes_only(a) || bytes_only(b)) return true;
  // One period on both sides, as many bytes: as many repetitions of it.
  if (same_runs(a.signature, b.signature)) return true;
  // Both walked as streams of runs, repetitions included; runs may split differently.
  const u128 reps_a = u128(a.signature_reps) * count_a, reps_b = u128(b.signature_reps) * count_b;
  size_t ia = 0, ib = 0;
  u128 ra = 0, rb = 0;
  uint64_t left_a = a.signature[0].count, left_b = b.signature[0].count;
  while (ra < reps_a && rb < reps_b) {
    if (a.signature[ia].basic != b.signature[ib].basic) return false;
    const uint64_t m = left_a < left_b ? left_a : left_b;
    left_a -= m;
    left_b -= m;
    if (left_a == 0) {
      if (++ia == a.signature.size()) ia = 0, ++ra;
      left_a = a.signature[ia].count;
    }
    if (left_b == 0) {
      if (++ib == b.signature.size()) ib = 0, ++rb;
      left_b = b.signature[ib].count;
    }
  }
  return ra == reps_a && rb == reps_b;
}

std::string describe(const Flat &f, uint64_t count) {
  return count == 1 ? f.description : std::to_string(count) + " x " + f.description;
}

}  // namespace mpix::core
