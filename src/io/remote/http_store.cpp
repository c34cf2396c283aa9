// http:// and https://: objects are URLs under the root (a b2nd file's own URL is the
// object at key ""; a root's query string, as in a presigned URL, follows every key's
// path). Read-only, no listing (drivers use metadata: .zmetadata, zarr.json).
#include "io/remote/remote_stores.hpp"

#include "b2lazy/error.hpp"
#include "io/remote/remote_store.hpp"

namespace b2lazy::remote {

namespace {

class HttpStore final : public RemoteStore {
 public:
  HttpStore(const std::string& url, const StoreOptions& options)
      : RemoteStore(options, strip_slash(url.substr(0, url.find('?')))),
        query_(url.find('?') == std::string::npos ? std::string() : url.substr(url.find('?'))) {
    link_.settings.follow_redirects = true;
  }

  std::vector<ObjectInfo> list(const std::string&) override {
    throw IOError("'" + root() + "': HTTP has no listing (open a format whose metadata names its objects)");
  }
  void write(const std::string& key, const void*, size_t) override {
    throw IOError("'" + url_of(key) + "': HTTP stores are read-only");
  }
  void remove(const std::string& key) override { throw IOError("'" + url_of(key) + "': HTTP stores are read-only"); }

 protected:
  bool stat_by_get_when_head_refused() const override { return true; }

  HttpRequest object_request(const std::string& method, const std::string& key) const override {
    HttpRequest rq;
    rq.method = method;
    rq.url = (key.empty() ? root() : root() + "/" + url_encode_path(key)) + query_;
    return rq;
  }

 private:
  static std::string strip_slash(std::string url) {
    while (url.size() > 8 && url.back() == '/') url.pop_back();
    return url;
  }

  // A root's query (a presigned URL's signature): sent after every key's path, but not
  // part of root() or of messages, which name no credentials.
  std::string query_;
};

}  // namespace

StorePtr make_http_store(const std::string& url, const StoreOptions& options) {
  return std::make_shared<HttpStore>(url, options);
}

}  // namespace b2lazy::remote
