// libFuzzer target for b2nd files: each input is written to a file that b2lazy::open reads,
// then a small expression over it is evaluated. Only b2lazy::Error (IOError for a damaged
// file, TypeError for a dtype b2lazy lacks, ...) may come out; a crash, a sanitizer report,
// a leak or any other exception fails the run.
//
//   clang++ -fsanitize=fuzzer,address,undefined ... (cmake -DB2LAZY_FUZZ=ON with clang)
//   ./fuzz_b2nd_file CORPUS_DIR -max_total_time=60
// A corpus of valid and damaged files: python tests/corrupt_files.py CORPUS_DIR (its
// sparse-directory cases are skipped by libFuzzer, which reads files only).
#include <b2lazy/b2lazy.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_input.hpp"

namespace {

// Results up to this size are evaluated whole; a bigger array (a frame can describe
// millions of run-length chunks in a few bytes) is evaluated on a corner.
constexpr int64_t kMaxItems = 1 << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = write_fuzz_input(data, size);
  using namespace b2lazy;
  try {
    Array a = open(path);
    if (a.size() > kMaxItems) {
      std::vector<Index> corner(a.ndim(), Index::slice(0, 2));
      a = a[corner];
    }
    Array e = a + 1;
    std::vector<uint8_t> out(static_cast<size_t>(e.size()) * itemsize(e.dtype()));
    e.to_buffer(out.data());
    // A compressed evaluation too: the path that reads chunks in Blosc2's block order.
    e.compute();
  } catch (const Error&) {}
  return 0;
}
