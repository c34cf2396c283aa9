#include "io/store/object_pages.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <future>

#include "b2lazy/error.hpp"

namespace b2lazy {

ObjectPages::ObjectPages(StorePtr store, std::string key, int64_t size, int64_t page, int64_t max_bytes)
    : store_(std::move(store)),
      key_(std::move(key)),
      page_(std::max<int64_t>(page, 512)),
      max_bytes_(std::max<int64_t>(max_bytes, 0)),
      size_(size) {
  if (!store_) throw ValueError("ObjectPages: no store");
  url_ = store_->url_of(key_);
}

int64_t ObjectPages::requests() const {
  std::lock_guard<std::mutex> g(mu_);
  return requests_;
}

int64_t ObjectPages::size() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (size_ >= 0) return size_;
    ++requests_;
  }
  const auto info = store_->stat(key_);
  if (!info) throw IOError("no such object: '" + url_ + "'");
  if (info->size < 0) throw IOError("'" + url_ + "': its store does not tell its size");
  std::lock_guard<std::mutex> g(mu_);
  size_ = info->size;
  version_ = info->version;
  return size_;
}

std::string ObjectPages::version() const {
  std::lock_guard<std::mutex> g(mu_);
  return version_;
}

void ObjectPages::past_end(int64_t offset, int64_t len, int64_t size) const {
  throw IOError("'" + url_ + "': bytes [" + std::to_string(offset) + ", +" + std::to_string(len) +
                ") asked, past its end (" + std::to_string(size) + " bytes)");  // (no sum: it may overflow)
}

void ObjectPages::read(int64_t offset, int64_t len, void* dst) {
  if (offset < 0 || len < 0 || len > INT64_MAX - offset)
    throw IOError("'" + url_ + "': bad byte range (offset " + std::to_string(offset) + ", length " +
                  std::to_string(len) + ")");
  const int64_t s = size();
  if (offset + len > s) past_end(offset, len, s);
  if (len == 0) return;
  auto* out = static_cast<uint8_t*>(dst);
  // cover() returns one piece per page, in order: copy each page's share.
  const auto pieces = cover(offset, len, true);
  int64_t at = offset;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const int64_t index = offset / page_ + static_cast<int64_t>(i);
    const int64_t page_end = std::min((index + 1) * page_, offset + len);
    const auto& p = pieces[i];
    std::memcpy(out + (at - offset), p.bytes->data() + (at - index * page_ - p.skip),
                static_cast<size_t>(page_end - at));
    at = page_end;
  }
}

std::vector<uint8_t> ObjectPages::read(int64_t offset, int64_t len) {
  if (len < 0) throw IOError("'" + url_ + "': bad byte range (length " + std::to_string(len) + ")");
  const int64_t s = size();
  if (offset < 0 || offset > s || len > s - offset) past_end(offset, len, s);
  std::vector<uint8_t> out(static_cast<size_t>(len));
  read(offset, len, out.data());
  return out;
}

void ObjectPages::warm(int64_t offset, int64_t len) {
  const int64_t s = size();
  offset = std::clamp<int64_t>(offset, 0, s);
  len = std::clamp<int64_t>(len, 0, s - offset);
  if (len > 0) cover(offset, len, true);
}

bool ObjectPages::holds(int64_t offset, int64_t len) {
  const int64_t s = known_size_or_unknown();
  if (s < 0 || offset < 0 || len < 0 || offset > s || len > s - offset) return false;
  return len == 0 || !cover(offset, len, false).empty();
}

void ObjectPages::warm_tail(int64_t len) {
  if (len <= 0) return;
  const int64_t known = known_size_or_unknown();
  if (known >= 0) return warm(known - len, len);
  // The size unknown: the suffix read and a stat in flight together (one round trip).
  auto stat = std::async(std::launch::async, [this] { return store_->stat(key_); });
  std::optional<ByteStore::Parts> parts;
  bool refused = false;  // a store without suffix ranges, or an object shorter than len
  std::exception_ptr failed;
  {
    std::lock_guard<std::mutex> g(mu_);
    requests_ += 2;
  }
  try {
    parts = store_->read(key_, {ByteRange{-len, -1}});
  } catch (const IOError&) {
    failed = std::current_exception();  // (an object shorter than len, or a failed request)
  } catch (const ValueError&) {
    refused = true;
  }
  const auto info = stat.get();
  if (!info) throw IOError("no such object: '" + url_ + "'");
  if (info->size < 0) throw IOError("'" + url_ + "': its store does not tell its size");
  if (failed && info->size >= len) std::rethrow_exception(failed);  // not for its length: not retried here
  refused = refused || failed;
  {
    std::lock_guard<std::mutex> g(mu_);
    size_ = info->size;
    version_ = info->version;
  }
  if (refused || !parts || parts->size() != 1 || static_cast<int64_t>((*parts)[0].size()) != len)
    return warm(info->size - len, len);
  std::lock_guard<std::mutex> g(mu_);
  keep_span(info->size - len, (*parts)[0]);
}

void ObjectPages::forget_outside(int64_t offset, int64_t len) {
  std::lock_guard<std::mutex> g(mu_);
  for (auto it = held_.begin(); it != held_.end();) {
    const int64_t at = it->first * page_ + it->second.piece.skip;
    const int64_t end = at + static_cast<int64_t>(it->second.piece.bytes->size());
    if (end > offset && at < offset + len) {
      ++it;
      continue;
    }
    held_bytes_ -= static_cast<int64_t>(it->second.piece.bytes->size());
    lru_.erase(it->second.where);
    it = held_.erase(it);
  }
}

int64_t ObjectPages::known_size_or_unknown() {
  std::lock_guard<std::mutex> g(mu_);
  return size_;
}

const ObjectPages::Piece* ObjectPages::find(int64_t index, int64_t from, int64_t to) {
  const auto it = held_.find(index);
  if (it == held_.end()) return nullptr;
  const Piece& p = it->second.piece;
  if (from < p.skip || to > p.skip + static_cast<int64_t>(p.bytes->size())) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.where);
  return &p;
}

void ObjectPages::keep(int64_t index, Piece p) {
  auto it = held_.find(index);
  if (it != held_.end()) {
    const Piece& old = it->second.piece;
    const int64_t old_end = old.skip + static_cast<int64_t>(old.bytes->size());
    if (old.skip <= p.skip && old_end >= p.skip + static_cast<int64_t>(p.bytes->size())) return;  // holds it
    held_bytes_ -= static_cast<int64_t>(old.bytes->size());
    lru_.erase(it->second.where);
    held_.erase(it);
  }
  held_bytes_ += static_cast<int64_t>(p.bytes->size());
  lru_.push_front(index);
  held_.emplace(index, Held{std::move(p), lru_.begin()});
  while (held_bytes_ > max_bytes_ && !lru_.empty()) {
    const auto old = held_.find(lru_.back());
    held_bytes_ -= static_cast<int64_t>(old->second.piece.bytes->size());
    held_.erase(old);
    lru_.pop_back();
  }
}

void ObjectPages::keep_span(int64_t at, const std::vector<uint8_t>& bytes) {
  const int64_t end = at + static_cast<int64_t>(bytes.size());
  for (int64_t index = at / page_; index * page_ < end; ++index) {
    const int64_t from = std::max(at, index * page_), to = std::min(end, (index + 1) * page_);
    Piece p;
    p.skip = from - index * page_;
    p.bytes = std::make_shared<const std::vector<uint8_t>>(bytes.begin() + (from - at), bytes.begin() + (to - at));
    keep(index, std::move(p));
  }
}

std::vector<ObjectPages::Piece> ObjectPages::cover(int64_t offset, int64_t len, bool fetch) {
  const int64_t first = offset / page_, last = (offset + len - 1) / page_;
  std::vector<Piece> out(static_cast<size_t>(last - first + 1));
  std::vector<int64_t> missing;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (int64_t index = first; index <= last; ++index) {
      const int64_t from = std::max(offset, index * page_) - index * page_;
      const int64_t to = std::min(offset + len, (index + 1) * page_) - index * page_;
      if (const Piece* p = find(index, from, to)) out[static_cast<size_t>(index - first)] = *p;
      else missing.push_back(index);
    }
    if (missing.empty()) return out;
    if (!fetch) return {};
  }
  for (auto& [index, piece] : fetch_pages(missing)) out[static_cast<size_t>(index - first)] = std::move(piece);
  return out;
}

void ObjectPages::warm(const std::vector<ByteRange>& ranges) {
  const int64_t s = size();
  std::vector<int64_t> missing;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (const auto& r : ranges) {
      const int64_t at = std::clamp<int64_t>(r.offset, 0, s);
      const int64_t end = r.length < 0 ? s : at + std::clamp<int64_t>(r.length, 0, s - at);
      for (int64_t index = at / page_; index * page_ < end; ++index) {
        const int64_t from = std::max(at, index * page_) - index * page_;
        const int64_t to = std::min(end, (index + 1) * page_) - index * page_;
        if (!find(index, from, to)) missing.push_back(index);
      }
    }
  }
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  if (!missing.empty()) fetch_pages(missing);
}

std::vector<std::pair<int64_t, ObjectPages::Piece>> ObjectPages::fetch_pages(const std::vector<int64_t>& missing) {
  const int64_t s = size();
  {
    std::lock_guard<std::mutex> g(mu_);
    ++requests_;
  }
  // Runs of missing pages, one range each, all in one store read.
  std::vector<ByteRange> ranges;
  std::vector<std::pair<int64_t, int64_t>> runs;  // first and last page of each range
  for (size_t i = 0; i < missing.size();) {
    size_t j = i;
    while (j + 1 < missing.size() && missing[j + 1] == missing[j] + 1) ++j;
    const int64_t at = missing[i] * page_, end = std::min((missing[j] + 1) * page_, s);
    ranges.push_back({at, end - at});
    runs.emplace_back(missing[i], missing[j]);
    i = j + 1;
  }
  const auto parts = store_->read(key_, ranges);
  if (!parts) throw IOError("no such object: '" + url_ + "'");
  if (parts->size() != ranges.size()) throw IOError("'" + url_ + "': its store answered another number of ranges");
  std::vector<std::pair<int64_t, Piece>> out;
  std::lock_guard<std::mutex> g(mu_);
  for (size_t r = 0; r < ranges.size(); ++r) {
    const auto& bytes = (*parts)[r];
    if (static_cast<int64_t>(bytes.size()) != ranges[r].length)
      throw IOError("'" + url_ + "': changed while it was read (a range came back short)");
    for (int64_t index = runs[r].first; index <= runs[r].second; ++index) {
      const int64_t from = index * page_ - ranges[r].offset;
      const int64_t to = std::min<int64_t>(from + page_, static_cast<int64_t>(bytes.size()));
      Piece p;
      p.bytes = std::make_shared<const std::vector<uint8_t>>(bytes.begin() + from, bytes.begin() + to);
      out.emplace_back(index, p);
      keep(index, std::move(p));
    }
  }
  return out;
}

}  // namespace b2lazy
