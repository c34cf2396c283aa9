#include "storage/blosc2_util.hpp"

#include <mutex>

#include "b2lazy/error.hpp"

namespace b2lazy {

namespace {
// C-Blosc2's jobs run on the calling thread. Our contexts use one thread each (the
// evaluation's workers are the parallelism), but C-Blosc2 re-compresses a frame's chunk
// offsets with a context of 4 threads of its own, created and joined for each chunk
// written once the frame holds over 2048 chunks: a 4096-chunk spill started 16 thousand
// threads. (Jobs of one call share no barrier: run in turn, the first takes every block.)
void run_jobs_in_turn(void*, void (*dojob)(void*), int numjobs, size_t jobdata_elsize, void* jobdata) {
  for (int i = 0; i < numjobs; ++i) dojob(static_cast<char*>(jobdata) + static_cast<size_t>(i) * jobdata_elsize);
}
}  // namespace

void ensure_blosc2() {
  static std::once_flag once;
  std::call_once(once, [] {
    blosc2_set_threads_callback(run_jobs_in_turn, nullptr);  // (before any other Blosc2 call)
    blosc2_init();
  });
}

namespace {
// At load, before any code of ours calls C-Blosc2: a context given threads before the
// callback is set would be run through it without the callback's per-thread contexts.
[[maybe_unused]] const bool blosc2_ready_at_load = (ensure_blosc2(), true);
}  // namespace

void check_blosc2(int rc, const std::string& what) {
  if (rc < 0) throw IOError(what + ": " + print_error(rc));
}

std::string numpy_dtype_str(DType t) {
  switch (t) {
    case DType::Bool: return "|b1";
    case DType::I8: return "|i1";
    case DType::I16: return "<i2";
    case DType::I32: return "<i4";
    case DType::I64: return "<i8";
    case DType::U8: return "|u1";
    case DType::U16: return "<u2";
    case DType::U32: return "<u4";
    case DType::U64: return "<u8";
    case DType::F32: return "<f4";
    case DType::F64: return "<f8";
    case DType::C64: return "<c8";
    case DType::C128: return "<c16";
    case DType::F16: return "<f2";
  }
  return "";
}

DType dtype_from_b2nd(const char* dtype_str, int8_t dtype_format, int32_t typesize, const std::string& where) {
  if (dtype_format != 0 || !dtype_str)
    throw TypeError(where + ": unsupported b2nd dtype format " + std::to_string(dtype_format));
  std::string s(dtype_str);
  if (s.size() >= 2 && s[0] == '>' && s.substr(1) != "i1" && s.substr(1) != "u1" && s.substr(1) != "b1")
    throw TypeError(where + ": big-endian dtype '" + s + "' is not supported");
  if (!s.empty() && (s[0] == '<' || s[0] == '|' || s[0] == '=' || s[0] == '>')) s = s.substr(1);
  DType t;
  try {
    t = dtype_from_name(s);
  } catch (const TypeError&) {
    throw TypeError(where + ": unsupported dtype '" + std::string(dtype_str) + "'");
  }
  if (static_cast<int32_t>(itemsize(t)) != typesize)
    throw IOError(where + ": dtype '" + std::string(dtype_str) + "' does not match typesize " +
                  std::to_string(typesize));
  return t;
}

blosc2_cparams make_cparams(const CParams& p, DType t, int nthreads) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  int code = blosc2_compname_to_compcode(p.codec.c_str());
  if (code < 0) throw ValueError("unknown codec '" + p.codec + "' (blosclz, lz4, lz4hc, zlib, zstd)");
  if (p.clevel < 0 || p.clevel > 9) throw ValueError("clevel must be in 0..9, got " + std::to_string(p.clevel));
  cp.compcode = static_cast<uint8_t>(code);
  cp.clevel = static_cast<uint8_t>(p.clevel);
  cp.typesize = static_cast<int32_t>(itemsize(t));
  cp.nthreads = static_cast<int16_t>(nthreads);
  uint8_t filter;
  if (p.filter == "shuffle") filter = BLOSC_SHUFFLE;
  else if (p.filter == "bitshuffle") filter = BLOSC_BITSHUFFLE;
  else if (p.filter == "nofilter" || p.filter == "none") filter = BLOSC_NOFILTER;
  else throw ValueError("unknown filter '" + p.filter + "' (nofilter, shuffle, bitshuffle)");
  for (auto& f : cp.filters) f = BLOSC_NOFILTER;
  cp.filters[BLOSC2_MAX_FILTERS - 1] = filter;
  return cp;
}

}  // namespace b2lazy
