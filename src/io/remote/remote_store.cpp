#include "io/remote/remote_store.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>

#include "b2lazy/error.hpp"
#include "io/remote/xml_listing.hpp"

namespace b2lazy::remote {

namespace {

constexpr int64_t kWholeObjectLimit = int64_t{64} << 20;  // what a server ignoring Range may send

// "bytes a-b/total" (total -1 for "*"), or "bytes */total" (a = b = -1).
struct ContentRange {
  int64_t first = -1, last = -1, total = -1;
  bool ok = false;
};

ContentRange parse_content_range(const std::string& v) {
  ContentRange cr;
  if (v.rfind("bytes ", 0) != 0) return cr;
  const auto slash = v.find('/');
  if (slash == std::string::npos) return cr;
  const std::string span = v.substr(6, slash - 6), total = v.substr(slash + 1);
  cr.total = total == "*" ? -1 : std::atoll(total.c_str());
  if (span != "*") {
    const auto dash = span.find('-');
    if (dash == std::string::npos) return cr;
    cr.first = std::atoll(span.substr(0, dash).c_str());
    cr.last = std::atoll(span.substr(dash + 1).c_str());
    if (cr.last < cr.first) return cr;
  }
  cr.ok = true;
  return cr;
}

// The [first, last] a request's "Range: bytes=first-last" asks for (last -1: to the end);
// first -1 when it has none; (-N, -1) for the last N bytes ("bytes=-N").
std::pair<int64_t, int64_t> asked_range(const HttpRequest& rq) {
  for (const auto& h : rq.headers) {
    if (h.rfind("Range: bytes=", 0) != 0) continue;
    const std::string span = h.substr(13);
    if (!span.empty() && span[0] == '-') return {-std::atoll(span.c_str() + 1), -1};
    const auto dash = span.find('-');
    const int64_t first = std::atoll(span.substr(0, dash).c_str());
    const std::string last = span.substr(dash + 1);
    return {first, last.empty() ? -1 : std::atoll(last.c_str())};
  }
  return {-1, -1};
}

// Why a 2xx body cannot be what was asked for (it is then fetched again), "" when it is.
std::string check_body(const HttpRequest& rq, const HttpResponse& r) {
  if (rq.method != "GET") return {};
  const auto [first, last] = asked_range(rq);
  const auto body = static_cast<int64_t>(r.body.size());
  if (r.status == 206) {
    const auto cr = parse_content_range(r.header("content-range"));
    if (!cr.ok || cr.first < 0)
      return "a 206 response without a usable Content-Range ('" + r.header("content-range") + "')";
    if (first < 0) {  // the last -first bytes (or all, when the object is shorter)
      if (cr.total < 0 || cr.last != cr.total - 1 || cr.last - cr.first + 1 != std::min(-first, cr.total))
        return "Content-Range '" + r.header("content-range") + "' for the last " + std::to_string(-first) + " bytes";
      if (body != cr.last - cr.first + 1)
        return "a short body: " + std::to_string(body) + " bytes for Content-Range '" + r.header("content-range") + "'";
      return {};
    }
    if (cr.first != first)
      return "Content-Range '" + r.header("content-range") + "' for bytes " + std::to_string(first) + "-";
    if (last >= 0 && cr.last != last && !(cr.total >= 0 && cr.last == cr.total - 1 && cr.last < last))
      return "Content-Range '" + r.header("content-range") + "' for bytes " + std::to_string(first) + "-" +
             std::to_string(last);
    if (body != cr.last - cr.first + 1)
      return "a short body: " + std::to_string(body) + " bytes for Content-Range '" + r.header("content-range") + "'";
    return {};
  }
  if (r.status == 200) {
    // The whole object: only usable when its length is known to be complete.
    const std::string cl = r.header("content-length");
    if (!cl.empty()) {
      if (std::atoll(cl.c_str()) != body) return "a short body: " + std::to_string(body) + " of Content-Length " + cl;
    } else if (r.header("transfer-encoding").find("chunked") == std::string::npos) {
      return "a body of unknown length (no Content-Length)";
    }
  }
  return {};
}

std::string past_end(const std::string& url, int64_t offset, int64_t length, int64_t size) {
  return "'" + url + "': bytes [" + std::to_string(offset) + ", " + std::to_string(offset + length) +
         ") are past the end of the object (" + std::to_string(size) + " bytes)";
}

}  // namespace

std::string option(const StoreOptions& o, const std::string& name, const std::string& fallback) {
  auto it = o.values.find(name);
  return it == o.values.end() ? fallback : it->second;
}

bool flag_option(const StoreOptions& o, const std::string& name, bool fallback) {
  std::string v = option(o, name);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v.empty()) return fallback;
  if (v == "true" || v == "1" || v == "yes") return true;
  if (v == "false" || v == "0" || v == "no") return false;
  throw IOError("storage option '" + name + "': expected true or false, got '" + v + "'");
}

double number_option(const StoreOptions& o, const std::string& name, double fallback) {
  const std::string v = option(o, name);
  if (v.empty()) return fallback;
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (*end != 0 || !(d >= 0)) throw IOError("storage option '" + name + "': expected a number >= 0, got '" + v + "'");
  return d;
}

static std::string percent_encode(const std::string& s, bool keep_slash) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string url_encode_path(const std::string& key) { return percent_encode(key, true); }
std::string url_encode_value(const std::string& value) { return percent_encode(value, false); }

RemoteStore::RemoteStore(const StoreOptions& options, std::string root) : root_(std::move(root)) {
  link_.concurrency = std::max(1, options.concurrency);
  auto& s = link_.settings;
  s.max_retries = std::max(0, options.max_retries);
  s.ca_file = option(options, "ca_file");
  s.verify_tls = flag_option(options, "verify", true);
  s.connect_timeout_ms = static_cast<long>(number_option(options, "connect_timeout", 10) * 1000);
  s.stall_seconds = std::max(1L, static_cast<long>(number_option(options, "read_timeout", 30)));
  s.backoff_base_seconds = number_option(options, "retry_backoff", 0.05);
  s.backoff_max_seconds = number_option(options, "retry_backoff_max", 5);
  for (const auto& [name, value] : options.values)
    if (name.rfind("headers.", 0) == 0) s.headers.push_back(name.substr(8) + ": " + value);
  limits_.max_gap = static_cast<int64_t>(number_option(options, "coalesce_gap", static_cast<double>(limits_.max_gap)));
  // (at least 4 KiB: a 13 MB chunk split into requests of one byte was millions of them)
  limits_.max_size = std::max<int64_t>(
      4096, static_cast<int64_t>(number_option(options, "coalesce_max", static_cast<double>(limits_.max_size))));
  limits_.max_waste = number_option(options, "coalesce_waste", limits_.max_waste);
  check_versions_ = flag_option(options, "check_versions", true);
}

void RemoteStore::pin(const std::string& key, const HttpResponse& r, bool whole) {
  if (!check_versions_ || !r.error.empty() || r.status < 200 || r.status >= 300) return;
  std::string version = r.header("etag");
  if (version.empty()) version = r.header("last-modified");
  if (version.empty()) return;
  std::lock_guard<std::mutex> g(pins_mu_);
  auto it = pins_.find(key);
  if (it == pins_.end()) {
    if (pins_.size() < kMostPins) pins_.emplace(key, std::move(version));
    return;
  }
  if (whole) {
    it->second = std::move(version);
    return;
  }
  if (it->second != version)
    throw IOError("'" + url_of(key) + "' changed while it was read (version " + it->second + ", now " + version +
                  "): its bytes would mix two versions; open it again");
}

void RemoteStore::unpin(const std::string& key) {
  std::lock_guard<std::mutex> g(pins_mu_);
  pins_.erase(key);
}

std::string RemoteStore::failure(const std::string& key, const HttpResponse& r) const {
  std::string m = "'" + url_of(key) + "': " + r.what();
  // What the server said, when it says it as S3 does (<Error><Code>..<Message>..).
  const std::string said = parse_error_body({reinterpret_cast<const char*>(r.body.data()), r.body.size()});
  if (!said.empty()) m += " " + said;
  return m;
}

void RemoteStore::require_success(const std::string& key, const HttpResponse& r) const {
  if (!r.error.empty() || r.status < 200 || r.status >= 300) throw IOError(failure(key, r));
}

std::optional<ByteStore::Parts> RemoteStore::read(const std::string& key, const std::vector<ByteRange>& ranges) {
  return std::move(read_many({Request{key, ranges}})[0]);
}

std::vector<std::optional<ByteStore::Parts>> RemoteStore::read_many(const std::vector<Request>& requests) {
  // Ranges grouped by object: (request, range) pairs, planned into fetches together.
  struct Plan {
    std::string key;
    std::vector<std::pair<size_t, size_t>> pieces;
    std::vector<std::pair<size_t, size_t>> suffixes;  // the last N bytes: a request each
    std::vector<Fetch> fetches;
    size_t first_suffix = 0, first_request = 0;  // their place among all HTTP requests
    bool missing = false;
    int64_t size = -1;  // when a response told
  };
  std::map<std::string, size_t> plan_of;
  std::vector<Plan> plans;
  for (size_t i = 0; i < requests.size(); ++i) {
    auto [it, fresh] = plan_of.emplace(requests[i].key, plans.size());
    if (fresh) plans.push_back(Plan{requests[i].key, {}, {}, {}, 0, 0, false, -1});
    for (size_t j = 0; j < requests[i].ranges.size(); ++j) {
      const auto& r = requests[i].ranges[j];
      if (r.offset == INT64_MIN || (r.offset >= 0 && r.length < -1))
        throw ValueError("'" + url_of(requests[i].key) + "': bad byte range (offset " + std::to_string(r.offset) +
                         ", length " + std::to_string(r.length) + ")");
      if (r.offset < 0) plans[it->second].suffixes.emplace_back(i, j);
      else plans[it->second].pieces.emplace_back(i, j);
    }
  }
  std::vector<HttpRequest> http;
  for (auto& p : plans) {
    std::vector<ByteRange> ranges;
    for (auto [i, j] : p.pieces) ranges.push_back(requests[i].ranges[j]);
    p.fetches = plan_fetches(ranges, limits_);
    p.first_suffix = http.size();
    for (auto [i, j] : p.suffixes) {  // "bytes=-N": a shard index at the end, without its size first
      HttpRequest rq = object_request("GET", p.key);
      const int64_t n = -requests[i].ranges[j].offset;
      rq.headers.push_back("Range: bytes=-" + std::to_string(n));
      rq.max_body = std::max(n, kWholeObjectLimit);
      http.push_back(std::move(rq));
    }
    p.first_request = http.size();
    for (const auto& f : p.fetches) {
      HttpRequest rq = object_request("GET", p.key);
      if (f.length >= 0) {
        rq.headers.push_back("Range: bytes=" + std::to_string(f.offset) + "-" +
                             std::to_string(f.offset + f.length - 1));
        rq.max_body = std::max(f.offset + f.length, kWholeObjectLimit);
      } else if (f.offset > 0) {
        rq.headers.push_back("Range: bytes=" + std::to_string(f.offset) + "-");
      }
      http.push_back(std::move(rq));
    }
  }
  auto responses = perform(link_, std::move(http), check_body);

  std::vector<std::optional<Parts>> out(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) out[i] = Parts(requests[i].ranges.size());
  for (auto& p : plans) {
    const std::string url = url_of(p.key);
    for (size_t k = 0; k < p.fetches.size(); ++k) {
      const auto& f = p.fetches[k];
      auto& r = responses[p.first_request + k];
      if (!r.error.empty()) throw IOError(failure(p.key, r));
      if (is_missing(r)) {
        p.missing = true;
        continue;
      }
      pin(p.key, r, r.status == 200 && f.offset == 0 && f.length < 0);
      const uint8_t* body = r.body.data();
      int64_t body_size = static_cast<int64_t>(r.body.size());
      if (r.status == 416) {  // nothing at or after f.offset
        const auto cr = parse_content_range(r.header("content-range"));
        if (f.length < 0 && cr.ok && cr.total == f.offset) {
          body_size = 0;
          p.size = cr.total;
        } else {
          throw IOError(past_end(url, f.offset, std::max<int64_t>(f.length, 0), cr.ok ? cr.total : -1));
        }
      } else if (r.status == 206) {
        const auto cr = parse_content_range(r.header("content-range"));
        if (cr.total >= 0) p.size = cr.total;
        if (f.length >= 0 && body_size < f.length) throw IOError(past_end(url, f.offset, f.length, p.size));
      } else if (r.status == 200) {  // the whole object (no Range sent, or the server ignored it)
        p.size = body_size;
        const int64_t need = f.length < 0 ? f.offset : f.offset + f.length;
        if (need > body_size) throw IOError(past_end(url, f.offset, std::max<int64_t>(f.length, 0), body_size));
        body += f.offset;
        body_size -= f.offset;
      } else {
        throw IOError(failure(p.key, r));
      }
      for (const auto& s : f.slices) {
        auto [i, j] = p.pieces[s.piece];
        auto& part = (*out[i])[j];
        if (f.slices.size() == 1 && body == r.body.data() && s.piece_at == 0 &&
            (s.length < 0 || (s.fetch_at == 0 && s.length == body_size && requests[i].ranges[j].length == s.length))) {
          part = std::move(r.body);  // the body is the part: no copy
          continue;
        }
        if (s.length < 0) {
          part.assign(body, body + body_size);
          continue;
        }
        if (part.size() != static_cast<size_t>(requests[i].ranges[j].length)) part.resize(requests[i].ranges[j].length);
        std::memcpy(part.data() + s.piece_at, body + s.fetch_at, static_cast<size_t>(s.length));
      }
    }
    for (size_t k = 0; k < p.suffixes.size(); ++k) {
      auto [i, j] = p.suffixes[k];
      auto& r = responses[p.first_suffix + k];
      const int64_t n = -requests[i].ranges[j].offset;
      if (!r.error.empty()) throw IOError(failure(p.key, r));
      if (is_missing(r)) {
        p.missing = true;
        continue;
      }
      pin(p.key, r);
      int64_t size = -1;
      if (r.status == 206) size = parse_content_range(r.header("content-range")).total;  // (checked by check_body)
      else if (r.status == 200) size = static_cast<int64_t>(r.body.size());              // the server ignored Range
      else if (r.status == 416) size = 0;
      else throw IOError(failure(p.key, r));
      if (size < n)
        throw IOError("'" + url + "': its last " + std::to_string(n) + " bytes asked, it has " + std::to_string(size));
      p.size = size;
      auto& part = (*out[i])[j];
      if (r.status == 206) part = std::move(r.body);
      else part.assign(r.body.end() - n, r.body.end());
    }
    // Zero-length ranges fetch nothing, but still need the object, and to be inside it.
    bool any_empty = false;
    for (auto [i, j] : p.pieces) any_empty |= requests[i].ranges[j].length == 0;
    if (any_empty && !p.missing && p.size < 0) {
      const auto info = stat(p.key);
      if (!info) p.missing = true;
      else p.size = info->size;
    }
    if (p.missing) {
      for (auto [i, j] : p.pieces) out[i].reset();
      for (auto [i, j] : p.suffixes) out[i].reset();
      continue;
    }
    for (auto [i, j] : p.pieces) {
      const auto& r = requests[i].ranges[j];
      if (r.length == 0 && p.size >= 0 && r.offset > p.size) throw IOError(past_end(url, r.offset, 0, p.size));
    }
  }
  // A request with no ranges at all: does its object exist?
  for (size_t i = 0; i < requests.size(); ++i)
    if (requests[i].ranges.empty() && !stat(requests[i].key)) out[i].reset();
  return out;
}

std::optional<ObjectInfo> RemoteStore::stat(const std::string& key) {
  auto r = std::move(perform(link_, {object_request("HEAD", key)})[0]);
  if (r.error.empty() && is_missing(r)) return std::nullopt;
  if (r.error.empty() && (r.status == 403 || r.status == 405 || r.status == 501) && stat_by_get_when_head_refused()) {
    HttpRequest get = object_request("GET", key);
    get.headers.push_back("Range: bytes=0-0");
    get.max_body = kWholeObjectLimit;
    auto g = std::move(perform(link_, {std::move(get)}, check_body)[0]);
    if (g.error.empty() && is_missing(g)) return std::nullopt;
    pin(key, g);
    ObjectInfo info{key, -1, g.header("etag")};
    if (info.version.empty()) info.version = g.header("last-modified");
    const auto cr = parse_content_range(g.header("content-range"));
    if (g.error.empty() && g.status == 206 && cr.ok) info.size = cr.total;
    else if (g.error.empty() && g.status == 200) info.size = static_cast<int64_t>(g.body.size());
    else if (g.error.empty() && g.status == 416 && cr.ok) info.size = cr.total;  // empty
    else require_success(key, g.status == 416 ? r : g);
    return info;
  }
  require_success(key, r);
  pin(key, r);
  ObjectInfo info;
  info.key = key;
  const std::string cl = r.header("content-length");
  info.size = cl.empty() ? -1 : std::atoll(cl.c_str());
  info.version = r.header("etag");
  if (info.version.empty()) info.version = r.header("last-modified");
  return info;
}

}  // namespace b2lazy::remote
