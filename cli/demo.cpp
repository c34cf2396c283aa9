// b2lazy demo: generates operands on disk and evaluates the expressions b2lazy exists
// for, printing the time, the peak memory and what a materialising (NumPy) evaluation
// would hold in memory.
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "args.hpp"
#include "b2lazy/b2lazy.hpp"
#include "commands.hpp"
#include "progress.hpp"

namespace fs = std::filesystem;

namespace b2lazy::cli {

namespace {
size_t status_field(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::strtoull(line.c_str() + key.size(), nullptr, 10) * 1024;
  return 0;
}

// The bytes a NumPy evaluation holds at once, at most: every operand loaded and every
// intermediate result (views such as slices, transposes and reshapes cost nothing).
size_t materialising_bytes(const Array& a) {
  static const std::set<std::string> views = {"slice", "permute_dims", "reshape", "broadcast_to", "keep"};
  std::set<const Node*> seen;
  size_t total = 0;
  std::function<void(const NodePtr&)> walk = [&](const NodePtr& n) {
    if (!seen.insert(n.get()).second) return;
    if (!views.count(n->kind())) total += static_cast<size_t>(n->size()) * itemsize(n->dtype());
    for (const auto& in : n->inputs()) walk(in);
  };
  walk(a.node());
  return total;
}

Array stored(const Array& x, const std::string& path, Context& ctx) {
  ComputeOptions o;
  o.urlpath = path;
  x.compute(o, &ctx);
  return open(path);
}
}  // namespace

size_t rss_bytes() { return status_field("VmRSS"); }
size_t peak_rss_bytes() { return status_field("VmHWM"); }
void reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";  // resets VmHWM to the current RSS (Linux >= 4.0)
}

int cmd_demo(const std::vector<std::string>& argv) {
  Args args(argv, {"--n", "--dir", "--threads"}, {"--keep", "--progress", "--no-progress"});
  if (!args.positional().empty()) throw UsageError("demo takes no arguments besides options");
  const int64_t n = args.integer("--n", 64, 65536).value_or(4096);
  Context ctx(static_cast<int>(args.integer("--threads", 1, kMaxThreads).value_or(0)));
  // Signals stop the demo as they stop eval; declared before the cleanup below, so that
  // the generated files are gone before SIGTERM or SIGHUP is raised again.
  InterruptScope interrupt({SIGINT, SIGTERM, SIGHUP});
  std::string dir;
  bool made = false;
  if (auto d = args.value("--dir")) {
    dir = *d;
    if (!fs::is_directory(dir)) throw IOError("demo: directory '" + dir + "' does not exist");
  } else {
    std::string tmpl = (fs::temp_directory_path() / "b2lazy-demo-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw IOError("demo: cannot create a temporary directory");
    dir = tmpl;
    made = true;
  }
  struct Cleanup {  // the generated files go, however the demo ends
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      if (!dir.empty()) fs::remove_all(dir, ec);
    }
  } cleanup{made && !args.flag("--keep") ? dir : std::string()};
  const bool show = args.flag("--progress") || (!args.flag("--no-progress") && isatty(2));

  std::printf("b2lazy demo: n = %lld, %d threads, files in %s\n", static_cast<long long>(n), ctx.nthreads(),
              dir.c_str());
  auto t0 = std::chrono::steady_clock::now();
  const double nn = static_cast<double>(n) * static_cast<double>(n);
  Array x = arange(0, nn, 1, DType::F64, {n, n});
  std::map<std::string, Operand> ops;
  ops["a"] = stored(sin(x * 0.001) * 0.5 + 0.5, dir + "/a.b2nd", ctx);
  ops["b"] = stored(cos(x * 0.0007), dir + "/b.b2nd", ctx);
  Array x3 = arange(0, nn * 4, 1, DType::F64, {n, 4, n});
  ops["a3"] = stored(sin(x3 * 0.0003), dir + "/a3.b2nd", ctx);
  std::printf(
      "operands a, b: (%lld, %lld) float64, a3: (%lld, 4, %lld) float64 — %s on disk, made in %.1f s\n\n",
      static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
      human_bytes(static_cast<double>(storage_info(dir + "/a.b2nd").cbytes + storage_info(dir + "/b.b2nd").cbytes +
                                      storage_info(dir + "/a3.b2nd").cbytes))
          .c_str(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  const std::string rows = "[[" + std::to_string(n - 1) + ", 7, " + std::to_string(n / 2) + ", 7, 0]]";
  const std::vector<std::string> exprs = {"matmul(a, b) + b", "matmul(sum(a3, axis=1), b)",       "sum(a) + a",
                                          "cumsum(a)",        "(sin(a) + b)" + rows + "[:, ::2]", "a[a > 0.99]"};
  std::printf("%-44s %8s %12s %17s\n", "expression", "time s", "peak memory", "NumPy would hold");
  for (size_t i = 0; i < exprs.size(); ++i) {
    reset_peak_rss();
    const size_t base = rss_bytes();
    const auto t = std::chrono::steady_clock::now();
    Array e = evaluate(exprs[i], ops, &ctx);  // a mask's counting pass runs here
    ComputeOptions o;
    o.urlpath = dir + "/result" + std::to_string(i) + ".b2nd";
    ProgressBar bar("  " + std::to_string(i + 1) + "/" + std::to_string(exprs.size()));
    if (show) o.progress = [&bar](int64_t d, int64_t tot) { bar.update(d, tot); };
    e.compute(o, &ctx);
    bar.finish();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    const size_t peak = peak_rss_bytes();
    std::printf("%-44s %8.2f %12s %17s\n", exprs[i].c_str(), secs,
                human_bytes(static_cast<double>(peak > base ? peak - base : 0)).c_str(),
                human_bytes(static_cast<double>(materialising_bytes(e))).c_str());
    std::fflush(stdout);
    fs::remove(o.urlpath);
  }
  std::printf(
      "\npeak memory: growth of resident memory during the evaluation (operands stay on disk);\n"
      "NumPy would hold: the operands loaded plus every intermediate and the result.\n");
  return 0;
}

}  // namespace b2lazy::cli
