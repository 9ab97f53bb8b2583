// Element types, operators and derived datatypes of the random test. A type's layout (where each
// byte of its packed stream lies) is asked of MPI itself with MPI_Pack, so the model places bytes
// exactly where MPI's type map says, struct padding and resized bounds included.
#include <algorithm>
#include <cstdio>

#include "plan.h"

namespace rt {

namespace {
struct ElemInfo {
  MPI_Datatype t;
  const char *name;
  int size;
  bool is_float, is_signed;
};
const ElemInfo &info(int e) {
  static const ElemInfo table[kElems] = {
      {MPI_BYTE, "MPI_BYTE", 1, false, false},           {MPI_CHAR, "MPI_CHAR", 1, false, true},
      {MPI_SHORT, "MPI_SHORT", 2, false, true},          {MPI_INT, "MPI_INT", 4, false, true},
      {MPI_INT32_T, "MPI_INT32_T", 4, false, true},      {MPI_LONG, "MPI_LONG", static_cast<int>(sizeof(long)), false, true},
      {MPI_LONG_LONG, "MPI_LONG_LONG", 8, false, true},  {MPI_INT64_T, "MPI_INT64_T", 8, false, true},
      {MPI_UNSIGNED, "MPI_UNSIGNED", 4, false, false},   {MPI_FLOAT, "MPI_FLOAT", 4, true, true},
      {MPI_DOUBLE, "MPI_DOUBLE", 8, true, true},         {MPI_INT8_T, "MPI_INT8_T", 1, false, true},
      {MPI_UINT8_T, "MPI_UINT8_T", 1, false, false},     {MPI_UINT32_T, "MPI_UINT32_T", 4, false, false},
      {MPI_UINT64_T, "MPI_UINT64_T", 8, false, false},
  };
  return table[e];
}
}  // namespace

MPI_Datatype elem_type(int e) { return info(e).t; }
const char *elem_name(int e) { return info(e).name; }
int elem_size(int e) { return info(e).size; }
bool elem_float(int e) { return info(e).is_float; }
bool elem_signed(int e) { return info(e).is_signed; }
bool acc_elem_ok(int e) {
  return e == eInt || e == eInt32 || e == eLong || e == eLongLong || e == eInt64 || e == eFloat || e == eDouble;
}

MPI_Op op_handle(int o) {
  switch (o) {
    case oSum: return MPI_SUM;
    case oMax: return MPI_MAX;
    case oMin: return MPI_MIN;
    case oReplace: return MPI_REPLACE;
    case oProd: return MPI_PROD;
    case oBand: return MPI_BAND;
    case oBor: return MPI_BOR;
    case oBxor: return MPI_BXOR;
    default: return MPI_OP_NULL;
  }
}
const char *op_name(int o) {
  static const char *names[kOps] = {"MPI_SUM", "MPI_MAX", "MPI_MIN", "MPI_REPLACE", "MPI_PROD",
                                    "MPI_BAND", "MPI_BOR", "MPI_BXOR", "MPI_OP_NULL"};
  return o >= 0 && o < kOps ? names[o] : "?";
}

TypeTable::TypeTable() {
  for (int e = 0; e < kElems; ++e) {
    TypeDesc d;
    d.kind = TypeDesc::named;
    d.elem = e;
    t_.push_back(d);
  }
}

int TypeTable::add(const TypeDesc &d) {
  t_.push_back(d);
  return static_cast<int>(t_.size()) - 1;
}

namespace {
std::string list_of(const std::vector<int> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}
std::string list_of(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}
}  // namespace

std::string TypeTable::describe(int id) const {
  const TypeDesc &d = t_[id];
  const std::string c = d.child >= 0 ? describe(d.child) : "";
  switch (d.kind) {
    case TypeDesc::named: return elem_name(d.elem);
    case TypeDesc::contiguous: return "contiguous(" + std::to_string(d.count) + ", " + c + ")";
    case TypeDesc::vector:
      return "vector(" + std::to_string(d.count) + "," + std::to_string(d.blocklen) + "," + std::to_string(d.stride) +
             ", " + c + ")";
    case TypeDesc::hvector:
      return "hvector(" + std::to_string(d.count) + "," + std::to_string(d.blocklen) + "," +
             std::to_string(d.stride) + "B, " + c + ")";
    case TypeDesc::indexed: return "indexed(" + list_of(d.blens) + "," + list_of(d.disps) + ", " + c + ")";
    case TypeDesc::indexed_block:
      return "indexed_block(" + std::to_string(d.blocklen) + "," + list_of(d.disps) + ", " + c + ")";
    case TypeDesc::hindexed: return "hindexed(" + list_of(d.blens) + "," + list_of(d.disps) + "B, " + c + ")";
    case TypeDesc::structure: return "struct(" + list_of(d.blens) + "," + list_of(d.disps) + "B, " + c + ")";
    case TypeDesc::resized:
      return "resized(" + c + ", lb " + std::to_string(d.lb) + ", extent " + std::to_string(d.extent) + ")";
    case TypeDesc::subarray:
      return "subarray([" + std::to_string(d.sizes[0]) + "," + std::to_string(d.sizes[1]) + "],[" +
             std::to_string(d.subsizes[0]) + "," + std::to_string(d.subsizes[1]) + "],[" +
             std::to_string(d.starts[0]) + "," + std::to_string(d.starts[1]) + "], " +
             (d.order == MPI_ORDER_C ? "C" : "Fortran") + ", " + c + ")";
  }
  return "?";
}

MPI_Datatype TypeTable::build(int id, bool commit) const {
  const TypeDesc &d = t_[id];
  if (d.kind == TypeDesc::named) return elem_type(d.elem);
  MPI_Datatype inner = build(d.child, true), t = MPI_DATATYPE_NULL;
  switch (d.kind) {
    case TypeDesc::named: break;
    case TypeDesc::contiguous: MPI_Type_contiguous(d.count, inner, &t); break;
    case TypeDesc::vector: MPI_Type_vector(d.count, d.blocklen, static_cast<int>(d.stride), inner, &t); break;
    case TypeDesc::hvector: MPI_Type_create_hvector(d.count, d.blocklen, d.stride, inner, &t); break;
    case TypeDesc::indexed: {
      std::vector<int> disps(d.disps.begin(), d.disps.end());
      MPI_Type_indexed(static_cast<int>(d.blens.size()), d.blens.data(), disps.data(), inner, &t);
      break;
    }
    case TypeDesc::indexed_block: {
      std::vector<int> disps(d.disps.begin(), d.disps.end());
      MPI_Type_create_indexed_block(static_cast<int>(disps.size()), d.blocklen, disps.data(), inner, &t);
      break;
    }
    case TypeDesc::hindexed: {
      std::vector<MPI_Aint> disps(d.disps.begin(), d.disps.end());
      MPI_Type_create_hindexed(static_cast<int>(d.blens.size()), d.blens.data(), disps.data(), inner, &t);
      break;
    }
    case TypeDesc::structure: {
      std::vector<MPI_Aint> disps(d.disps.begin(), d.disps.end());
      std::vector<MPI_Datatype> types(d.blens.size(), inner);
      MPI_Type_create_struct(static_cast<int>(d.blens.size()), d.blens.data(), disps.data(), types.data(), &t);
      break;
    }
    case TypeDesc::resized: MPI_Type_create_resized(inner, d.lb, d.extent, &t); break;
    case TypeDesc::subarray:
      MPI_Type_create_subarray(2, d.sizes, d.subsizes, d.starts, d.order, inner, &t);
      break;
  }
  if (t_[d.child].kind != TypeDesc::named) MPI_Type_free(&inner);
  if (commit) MPI_Type_commit(&t);
  return t;
}

LayoutP TypeTable::layout(int id, int count) {
  auto key = std::make_pair(id, count);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  auto l = std::make_shared<Layout>();
  const TypeDesc &d = t_[id];
  if (count <= 0) {
    // nothing
  } else if (d.kind == TypeDesc::named) {
    const int64_t n = static_cast<int64_t>(elem_size(d.elem)) * count;
    l->off.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) l->off[static_cast<size_t>(i)] = i;
    l->lo = 0;
    l->hi = n;
  } else {
    MPI_Datatype t = build(id, true);
    MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
    MPI_Type_get_extent(t, &lb, &extent);
    MPI_Type_get_true_extent(t, &tlb, &textent);
    int size = 0;
    MPI_Type_size(t, &size);
    if (extent <= 0 || textent < 0 || size <= 0) {
      MPI_Type_free(&t);
      cache_[key] = nullptr;
      return nullptr;
    }
    const int64_t span = (static_cast<int64_t>(count) - 1) * extent + textent;
    const int64_t packed = static_cast<int64_t>(size) * count;
    std::vector<uint8_t> in(static_cast<size_t>(span)), out(static_cast<size_t>(packed));
    std::vector<int64_t> idx(static_cast<size_t>(packed), 0);
    for (int k = 0; k < 4; ++k) {
      for (int64_t i = 0; i < span; ++i) in[static_cast<size_t>(i)] = static_cast<uint8_t>(i >> (8 * k));
      int pos = 0;
      MPI_Pack(in.data() - tlb, count, t, out.data(), static_cast<int>(packed), &pos, MPI_COMM_SELF);
      for (int64_t i = 0; i < packed; ++i)
        idx[static_cast<size_t>(i)] |= static_cast<int64_t>(out[static_cast<size_t>(i)]) << (8 * k);
    }
    MPI_Type_free(&t);
    l->off.resize(static_cast<size_t>(packed));
    for (int64_t i = 0; i < packed; ++i) l->off[static_cast<size_t>(i)] = idx[static_cast<size_t>(i)] + tlb;
    std::vector<int64_t> sorted = l->off;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); ++i)
      if (sorted[i] == sorted[i - 1]) {  // a type that touches a byte twice: not drawn
        cache_[key] = nullptr;
        return nullptr;
      }
    l->lo = sorted.front();
    l->hi = sorted.back() + 1;
  }
  LayoutP p = l;
  cache_[key] = p;
  return p;
}

}  // namespace rt
