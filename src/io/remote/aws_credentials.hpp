// Where S3 requests get their credentials, region and endpoint, in the order the AWS SDKs
// and s3fs look: storage options (s3fs's names, and boto's inside client_kwargs), then the
// AWS_* environment variables, then the profile's ~/.aws/credentials and ~/.aws/config
// (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE, AWS_PROFILE). Requests are then signed by
// libcurl (CURLOPT_AWS_SIGV4); nothing here is ever written anywhere.
#pragma once
#include <map>
#include <string>

#include "b2lazy/byte_store.hpp"

namespace b2lazy::remote {

struct AwsAccess {
  std::string key, secret, token;  // key "": requests go unsigned
  std::string region = "us-east-1";
  std::string endpoint;  // "" for AWS itself
  bool anon = false;
  std::string source;  // where the keys came from, for messages ("the environment", ...)
};

// The options' value for the first of `names` that is set, "" when none is.
std::string first_option(const StoreOptions& o, std::initializer_list<const char*> names);

AwsAccess resolve_aws_access(const StoreOptions& options);

// An INI file's sections ("default", "profile x", ...) -> name -> value; "" when unreadable.
using IniFile = std::map<std::string, std::map<std::string, std::string>>;
IniFile parse_ini(const std::string& text);

}  // namespace b2lazy::remote
