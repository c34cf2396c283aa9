#include "io/zarr/zarr_store_sink.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "b2lazy/error.hpp"
#include "io/zarr/zarr_sink.hpp"
#include "io/zarr/zarr_source.hpp"

namespace b2lazy {

namespace {

constexpr int64_t kQueuedBytes = int64_t(64) << 20;  // encoded chunks waiting for an uploader
constexpr int kMostUploaders = 16;

bool is_metadata(const std::string& key) {
  return key == "zarr.json" || key == ".zarray" || key == ".zattrs" || key == ".zgroup" || key == ".zmetadata";
}

}  // namespace

ZarrStoreSink::ZarrStoreSink(const SinkSpec& spec, StorePtr store) : store_(std::move(store)) {
  url_ = store_->root();
  meta_ = zarr::output_metadata(spec, url_);
  grid_ = ChunkGrid(meta_.shape, meta_.chunks);
  // What is there: nothing, a Zarr array (replaced), or chunks an unfinished write left.
  const std::vector<ObjectInfo> there = store_->list("");
  bool array = false, group = false;
  std::string other;
  for (const ObjectInfo& o : there) {
    if (o.key == ".zarray") array = true;
    if (o.key == ".zgroup") group = true;
    if (o.key == "zarr.json") {
      const auto text = store_->read_all("zarr.json");
      try {
        const auto j = nlohmann::json::parse(text ? std::string(text->begin(), text->end()) : std::string("{}"));
        (j.is_object() && j.value("node_type", "") == "array" ? array : group) = true;
      } catch (const nlohmann::json::exception&) {
        fail("its zarr.json is not valid JSON: not replaced");
      }
    }
    if (!is_metadata(o.key) && o.key.rfind("c/", 0) != 0 && other.empty()) other = o.key;
  }
  if (group && !array) fail("a Zarr group is there: not replaced (name an array's URL)");
  if (!array && !other.empty())
    fail("something other than a Zarr array is there ('" + other + "' among " + std::to_string(there.size()) +
         " objects): not replaced");
  // The old metadata goes first: while the chunks change, no reader takes them for an array.
  for (const char* k : {"zarr.json", ".zarray", ".zattrs", ".zmetadata"}) store_->remove(k);
  for (const ObjectInfo& o : there)
    if (!is_metadata(o.key)) stale_.insert(o.key);
  const int n = std::clamp(spec.options ? spec.options->storage.concurrency : 8, 1, kMostUploaders);
  for (int i = 0; i < n; ++i) uploaders_.emplace_back([this] { upload_loop(); });
}

ZarrStoreSink::~ZarrStoreSink() {
  stop();
  if (finished_) return;
  // Unfinished: no metadata was written; the chunks written go (best effort).
  for (const std::string& key : written_keys_) {
    try {
      store_->remove(key);
    } catch (const std::exception&) {}
  }
}

void ZarrStoreSink::fail(const std::string& what) const {
  throw IOError("cannot write output '" + url_ + "': " + what);
}

void ZarrStoreSink::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
    if (!finished_) queue_.clear();  // (not uploaded: nothing to remove)
  }
  queue_cv_.notify_all();
  space_cv_.notify_all();
  for (auto& t : uploaders_)
    if (t.joinable()) t.join();
  uploaders_.clear();
}

void ZarrStoreSink::upload_loop() {
  while (true) {
    Upload u;
    {
      std::unique_lock<std::mutex> lock(mu_);
      queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // (stopping)
      u = std::move(queue_.front());
      queue_.pop_front();
      queued_bytes_ -= static_cast<int64_t>(u.bytes.size());
      ++in_flight_;
      written_keys_.insert(u.key);  // (before the write: a failed one may have left a part)
    }
    space_cv_.notify_all();
    std::exception_ptr err;
    try {
      store_->write(u.key, u.bytes.data(), u.bytes.size());
      written_ += static_cast<int64_t>(u.bytes.size());
    } catch (...) {
      err = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      --in_flight_;
      if (err && !failure_) failure_ = err;
      if (err) queue_.clear(), queued_bytes_ = 0;  // (the output fails: the rest is not sent)
    }
    space_cv_.notify_all();
  }
}

void ZarrStoreSink::rethrow_failure() {
  std::exception_ptr e;
  {
    std::lock_guard<std::mutex> g(mu_);
    e = failure_;
  }
  if (e) std::rethrow_exception(e);
}

void ZarrStoreSink::write_chunk(int64_t id, const void* data, ThreadState& /*ts*/) {
  rethrow_failure();  // (an upload failed: stop the evaluation)
  const std::string key = meta_.key(grid_.chunk_coords(id));
  Upload u{key, {}};
  if (!zarr::encode_output_chunk(meta_, grid_, id, data, u.bytes)) return;  // all fill: left out
  std::unique_lock<std::mutex> lock(mu_);
  space_cv_.wait(lock, [&] {
    return failure_ || stopping_ || queue_.empty() ||
           queued_bytes_ + static_cast<int64_t>(u.bytes.size()) <= kQueuedBytes;
  });
  if (failure_ || stopping_) {
    lock.unlock();
    rethrow_failure();
    fail("the output was abandoned");
  }
  queued_bytes_ += static_cast<int64_t>(u.bytes.size());
  queue_.push_back(std::move(u));
  lock.unlock();
  queue_cv_.notify_one();
}

void ZarrStoreSink::drain() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    space_cv_.wait(lock, [&] { return failure_ || (queue_.empty() && in_flight_ == 0); });
  }
  rethrow_failure();
}

NodePtr ZarrStoreSink::finish() {
  drain();
  {
    std::lock_guard<std::mutex> g(mu_);
    for (const std::string& key : written_keys_) stale_.erase(key);
  }
  stop();
  // Objects of the array replaced that this one did not write (chunks all fill now, or
  // beyond its shape), then the metadata: the array is complete from then on.
  for (const std::string& key : stale_) store_->remove(key);
  const std::string json = zarr::v3_json(meta_);
  store_->write("zarr.json", json.data(), json.size());
  written_ += static_cast<int64_t>(json.size());
  finished_ = true;
  return std::make_shared<ZarrSource>(meta_, zarr::store_keys(store_), url_);
}

}  // namespace b2lazy
