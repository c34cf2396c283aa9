// Writes compute()'s output as a Zarr v3 array into a byte store (compute(urlpath=
// "s3://bucket/x.zarr")): one object per chunk (or shard), encoded by the workers and
// uploaded by a few threads of this sink, so that workers do not wait on the network
// (at most kQueuedBytes encoded chunks wait). The metadata is written last, after every
// chunk: a reader never sees an array whose chunks are missing. An array there before is
// replaced: its metadata removed first, its objects not written again removed before the
// new metadata is written. A sink destroyed unfinished (an error, a cancel) leaves no
// metadata and removes the chunk objects it wrote (best effort).
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "b2lazy/driver.hpp"
#include "io/zarr/metadata.hpp"

namespace b2lazy {

class ZarrStoreSink : public Sink {
 public:
  ZarrStoreSink(const SinkSpec& spec, StorePtr store);
  ~ZarrStoreSink() override;
  const ChunkGrid& grid() const override { return grid_; }
  void write_chunk(int64_t id, const void* data, ThreadState& ts) override;
  NodePtr finish() override;
  int64_t bytes_written() const override { return written_.load(); }

 private:
  struct Upload {
    std::string key;
    std::vector<uint8_t> bytes;
  };
  void upload_loop();
  // Waits for the queue to drain and the uploaders to stop; rethrows an upload's error.
  void drain();
  void stop();
  void rethrow_failure();
  [[noreturn]] void fail(const std::string& what) const;

  zarr::Metadata meta_;
  ChunkGrid grid_;
  StorePtr store_;
  std::string url_;
  std::set<std::string> stale_;  // objects there before (all but metadata): removed at finish if not rewritten
  std::mutex mu_;
  std::condition_variable queue_cv_, space_cv_;
  std::deque<Upload> queue_;
  int64_t queued_bytes_ = 0;
  int in_flight_ = 0;
  bool stopping_ = false, finished_ = false;
  std::exception_ptr failure_;
  std::set<std::string> written_keys_;  // removed if the sink is not finished
  std::vector<std::thread> uploaders_;
  std::atomic<int64_t> written_{0};
};

}  // namespace b2lazy
