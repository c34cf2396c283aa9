// The arrays of a .b2z store, as its member table names them (for the driver, and for the
// fuzzer of that table).
#pragma once
#include <string>
#include <vector>

namespace b2lazy {

// The keys of the arrays stored as members of the .b2z at `path` ("/x" for "x.b2nd"), sorted:
// the members python-blosc2 maps (kept whole, the last of a name).
// IOError naming the path for what is no readable zip.
std::vector<std::string> b2z_array_keys(const std::string& path);

}  // namespace b2lazy
