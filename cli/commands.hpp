// The subcommands of the b2lazy command. Each returns the exit status; user mistakes
// throw UsageError (status 2), failures b2lazy::Error (status 1).
#pragma once
#include <string>
#include <vector>

namespace b2lazy::cli {

int cmd_eval(const std::vector<std::string>& argv);
int cmd_explain(const std::vector<std::string>& argv);
int cmd_info(const std::vector<std::string>& argv);
int cmd_demo(const std::vector<std::string>& argv);
int cmd_functions(const std::vector<std::string>& argv);

// Peak resident memory since the last reset (Linux VmHWM; 0 if unknown), and its reset.
size_t peak_rss_bytes();
size_t rss_bytes();
void reset_peak_rss();

}  // namespace b2lazy::cli
