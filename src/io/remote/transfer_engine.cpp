#include "io/remote/transfer_engine.hpp"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <queue>
#include <random>
#include <thread>
#include <unordered_set>

#include "b2lazy/error.hpp"
#include "b2lazy/interrupt.hpp"

namespace b2lazy::remote {

using Clock = std::chrono::steady_clock;

StoreCounters StoreLink::counters() const {
  StoreCounters c;
  c.requests = requests.load();
  c.bytes = bytes.load();
  c.bytes_written = bytes_written.load();
  c.retries = retries.load();
  c.wait_seconds = static_cast<double>(wait_nanoseconds.load()) * 1e-9;
  return c;
}

std::string HttpResponse::header(const std::string& lower_name) const {
  for (const auto& [name, value] : headers)
    if (name == lower_name) return value;
  return {};
}

std::string HttpResponse::what() const {
  if (!error.empty()) return error;
  return "HTTP " + std::to_string(status);
}

bool is_retryable_status(long status) {
  return (status >= 500 && status != 501 && status < 600) || status == 429 || status == 408;
}

double backoff_seconds(const TransferSettings& s, int attempt, double retry_after, double unit_random) {
  const double ceiling =
      std::min(s.backoff_max_seconds, s.backoff_base_seconds * std::ldexp(1.0, std::min(attempt - 1, 30)));
  const double jittered = ceiling * unit_random;
  return std::min(s.backoff_max_seconds, std::max(jittered, retry_after));
}

namespace {

// Transport failures that a new attempt may not meet: timeouts, resets, cut bodies.
bool is_retryable_code(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_WEIRD_SERVER_REPLY: return true;
    default: return false;
  }
}

struct Batch {
  std::mutex mu;
  std::condition_variable done;
  size_t remaining = 0;
  std::vector<HttpResponse> responses;
  const ResponseCheck* check = nullptr;
};

struct Job {
  Batch* batch = nullptr;
  size_t index = 0;
  StoreLink* link = nullptr;
  HttpRequest request;
  HttpResponse response;
  Clock::time_point not_before{};
  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  char errbuf[CURL_ERROR_SIZE] = {};
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* job = static_cast<Job*>(user);
  const size_t len = size * n;
  auto& body = job->response.body;
  if (job->request.max_body >= 0 && static_cast<int64_t>(body.size() + len) > job->request.max_body) {
    job->response.refused = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  body.insert(body.end(), data, data + len);
  job->link->bytes += static_cast<int64_t>(len);
  return len;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* job = static_cast<Job*>(user);
  const size_t len = size * n;
  std::string line(data, len);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  auto& r = job->response;
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a redirect or a 100)
    r.headers.clear();
    return len;
  }
  const auto colon = line.find(':');
  if (colon == std::string::npos) return len;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  size_t start = colon + 1;
  while (start < line.size() && (line[start] == ' ' || line[start] == '\t')) ++start;
  std::string value = line.substr(start);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
  if (name == "content-length" && job->request.method != "HEAD") {
    const int64_t cl = std::atoll(value.c_str());
    if (job->request.max_body >= 0 && cl > job->request.max_body) {
      r.refused = true;
      return 0;
    }
    // Room for the body at once, never more than asked for or 256 MiB ahead of it.
    if (cl > 0) r.body.reserve(static_cast<size_t>(std::min<int64_t>(cl, int64_t{256} << 20)));
  }
  r.headers.emplace_back(std::move(name), std::move(value));
  return len;
}

// The engine: a multi handle and its thread, made on first use in each process.
class Engine {
 public:
  Engine() {
    multi_ = curl_multi_init();
    share_ = curl_share_init();
    if (!multi_ || !share_) throw IOError("libcurl: cannot create a multi handle");
    // One thread uses these handles: the share needs no lock callbacks.
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, 256L);
    thread_ = std::thread([this] { loop(); });
    thread_.detach();  // lives as long as the process (left at exit, never joined)
  }

  void submit(std::vector<Job*> jobs) {
    {
      std::lock_guard<std::mutex> lock(inbox_mu_);
      for (auto* j : jobs) inbox_.push_back(j);
    }
    curl_multi_wakeup(multi_);
  }

  // Ends `b`'s jobs not finished (in flight, queued or waiting to retry) with `why`: its
  // caller stops waiting for the network (Ctrl-C while a read hangs).
  void cancel(Batch* b) {
    {
      std::lock_guard<std::mutex> lock(inbox_mu_);
      cancels_.push_back(b);
    }
    curl_multi_wakeup(multi_);
  }

 private:
  struct Due {
    Clock::time_point when;
    Job* job;
    bool operator>(const Due& o) const { return when > o.when; }
  };

  void loop() {
    std::vector<Batch*> cancels;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(inbox_mu_);
        for (auto* j : inbox_) queued_[j->link].push_back(j);
        inbox_.clear();
        cancels.swap(cancels_);
      }
      for (Batch* b : cancels) end_batch(b);
      cancels.clear();
      const auto now = Clock::now();
      while (!delayed_.empty() && delayed_.top().when <= now) {
        Job* j = delayed_.top().job;
        delayed_.pop();
        queued_[j->link].push_front(j);
      }
      for (auto it = queued_.begin(); it != queued_.end();) {
        StoreLink* link = it->first;
        auto& q = it->second;
        while (!q.empty() && link->in_flight < std::max(1, link->concurrency)) {
          start(q.front());
          q.pop_front();
        }
        it = q.empty() ? queued_.erase(it) : std::next(it);
      }
      int running = 0;
      curl_multi_perform(multi_, &running);
      int left = 0;
      bool finished = false;
      while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
        if (m->msg != CURLMSG_DONE) continue;
        Job* job = nullptr;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&job));
        finish(job, m->data.result);
        finished = true;
      }
      if (finished && !queued_.empty()) continue;  // room was made: start the queued at once
      int timeout_ms = 1000;
      if (!delayed_.empty()) {
        const auto wait =
            std::chrono::duration_cast<std::chrono::milliseconds>(delayed_.top().when - Clock::now()).count();
        timeout_ms = static_cast<int>(std::clamp<int64_t>(wait, 0, 1000));
      }
      curl_multi_poll(multi_, nullptr, 0, timeout_ms, nullptr);
    }
  }

  CURL* take_easy() {
    if (!idle_.empty()) {
      CURL* e = idle_.back();
      idle_.pop_back();
      curl_easy_reset(e);
      return e;
    }
    return curl_easy_init();
  }

  void start(Job* job) {
    const auto& s = job->link->settings;
    const auto& rq = job->request;
    CURL* e = take_easy();
    if (!e) {
      job->response.error = "libcurl could not make a handle";
      complete(job);
      return;
    }
    job->easy = e;
    job->errbuf[0] = 0;
    curl_easy_setopt(e, CURLOPT_URL, rq.url.c_str());
    curl_easy_setopt(e, CURLOPT_PRIVATE, job);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_SHARE, share_);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, job->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, job);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, job);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 512L << 10);  // fewer, larger reads and callbacks
    curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);          // keys with "../" are keys, not paths to tidy
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, s.connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, s.stall_seconds);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, s.follow_redirects ? 1L : 0L);
    if (!s.ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, s.ca_file.c_str());
    if (!s.verify_tls) {
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    curl_slist* h = nullptr;
    for (const auto& x : s.headers) h = curl_slist_append(h, x.c_str());
    for (const auto& x : rq.headers) h = curl_slist_append(h, x.c_str());
    if (rq.method == "HEAD") {
      curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (rq.method == "PUT" || rq.method == "POST") {
      static const char empty[1] = {0};
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(rq.body_size));
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, rq.body ? reinterpret_cast<const char*>(rq.body) : empty);
      if (rq.method == "PUT") curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
      // No 100-continue round trip. (Not for SigV4: curl 7.88 would sign the removed
      // header; curl then waits at most this long for the "100 Continue".)
      if (s.aws_sigv4.empty()) h = curl_slist_append(h, "Expect:");
      else curl_easy_setopt(e, CURLOPT_EXPECT_100_TIMEOUT_MS, 100L);
      job->link->bytes_written += static_cast<int64_t>(rq.body_size);
    } else if (rq.method != "GET") {
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, rq.method.c_str());
    }
    job->header_list = h;
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    if (!s.aws_sigv4.empty()) {
      curl_easy_setopt(e, CURLOPT_AWS_SIGV4, s.aws_sigv4.c_str());
      curl_easy_setopt(e, CURLOPT_USERNAME, s.aws_key.c_str());
      curl_easy_setopt(e, CURLOPT_PASSWORD, s.aws_secret.c_str());
    }
    ++job->response.attempts;
    ++job->link->requests;
    ++job->link->in_flight;
    running_.insert(job);
    if (curl_multi_add_handle(multi_, e) != CURLM_OK) {
      running_.erase(job);
      curl_slist_free_all(job->header_list);
      job->header_list = nullptr;
      idle_.push_back(e);
      --job->link->in_flight;
      job->response.error = "libcurl could not start the request";
      complete(job);
    }
  }

  void end_batch(Batch* b) {
    const auto end = [&](Job* j) {
      j->response = HttpResponse{};
      j->response.error = "interrupted";
      complete(j);
    };
    for (auto it = running_.begin(); it != running_.end();) {
      Job* j = *it;
      if (j->batch != b) {
        ++it;
        continue;
      }
      it = running_.erase(it);
      release(j);
      end(j);
    }
    for (auto& [link, q] : queued_)
      for (auto it = q.begin(); it != q.end();) {
        if ((*it)->batch != b) {
          ++it;
          continue;
        }
        Job* j = *it;
        it = q.erase(it);
        end(j);
      }
    // Jobs waiting to retry.
    std::vector<Due> keep;
    while (!delayed_.empty()) {
      Due d = delayed_.top();
      delayed_.pop();
      if (d.job->batch == b) end(d.job);
      else keep.push_back(d);
    }
    for (const Due& d : keep) delayed_.push(d);
  }

  void complete(Job* job) {
    Batch* b = job->batch;
    std::lock_guard<std::mutex> lock(b->mu);
    b->responses[job->index] = std::move(job->response);
    if (--b->remaining == 0) b->done.notify_all();
  }

  void release(Job* job) {
    curl_multi_remove_handle(multi_, job->easy);
    idle_.push_back(job->easy);
    job->easy = nullptr;
    curl_slist_free_all(job->header_list);
    job->header_list = nullptr;
    --job->link->in_flight;
  }

  void finish(Job* job, CURLcode code) {
    auto& r = job->response;
    long status = 0;
    curl_easy_getinfo(job->easy, CURLINFO_RESPONSE_CODE, &status);
    r.status = status;
    const std::string curl_text = job->errbuf[0] ? std::string(job->errbuf) : std::string(curl_easy_strerror(code));
    running_.erase(job);
    release(job);
    std::string reason;       // why to try again
    std::string final_error;  // why to stop
    if (r.refused) {
      final_error = "the response is larger than the " + std::to_string(job->request.max_body) + " bytes expected";
    } else if (code != CURLE_OK) {
      (is_retryable_code(code) ? reason : final_error) = curl_text;
    } else if (is_retryable_status(status)) {
      reason = "HTTP " + std::to_string(status);
    } else if (status >= 200 && status < 300 && job->batch->check && *job->batch->check) {
      reason = (*job->batch->check)(job->request, r);
    }
    if (!reason.empty()) {
      const auto& s = job->link->settings;
      if (r.attempts <= s.max_retries) {
        double retry_after = 0;
        const std::string ra = r.header("retry-after");
        if (!ra.empty() && std::isdigit(static_cast<unsigned char>(ra[0]))) retry_after = std::atof(ra.c_str());
        const double delay =
            backoff_seconds(s, r.attempts, retry_after, std::uniform_real_distribution<double>(0, 1)(rng_));
        ++job->link->retries;
        r.body.clear();
        r.headers.clear();
        r.status = 0;
        job->not_before = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(delay * 1e6));
        delayed_.push({job->not_before, job});
        return;
      }
      final_error = reason + " (after " + std::to_string(r.attempts) + (r.attempts == 1 ? " attempt)" : " attempts)");
    }
    r.error = final_error;
    // Never a partial body; an error status's body stays (S3's <Error> says what went wrong).
    if (!final_error.empty() && !(code == CURLE_OK && is_retryable_status(status))) r.body.clear();
    complete(job);
  }

  CURLM* multi_ = nullptr;
  CURLSH* share_ = nullptr;
  std::thread thread_;
  std::mutex inbox_mu_;
  std::vector<Job*> inbox_;
  std::vector<Batch*> cancels_;
  std::unordered_set<Job*> running_;  // added to the multi handle
  std::map<StoreLink*, std::deque<Job*>> queued_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> delayed_;
  std::vector<CURL*> idle_;
  std::mt19937_64 rng_{std::random_device{}()};
};

// This process's engine: a child of fork() makes its own (the parent's thread is not there).
Engine& engine() {
  static std::mutex mu;
  static Engine* current = nullptr;
  static pid_t owner = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (!current || owner != ::getpid()) {
    static std::once_flag global_init;
    std::call_once(global_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    current = new Engine();  // never deleted: its thread runs until the process ends
    owner = ::getpid();
  }
  return *current;
}

}  // namespace

std::vector<HttpResponse> perform(StoreLink& link, std::vector<HttpRequest> requests, const ResponseCheck& check) {
  if (requests.empty()) return {};
  const auto t0 = Clock::now();
  Batch batch;
  batch.remaining = requests.size();
  batch.responses.resize(requests.size());
  batch.check = &check;
  std::vector<Job> jobs(requests.size());
  std::vector<Job*> pointers;
  pointers.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].batch = &batch;
    jobs[i].index = i;
    jobs[i].link = &link;
    jobs[i].request = std::move(requests[i]);
    pointers.push_back(&jobs[i]);
  }
  Engine& e = engine();
  e.submit(std::move(pointers));
  bool cancelled = false;
  {
    // Woken now and then to see Ctrl-C (interrupted()): the batch is then ended by the
    // engine, which lets go of its jobs before they go out of scope here.
    std::unique_lock<std::mutex> lock(batch.mu);
    while (!batch.done.wait_for(lock, std::chrono::milliseconds(100), [&] { return batch.remaining == 0; })) {
      if (!cancelled && interrupted()) {
        cancelled = true;
        lock.unlock();
        e.cancel(&batch);
        lock.lock();
      }
    }
  }
  link.wait_nanoseconds += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  if (cancelled)
    throw Cancelled("evaluation interrupted while waiting for " + std::to_string(jobs.size()) + " request(s) to '" +
                    jobs[0].request.url + "'");
  return std::move(batch.responses);
}

}  // namespace b2lazy::remote
