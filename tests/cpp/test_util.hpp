// Helpers shared by the C++ tests.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>

#include "b2lazy/b2lazy.hpp"

namespace b2lazy::test {

// `x` evaluated into an in-memory b2nd array with the given chunks and blocks.
inline Array stored(const Array& x, Shape chunks, Shape blocks, Context& ctx) {
  ComputeOptions o;
  o.chunks = std::move(chunks);
  o.blocks = std::move(blocks);
  return x.compute(o, &ctx);
}

// An empty directory of this process for test `name` (removed first if left over).
inline std::filesystem::path temp_dir(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path d = fs::temp_directory_path() / ("b2lazy_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace b2lazy::test
