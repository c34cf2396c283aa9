#include "io/hdf5/h5_library.hpp"

#include <hdf5.h>

namespace b2lazy::h5 {

std::mutex& library_lock() {
  static std::mutex m;
  return m;
}

void keep_library_at_exit() {
  static bool done = false;  // (under the lock)
  if (!done) {
    H5dont_atexit();
    done = true;
  }
}

void quiet_this_thread() {
  thread_local bool quiet = false;
  if (!quiet) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    quiet = true;
  }
}

std::string last_error() {
  struct Found {
    std::string desc;
    hid_t plugin_major;
    bool stopped;
  } found{"", H5E_PLUGIN, false};
  // Walked from the API call inwards: the last description kept is the innermost.
  auto visit = [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
    auto* f = static_cast<Found*>(data);
    f->stopped = f->stopped || e->maj_num == f->plugin_major;  // the plugin search's details: not these
    if (!f->stopped && e->desc && *e->desc) f->desc = e->desc;
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, visit, &found);
  H5Eclear2(H5E_DEFAULT);
  return found.desc;
}

std::string said() {
  const std::string m = last_error();
  return m.empty() ? "" : " (libhdf5: " + m + ")";
}

}  // namespace b2lazy::h5
