#include "b2lazy/dtype.hpp"

#include <unordered_map>

#include "b2lazy/error.hpp"

namespace b2lazy {

namespace {
struct Info {
  size_t size;
  DKind kind;
  const char* name;
};
constexpr Info kInfo[kNumDTypes] = {
    {1, DKind::Bool, "bool"},           {1, DKind::Signed, "int8"},     {2, DKind::Signed, "int16"},
    {4, DKind::Signed, "int32"},        {8, DKind::Signed, "int64"},    {1, DKind::Unsigned, "uint8"},
    {2, DKind::Unsigned, "uint16"},     {4, DKind::Unsigned, "uint32"}, {8, DKind::Unsigned, "uint64"},
    {4, DKind::Float, "float32"},       {8, DKind::Float, "float64"},   {8, DKind::Complex, "complex64"},
    {16, DKind::Complex, "complex128"}, {2, DKind::Float, "float16"},
};

DType signed_of_size(size_t n) {
  switch (n) {
    case 1: return DType::I8;
    case 2: return DType::I16;
    case 4: return DType::I32;
    default: return DType::I64;
  }
}
}  // namespace

size_t itemsize(DType t) { return kInfo[static_cast<int>(t)].size; }
DKind kind(DType t) { return kInfo[static_cast<int>(t)].kind; }
const char* dtype_name(DType t) { return kInfo[static_cast<int>(t)].name; }

DType dtype_from_name(const std::string& name) {
  static const std::unordered_map<std::string, DType> names = {
      {"bool", DType::Bool},       {"?", DType::Bool},        {"b1", DType::Bool},    {"|b1", DType::Bool},
      {"int8", DType::I8},         {"i1", DType::I8},         {"|i1", DType::I8},     {"int16", DType::I16},
      {"i2", DType::I16},          {"<i2", DType::I16},       {"int32", DType::I32},  {"i4", DType::I32},
      {"<i4", DType::I32},         {"int64", DType::I64},     {"i8", DType::I64},     {"<i8", DType::I64},
      {"int", DType::I64},         {"uint8", DType::U8},      {"u1", DType::U8},      {"|u1", DType::U8},
      {"uint16", DType::U16},      {"u2", DType::U16},        {"<u2", DType::U16},    {"uint32", DType::U32},
      {"u4", DType::U32},          {"<u4", DType::U32},       {"uint64", DType::U64}, {"u8", DType::U64},
      {"<u8", DType::U64},         {"float32", DType::F32},   {"f4", DType::F32},     {"<f4", DType::F32},
      {"float64", DType::F64},     {"f8", DType::F64},        {"<f8", DType::F64},    {"float", DType::F64},
      {"double", DType::F64},      {"complex64", DType::C64}, {"c8", DType::C64},     {"<c8", DType::C64},
      {"complex128", DType::C128}, {"c16", DType::C128},      {"<c16", DType::C128},  {"complex", DType::C128},
      {"float16", DType::F16},     {"f2", DType::F16},        {"<f2", DType::F16},    {"half", DType::F16},
      {"e", DType::F16},
  };
  auto it = names.find(name);
  if (it == names.end())
    throw TypeError(
        "unsupported dtype '" + name +
        "' (supported: bool, int8..int64, uint8..uint64, float32, float16, float32, float64, complex64, complex128)");
  return it->second;
}

DType real_of(DType t) {
  if (t == DType::C64) return DType::F32;
  if (t == DType::C128) return DType::F64;
  return t;
}

DType complex_of(DType t) {
  if (is_complex(t)) return t;
  const DType f = float_for(t);
  return f == DType::F32 || f == DType::F16 ? DType::C64 : DType::C128;
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  // Complex with anything: the complex type whose parts hold both (complex64 with int32
  // or float64 is complex128, as in NumPy).
  if (is_complex(a) || is_complex(b)) return complex_of(promote(real_of(a), real_of(b)));
  DKind ka = kind(a), kb = kind(b);
  size_t sa = itemsize(a), sb = itemsize(b);
  if (ka == DKind::Bool) return b;
  if (kb == DKind::Bool) return a;
  if (ka == kb) return sa >= sb ? a : b;
  if (ka == DKind::Float || kb == DKind::Float) {
    DType f = ka == DKind::Float ? a : b;
    DType i = ka == DKind::Float ? b : a;
    // float16 holds int8/uint8 exactly, float32 int8/16 and uint8/16; wider integers need float64.
    if (f == DType::F16 && itemsize(i) == 1) return DType::F16;
    if ((f == DType::F32 || f == DType::F16) && itemsize(i) <= 2) return DType::F32;
    return DType::F64;
  }
  // signed with unsigned
  DType s = ka == DKind::Signed ? a : b;
  DType u = ka == DKind::Signed ? b : a;
  if (itemsize(s) > itemsize(u)) return s;
  if (itemsize(u) == 8) return DType::F64;  // NumPy: uint64 with a signed int -> float64
  return signed_of_size(itemsize(u) * 2);
}

DType float_for(DType t) {
  if (is_inexact(t)) return t;
  return itemsize(t) == 1 ? DType::F16 : itemsize(t) == 2 ? DType::F32 : DType::F64;
}

DType sum_dtype(DType t) {
  switch (kind(t)) {
    case DKind::Bool:
    case DKind::Signed: return DType::I64;
    case DKind::Unsigned: return DType::U64;
    default: return t;
  }
}

DType promote_with_scalar(DType array, ScalarKind scalar) {
  switch (scalar) {
    case ScalarKind::Bool: return array;
    case ScalarKind::Int: return kind(array) == DKind::Bool ? DType::I64 : array;
    case ScalarKind::Float: return is_inexact(array) ? array : DType::F64;
    case ScalarKind::Complex: return is_complex(array) ? array : array == DType::F32 ? DType::C64 : DType::C128;
  }
  return array;
}

}  // namespace b2lazy
