// The HTTP transfer engine under the remote stores: one libcurl multi handle driven by one
// I/O thread per process. One per process (not per store) so that every store of the
// process — each Zarr array, each operand of a saved expression, often on the same host —
// shares one pool of connections, one DNS cache and one TLS session cache; libcurl's multi
// interface runs hundreds of transfers from a single thread, so more threads would buy
// nothing. Each store's StoreLink bounds its requests in flight and counts its work.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "b2lazy/byte_store.hpp"

namespace b2lazy::remote {

// How a store's requests are made (from its StoreOptions).
struct TransferSettings {
  std::vector<std::string> headers;  // "Name: value", sent with every request
  std::string ca_file;               // trust this CA bundle (a self-signed server's)
  bool verify_tls = true;
  bool follow_redirects = false;
  long connect_timeout_ms = 10000;
  long stall_seconds = 30;          // a response with no byte for this long is a timeout (retried)
  std::string aws_sigv4;            // CURLOPT_AWS_SIGV4 ("aws:amz:us-east-1:s3"); "" unsigned
  std::string aws_key, aws_secret;  // SigV4's credentials
  int max_retries = 8;
  double backoff_base_seconds = 0.05;  // first retry waits up to this, doubling each time
  double backoff_max_seconds = 5.0;
};

// What a store shares with the engine: its settings, its limit in flight, its counters.
struct StoreLink {
  TransferSettings settings;
  int concurrency = 32;
  std::atomic<int64_t> requests{0}, bytes{0}, bytes_written{0}, retries{0};
  std::atomic<int64_t> wait_nanoseconds{0};
  int in_flight = 0;  // the I/O thread's alone
  StoreCounters counters() const;
};

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, PUT, POST, DELETE
  std::string url;
  std::vector<std::string> headers;  // besides the store's: "Range: bytes=0-9", ...
  const uint8_t* body = nullptr;     // PUT/POST body, kept alive by the caller
  size_t body_size = 0;
  int64_t max_body = -1;  // a longer body is refused (no unbounded allocation); -1: any
};

struct HttpResponse {
  long status = 0;       // 0: no HTTP response at all
  std::string error;     // why it failed after the retries ("" when a response came)
  bool refused = false;  // the body exceeded max_body
  std::vector<uint8_t> body;
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  int attempts = 0;
  // The value of header `lower_name`, "" when absent.
  std::string header(const std::string& lower_name) const;
  // "HTTP 503" or the transport error, for messages.
  std::string what() const;
};

// Inspects a complete 2xx response; returns why it is unusable (a short body, a
// Content-Range other than asked) — it is then retried, and after the retries returned
// with `error` set — or "" when it is good.
using ResponseCheck = std::function<std::string(const HttpRequest&, const HttpResponse&)>;

// Statuses and transport failures worth repeating: 5xx (but 501), 429, 408.
bool is_retryable_status(long status);
// The delay before retry number `attempt` (1-based): "full jitter" exponential backoff,
// uniform in [0, min(max, base * 2^(attempt-1))]; a server's Retry-After (seconds) raises
// it, up to max.
double backoff_seconds(const TransferSettings& s, int attempt, double retry_after, double unit_random);

// Runs the requests, up to link.concurrency at once, retrying what may succeed on a second
// try; blocks until all are done and returns their responses in order. Time blocked is
// added to the link's wait counter. Thread-safe.
std::vector<HttpResponse> perform(StoreLink& link, std::vector<HttpRequest> requests, const ResponseCheck& check = {});

}  // namespace b2lazy::remote
