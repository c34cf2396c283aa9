// The store registry and ByteStore's shared members.
#include "b2lazy/byte_store.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>

#include "b2lazy/error.hpp"
#include "io/remote/remote_stores.hpp"
#include "io/store/local_store.hpp"

namespace b2lazy {

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, StoreFactory> by_scheme;
};

// The libcurl stores are there from the start (src/io/remote/).
Registry& registry() {
  static Registry r;
  static const bool filled = [] {
    r.by_scheme["http"] = remote::make_http_store;
    r.by_scheme["https"] = remote::make_http_store;
    r.by_scheme["s3"] = remote::make_s3_store;
    r.by_scheme["gs"] = remote::make_gcs_store;
    r.by_scheme["gcs"] = remote::make_gcs_store;
    return true;
  }();
  (void)filled;
  return r;
}

// "s3" for "s3://b/k", "simplecache" for "simplecache::s3://b/k"; "" for a plain path.
std::string scheme_of(const std::string& url) {
  const auto chained = url.find("::");
  const auto colon = url.find("://");
  auto end = std::min(chained, colon);
  if (end == std::string::npos) return {};
  for (size_t i = 0; i < end; ++i) {
    const char c = url[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.')) return {};
  }
  return url.substr(0, end);
}

}  // namespace

std::string ByteStore::url_of(const std::string& key) const {
  std::string r = root();
  if (key.empty()) return r;
  if (!r.empty() && r.back() != '/') r += '/';
  return r + key;
}

std::vector<std::optional<ByteStore::Parts>> ByteStore::read_many(const std::vector<Request>& requests) {
  std::vector<std::optional<Parts>> out;
  out.reserve(requests.size());
  for (const auto& r : requests) out.push_back(read(r.key, r.ranges));
  return out;
}

std::optional<std::vector<uint8_t>> ByteStore::read_all(const std::string& key) {
  auto parts = read(key, {ByteRange{0, -1}});
  if (!parts) return std::nullopt;
  return std::move((*parts)[0]);
}

void register_store(const std::string& scheme, StoreFactory factory) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.by_scheme[scheme] = std::move(factory);
}

std::vector<std::string> store_schemes() {
  std::vector<std::string> out = {"file"};
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& [name, _] : r.by_scheme)
    if (name != "fsspec") out.push_back(name);
  return out;
}

bool is_remote_url(const std::string& url) {
  const std::string s = scheme_of(url);
  if (s.empty() || s == "file") return false;
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.by_scheme.count(s) > 0;
}

StorePtr open_store(const std::string& url, const StoreOptions& options) {
  const std::string s = scheme_of(url);
  if (s.empty()) return make_local_store(url);
  if (s == "file") return make_local_store(url.substr(7));
  StoreFactory f;
  // storage_options={"use_fsspec": True}: fsspec's filesystem even where a native store
  // exists (http, s3, gs), through the store Python registers as "fsspec".
  const auto use = options.values.find("use_fsspec");
  const bool via_fsspec = use != options.values.end() && use->second == "true";
  {
    auto& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.by_scheme.find(via_fsspec ? std::string("fsspec") : s);
    if (via_fsspec && it == r.by_scheme.end())
      throw ValueError("'" + url + "': storage_options use_fsspec needs fsspec (import b2lazy with fsspec installed)");
    if (it != r.by_scheme.end()) f = it->second;
  }
  if (!f) {
    std::string known;
    for (const auto& name : store_schemes()) known += (known.empty() ? "" : ", ") + name;
    throw ValueError("'" + url + "': unknown URL scheme '" + s + "' (stores known: " + known + ")");
  }
  return f(url, options);
}

}  // namespace b2lazy
