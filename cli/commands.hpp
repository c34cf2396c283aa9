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

// Runs `python -m b2lazy._cli ARGV...` in place of this process (cli/python.cpp); `why`
// starts the error when it cannot be started.
[[noreturn]] void run_python(const std::vector<std::string>& argv, const std::string& why);
// Is PATH a lazy expression saved by Python's Array.save() (JSON of its format)?
bool is_saved_expression(const std::string& path);
// The usage and options of a subcommand (cli/help.cpp), or nullptr for an unknown one.
const char* command_help(const std::string& command);
// Does argv ask for help (-h or --help among the options)?
bool wants_help(const std::vector<std::string>& argv);

// Peak resident memory since the last reset (Linux VmHWM; 0 if unknown), and its reset.
size_t peak_rss_bytes();
size_t rss_bytes();
void reset_peak_rss();

}  // namespace b2lazy::cli
