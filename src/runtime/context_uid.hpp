// A process-wide unique number for an object whose Blosc2 contexts threads cache
// (ThreadState::dctx_for / cctx_for, keyed by the object's address): an object freed and
// another made at the same address within one evaluation must not get the first one's
// context, which names the first one's schunk and cparams (a stage writer reusing the
// previous stage writer's context compressed its chunks with that writer's blocksize).
#pragma once
#include <atomic>
#include <cstdint>

namespace b2lazy {

inline uint64_t next_context_uid() {
  static std::atomic<uint64_t> n{0};
  return ++n;
}

}  // namespace b2lazy
