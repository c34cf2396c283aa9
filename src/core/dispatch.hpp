// Call a generic lambda with a null pointer of the C++ type of a DType.
#pragma once
#include <cstdint>

#include "b2lazy/dtype.hpp"

namespace b2lazy {

template <class F>
decltype(auto) dispatch(DType t, F&& f) {
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
  }
  return f(static_cast<double*>(nullptr));
}

}  // namespace b2lazy
