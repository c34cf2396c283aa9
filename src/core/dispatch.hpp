// Call a generic lambda with a null pointer of the C++ type of a DType (complex types as
// std::complex<float> / std::complex<double>, float16 as b2lazy::half).
#pragma once
#include <complex>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "b2lazy/dtype.hpp"
#include "b2lazy/error.hpp"
#include "core/half.hpp"

namespace b2lazy {

template <class F> decltype(auto) dispatch(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(static_cast<uint8_t*>(nullptr));
    case DType::I8: return f(static_cast<int8_t*>(nullptr));
    case DType::I16: return f(static_cast<int16_t*>(nullptr));
    case DType::I32: return f(static_cast<int32_t*>(nullptr));
    case DType::I64: return f(static_cast<int64_t*>(nullptr));
    case DType::U8: return f(static_cast<uint8_t*>(nullptr));
    case DType::U16: return f(static_cast<uint16_t*>(nullptr));
    case DType::U32: return f(static_cast<uint32_t*>(nullptr));
    case DType::U64: return f(static_cast<uint64_t*>(nullptr));
    case DType::F32: return f(static_cast<float*>(nullptr));
    case DType::F64: return f(static_cast<double*>(nullptr));
    case DType::C64: return f(static_cast<std::complex<float>*>(nullptr));
    case DType::C128: return f(static_cast<std::complex<double>*>(nullptr));
    case DType::F16: return f(static_cast<half*>(nullptr));
  }
  return f(static_cast<double*>(nullptr));
}

template <class T> struct is_complex_type : std::false_type {};
template <class T> struct is_complex_type<std::complex<T>> : std::true_type {};
template <class T> constexpr bool is_complex_v = is_complex_type<T>::value;

// A value as a double: a complex one's real part (to_vector, describe).
template <class T> double real_double(T v) {
  if constexpr (is_complex_v<T>) return static_cast<double>(v.real());
  else return static_cast<double>(v);
}

// dispatch() over the types arithmetic happens in: all but float16, which the graph
// builders widen to float32 (products, sorts, quantiles) and reductions and scans
// accumulate in wider types; reaching here with it is a bug in a builder.
template <class F> decltype(auto) dispatch_computing(DType t, F&& f) {
  if (t == DType::F16) throw std::logic_error("float16 reached a computing node (a builder must widen it)");
  return dispatch(t, [&]<class T>(T* tag) {
    if constexpr (std::is_same_v<T, half>) return f(static_cast<float*>(nullptr));
    else return f(tag);
  });
}

// dispatch_computing() over the real (non-complex) types: code that orders or compares
// values (sorts, searches, quantiles) has no complex meaning; `what` names it in the
// TypeError.
template <class F> decltype(auto) dispatch_real(DType t, const char* what, F&& f) {
  if (is_complex(t))
    throw TypeError(std::string(what) + " is not supported for " + dtype_name(t) + " (real dtypes only)");
  return dispatch_computing(t, [&]<class T>(T* tag) {
    if constexpr (is_complex_v<T>) return f(static_cast<double*>(nullptr));
    else return f(tag);
  });
}

}  // namespace b2lazy
