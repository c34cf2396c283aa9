// python-blosc2's persisted objects: a b2nd frame whose values are unused placeholders and
// whose metalayer "b2o" ({"kind": ..., "version": 1} in msgpack) says what it really holds —
// "lazyexpr" (an expression string over stored operands, in its vlmeta "b2o"), "lazyudf"
// (Python code), ... — or, from older python-blosc2, whose metalayer "LazyArray" says so
// (vlmeta "_LazyArray"). Read as a plain array it would be zeros: b2lazy opens a lazyexpr
// as its expression and refuses the others by name (graph/array.cpp, open()).
#pragma once
#include <blosc2.h>

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace b2lazy {

struct Blosc2Object {
  std::string kind;        // "lazyexpr", "lazyudf", ...; "LazyArray" for the older marker
  nlohmann::json payload;  // its vlmeta ("b2o" or "_LazyArray") as JSON; null when absent
  std::string problem;     // why the payload could not be read ("" when it could, or is absent)
};

// What `sc` holds when it is one of python-blosc2's persisted objects, else nullopt. Reads
// only metadata (bounded: 1 MiB decompressed, nesting 64 deep); never throws for a
// malformed marker or payload (`problem` says what is wrong, kind "?" when unreadable).
std::optional<Blosc2Object> blosc2_object(const blosc2_schunk* sc);

}  // namespace b2lazy
