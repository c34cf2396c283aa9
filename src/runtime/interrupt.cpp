// InterruptScope: signal handlers installed while evaluations run, one process-wide flag.
#include "b2lazy/interrupt.hpp"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include <pthread.h>

namespace b2lazy {

namespace {

constexpr int kSignals = 64;  // signal numbers below this can be handled
std::atomic<bool> g_interrupted{false};
std::atomic<uint64_t> g_received{0};  // one bit per signal that arrived
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<uint64_t>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

// Per signal: whether our handler is installed, and what it replaced. Written under g_mu
// while our handler is not installed for that signal; read by the handler.
struct Slot {
  bool installed = false;
  struct sigaction previous {};
};
Slot g_slots[kSignals];
std::mutex g_mu;
std::condition_variable g_ended;  // the last scope ended
int g_scopes = 0;
int g_generation = 0;  // bumped in a forked child, whose copies of the scopes are void

bool is_function(const struct sigaction& sa) {
  if (sa.sa_flags & SA_SIGINFO) return sa.sa_sigaction != nullptr;
  return sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
}

bool is_default(const struct sigaction& sa) { return !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL; }

// Async-signal-safe: lock-free atomics, then the previous handler (Python's only trips a
// flag and writes to its wakeup fd).
void on_signal(int sig, siginfo_t* info, void* uctx) {
  const int saved_errno = errno;
  g_interrupted.store(true, std::memory_order_relaxed);
  g_received.fetch_or(uint64_t(1) << sig, std::memory_order_relaxed);
  const struct sigaction& prev = g_slots[sig].previous;
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) prev.sa_sigaction(sig, info, uctx);
  } else if (is_function(prev)) {
    prev.sa_handler(sig);
  }
  errno = saved_errno;
}

bool is_ours(const struct sigaction& sa) { return (sa.sa_flags & SA_SIGINFO) && sa.sa_sigaction == on_signal; }

void install(int sig) {  // under g_mu
  if (sig <= 0 || sig >= kSignals || g_slots[sig].installed) return;
  struct sigaction current {};
  if (sigaction(sig, nullptr, &current) != 0) return;
  if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) return;  // ignored stays ignored
  g_slots[sig].previous = current;
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sigemptyset(&sa.sa_mask);
  // Keep a previous handler's choice of interrupted system calls (Python wants EINTR so
  // that its main thread runs its handler promptly); restart them when we replace the
  // default, so a stray EINTR never turns a stop into an I/O error.
  sa.sa_flags = SA_SIGINFO | (is_function(current) ? (current.sa_flags & (SA_RESTART | SA_ONSTACK)) : SA_RESTART);
  if (sigaction(sig, &sa, nullptr) == 0) g_slots[sig].installed = true;
}

// Restores every signal we handle (unless someone replaced our handler meanwhile); returns
// the signals to raise again: arrived, not SIGINT, previous disposition the default.
std::vector<int> restore_all() {  // under g_mu
  std::vector<int> again;
  const uint64_t received = g_received.load();
  for (int sig = 1; sig < kSignals; ++sig) {
    Slot& s = g_slots[sig];
    if (!s.installed) continue;
    s.installed = false;
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0 || !is_ours(current)) continue;
    sigaction(sig, &s.previous, nullptr);
    if ((received >> sig & 1) && sig != SIGINT && is_default(s.previous)) again.push_back(sig);
  }
  return again;
}

// A child forked while scopes were alive (Python's multiprocessing forks) runs none of
// their evaluations: it starts with the previous dispositions back, so that SIGTERM ends
// it as before.
void after_fork_in_child() {
  restore_all();
  g_scopes = 0;
  ++g_generation;
  g_interrupted.store(false);
  g_received.store(0);
  g_mu.unlock();
}

}  // namespace

InterruptScope::InterruptScope(std::initializer_list<int> signals) {
  std::lock_guard<std::mutex> g(g_mu);
  static const bool fork_handlers = [] {
    return pthread_atfork([] { g_mu.lock(); }, [] { g_mu.unlock(); }, after_fork_in_child) == 0;
  }();
  (void)fork_handlers;
  generation_ = g_generation;
  if (g_scopes++ == 0) {  // a new run of evaluations: forget the last one's signals
    g_interrupted.store(false);
    g_received.store(0);
  }
  for (int sig : signals) install(sig);
}

InterruptScope::~InterruptScope() {
  std::vector<int> again;
  {
    std::lock_guard<std::mutex> g(g_mu);
    if (generation_ != g_generation || --g_scopes > 0) return;
    again = restore_all();
    g_interrupted.store(false);
    g_ended.notify_all();
  }
  for (int sig : again) {  // the default action: the process ends by this signal
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
  }
}

bool interrupted() { return g_interrupted.load(std::memory_order_relaxed); }

bool cancel_evaluations(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lk(g_mu);
  if (g_scopes == 0) return true;
  g_interrupted.store(true);
  return g_ended.wait_for(lk, timeout, [] { return g_scopes == 0; });
}

}  // namespace b2lazy
