#include "runtime/thread_state.hpp"

#include <blosc2.h>

#include "b2lazy/error.hpp"

namespace b2lazy {

ThreadState::~ThreadState() {
  for (auto& [k, c] : dctx_) blosc2_free_ctx(c);
  for (auto& [k, c] : cctx_) blosc2_free_ctx(c);
}

blosc2_context_s* ThreadState::dctx_for(const void* key, void* schunk, int32_t typesize) {
  auto it = dctx_.find(key);
  if (it != dctx_.end()) return it->second;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;  // parallelism is over chunks, not inside one
  dp.schunk = schunk;
  dp.typesize = typesize;
  blosc2_context* c = blosc2_create_dctx(dp);
  if (!c) throw IOError("cannot create a Blosc2 decompression context");
  dctx_[key] = c;
  return c;
}

blosc2_context_s* ThreadState::cctx_for(const void* key, const void* cparams) {
  auto it = cctx_.find(key);
  if (it != cctx_.end()) return it->second;
  blosc2_cparams cp = *static_cast<const blosc2_cparams*>(cparams);
  cp.nthreads = 1;
  blosc2_context* c = blosc2_create_cctx(cp);
  if (!c) throw IOError("cannot create a Blosc2 compression context");
  cctx_[key] = c;
  return c;
}

}  // namespace b2lazy
