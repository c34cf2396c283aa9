// Calling libhdf5. Debian's build is thread-safe (one lock inside the library) but every
// call is also made under our own lock, so that a serial build works too. Its error stack
// and the setting that prints it to stderr are per thread: every thread that calls libhdf5
// silences it first (H5Lock does), and what went wrong is taken from the stack into our
// exceptions (last_error).
#pragma once
#include <mutex>
#include <string>

namespace b2lazy::h5 {

// The lock every libhdf5 call is made under.
std::mutex& library_lock();

// Turns off libhdf5's printing of error stacks on the calling thread (once per thread).
void quiet_this_thread();

// Before libhdf5's first use (once): no termination at exit. It would force-close what is
// still open when the process exits (sources not yet freed), in an order that crashes
// libhdf5 1.10 on some damaged files (H5F__close_cb, found by the HDF5 fuzzer); b2lazy only
// reads, so there is nothing to flush. Under library_lock().
void keep_library_at_exit();

// Holds library_lock() with this thread quiet.
class H5Lock {
 public:
  H5Lock() : g_(library_lock()) {
    keep_library_at_exit();
    quiet_this_thread();
  }

 private:
  std::lock_guard<std::mutex> g_;
};

// What libhdf5 said about the last failure on this thread: the innermost description of
// its error stack (not the plugin search's, which only lists directories), then the stack
// is cleared. Empty when it said nothing. Call under library_lock().
std::string last_error();

// " (libhdf5: MESSAGE)", or "" when libhdf5 said nothing.
std::string said();

}  // namespace b2lazy::h5
