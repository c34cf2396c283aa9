#include "io/store/logging_store.hpp"

#include "b2lazy/error.hpp"
#include "io/store/local_store.hpp"

namespace b2lazy {

namespace {

class LoggingStore final : public ByteStore {
 public:
  LoggingStore(StorePtr inner, std::string url, std::shared_ptr<StoreLog> log)
      : inner_(std::move(inner)), url_(std::move(url)), log_(std::move(log)) {}
  std::string root() const override { return url_; }
  std::optional<Parts> read(const std::string& key, const std::vector<ByteRange>& ranges) override {
    record({{key, ranges}});
    return inner_->read(key, ranges);
  }
  std::vector<std::optional<Parts>> read_many(const std::vector<Request>& requests) override {
    record(requests);
    return inner_->ByteStore::read_many(requests);  // (one by one, unlogged: the batch is the request)
  }
  std::optional<ObjectInfo> stat(const std::string& key) override { return inner_->stat(key); }
  std::vector<ObjectInfo> list(const std::string& prefix) override { return inner_->list(prefix); }
  void write(const std::string& key, const void* data, size_t nbytes) override {
    {
      std::lock_guard<std::mutex> g(log_->mu);
      if (log_->fail_writes_after >= 0 && static_cast<int64_t>(log_->writes.size()) >= log_->fail_writes_after)
        throw IOError("'" + url_of(key) + "': write refused (a failing store, for tests)");
      log_->writes.push_back(key);
    }
    inner_->write(key, data, nbytes);
  }
  void remove(const std::string& key) override {
    {
      std::lock_guard<std::mutex> g(log_->mu);
      log_->removes.push_back(key);
    }
    inner_->remove(key);
  }
  StoreCounters counters() const override { return inner_->counters(); }

 private:
  void record(const std::vector<Request>& requests) {
    std::lock_guard<std::mutex> g(log_->mu);
    if (log_->refuse_suffix_ranges)
      for (const auto& r : requests)
        for (const auto& x : r.ranges)
          if (x.offset < 0) throw ValueError("'" + url_of(r.key) + "': bad byte range (a suffix, for tests)");
    log_->batches.push_back(requests);
  }
  StorePtr inner_;
  std::string url_;
  std::shared_ptr<StoreLog> log_;
};

}  // namespace

std::shared_ptr<StoreLog> register_logging_store(const std::string& scheme, const std::string& root) {
  auto log = std::make_shared<StoreLog>();
  const std::string head = scheme + "://";
  register_store(scheme, [log, root, head](const std::string& url, const StoreOptions&) -> StorePtr {
    if (url.compare(0, head.size(), head) != 0) throw ValueError("'" + url + "' does not start with " + head);
    std::string path = url.substr(head.size());
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return std::make_shared<LoggingStore>(make_local_store(root + "/" + path), url, log);
  });
  return log;
}

}  // namespace b2lazy
