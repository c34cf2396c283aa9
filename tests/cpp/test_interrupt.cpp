// Stopping evaluations: the cancel flag and signals (InterruptScope) are seen inside a
// node's own work, not only between output chunks; thread creation failures are errors.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "b2lazy/b2lazy.hpp"

using namespace b2lazy;
namespace fs = std::filesystem;

namespace {

// A float64 source of ones that calls on_fill() after each fill: it stands for "the
// first unit of work is done" (then a flag is set or a signal raised), and its count
// shows how much work ran after the stop.
class CountingOnes : public Node {
 public:
  CountingOnes(int64_t n, std::function<void()> on_fill) : Node(DType::F64, {n}), on_fill_(std::move(on_fill)) {}
  std::string kind() const override { return "counting"; }
  void fill(const Region& r, void* out, ThreadState&) const override {
    std::fill_n(static_cast<double*>(out), r.size(), 1.0);
    ++fills;
    on_fill_();
  }
  mutable std::atomic<int> fills{0};

 private:
  std::function<void()> on_fill_;
};

constexpr int64_t kN = int64_t(1) << 24;  // 128 MiB of float64: hundreds of slabs
constexpr size_t kBudget = size_t(16) << 20;

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("b2lazy_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// The address space in use (VmSize), in bytes.
size_t vm_size() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  return 0;
}

}  // namespace

// sum() of a big array has one output chunk, whose reduction forks its slabs over the
// workers (or loops over them with one thread): the stop is seen between slabs.
TEST(Interrupt, CancelFlagStopsSingleChunkReduction) {
  for (int nthreads : {1, 2}) {
    Context ctx(nthreads);
    std::atomic<bool> cancel{false};
    auto src = std::make_shared<CountingOnes>(kN, [&] { cancel = true; });
    EvalOptions o;
    o.max_memory = kBudget;
    o.cancel = &cancel;
    double out = 0;
    EXPECT_THROW(sum(Array(src)).to_buffer(&out, o, &ctx), Cancelled) << nthreads;
    EXPECT_LE(src->fills.load(), 2 * nthreads) << "work went on after the stop, " << nthreads << " threads";
    // Without a stop, the same evaluation reads every slab.
    cancel = false;
    auto all = std::make_shared<CountingOnes>(kN, [] {});
    sum(Array(all)).to_buffer(&out, o, &ctx);
    EXPECT_EQ(out, static_cast<double>(kN));
    EXPECT_GT(all->fills.load(), 100);
  }
}

// A signal raised during the work (on a worker thread) stops a compute() to a file: no
// output and no temporary are left, and the scope restores the previous disposition.
TEST(Interrupt, SignalInScopeStopsComputeAndLeavesNoFile) {
  fs::path d = temp_dir("interrupt");
  static std::atomic<int> chained{0};
  chained = 0;
  struct sigaction mine {
  }, before{};
  mine.sa_handler = [](int) { ++chained; };
  sigemptyset(&mine.sa_mask);
  sigaction(SIGUSR1, &mine, &before);
  {
    Context ctx(2);
    auto src = std::make_shared<CountingOnes>(kN, [] { raise(SIGUSR1); });
    ComputeOptions o;
    o.urlpath = (d / "out.b2nd").string();
    o.max_memory = kBudget;
    InterruptScope scope({SIGUSR1});
    EXPECT_FALSE(interrupted());
    EXPECT_THROW((Array(src) * 2.0).compute(o, &ctx), Cancelled);
    EXPECT_TRUE(interrupted());
    EXPECT_LE(src->fills.load(), 4);
  }
  EXPECT_FALSE(interrupted());   // until the next run of evaluations
  EXPECT_GE(chained.load(), 1);  // the previous handler (a function) was called too
  struct sigaction now {};
  sigaction(SIGUSR1, nullptr, &now);
  EXPECT_EQ(now.sa_handler, mine.sa_handler);  // and is back
  EXPECT_TRUE(fs::is_empty(d));
  sigaction(SIGUSR1, &before, nullptr);
  fs::remove_all(d);
}

// Scopes nest across threads: the flag lasts until the last one ends; an evaluation in
// any of them stops.
TEST(Interrupt, NestedScopesShareOneFlag) {
  struct sigaction noop {
  }, before{};
  noop.sa_handler = [](int) {};  // a handler of our own: the default would end the test
  sigemptyset(&noop.sa_mask);
  sigaction(SIGUSR2, &noop, &before);
  Context ctx(1);
  {
    InterruptScope outer({SIGUSR2});
    {
      InterruptScope inner({SIGUSR2});
      raise(SIGUSR2);
    }
    EXPECT_TRUE(interrupted());
    double out = 0;
    EXPECT_THROW(sum(ones({1000})).to_buffer(&out, EvalOptions{}, &ctx), Cancelled);
  }
  EXPECT_FALSE(interrupted());
  double out = 0;
  sum(ones({1000})).to_buffer(&out, EvalOptions{}, &ctx);  // a new run is not stopped
  EXPECT_EQ(out, 1000.0);
  sigaction(SIGUSR2, &before, nullptr);
}

TEST(Interrupt, IgnoredSignalStaysIgnored) {
  struct sigaction ign {
  }, before{};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGUSR2, &ign, &before);
  {
    InterruptScope scope({SIGUSR2});
    raise(SIGUSR2);
    EXPECT_FALSE(interrupted());
  }
  sigaction(SIGUSR2, &before, nullptr);
}

// SIGTERM with the default disposition: the evaluation stops, then the process still
// ends by SIGTERM when the scope ends.
TEST(InterruptDeathTest, DefaultSigtermIsRaisedAgainAfterTheScope) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        signal(SIGTERM, SIG_DFL);
        {
          InterruptScope scope;
          raise(SIGTERM);
          std::cerr << "still running" << std::endl;
        }
        std::exit(0);
      },
      testing::KilledBySignal(SIGTERM), "still running");
}

// SIGINT is the caller's to report (status 130, KeyboardInterrupt): not raised again.
TEST(InterruptDeathTest, SigintIsNotRaisedAgain) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        signal(SIGINT, SIG_DFL);
        {
          InterruptScope scope;
          raise(SIGINT);
        }
        std::exit(interrupted() ? 1 : 7);
      },
      testing::ExitedWithCode(7), "");
}

// A child forked while a scope is alive (Python's multiprocessing) must still end by
// SIGTERM (Pool.terminate()); it does not inherit the scope.
TEST(Interrupt, ForkedChildHasTheDefaultsBack) {
  signal(SIGTERM, SIG_DFL);
  InterruptScope scope;
  const pid_t pid = fork();
  if (pid == 0) {
    raise(SIGTERM);
    _exit(interrupted() ? 1 : 2);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_FALSE(interrupted());
}

TEST(Threads, CountIsBounded) {
  EXPECT_THROW(Context(-1), ValueError);
  EXPECT_THROW(Context(kMaxThreads + 1), ValueError);
}

// Under an address-space limit the workers cannot all be created: an error naming the
// count, not a hang or a crash.
TEST(ThreadsDeathTest, CreationFailureIsAnError) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's shadow memory does not live under an address-space limit";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "AddressSanitizer's shadow memory does not live under an address-space limit";
#endif
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        rlimit lim{};
        getrlimit(RLIMIT_AS, &lim);
        lim.rlim_cur = static_cast<rlim_t>(vm_size()) + (rlim_t(256) << 20);  // 400 thread stacks do not fit
        setrlimit(RLIMIT_AS, &lim);
        try {
          Context ctx(400);
          std::cerr << "created " << ctx.nthreads() << std::endl;
          std::exit(0);
        } catch (const Error& e) {
          std::cerr << e.what() << std::endl;
          std::exit(3);
        }
      },
      testing::ExitedWithCode(3), "cannot create 400 worker threads");
}
