// The S3 protocol — which GCS's XML API also speaks — over the transfer engine: GET by
// range, HEAD, ListObjectsV2 (every page), PUT, multipart upload of large objects (aborted
// on failure, so no object appears half-written), DELETE. S3Store and GcsStore fill in
// the addressing and the credentials.
#pragma once
#include <string>
#include <vector>

#include "io/remote/remote_store.hpp"

namespace b2lazy::remote {

struct BucketAccess {
  std::string scheme;  // "s3", "gs": for root() and messages
  std::string bucket;
  std::string prefix;    // the root's key prefix, without a trailing '/'
  std::string endpoint;  // "https://s3.eu-west-1.amazonaws.com", "http://127.0.0.1:5000"
  bool path_style = false;
  std::string sigv4;  // CURLOPT_AWS_SIGV4, "" for unsigned or bearer-token requests
  std::string key, secret;
  std::vector<std::string> headers;  // x-amz-security-token, Authorization: Bearer, ...
  std::string credentials_note;      // "keys from the environment", for 401/403 messages
  int64_t multipart_threshold = int64_t{32} << 20;
  int64_t part_size = int64_t{16} << 20;
};

// The store for `access`; options give the transfer settings (retries, timeouts, TLS).
StorePtr make_s3_compatible_store(BucketAccess access, const StoreOptions& options);

// The bucket's URL: "https://bucket.host" (virtual-hosted) or "https://host/bucket".
std::string bucket_url(const std::string& endpoint, const std::string& bucket, bool path_style);
// Path-style for `style` "path", virtual-hosted for "virtual"; "" or "auto": path-style for
// a custom endpoint and for bucket names with dots (no TLS certificate covers them as
// host names), virtual-hosted otherwise. IOError for another style.
bool use_path_style(const std::string& style, bool custom_endpoint, const std::string& bucket);

// "s3://bucket/a/b/" -> ("bucket", "a/b"); ValueError naming the URL without a bucket.
std::pair<std::string, std::string> split_bucket_url(const std::string& url);

}  // namespace b2lazy::remote
