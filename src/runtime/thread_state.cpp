#include "runtime/thread_state.hpp"

#include <blosc2.h>

#include "b2lazy/error.hpp"

namespace b2lazy {

ThreadState::~ThreadState() {
  for (auto& [k, c] : dctx_) blosc2_free_ctx(c.ctx);
  for (auto& [k, c] : cctx_) blosc2_free_ctx(c.ctx);
}

namespace {
// The context cached under `key` for object `uid`, else one made by `make` (one cached
// there for another object, freed since at the same address, is freed first).
template <class Map, class Make> blosc2_context_s* cached_ctx(Map& m, const void* key, uint64_t uid, Make make) {
  auto it = m.find(key);
  if (it != m.end()) {
    if (it->second.uid == uid) return it->second.ctx;
    blosc2_free_ctx(it->second.ctx);
    m.erase(it);
  }
  blosc2_context_s* c = make();
  m[key] = {uid, c};
  return c;
}
}  // namespace

blosc2_context_s* ThreadState::dctx_for(const void* key, void* schunk, int32_t typesize, uint64_t uid) {
  return cached_ctx(dctx_, key, uid, [&] {
    blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = 1;  // parallelism is over chunks, not inside one
    dp.schunk = schunk;
    dp.typesize = typesize;
    blosc2_context* c = blosc2_create_dctx(dp);
    if (!c) throw IOError("cannot create a Blosc2 decompression context");
    return c;
  });
}

blosc2_context_s* ThreadState::cctx_for(const void* key, const void* cparams, uint64_t uid) {
  return cached_ctx(cctx_, key, uid, [&] {
    blosc2_cparams cp = *static_cast<const blosc2_cparams*>(cparams);
    cp.nthreads = 1;
    blosc2_context* c = blosc2_create_cctx(cp);
    if (!c) throw IOError("cannot create a Blosc2 compression context");
    return c;
  });
}

}  // namespace b2lazy
