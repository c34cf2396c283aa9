// A store that records what is asked of another (for tests: requests counted where the
// point is requests avoided) and can fail writes on purpose (an output failing midway).
// Registered for a test scheme by register_logging_store; not a store users name.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "b2lazy/byte_store.hpp"

namespace b2lazy {

struct StoreLog {
  // One read or read_many call: its requests (key, ranges).
  using Batch = std::vector<ByteStore::Request>;
  std::mutex mu;
  std::vector<Batch> batches;
  std::vector<std::string> writes, removes;  // keys, in order
  int64_t fail_writes_after = -1;            // >= 0: writes after that many throw IOError
  bool refuse_suffix_ranges = false;         // as a store without "bytes=-N": ValueError
  void clear() {
    std::lock_guard<std::mutex> g(mu);
    batches.clear(), writes.clear(), removes.clear();
  }
};

// `scheme`://PATH opens a store of local directory `root`/PATH that reports no local path
// (so drivers take their store paths) and logs into the returned log, shared by every
// store the scheme opens.
std::shared_ptr<StoreLog> register_logging_store(const std::string& scheme, const std::string& root);

}  // namespace b2lazy
