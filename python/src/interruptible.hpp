// Evaluations run from Python: without the GIL, stopped by SIGINT and SIGTERM, parked
// (never back into Python) once the interpreter is finalizing; progress callbacks.
#pragma once
#include <nanobind/nanobind.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <thread>
#include <utility>

#include <b2lazy/error.hpp>
#include <b2lazy/interrupt.hpp>

namespace b2lazy_py {

namespace nb = nanobind;

// Set by cancel_at_exit() on the thread that runs the atexit hooks: the interpreter is
// finalizing, so another thread that ends an evaluation then must not take the GIL again
// (Python 3.11 ends such a thread with pthread_exit, which cannot unwind through C++
// frames); it waits for the process to end instead, as Python's own daemon threads do.
extern std::atomic<bool> g_exiting;
extern std::thread::id g_exiting_thread;  // written before g_exiting is set
extern std::atomic<int> g_in_flight;      // interruptible() calls under way (or parked)

// Sleeps for good on any thread but g_exiting_thread once g_exiting is set.
void park_if_exiting();

// A Python progress callback for ComputeOptions::progress. An Exception it raises is
// reported as unraisable (a broken callback must not stop the evaluation); a
// KeyboardInterrupt or SystemExit (Python runs signal handlers inside the callback when it
// runs on the main thread) stops the evaluation and is raised once it has unwound.
struct Progress {
  nb::object callback;
  std::atomic<bool> stop{false};
  std::optional<nb::python_error> raised;  // touched with the GIL held only

  std::function<void(int64_t, int64_t)> function() {
    if (callback.is_none()) return {};
    return [this](int64_t done, int64_t total) {
      nb::gil_scoped_acquire g;
      try {
        callback(done, total);
      } catch (nb::python_error& e) {
        if (e.matches(PyExc_Exception)) {
          e.discard_as_unraisable("b2lazy progress callback");
        } else if (!raised) {
          raised.emplace(std::move(e));
          stop = true;
        }
      }
    };
  }
};

// Runs `fn` (an evaluation) without the GIL inside an InterruptScope: SIGINT and SIGTERM
// stop it on any thread, and Python's own handlers still see them (chained). After a stop,
// Python decides what is raised: PyErr_CheckSignals() runs its handlers on the main
// thread (KeyboardInterrupt by default, or the exception of the user's handler); if none
// raises (another thread, or a handler that returns), KeyboardInterrupt. The scope ends
// after `fn`'s partial output is gone; a SIGTERM with the default disposition then ends
// the process.
template <class F> auto interruptible(F&& fn, Progress* progress = nullptr) -> decltype(fn()) {
  std::optional<decltype(fn())> result;
  bool cancelled = false;
  std::exception_ptr error;
  {
    ++g_in_flight;
    nb::gil_scoped_release release;
    park_if_exiting();
    try {
      b2lazy::InterruptScope scope;
      result.emplace(fn());
    } catch (const b2lazy::Cancelled&) {
      cancelled = true;
    } catch (...) {
      error = std::current_exception();
    }
    park_if_exiting();
    --g_in_flight;
  }
  if (progress && progress->raised) {  // the user's interrupt comes first
    nb::python_error e = std::move(*progress->raised);
    progress->raised.reset();
    throw e;
  }
  if (error) std::rethrow_exception(error);
  if (cancelled) {
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw nb::python_error();
  }
  return std::move(*result);
}

}  // namespace b2lazy_py
