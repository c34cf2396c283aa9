// Blosc2 library setup, error checks and parameter translation.
#pragma once
#include <b2nd.h>
#include <blosc2.h>

#include <string>

#include "b2lazy/context.hpp"
#include "b2lazy/dtype.hpp"

namespace b2lazy {

// Calls blosc2_init() once per process (C-Blosc2 keeps global codec registries).
void ensure_blosc2();
// Throws IOError "<what>: <Blosc2 error string>" when rc < 0.
void check_blosc2(int rc, const std::string& what);

// NumPy dtype string stored in b2nd metadata ("<f8", "|b1", ...) and back.
std::string numpy_dtype_str(DType t);
DType dtype_from_b2nd(const char* dtype_str, int8_t dtype_format, int32_t typesize, const std::string& where);

blosc2_cparams make_cparams(const CParams& p, DType t, int nthreads);

}  // namespace b2lazy
