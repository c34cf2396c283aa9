// s3://bucket/prefix: AWS S3 or any S3-compatible endpoint (MinIO, moto, R2, ...), signed
// with SigV4 by libcurl. Path-style addressing for custom endpoints and for bucket names
// with dots (TLS certificates do not cover them as host names), virtual-hosted otherwise;
// storage option addressing_style (or config_kwargs.s3.addressing_style) = path | virtual.
//
// Storage options (s3fs's names; boto's inside client_kwargs, flattened with '.'):
//   key | client_kwargs.aws_access_key_id, secret | client_kwargs.aws_secret_access_key,
//   token | client_kwargs.aws_session_token      the keys (else AWS_* variables, else files)
//   profile                                       a profile of ~/.aws/credentials|config
//   anon                                          "true": unsigned requests
//   endpoint_url | client_kwargs.endpoint_url     else AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL,
//                                                 the profile's endpoint_url
//   region_name | client_kwargs.region_name       else AWS_REGION, AWS_DEFAULT_REGION, the
//                                                 profile's region, us-east-1
//   requester_pays                                "true": x-amz-request-payer: requester
//   multipart_threshold, multipart_chunksize      bytes (32 MiB; parts of 16 MiB, >= 5 MiB)
// and the transfer options of remote_store.hpp.
#include "b2lazy/error.hpp"
#include "io/remote/aws_credentials.hpp"
#include "io/remote/remote_stores.hpp"
#include "io/remote/s3_compatible_store.hpp"

namespace b2lazy::remote {

StorePtr make_s3_store(const std::string& url, const StoreOptions& options) {
  const auto access = resolve_aws_access(options);
  BucketAccess b;
  b.scheme = "s3";
  std::tie(b.bucket, b.prefix) = split_bucket_url(url);
  const bool custom = !access.endpoint.empty();
  b.endpoint = custom ? access.endpoint : "https://s3." + access.region + ".amazonaws.com";
  if (b.endpoint.find("://") == std::string::npos) b.endpoint = "https://" + b.endpoint;
  const std::string style = first_option(options, {"addressing_style", "config_kwargs.s3.addressing_style"});
  b.path_style = use_path_style(style, custom, b.bucket);
  if (access.anon) {
    b.credentials_note = "the request was unsigned: anon=true";
  } else if (access.key.empty()) {
    b.credentials_note = "the request was unsigned: no credentials in storage_options, AWS_* variables or ~/.aws files";
  } else {
    b.sigv4 = "aws:amz:" + access.region + ":s3";
    b.key = access.key;
    b.secret = access.secret;
    if (!access.token.empty()) b.headers.push_back("x-amz-security-token: " + access.token);
    b.credentials_note = "signed with keys from " + access.source;
  }
  if (flag_option(options, "requester_pays", false)) b.headers.push_back("x-amz-request-payer: requester");
  b.multipart_threshold =
      static_cast<int64_t>(number_option(options, "multipart_threshold", static_cast<double>(b.multipart_threshold)));
  // S3 takes parts of 5 MiB and more (but the last).
  b.part_size = std::max<int64_t>(
      int64_t{5} << 20,
      static_cast<int64_t>(number_option(options, "multipart_chunksize", static_cast<double>(b.part_size))));
  return make_s3_compatible_store(std::move(b), options);
}

}  // namespace b2lazy::remote
