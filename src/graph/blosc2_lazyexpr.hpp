// Opening python-blosc2's persisted objects (storage/blosc2_objects.hpp): a saved LazyExpr
// as the expression it holds, anything else refused by name.
#pragma once
#include <string>

#include "b2lazy/array.hpp"
#include "storage/blosc2_objects.hpp"

namespace b2lazy {

// The Array `o` describes, `carrier` the b2nd array that holds it (opened as `url`, its
// driver's path `path`). A "lazyexpr": its expression string through b2lazy's parser
// (expr/evaluate.cpp, never Python), over its operands — b2nd paths relative to the
// carrier's directory or absolute, or .b2z members — opened with open(); nothing is
// evaluated (an expression that would compute when built is refused), and the result must
// have the carrier's shape and dtype. Other kinds (LazyUDF: Python code; remote arrays)
// are refused with a ValueError naming the file and the kind.
Array open_blosc2_object(const std::string& url, const std::string& path, const Blosc2Object& o, const Node& carrier);

}  // namespace b2lazy
