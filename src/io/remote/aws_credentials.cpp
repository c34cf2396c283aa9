#include "io/remote/aws_credentials.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "b2lazy/error.hpp"
#include "io/remote/remote_store.hpp"

namespace b2lazy::remote {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return {};
  const auto b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

IniFile read_ini(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_ini(ss.str());
}

std::string aws_file(const char* variable, const char* name) {
  std::string p = env(variable);
  if (!p.empty()) return p;
  const std::string home = env("HOME");
  return home.empty() ? std::string() : home + "/.aws/" + name;
}

std::string lookup(const IniFile& f, const std::string& section, const std::string& name) {
  auto s = f.find(section);
  if (s == f.end()) return {};
  auto v = s->second.find(name);
  return v == s->second.end() ? std::string() : v->second;
}

}  // namespace

IniFile parse_ini(const std::string& text) {
  IniFile out;
  std::string section;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      const auto close = line.find(']');
      section = trim(line.substr(1, close == std::string::npos ? std::string::npos : close - 1));
      out[section];
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string::npos || section.empty()) continue;
    out[section][trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
  }
  return out;
}

std::string first_option(const StoreOptions& o, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = o.values.find(n);
    if (it != o.values.end() && !it->second.empty()) return it->second;
  }
  return {};
}

AwsAccess resolve_aws_access(const StoreOptions& o) {
  AwsAccess a;
  a.anon = flag_option(o, "anon", false);
  const std::string option_profile = first_option(o, {"profile", "profile_name"});
  const std::string profile =
      !option_profile.empty() ? option_profile : (env("AWS_PROFILE").empty() ? "default" : env("AWS_PROFILE"));
  const std::string credentials_path = aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
  const std::string config_path = aws_file("AWS_CONFIG_FILE", "config");
  const IniFile credentials = read_ini(credentials_path);
  const IniFile config = read_ini(config_path);
  const std::string config_section = profile == "default" ? "default" : "profile " + profile;
  auto from_files = [&](const char* name) {
    std::string v = lookup(credentials, profile, name);
    return v.empty() ? lookup(config, config_section, name) : v;
  };

  if (!a.anon) {
    a.key = first_option(o, {"key", "client_kwargs.aws_access_key_id", "aws_access_key_id"});
    if (!a.key.empty()) {
      a.secret = first_option(o, {"secret", "client_kwargs.aws_secret_access_key", "aws_secret_access_key"});
      a.token = first_option(o, {"token", "client_kwargs.aws_session_token", "aws_session_token"});
      a.source = "storage_options";
    } else if (option_profile.empty() && !env("AWS_ACCESS_KEY_ID").empty()) {
      a.key = env("AWS_ACCESS_KEY_ID");
      a.secret = env("AWS_SECRET_ACCESS_KEY");
      a.token = env("AWS_SESSION_TOKEN");
      a.source = "the environment (AWS_ACCESS_KEY_ID)";
    } else if (!from_files("aws_access_key_id").empty()) {
      a.key = from_files("aws_access_key_id");
      a.secret = from_files("aws_secret_access_key");
      a.token = from_files("aws_session_token");
      a.source = "profile '" + profile + "' of " + credentials_path;
    } else if (!option_profile.empty()) {
      throw IOError("storage option profile='" + option_profile + "': no such profile with keys in " +
                    credentials_path + " or " + config_path);
    }
    if (!a.key.empty() && a.secret.empty())
      throw IOError("S3 credentials from " + a.source + " have an access key but no secret key");
  }
  a.region = first_option(o, {"region_name", "client_kwargs.region_name", "region"});
  if (a.region.empty()) a.region = env("AWS_REGION");
  if (a.region.empty()) a.region = env("AWS_DEFAULT_REGION");
  if (a.region.empty()) a.region = lookup(config, config_section, "region");
  if (a.region.empty()) a.region = "us-east-1";
  a.endpoint = first_option(o, {"endpoint_url", "client_kwargs.endpoint_url"});
  if (a.endpoint.empty()) a.endpoint = env("AWS_ENDPOINT_URL_S3");
  if (a.endpoint.empty()) a.endpoint = env("AWS_ENDPOINT_URL");
  if (a.endpoint.empty()) a.endpoint = lookup(config, config_section, "endpoint_url");
  while (!a.endpoint.empty() && a.endpoint.back() == '/') a.endpoint.pop_back();
  return a;
}

}  // namespace b2lazy::remote
