// A fixed set of worker threads owned by a Context.
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace b2lazy {

class ThreadPool {
 public:
  // Throws Error (no thread left behind) when a worker cannot be created.
  explicit ThreadPool(int nthreads);
  ~ThreadPool();
  int size() const { return static_cast<int>(workers_.size()); }
  // Runs fn(worker) on the first `n` workers (all when n <= 0) and waits for all.
  // One job at a time per pool; concurrent callers queue up.
  void run(const std::function<void(int)>& fn, int n = 0);

 private:
  void loop(int index);
  void stop_and_join();
  std::vector<std::thread> workers_;
  std::mutex job_mu_;  // serialises callers
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int)>* job_ = nullptr;
  int job_workers_ = 0;
  long generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

}  // namespace b2lazy
