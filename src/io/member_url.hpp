// URLs naming an array inside a container file: "PATH#KEY" ("run.h5#/group/x",
// "store.b2z#/x"). A PATH may hold '#' itself ("runs#3/f.h5"): the split is at the last
// '#' that ends a PATH with the container's suffix; a URL ending in the suffix has no key.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace b2lazy {

inline bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// (path, key): key empty when the URL names the container itself.
inline std::pair<std::string, std::string> split_member(const std::string& url, const std::vector<std::string>& suffixes) {
  auto contained = [&](const std::string& p) {
    for (const auto& s : suffixes)
      if (has_suffix(p, s)) return true;
    return false;
  };
  if (contained(url)) return {url, ""};
  for (size_t hash = url.rfind('#'); hash != std::string::npos && hash > 0; hash = url.rfind('#', hash - 1))
    if (contained(url.substr(0, hash))) return {url.substr(0, hash), url.substr(hash + 1)};
  return {url, ""};
}

}  // namespace b2lazy
