#include "io/remote/s3_compatible_store.hpp"

#include <algorithm>

#include "b2lazy/error.hpp"
#include "io/remote/xml_listing.hpp"

namespace b2lazy::remote {

std::pair<std::string, std::string> split_bucket_url(const std::string& url) {
  const auto colon = url.find("://");
  std::string rest = colon == std::string::npos ? url : url.substr(colon + 3);
  const auto slash = rest.find('/');
  std::string bucket = rest.substr(0, slash);
  std::string prefix = slash == std::string::npos ? std::string() : rest.substr(slash + 1);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (bucket.empty()) throw ValueError("'" + url + "': no bucket in the URL");
  return {bucket, prefix};
}

std::string bucket_url(const std::string& endpoint, const std::string& bucket, bool path_style) {
  if (path_style) return endpoint + "/" + bucket;
  const auto p = endpoint.find("://");
  const size_t host = p == std::string::npos ? 0 : p + 3;
  return endpoint.substr(0, host) + bucket + "." + endpoint.substr(host);
}

bool use_path_style(const std::string& style, bool custom_endpoint, const std::string& bucket) {
  if (style == "path") return true;
  if (style == "virtual") return false;
  if (style.empty() || style == "auto") return custom_endpoint || bucket.find('.') != std::string::npos;
  throw IOError("storage option addressing_style: expected path, virtual or auto, got '" + style + "'");
}

namespace {

class S3CompatibleStore final : public RemoteStore {
 public:
  S3CompatibleStore(BucketAccess a, const StoreOptions& options)
      : RemoteStore(options, a.scheme + "://" + a.bucket + (a.prefix.empty() ? "" : "/" + a.prefix)), a_(std::move(a)) {
    auto& s = link_.settings;
    s.aws_sigv4 = a_.sigv4;
    s.aws_key = a_.key;
    s.aws_secret = a_.secret;
    for (const auto& h : a_.headers) s.headers.push_back(h);
    // The payload is not hashed (TLS protects it); curl signs this value as the payload's.
    if (!a_.sigv4.empty()) s.headers.push_back("x-amz-content-sha256: UNSIGNED-PAYLOAD");
    base_ = bucket_url(a_.endpoint, a_.bucket, a_.path_style);
  }

  std::vector<ObjectInfo> list(const std::string& prefix) override {
    const std::string root_prefix = a_.prefix.empty() ? "" : a_.prefix + "/";
    const std::string full = root_prefix + prefix;
    std::vector<ObjectInfo> out;
    std::string token;
    for (int page = 0;; ++page) {
      // Query parameters in SigV4's canonical order (sorted, encoded): curl signs them as sent.
      std::string q;
      if (!token.empty()) q += "continuation-token=" + url_encode_value(token) + "&";
      q += "list-type=2&prefix=" + url_encode_value(full);
      auto r = std::move(perform(link_, {bucket_request("GET", q)})[0]);
      require_success(prefix, r);
      const std::string_view body(reinterpret_cast<const char*>(r.body.data()), r.body.size());
      auto parsed = parse_list_page(body);
      for (auto& o : parsed.objects) {
        if (o.key.compare(0, root_prefix.size(), root_prefix) != 0) continue;
        o.key = o.key.substr(root_prefix.size());
        out.push_back(std::move(o));
      }
      if (!parsed.truncated) break;
      if (parsed.next_token.empty() || parsed.next_token == token)
        throw IOError("'" + url_of(prefix) + "': a truncated listing without a new continuation token");
      token = parsed.next_token;
    }
    return out;
  }

  void write(const std::string& key, const void* data, size_t nbytes) override {
    Unpin later{this, key};  // (a new version, when it got there)
    const auto* bytes = static_cast<const uint8_t*>(data);
    if (static_cast<int64_t>(nbytes) > a_.multipart_threshold) return write_multipart(key, bytes, nbytes);
    HttpRequest rq = object_request("PUT", key);
    rq.body = bytes;
    rq.body_size = nbytes;
    rq.headers.push_back("Content-Type: application/octet-stream");
    auto r = std::move(perform(link_, {std::move(rq)})[0]);
    require_success(key, r);
  }

  void remove(const std::string& key) override {
    Unpin later{this, key};
    auto r = std::move(perform(link_, {object_request("DELETE", key)})[0]);
    if (r.error.empty() && is_missing(r)) return;
    require_success(key, r);
  }

 protected:
  struct Unpin {
    S3CompatibleStore* store;
    const std::string& key;
    ~Unpin() { store->unpin(key); }
  };
  HttpRequest object_request(const std::string& method, const std::string& key) const override {
    HttpRequest rq;
    rq.method = method;
    rq.url = base_ + "/" + url_encode_path(object_key(key));
    return rq;
  }

  bool is_missing(const HttpResponse& r) const override {
    if (r.status != 404) return false;
    // A missing bucket is an error, a missing key is "not there".
    const std::string_view body(reinterpret_cast<const char*>(r.body.data()), r.body.size());
    return xml_text(body, "Code") != "NoSuchBucket";
  }

  std::string failure(const std::string& key, const HttpResponse& r) const override {
    std::string m = RemoteStore::failure(key, r);
    if (r.status == 401 || r.status == 403) m += " (" + a_.credentials_note + ")";
    const std::string region = r.header("x-amz-bucket-region");
    if (!region.empty() && r.status != 200) m += " (the bucket is in region '" + region + "': pass region_name)";
    return m;
  }

 private:
  std::string object_key(const std::string& key) const {
    if (a_.prefix.empty()) return key;
    return key.empty() ? a_.prefix : a_.prefix + "/" + key;
  }

  HttpRequest bucket_request(const std::string& method, const std::string& query) const {
    HttpRequest rq;
    rq.method = method;
    rq.url = base_ + (a_.path_style ? "" : "/") + "?" + query;
    return rq;
  }

  HttpRequest upload_request(const std::string& method, const std::string& key, const std::string& query) const {
    HttpRequest rq = object_request(method, key);
    rq.url += "?" + query;
    return rq;
  }

  // Parts sent in parallel, then completed; any failure aborts the upload, so the object
  // is the old one or the whole new one.
  void write_multipart(const std::string& key, const uint8_t* data, size_t nbytes) {
    HttpRequest start = upload_request("POST", key, "uploads=");
    start.headers.push_back("Content-Type: application/octet-stream");
    auto r = std::move(perform(link_, {std::move(start)})[0]);
    require_success(key, r);
    const std::string_view body(reinterpret_cast<const char*>(r.body.data()), r.body.size());
    const std::string upload_id = xml_text(body, "UploadId");
    if (upload_id.empty())
      throw IOError("'" + url_of(key) + "': no UploadId in the answer to starting a multipart upload");
    const std::string id_query = "uploadId=" + url_encode_value(upload_id);
    try {
      const size_t part = static_cast<size_t>(a_.part_size);
      std::vector<HttpRequest> parts;
      for (size_t at = 0, n = 1; at < nbytes; at += part, ++n) {
        HttpRequest p = upload_request("PUT", key, "partNumber=" + std::to_string(n) + "&" + id_query);
        p.body = data + at;
        p.body_size = std::min(part, nbytes - at);
        p.headers.push_back("Content-Type: application/octet-stream");
        parts.push_back(std::move(p));
      }
      auto done = perform(link_, std::move(parts));
      std::string complete = "<CompleteMultipartUpload>";
      for (size_t i = 0; i < done.size(); ++i) {
        require_success(key, done[i]);
        const std::string etag = done[i].header("etag");
        if (etag.empty()) throw IOError("'" + url_of(key) + "': no ETag for part " + std::to_string(i + 1));
        complete +=
            "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + xml_escape(etag) + "</ETag></Part>";
      }
      complete += "</CompleteMultipartUpload>";
      HttpRequest fin = upload_request("POST", key, id_query);
      fin.body = reinterpret_cast<const uint8_t*>(complete.data());
      fin.body_size = complete.size();
      fin.headers.push_back("Content-Type: application/xml");
      auto f = std::move(perform(link_, {std::move(fin)})[0]);
      require_success(key, f);
      // CompleteMultipartUpload may answer 200 with an <Error> body.
      const std::string_view fb(reinterpret_cast<const char*>(f.body.data()), f.body.size());
      const std::string said = parse_error_body(fb);
      if (!said.empty()) throw IOError("'" + url_of(key) + "': completing the multipart upload: " + said);
    } catch (...) {
      perform(link_, {upload_request("DELETE", key, id_query)});  // best effort: the error is the first one
      throw;
    }
  }

  BucketAccess a_;
  std::string base_;  // the bucket's URL: "https://bucket.s3.region.amazonaws.com" or endpoint/bucket
};

}  // namespace

StorePtr make_s3_compatible_store(BucketAccess access, const StoreOptions& options) {
  return std::make_shared<S3CompatibleStore>(std::move(access), options);
}

}  // namespace b2lazy::remote
