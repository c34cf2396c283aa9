#include "exec/thread_pool.hpp"

#include "b2lazy/context.hpp"

namespace b2lazy {

ThreadPool::ThreadPool(int nthreads) {
  if (nthreads <= 0) nthreads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 0; i < nthreads; ++i) workers_.emplace_back([this, i] { loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
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

Context::Context(int nthreads) : pool_(std::make_unique<ThreadPool>(nthreads)) {}
Context::~Context() = default;
int Context::nthreads() const { return pool_->size(); }
ThreadPool& Context::pool() { return *pool_; }

}  // namespace b2lazy
