// The store of local files: keys are paths under a directory (or the file itself for the
// empty key). Reads use pread on descriptors opened as regular files (io/regular_file.hpp);
// writes go to a temporary name renamed into place, so readers never see a part.
#pragma once
#include <string>

#include "b2lazy/byte_store.hpp"

namespace b2lazy {

StorePtr make_local_store(const std::string& root);

}  // namespace b2lazy
