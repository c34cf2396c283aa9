// A Context for calls made without one: created here and owned by the caller's scope.
#pragma once
#include <memory>

#include "b2lazy/context.hpp"

namespace b2lazy {

// Sets `ctx` to a new default Context when it is null; the returned pointer keeps it alive.
inline std::unique_ptr<Context> own_context(Context*& ctx) {
  std::unique_ptr<Context> own;
  if (!ctx) {
    own = std::make_unique<Context>(0);
    ctx = own.get();
  }
  return own;
}

}  // namespace b2lazy
