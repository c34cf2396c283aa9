// The b2lazy command: evaluate expressions over b2nd files, explain plans, inspect files,
// run the demo. Exit status: 0 success, 1 failure, 2 usage or expression error, 130 interrupted.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "args.hpp"
#include "b2lazy/b2lazy.hpp"
#include "commands.hpp"

namespace {
const char* kUsage =
    "usage: b2lazy <command> ...\n"
    "  eval EXPR NAME=PATH ... -o OUT [--chunks C] [--blocks B] [--codec zstd] [--clevel 1]\n"
    "       [--filter shuffle] [--shards S] [--compressor blosc|zstd] [--threads N] [--max-memory 1G]\n"
    "       [--progress | --no-progress] [--scheduler tcp://HOST:PORT | local:N]\n"
    "                              evaluate EXPR into OUT, compressed: a b2nd file (OUT.b2nd)\n"
    "                              or a Zarr v3 array (OUT.zarr, zarr:OUT; --shards, --compressor);\n"
    "                              --scheduler: on a dask.distributed cluster (local:N starts N workers)\n"
    "  explain EXPR NAME=PATH ...  print the plan\n"
    "  info PATH                   shape, dtype, chunks, blocks or shards, codecs and ratio of a stored array;\n"
    "                              operands, shape, dtype and plan of a saved expression (Array.save)\n"
    "  functions [NAME ...]        the functions EXPR can call, with their signatures (NAME: in detail)\n"
    "  demo [--n 4096] [--dir D] [--threads N] [--keep]\n"
    "                              generate operands and evaluate the expressions b2lazy is for\n"
    "EXPR uses Python syntax, e.g. \"matmul(sum(a, axis=1), b) + 1\"; C, B and S are like 1000,1000.\n"
    "b2lazy COMMAND --help shows a command's options.\n"
    "PATH and OUT: b2nd (x.b2nd, a sparse directory), Zarr v2/v3 (x.zarr, zarr:PATH), file://PATH.\n";

// The message with "b2lazy: error: " before its first line (a caret may follow).
int report(const char* what, const std::string& message, int status) {
  std::fprintf(stderr, "b2lazy: %s: %s\n", what, message.c_str());
  return status;
}
}  // namespace

// OpenBLAS starts its thread pool as the program loads: a thread per core, spinning for
// a while, beside our workers (each calls BLAS single-threaded). `sum(a, axis=1)` over a
// 128 MiB file took 2.3 CPU-s in 20 runs with it, 0.65 without. Before anything else, the
// command starts itself again with OPENBLAS_NUM_THREADS=1 unless the user set it
// (B2LAZY_OPENBLAS_SET marks that we did: the Python of --scheduler gets it back unset).
void without_blas_threads(char** argv) {
  if (std::getenv("OPENBLAS_NUM_THREADS")) return;
  ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
  ::setenv("B2LAZY_OPENBLAS_SET", "1", 1);
  ::execv("/proc/self/exe", argv);  // returns only on failure: go on as we are
  ::unsetenv("OPENBLAS_NUM_THREADS");
  ::unsetenv("B2LAZY_OPENBLAS_SET");
}

int main(int argc, char** argv) {
  using namespace b2lazy;
  using namespace b2lazy::cli;
  without_blas_threads(argv);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::puts("b2lazy " B2LAZY_VERSION);
    return 0;
  }
  if (const char* help = command_help(cmd); help != nullptr && wants_help(args)) {
    std::fputs(help, stdout);
    return 0;
  }
  try {
    if (cmd == "eval") return cmd_eval(args);
    if (cmd == "explain") return cmd_explain(args);
    if (cmd == "info") return cmd_info(args);
    if (cmd == "demo") return cmd_demo(args);
    if (cmd == "functions") return cmd_functions(args);
    return report("error",
                  "unknown command '" + cmd + "' (commands: eval, explain, info, functions, demo; see b2lazy --help)",
                  2);
  } catch (const UsageError& e) {
    return report("error", e.what(), 2);
  } catch (const Cancelled&) {
    return report("interrupted", "stopped; no output file was written", 130);
  } catch (const std::bad_alloc&) {
    return report("error", "out of memory", 1);
  } catch (const std::exception& e) {
    return report("error", e.what(), 1);
  }
}
