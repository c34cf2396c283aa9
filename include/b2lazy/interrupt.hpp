// Stopping evaluations on signals (Ctrl-C, `kill`, a closed terminal), for the Python
// binding and the command alike.
#pragma once
#include <chrono>
#include <csignal>
#include <initializer_list>

namespace b2lazy {

// While at least one scope is alive in the process (scopes nest and may live on any
// thread), the signals the scopes name set one process-wide "interrupted" flag, which
// every running evaluation checks between work units (an output chunk, a reduction slab,
// a contraction panel, a pull): each stops within one unit, removes its partial output
// and throws Cancelled.
//  - A signal the process ignores (SIG_IGN, e.g. SIGHUP under nohup) stays ignored.
//  - A previous handler that is a function (Python's own C handler, which only trips a
//    flag) is called too, so its owner still learns of the signal.
//  - When the last scope ends, the previous dispositions come back. A signal other than
//    SIGINT that arrived while its previous disposition was the default (end the process)
//    is then raised again, so the process still ends by that signal — after the partial
//    outputs are gone. SIGINT is the caller's to report (KeyboardInterrupt, status 130).
//  - A child forked while scopes are alive starts with the previous dispositions back.
class InterruptScope {
 public:
  explicit InterruptScope(std::initializer_list<int> signals = {SIGINT, SIGTERM});
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  int generation_;  // a scope copied into a forked child by fork() is void there
};

// True from a handled signal (or cancel_evaluations()) until the last scope ends. Every
// evaluation checks it, with or without a scope of its own.
bool interrupted();

// Stops every running evaluation and waits up to `timeout` for the scopes to end (true
// if they all did). For the end of a process that still has evaluations running on other
// threads (Python's daemon threads at interpreter exit): their partial outputs are
// removed before the process goes.
bool cancel_evaluations(std::chrono::milliseconds timeout);

}  // namespace b2lazy
