// What the HTTP, S3 and GCS stores share: options read from StoreOptions, ranged reads
// (coalesced, many in flight, each body checked against what was asked), HEAD for stat,
// counters. A subclass says how to address an object and what a failure means.
//
// StoreOptions values every libcurl store takes (besides each store's credentials, see
// aws_credentials.hpp, s3_store.cpp and gcs_store.cpp); Python's nested storage_options
// dicts arrive flattened with '.' ({"headers": {"X-A": "1"}} -> "headers.X-A"):
//   headers.<Name>       a header sent with every request
//   ca_file              a CA bundle to trust (a self-signed server's certificate)
//   verify               "false": no TLS certificate check
//   connect_timeout      seconds (10); read_timeout: seconds without a byte (30)
//   retry_backoff        the first retry's longest wait, doubling (0.05 s), up to
//   retry_backoff_max    (5 s); StoreOptions::max_retries retries (8)
//   coalesce_gap         ranges of one object this close are read as one (1 MiB)
//   coalesce_max         the longest request; longer ranges are split (16 MiB; at least 4 KiB)
//   coalesce_waste       the gap bytes a merged request may read, as a fraction of the
//                        bytes asked in it (0.2: what is fetched stays within 1.2x)
//   check_versions       "false": do not pin each object's first ETag (or Last-Modified)
//                        seen (true: a response with another is an IOError, "changed while
//                        it was read", never bytes of two versions mixed)
#pragma once
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "b2lazy/byte_store.hpp"
#include "io/remote/range_plan.hpp"
#include "io/remote/transfer_engine.hpp"

namespace b2lazy::remote {

// An option's value: values[name], else `fallback`.
std::string option(const StoreOptions& o, const std::string& name, const std::string& fallback = {});
// A flag: "true"/"1"/"yes" or "false"/"0"/"no" (IOError naming it otherwise).
bool flag_option(const StoreOptions& o, const std::string& name, bool fallback);
// A count of bytes or seconds (IOError naming it when not a number).
double number_option(const StoreOptions& o, const std::string& name, double fallback);
// `key` percent-encoded for a URL path: all but A-Z a-z 0-9 - _ . ~ and '/'
// (SigV4's canonical form, so the path curl signs is the path S3 checks).
std::string url_encode_path(const std::string& key);
// A query value percent-encoded (SigV4: everything but the unreserved characters).
std::string url_encode_value(const std::string& value);

class RemoteStore : public ByteStore {
 public:
  RemoteStore(const StoreOptions& options, std::string root);

  std::string root() const override { return root_; }
  std::optional<Parts> read(const std::string& key, const std::vector<ByteRange>& ranges) override;
  std::vector<std::optional<Parts>> read_many(const std::vector<Request>& requests) override;
  std::optional<ObjectInfo> stat(const std::string& key) override;
  StoreCounters counters() const override { return link_.counters(); }

 protected:
  // A request for object `key` (URL and per-request headers, no range).
  virtual HttpRequest object_request(const std::string& method, const std::string& key) const = 0;
  // May stat fall back to a 1-byte ranged GET when HEAD is refused (403/405/501)? Yes for
  // plain HTTP: a presigned URL is signed for GET alone; some servers lack HEAD.
  virtual bool stat_by_get_when_head_refused() const { return false; }
  // Is this response "the object does not exist"?
  virtual bool is_missing(const HttpResponse& r) const { return r.status == 404 || r.status == 410; }
  // The message for a failed response about `key` (names the URL, the status, and what
  // the server said).
  virtual std::string failure(const std::string& key, const HttpResponse& r) const;
  // Throws IOError for a response that is not 2xx (or that failed in transport).
  void require_success(const std::string& key, const HttpResponse& r) const;
  // Pins `key` to the version (ETag, else Last-Modified) of its first response seen: a
  // later response with another throws IOError naming both (an object replaced while it
  // is read would mix two versions' bytes: a b2nd header with another file's chunks).
  // `whole`: the whole object in one body (a Zarr chunk: nothing to mix), pinned afresh.
  void pin(const std::string& key, const HttpResponse& r, bool whole = false);
  // After a write or remove through this store: the next version seen is pinned.
  void unpin(const std::string& key);

  StoreLink link_;
  CoalesceLimits limits_;

 private:
  static constexpr size_t kMostPins = size_t(1) << 20;  // objects; later ones are not pinned
  std::string root_;
  bool check_versions_ = true;
  std::mutex pins_mu_;
  std::unordered_map<std::string, std::string> pins_;
};

}  // namespace b2lazy::remote
