#include "io/store/object_slice_store.hpp"

#include "b2lazy/error.hpp"

namespace b2lazy {

namespace {

class ObjectSliceStore final : public ByteStore {
 public:
  ObjectSliceStore(std::shared_ptr<ObjectPages> pages, int64_t offset, int64_t length, std::string name)
      : pages_(std::move(pages)), offset_(offset), length_(length), name_(std::move(name)) {
    if (offset_ < 0 || length_ < 0 || offset_ > pages_->size() || length_ > pages_->size() - offset_)
      throw IOError("'" + name_ + "': bytes [" + std::to_string(offset) + ", +" + std::to_string(length) +
                    ") lie outside '" + pages_->url() + "' (" + std::to_string(pages_->size()) + " bytes)");
  }

  std::string root() const override { return name_; }

  std::optional<Parts> read(const std::string& key, const std::vector<ByteRange>& ranges) override {
    if (!key.empty()) return std::nullopt;
    std::vector<ByteRange> within;
    within.reserve(ranges.size());
    bool held = true;
    for (const auto& r : ranges) {
      within.push_back(translated(r));
      held = held && pages_->holds(within.back().offset, within.back().length);
    }
    if (held) {  // answered from the pages: no request
      Parts out;
      out.reserve(within.size());
      for (const auto& r : within) out.push_back(pages_->read(r.offset, r.length));
      return out;
    }
    auto parts = pages_->store()->read(pages_->key(), within);
    if (!parts) throw IOError("'" + name_ + "': its container '" + pages_->url() + "' disappeared");
    return parts;
  }

  std::vector<std::optional<Parts>> read_many(const std::vector<Request>& requests) override {
    std::vector<std::optional<Parts>> out(requests.size());
    std::vector<Request> sent;
    std::vector<size_t> where;
    for (size_t i = 0; i < requests.size(); ++i) {
      if (!requests[i].key.empty()) continue;  // (nullopt: no such object)
      Request t{pages_->key(), {}};
      bool held = true;
      for (const auto& r : requests[i].ranges) {
        t.ranges.push_back(translated(r));
        held = held && pages_->holds(t.ranges.back().offset, t.ranges.back().length);
      }
      if (held) {
        Parts parts;
        for (const auto& r : t.ranges) parts.push_back(pages_->read(r.offset, r.length));
        out[i] = std::move(parts);
        continue;
      }
      sent.push_back(std::move(t));
      where.push_back(i);
    }
    if (sent.empty()) return out;
    auto got = pages_->store()->read_many(sent);  // in flight together, coalesced as the store does
    if (got.size() != sent.size()) throw IOError("'" + name_ + "': its store answered another number of reads");
    for (size_t k = 0; k < sent.size(); ++k) {
      if (!got[k]) throw IOError("'" + name_ + "': its container '" + pages_->url() + "' disappeared");
      out[where[k]] = std::move(got[k]);
    }
    return out;
  }

  std::optional<ObjectInfo> stat(const std::string& key) override {
    if (!key.empty()) return std::nullopt;
    return ObjectInfo{"", length_, pages_->version() + "@" + std::to_string(offset_)};
  }
  std::vector<ObjectInfo> list(const std::string& prefix) override {
    std::vector<ObjectInfo> out;
    if (prefix.empty()) out.push_back(*stat(""));
    return out;
  }
  void write(const std::string&, const void*, size_t) override {
    throw IOError("'" + name_ + "': read-only (a member of a container)");
  }
  void remove(const std::string&) override { throw IOError("'" + name_ + "': read-only (a member of a container)"); }
  StoreCounters counters() const override { return pages_->store()->counters(); }

 private:
  // A range of the slice as a range of the whole object, checked to lie inside the slice.
  ByteRange translated(const ByteRange& r) const {
    int64_t at = r.offset, len = r.length;
    if (at < 0) {  // the slice's last -at bytes
      if (-at > length_) throw past_end(at, len);
      len = -at;
      at = length_ - len;
    } else if (len < 0) {
      if (at > length_) throw past_end(at, len);
      len = length_ - at;
    }
    if (at > length_ || len > length_ - at) throw past_end(at, len);
    return {offset_ + at, len};
  }
  IOError past_end(int64_t at, int64_t len) const {
    return IOError("'" + name_ + "': bytes [" + std::to_string(at) + ", +" + std::to_string(len) +
                   ") asked, past its end (" + std::to_string(length_) + " bytes)");
  }

  std::shared_ptr<ObjectPages> pages_;
  int64_t offset_, length_;
  std::string name_;
};

}  // namespace

StorePtr make_object_slice_store(std::shared_ptr<ObjectPages> pages, int64_t offset, int64_t length, std::string name) {
  return std::make_shared<ObjectSliceStore>(std::move(pages), offset, length, std::move(name));
}

}  // namespace b2lazy
