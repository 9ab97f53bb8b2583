#include "datatype_flatten.h"

#include <map>
#include <mutex>

namespace mpix::core {
namespace {

// Beyond this many segments in one instance a type is refused (its pair lists would be huge).
constexpr size_t kMaxSegments = size_t(1) << 22;
constexpr int kMaxDepth = 64;
constexpr size_t kMaxDescription = 160;

std::mutex g_mu;
std::map<MPI_Datatype, FlatRef> g_flats;  // derived types only

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

// Appends `times` copies of `child`, the k-th at byte `shift + k * step`, merging adjacent runs.
Result append(Flat &f, const Flat &child, int64_t shift, uint64_t times, int64_t step) {
  if (times == 0 || child.size == 0) return ok();
  f.size += child.size * times;
  // Signature: a one-run child repeats as one longer run.
  if (child.signature.size() == 1) {
    const SignatureRun r{child.signature[0].basic, child.signature[0].count * times};
    if (!f.signature.empty() && f.signature.back().basic == r.basic) f.signature.back().count += r.count;
    else f.signature.push_back(r);
  } else {
    for (uint64_t k = 0; k < times; ++k)
      for (const SignatureRun &r : child.signature) {
        if (!f.signature.empty() && f.signature.back().basic == r.basic) f.signature.back().count += r.count;
        else f.signature.push_back(r);
      }
  }
  auto push = [&f](int64_t offset, uint64_t bytes) {
    if (!f.segments.empty()) {
      Segment &last = f.segments.back();
      if (last.offset + static_cast<int64_t>(last.bytes) == offset) {
        last.bytes += bytes;
        return;
      }
    }
    f.segments.push_back({offset, bytes});
  };
  // A contiguous child repeated at its own length is one run.
  if (child.segments.size() == 1 && static_cast<int64_t>(child.segments[0].bytes) == step) {
    int64_t at, len;
    if (add_overflows(shift, child.segments[0].offset, &at) ||
        mul_overflows(step, static_cast<int64_t>(times), &len))
      return too_large("copies");
    push(at, static_cast<uint64_t>(len));
    return ok();
  }
  for (uint64_t k = 0; k < times; ++k) {
    int64_t base;
    if (mul_overflows(static_cast<int64_t>(k), step, &base) || add_overflows(base, shift, &base))
      return too_large("copies");
    for (const Segment &s : child.segments) {
      int64_t at;
      if (add_overflows(base, s.offset, &at)) return too_large("copies");
      push(at, s.bytes);
    }
    if (f.segments.size() > kMaxSegments)
      return fail(MPI_ERR_TYPE, "datatype has more than " + std::to_string(kMaxSegments) +
                                    " contiguous pieces per instance, which the library does not support");
  }
  return ok();
}

Result build(MPI_Datatype t, int depth, Flat *out);

// Frees the derived handles MPI_Type_get_contents returned (named ones must not be freed).
struct ContentTypes {
  std::vector<MPI_Datatype> v;
  ~ContentTypes() {
    for (MPI_Datatype &t : v)
      if (!is_named(t)) PMPI_Type_free(&t);
  }
};

Result build_named(MPI_Datatype t, Flat *f) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  PMPI_Type_size(t, &size);
  PMPI_Type_get_extent(t, &lb, &extent);
  PMPI_Type_get_true_extent(t, &true_lb, &true_extent);
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  PMPI_Type_get_name(t, name, &len);
  f->description = len ? name : "(unnamed predefined type)";
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

Result build(MPI_Datatype t, int depth, Flat *f) {
  if (depth > kMaxDepth) return fail(MPI_ERR_TYPE, "datatype nesting deeper than " + std::to_string(kMaxDepth));
  int ni = 0, na = 0, nt = 0, combiner = 0;
  if (t == MPI_DATATYPE_NULL || PMPI_Type_get_envelope(t, &ni, &na, &nt, &combiner) != MPI_SUCCESS)
    return fail(MPI_ERR_TYPE, "not a valid datatype (MPI_DATATYPE_NULL or freed)");
  if (combiner == MPI_COMBINER_NAMED) return build_named(t, f);
  switch (combiner) {
    case MPI_COMBINER_DUP: case MPI_COMBINER_CONTIGUOUS: case MPI_COMBINER_VECTOR: case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED: case MPI_COMBINER_HINDEXED: case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: case MPI_COMBINER_STRUCT: case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_RESIZED:
      break;
    default:
      return fail(MPI_ERR_TYPE, std::string("datatypes built with the ") + combiner_name(combiner) +
                                    " constructor are not supported in RMA operations on this window");
  }
  std::vector<int> ints(static_cast<size_t>(ni));
  std::vector<MPI_Aint> addrs(static_cast<size_t>(na));
  ContentTypes types;
  types.v.resize(static_cast<size_t>(nt));
  if (PMPI_Type_get_contents(t, ni, na, nt, ints.data(), addrs.data(), types.v.data()) != MPI_SUCCESS)
    return fail(MPI_ERR_TYPE, "MPI_Type_get_contents failed on a datatype");
  {
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(t, &lb, &extent);
    f->extent = extent;
  }
  // Children, flattened once each.
  std::vector<Flat> kids(types.v.size());
  for (size_t i = 0; i < kids.size(); ++i)
    if (Result r = build(types.v[i], depth + 1, &kids[i])) return r;
  const Flat *c = kids.empty() ? nullptr : &kids[0];
  const int64_t cext = c ? c->extent : 0;
  const std::string of = c ? " of " + c->description : "";
  Result r;
  switch (combiner) {
    case MPI_COMBINER_DUP:
      r = append(*f, *c, 0, 1, 0);
      f->description = clip("dup" + of);
      break;
    case MPI_COMBINER_CONTIGUOUS:
      r = append(*f, *c, 0, static_cast<uint64_t>(ints[0]), cext);
      f->description = clip("contiguous(" + std::to_string(ints[0]) + ")" + of);
      break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      const bool h = combiner == MPI_COMBINER_HVECTOR;
      const int64_t stride = h ? addrs[0] : static_cast<int64_t>(ints[2]) * cext;
      for (int j = 0; !r && j < ints[0]; ++j) r = append(*f, *c, int64_t(j) * stride, uint64_t(ints[1]), cext);
      f->description = clip(std::string(h ? "hvector" : "vector") + "(count=" + std::to_string(ints[0]) +
                            ", blocklength=" + std::to_string(ints[1]) + ", stride=" +
                            std::to_string(h ? addrs[0] : ints[2]) + (h ? " bytes" : "") + ")" + of);
      break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
      const bool h = combiner == MPI_COMBINER_HINDEXED;
      const int n = ints[0];
      for (int j = 0; !r && j < n; ++j) {
        const int64_t disp = h ? addrs[j] : static_cast<int64_t>(ints[1 + n + j]) * cext;
        r = append(*f, *c, disp, uint64_t(ints[1 + j]), cext);
      }
      f->description = clip(std::string(h ? "hindexed" : "indexed") + "(count=" + std::to_string(n) +
                            ", blocklengths=" + list(ints.data() + 1, n) + ", displacements=" +
                            (h ? list(addrs.data(), n) : list(ints.data() + 1 + n, n)) + ")" + of);
      break;
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
      const bool h = combiner == MPI_COMBINER_HINDEXED_BLOCK;
      const int n = ints[0];
      for (int j = 0; !r && j < n; ++j) {
        const int64_t disp = h ? addrs[j] : static_cast<int64_t>(ints[2 + j]) * cext;
        r = append(*f, *c, disp, uint64_t(ints[1]), cext);
      }
      f->description = clip(std::string(h ? "hindexed_block" : "indexed_block") + "(count=" + std::to_string(n) +
                            ", blocklength=" + std::to_string(ints[1]) + ", displacements=" +
                            (h ? list(addrs.data(), n) : list(ints.data() + 2, n)) + ")" + of);
      break;
    }
    case MPI_COMBINER_STRUCT: {
      const int n = ints[0];
      std::string leaves = "[";
      for (int j = 0; !r && j < n; ++j) {
        r = append(*f, kids[j], addrs[j], uint64_t(ints[1 + j]), kids[j].extent);
        if (j < 4) leaves += (j ? ", " : "") + kids[j].description;
      }
      if (n > 4) leaves += ", ...";
      f->description = clip("struct(count=" + std::to_string(n) + ", blocklengths=" + list(ints.data() + 1, n) +
                            ", displacements=" + list(addrs.data(), n) + ") of " + leaves + "]");
      break;
    }
    case MPI_COMBINER_SUBARRAY: {
      const int nd = ints[0];
      const int *sizes = &ints[1], *subs = &ints[1 + nd], *starts = &ints[1 + 2 * nd];
      const bool c_order = ints[1 + 3 * nd] == MPI_ORDER_C;
      // Element strides per dimension; `fast` is the dimension that varies fastest in memory.
      std::vector<int64_t> stride(static_cast<size_t>(nd));
      int64_t s = 1;
      for (int k = 0; k < nd; ++k) {
        const int d = c_order ? nd - 1 - k : k;
        stride[d] = s;
        s *= sizes[d];
      }
      const int fast = c_order ? nd - 1 : 0;
      bool empty = nd == 0;
      for (int d = 0; d < nd; ++d) empty = empty || subs[d] == 0;
      std::vector<int> idx(static_cast<size_t>(nd), 0);
      while (!empty && !r) {
        int64_t elem = 0;
        for (int d = 0; d < nd; ++d) elem += (starts[d] + (d == fast ? 0 : idx[d])) * stride[d];
        r = append(*f, *c, elem * cext, uint64_t(subs[fast]), cext);
        // Next row: odometer over the other dimensions, in memory order (fastest first).
        int k = 0;
        for (; k < nd; ++k) {
          const int d = c_order ? nd - 1 - k : k;
          if (d == fast) continue;
          if (++idx[d] < subs[d]) break;
          idx[d] = 0;
        }
        if (k == nd) break;
      }
      f->description = clip("subarray(sizes=" + list(sizes, nd) + ", subsizes=" + list(subs, nd) +
                            ", starts=" + list(starts, nd) + ", order=" + (c_order ? "C" : "Fortran") + ")" + of);
      break;
    }
    case MPI_COMBINER_RESIZED:
      r = append(*f, *c, 0, 1, 0);
      f->description =
          clip("resized(lb=" + std::to_string(addrs[0]) + ", extent=" + std::to_string(addrs[1]) + ")" + of);
      break;
  }
  return r;
}

void set_element(Flat *f) {
  f->element = f->signature.empty() ? MPI_DATATYPE_NULL : f->signature[0].basic;
  for (const SignatureRun &r : f->signature)
    if (r.basic != f->element) f->element = MPI_DATATYPE_NULL;
}

bool bytes_only(const Flat &f) { return f.element == MPI_BYTE || f.element == MPI_PACKED; }

}  // namespace

bool is_named(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return false;
  int ni, na, nt, combiner;
  if (PMPI_Type_get_envelope(t, &ni, &na, &nt, &combiner) != MPI_SUCCESS) return false;
  return combiner == MPI_COMBINER_NAMED;
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
}

bool same_signature(const Flat &a, uint64_t count_a, const Flat &b, uint64_t count_b) {
  const uint64_t bytes_a = a.size * count_a, bytes_b = b.size * count_b;
  if (bytes_a != bytes_b) return false;
  if (bytes_a == 0 || bytes_only(a) || bytes_only(b)) return true;
  // Both walked as streams of runs, repetitions included; runs may split differently.
  size_t ia = 0, ib = 0;
  uint64_t ra = 0, rb = 0, left_a = a.signature[0].count, left_b = b.signature[0].count;
  while (ra < count_a && rb < count_b) {
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
  return ra == count_a && rb == count_b;
}

std::string describe(const Flat &f, uint64_t count) {
  return count == 1 ? f.description : std::to_string(count) + " x " + f.description;
}

}  // namespace mpix::core
