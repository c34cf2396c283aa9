// gs://bucket/prefix and gcs://: Google Cloud Storage through its XML API, which speaks
// S3's protocol (storage.googleapis.com/bucket/key, path-style; or endpoint_url). Access,
// first that applies:
//   anon=true or token="anon"              -> unsigned
//   key + secret (HMAC keys)               -> SigV4 as GCS's interoperability mode takes it
//                                             (AWS4-HMAC-SHA256, region "auto", x-amz-*)
//   token=<OAuth2 access token>, else env GOOGLE_OAUTH_ACCESS_TOKEN
//                                          -> "Authorization: Bearer <token>"
//   nothing                                -> unsigned (public buckets)
// A token naming a JSON credentials file (service account, gcloud's) is refused with a
// message: exchanging it for an access token is OAuth2 we leave to google-auth/gcsfs
// (`gcloud auth print-access-token` gives one).
#include <filesystem>

#include "b2lazy/error.hpp"
#include "io/remote/aws_credentials.hpp"
#include "io/remote/remote_stores.hpp"
#include "io/remote/s3_compatible_store.hpp"

namespace b2lazy::remote {

StorePtr make_gcs_store(const std::string& url, const StoreOptions& options) {
  BucketAccess b;
  b.scheme = url.rfind("gcs://", 0) == 0 ? "gcs" : "gs";
  std::tie(b.bucket, b.prefix) = split_bucket_url(url);
  b.endpoint = first_option(options, {"endpoint_url", "client_kwargs.endpoint_url"});
  if (b.endpoint.empty()) {
    const char* emulator = std::getenv("STORAGE_EMULATOR_HOST");
    b.endpoint = emulator && *emulator ? emulator : "https://storage.googleapis.com";
  }
  if (b.endpoint.find("://") == std::string::npos) b.endpoint = "https://" + b.endpoint;
  while (b.endpoint.back() == '/') b.endpoint.pop_back();
  b.path_style = true;
  std::string token = option(options, "token");
  const std::string key = first_option(options, {"key", "hmac_key", "client_kwargs.aws_access_key_id"});
  if (flag_option(options, "anon", false) || token == "anon") {
    b.credentials_note = "the request was unsigned: anon=true";
  } else if (!key.empty()) {
    b.key = key;
    b.secret = first_option(options, {"secret", "hmac_secret", "client_kwargs.aws_secret_access_key"});
    if (b.secret.empty()) throw IOError("'" + url + "': storage option key (a GCS HMAC access id) without secret");
    b.sigv4 =
        "aws:amz:" + (option(options, "region_name").empty() ? std::string("auto") : option(options, "region_name")) +
        ":s3";
    b.credentials_note = "signed with the HMAC key from storage_options";
  } else {
    if (token.empty()) {
      const char* t = std::getenv("GOOGLE_OAUTH_ACCESS_TOKEN");
      if (t && *t) token = t;
    }
    std::error_code ec;
    if (token == "google_default" || token == "cloud" || token == "browser" ||
        (!token.empty() && std::filesystem::exists(token, ec)))
      throw IOError("'" + url + "': storage option token='" +
                    (token.size() > 64 ? token.substr(0, 64) + "..." : token) +
                    "': b2lazy's GCS store takes an OAuth2 access token (gcloud auth print-access-token), "
                    "HMAC keys (key, secret) or anon=true; use gcsfs for other Google credentials");
    if (!token.empty()) {
      b.headers.push_back("Authorization: Bearer " + token);
      b.credentials_note = "with a bearer token";
    } else {
      b.credentials_note = "the request was unsigned: no token, HMAC key or GOOGLE_OAUTH_ACCESS_TOKEN";
    }
  }
  if (flag_option(options, "requester_pays", false))
    b.headers.push_back("x-goog-user-project: " + option(options, "project"));
  b.multipart_threshold =
      static_cast<int64_t>(number_option(options, "multipart_threshold", static_cast<double>(b.multipart_threshold)));
  b.part_size = std::max<int64_t>(
      int64_t{5} << 20,
      static_cast<int64_t>(number_option(options, "multipart_chunksize", static_cast<double>(b.part_size))));
  return make_s3_compatible_store(std::move(b), options);
}

}  // namespace b2lazy::remote
