#include "runtime/thread_pool.hpp"

#include <string>
#include <system_error>

#include "b2lazy/context.hpp"
#include "b2lazy/error.hpp"

namespace b2lazy {

ThreadPool::ThreadPool(int nthreads) {
  if (nthreads <= 0) nthreads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  workers_.reserve(static_cast<size_t>(nthreads));
  try {
    for (int i = 0; i < nthreads; ++i) workers_.emplace_back([this, i] { loop(i); });
  } catch (const std::system_error& e) {  // e.g. an address-space or process-count limit
    const size_t made = workers_.size();
    stop_and_join();  // the destructor does not run for a constructor that throws
    throw Error("cannot create " + std::to_string(nthreads) + " worker threads (" + std::to_string(made) +
                " were created, then: " + e.what() + "); ask for fewer threads or raise the limit");
  }
}

ThreadPool::~ThreadPool() { stop_and_join(); }

void ThreadPool::stop_and_join() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

void ThreadPool::run(const std::function<void(int)>& fn, int n) {
  std::lock_guard<std::mutex> job(job_mu_);
  std::unique_lock<std::mutex> lk(mu_);
  job_ = &fn;
  job_workers_ = (n <= 0 || n > size()) ? size() : n;
  pending_ = job_workers_;
  ++generation_;
  cv_.notify_all();
  done_cv_.wait(lk, [this] { return pending_ == 0; });
  job_ = nullptr;
}

void ThreadPool::loop(int index) {
  long seen = 0;
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    if (index >= job_workers_) continue;
    const auto* fn = job_;
    lk.unlock();
    (*fn)(index);  // the executor catches exceptions inside fn
    lk.lock();
    if (--pending_ == 0) done_cv_.notify_all();
  }
}

namespace {
int checked_nthreads(int nthreads) {
  if (nthreads < 0 || nthreads > kMaxThreads)
    throw ValueError("nthreads must be 0 (all cores) or 1.." + std::to_string(kMaxThreads) + ", got " +
                     std::to_string(nthreads));
  return nthreads;
}
}  // namespace

Context::Context(int nthreads) : pool_(std::make_unique<ThreadPool>(checked_nthreads(nthreads))) {}
Context::~Context() = default;
int Context::nthreads() const { return pool_->size(); }
ThreadPool& Context::pool() { return *pool_; }

}  // namespace b2lazy
