// The driver registry (b2lazy/driver.hpp): formats by URL scheme, path suffix and content.
#include <algorithm>
#include <cctype>
#include <mutex>

#include <unistd.h>

#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "io/builtin_drivers.hpp"
#include "io/member_url.hpp"

namespace b2lazy {

namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::shared_ptr<const Driver>> drivers;
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;  // never destroyed: drivers may be asked for during exit
    for (Driver& d : builtin_drivers()) reg->drivers.push_back(std::make_shared<const Driver>(std::move(d)));
    return reg;
  }();
  return *r;
}

std::vector<std::shared_ptr<const Driver>> snapshot() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  return r.drivers;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// "scheme:" at the start of `url` (RFC 3986's characters), lower-cased; empty if none.
std::string scheme_of(const std::string& url) {
  size_t i = 0;
  if (url.empty() || !std::isalpha(static_cast<unsigned char>(url[0]))) return {};
  while (i < url.size() &&
         (std::isalnum(static_cast<unsigned char>(url[i])) || url[i] == '+' || url[i] == '-' || url[i] == '.'))
    ++i;
  if (i >= url.size() || url[i] != ':') return {};
  return lower(url.substr(0, i));
}

std::string known_schemes(const std::vector<std::shared_ptr<const Driver>>& ds) {
  std::string s = "file";
  for (const auto& d : ds)
    for (const auto& sc : d->schemes) s += ", " + sc;
  return s;
}

bool exists(const std::string& path) { return !path.empty() && ::access(path.c_str(), F_OK) == 0; }

}  // namespace

void Sink::write_block_major(int64_t /*id*/, const void* /*data*/, ThreadState& /*ts*/) {
  throw Error("internal: this output cannot take chunks in block-major order");
}

void register_driver(Driver d) {
  if (d.name.empty() || !d.open) throw ValueError("register_driver: a driver needs a name and an open function");
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  auto nd = std::make_shared<const Driver>(std::move(d));
  for (auto& x : r.drivers)
    if (x->name == nd->name) {
      x = nd;
      return;
    }
  r.drivers.push_back(nd);
}

std::vector<std::string> driver_names() {
  std::vector<std::string> names;
  for (const auto& d : snapshot()) names.push_back(d->name);
  return names;
}

namespace {

// The path of a remote URL, for its suffix: "s3://b/x.zarr/?q" -> "/x.zarr".
std::string remote_path(const std::string& url) {
  const auto start = url.find("://");
  std::string p = start == std::string::npos ? url : url.substr(start + 3);
  p = p.substr(0, p.find_first_of("?#"));
  const auto slash = p.find('/');
  p = slash == std::string::npos ? std::string() : p.substr(slash);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

Resolved resolve_remote(const std::string& url, bool for_writing, const StoreOptions& storage,
                        const std::vector<std::shared_ptr<const Driver>>& ds) {
  // "https://h/f.h5#/g/x": the container's store and the member (reading).
  if (!for_writing && url.find('#') != std::string::npos)
    for (const auto& d : ds)
      if (d->open_member_in_store)
        if (auto [container, member] = split_member(url, d->suffixes); !member.empty())
          return {d, url, open_store(container, storage), member};
  Resolved r{nullptr, url, open_store(url, storage)};
  auto usable = [&](const Driver& d) { return for_writing ? bool(d.create_in_store) : bool(d.open_in_store); };
  const std::string low = lower(remote_path(url));
  for (const auto& d : ds)
    for (const auto& suf : d->suffixes)
      if (ends_with(low, lower(suf))) {
        if (!usable(*d))
          throw IOError("'" + url + "': b2lazy " + (for_writing ? "writes " : "reads ") + d->name +
                        " from local paths only");
        r.driver = d;
        return r;
      }
  if (!for_writing) {
    for (const auto& d : ds)
      if (d->recognizes_in_store && d->recognizes_in_store(r.store)) {
        r.driver = d;
        return r;
      }
    throw IOError("'" + url + "': no array found there (no format b2lazy reads remotely recognizes it)");
  }
  for (const auto& d : ds)
    if (d->name == "b2nd" && d->create_in_store) {
      r.driver = d;
      return r;
    }
  throw IOError("'" + url + "': b2lazy cannot write there (name the format with a suffix: .zarr, .b2nd)");
}

}  // namespace

Resolved resolve_url(const std::string& url, bool for_writing, const StoreOptions& storage) {
  const auto ds = snapshot();
  if (is_remote_url(url)) return resolve_remote(url, for_writing, storage, ds);
  auto by_name = [&](const std::string& name) -> std::shared_ptr<const Driver> {
    for (const auto& d : ds)
      if (d->name == name) return d;
    throw Error("internal: no '" + name + "' driver registered");
  };
  std::string path = url;
  // A scheme: "zarr:PATH", "zarr://PATH", "file://PATH" (one of ours; other "x:..." are paths).
  if (const std::string sc = scheme_of(url); !sc.empty()) {
    std::shared_ptr<const Driver> named;
    for (const auto& d : ds)
      if (std::find(d->schemes.begin(), d->schemes.end(), sc) != d->schemes.end()) named = d;
    if (named || sc == "file") {
      path = url.substr(sc.size() + 1);
      if (path.rfind("//", 0) == 0) path = path.substr(2);
      if (path.rfind("file://", 0) == 0) path = path.substr(7);  // zarr:file:///x
      if (path.empty()) throw IOError("'" + url + "' names no path");
      if (named) return {named, path};
    } else if (url.compare(sc.size(), 3, "://") == 0) {
      std::string stores;  // (remote ones too: "s3", "https", fsspec's when Python registered them)
      for (const auto& name : store_schemes())
        if (name != "file") stores += ", " + name;
      throw IOError("'" + url + "': unknown URL scheme '" + sc + "' (known: " + known_schemes(ds) + stores + ")");
    }
  }
  // A suffix of the path (trailing slashes aside).
  std::string bare = path;
  while (bare.size() > 1 && bare.back() == '/') bare.pop_back();
  const std::string low = lower(bare);
  for (const auto& d : ds)
    for (const auto& suf : d->suffixes)
      if (ends_with(low, lower(suf))) return {d, path};
  // What is there.
  if (!for_writing || exists(bare))
    for (const auto& d : ds)
      if (d->recognizes && d->recognizes(bare)) return {d, path};
  return {by_name("b2nd"), path};
}

NodePtr open_in_store(const StorePtr& store, const std::string& driver, const std::string& member) {
  for (const auto& d : snapshot()) {
    if (d->name != driver) continue;
    if (member.empty() && d->open_in_store) return d->open_in_store(store);
    if (!member.empty() && d->open_member_in_store) return d->open_member_in_store(store, member);
  }
  throw ValueError("open_in_store: no driver '" + driver + "' reads " + (member.empty() ? "" : "members ") +
                   "from stores");
}

std::unique_ptr<Sink> create_sink(SinkSpec spec) {
  Resolved r;
  if (spec.path.empty()) {
    r = resolve_url("b2nd:memory", true);  // in memory: b2nd
    r.path.clear();
  } else {
    r = resolve_url(spec.path, true, spec.options ? spec.options->storage : StoreOptions{});
  }
  if (r.store) return r.driver->create_in_store(spec, r.store);
  if (!r.driver->create)
    throw IOError("cannot write output '" + spec.path + "': b2lazy reads " + r.driver->name + " but does not write it");
  spec.path = r.path;
  return r.driver->create(spec);
}

std::unique_ptr<Sink> create_part_sink(SinkSpec spec, const std::string& staging) {
  Resolved r = resolve_url(spec.path, true, spec.options ? spec.options->storage : StoreOptions{});
  if (r.store || !r.driver->create_part)
    throw ValueError("'" + spec.path + "': " + r.driver->name +
                     " outputs take one writer; send its chunks to the committer");
  spec.path = r.path;
  return r.driver->create_part(spec, staging);
}

void Sink::write_compressed(int64_t id, const void*, size_t) {
  throw ValueError("this output does not take compressed chunks (chunk " + std::to_string(id) + ")");
}

std::vector<uint8_t> Sink::compressed_chunk(int64_t id) const {
  throw ValueError("this output does not give its chunks compressed (chunk " + std::to_string(id) + ")");
}

}  // namespace b2lazy
