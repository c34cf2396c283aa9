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

// A remote URL without its query: a presigned URL's "?X-Amz-Signature=..." follows the
// container's suffix ("https://h/s.b2z?sig=..#/x"). Local paths and file:// keep their '?'.
inline std::string without_query(const std::string& p) {
  const auto scheme = p.find("://");
  if (scheme == std::string::npos || p.compare(0, 7, "file://") == 0) return p;
  const auto q = p.find('?', scheme + 3);
  if (q == std::string::npos) return p;
  const auto fragment = p.find('#', q);  // (kept: "...?sig=..#/x" still names a member)
  return p.substr(0, q) + (fragment == std::string::npos ? std::string() : p.substr(fragment));
}

// (path, key): key empty when the URL names the container itself.
inline std::pair<std::string, std::string> split_member(const std::string& url,
                                                        const std::vector<std::string>& suffixes) {
  auto contained = [&](const std::string& p) {
    const std::string bare = without_query(p);
    for (const auto& s : suffixes)
      if (has_suffix(bare, s)) return true;
    return false;
  };
  if (contained(url)) return {url, ""};
  for (size_t hash = url.rfind('#'); hash != std::string::npos && hash > 0; hash = url.rfind('#', hash - 1))
    if (contained(url.substr(0, hash))) return {url.substr(0, hash), url.substr(hash + 1)};
  return {url, ""};
}

}  // namespace b2lazy
