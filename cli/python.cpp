// Subcommands that need Python (dask.distributed; saved expressions, which are Python
// namespace calls): the command starts Python's b2lazy package in its place.
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "b2lazy/error.hpp"
#include "commands.hpp"

namespace b2lazy::cli {

[[noreturn]] void run_python(const std::vector<std::string>& argv, const std::string& why) {
  // The interpreter next to this command (the environment pip installed it into), else $PATH's.
  std::string python = "python3";
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (const char* env = std::getenv("B2LAZY_PYTHON")) python = env;
  else if (!ec && std::filesystem::exists(self.parent_path() / "python3"))
    python = (self.parent_path() / "python3").string();
  std::vector<std::string> all = {python, "-m", "b2lazy._cli"};
  all.insert(all.end(), argv.begin(), argv.end());
  std::vector<char*> cargs;
  for (auto& a : all) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  std::fflush(stdout);
  if (std::getenv("B2LAZY_OPENBLAS_SET")) {  // main() set it for this process only (NumPy's BLAS keeps its threads)
    ::unsetenv("OPENBLAS_NUM_THREADS");
    ::unsetenv("B2LAZY_OPENBLAS_SET");
  }
  ::execvp(cargs[0], cargs.data());
  throw IOError(why + " with Python's b2lazy package, but '" + python + "' cannot be started (" + std::strerror(errno) +
                ")");
}

bool is_saved_expression(const std::string& path) {
  // As b2lazy/_serial.py's is_saved_expression: a regular file whose first bytes are JSON
  // naming the format (a FIFO or a device is not read).
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream f(path, std::ios::binary);
  std::string head(64, '\0');
  f.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(f.gcount()));
  const size_t first = head.find_first_not_of(" \t\r\n");
  return first != std::string::npos && head[first] == '{' && head.find("b2lazy-expression") != std::string::npos;
}

}  // namespace b2lazy::cli
