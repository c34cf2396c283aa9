// The globals of interruptible.hpp, and run_interruptible (bindings.hpp).
#include "interruptible.hpp"

#include <chrono>

#include "bindings.hpp"

namespace b2lazy_py {

std::atomic<bool> g_exiting{false};
std::thread::id g_exiting_thread;
std::atomic<int> g_in_flight{0};

void park_if_exiting() {
  if (!g_exiting || std::this_thread::get_id() == g_exiting_thread) return;
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

void run_interruptible(const std::function<void()>& fn) {
  interruptible([&] {
    fn();
    return 0;
  });
}

}  // namespace b2lazy_py
