// b2lazy eval / explain: an expression over stored arrays (b2nd, Zarr: any registered format).
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <map>

#include "args.hpp"
#include "b2lazy/b2lazy.hpp"
#include "commands.hpp"
#include "progress.hpp"

namespace b2lazy::cli {

namespace {
// EXPR NAME=PATH ...: the expression and its operands, opened lazily (nothing is read).
std::map<std::string, Operand> open_operands(const std::vector<std::string>& pos, const std::string& expr,
                                             const StoreOptions& storage) {
  const std::vector<std::string> names = expression_names(expr);  // a syntax error comes first
  std::map<std::string, Operand> ops;
  for (size_t i = 1; i < pos.size(); ++i) {
    const auto eq = pos[i].find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pos[i].size())
      throw UsageError("operands are given as NAME=PATH, got '" + pos[i] + "'");
    const std::string name = pos[i].substr(0, eq), path = pos[i].substr(eq + 1);
    if (ops.count(name)) throw UsageError("operand '" + name + "' given twice");
    try {
      ops.emplace(name, open(path, storage));
    } catch (const IOError& e) {
      throw IOError("operand '" + name + "': " + e.what());
    }
  }
  std::string missing;
  for (const std::string& n : names)
    if (!ops.count(n)) missing += (missing.empty() ? "" : ", ") + n;
  if (!missing.empty()) throw UsageError("the expression uses " + missing + ": give each as NAME=PATH");
  return ops;
}

// Syntax and name errors in EXPR are usage errors; so are calls in it that do not bind (an
// unknown keyword, a missing argument: TypeError) once the operands are open — opening them
// raises TypeError for a file's unsupported dtype, which is the file's failure, not usage.
template <class F> auto as_usage(F f, bool calls = true) -> decltype(f()) {
  try {
    return f();
  } catch (const SyntaxError& e) {
    throw UsageError(e.what());
  } catch (const NameError& e) {
    throw UsageError(e.what());
  } catch (const TypeError& e) {
    if (!calls) throw;
    throw UsageError(e.what());
  }
}
}  // namespace

int cmd_eval(const std::vector<std::string>& argv) {
  Args args(argv,
            {"-o", "--output", "--chunks", "--blocks", "--shards", "--codec", "--clevel", "--filter", "--compressor",
             "--threads", "--max-memory", "--scheduler"},
            {"--progress", "--no-progress"}, {"--storage-option"});
  const StoreOptions storage = storage_options(args);
  const auto& pos = args.positional();
  if (pos.empty()) throw UsageError("eval needs an expression: b2lazy eval EXPR NAME=PATH ... -o OUT");
  auto out = args.value("-o");
  if (!out) out = args.value("--output");
  if (!out) throw UsageError("eval needs an output: -o OUT.b2nd (or OUT.zarr)");
  const std::string expr = pos[0];
  auto ops = as_usage([&] { return open_operands(pos, expr, storage); }, false);
  if (auto sched = args.value("--scheduler")) {
    if (sched->empty()) throw UsageError("--scheduler needs an address (tcp://host:port) or local:N");
    as_usage([&] { return evaluate(expr, ops); });  // a bad expression fails here, not on the cluster
    std::vector<std::string> all = {"eval"};        // (python -m b2lazy._cli eval ...: the same arguments)
    all.insert(all.end(), argv.begin(), argv.end());
    run_python(all, "--scheduler runs the evaluation");
  }
  Context ctx(static_cast<int>(args.integer("--threads", 1, kMaxThreads).value_or(0)));
  // Ctrl-C, SIGTERM and SIGHUP stop the evaluation (a mask's counting pass in evaluate()
  // too) and remove the partial output; SIGTERM and SIGHUP then end the process by that
  // signal, SIGINT exits with status 130 (main).
  InterruptScope interrupt({SIGINT, SIGTERM, SIGHUP});
  Array a = as_usage([&] { return evaluate(expr, ops, &ctx); });

  ComputeOptions o;
  o.urlpath = *out;
  o.storage = storage;
  if (auto c = args.shape("--chunks")) o.chunks = *c;
  if (auto b = args.shape("--blocks")) o.blocks = *b;
  if (auto s = args.shape("--shards")) o.shards = *s;
  if (auto c = args.value("--compressor")) o.cparams.compressor = *c;
  if (auto c = args.value("--codec")) o.cparams.codec = *c;
  if (auto f = args.value("--filter")) o.cparams.filter = *f;
  o.cparams.clevel = static_cast<int>(args.integer("--clevel", 0, 9).value_or(o.cparams.clevel));
  if (auto m = args.value("--max-memory")) o.max_memory = parse_bytes("--max-memory", *m);
  const bool show = args.flag("--progress") || (!args.flag("--no-progress") && isatty(2));
  ProgressBar bar("eval");
  if (show) o.progress = [&bar](int64_t done, int64_t total) { bar.update(done, total); };
  const auto t0 = std::chrono::steady_clock::now();
  Array r;
  try {
    r = a.compute(o, &ctx);
  } catch (...) {
    bar.finish();
    throw;
  }
  bar.finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const StorageInfo info = storage_info(r);  // the array this process wrote, not what is at the path now
  std::printf("wrote %s: shape %s, %s, %s in %.2f s (ratio %.2fx)\n", out->c_str(), shape_str(info.shape).c_str(),
              dtype_name(info.dtype), human_bytes(static_cast<double>(info.cbytes)).c_str(), secs,
              info.cbytes ? static_cast<double>(info.nbytes) / static_cast<double>(info.cbytes) : 0.0);
  return 0;
}

int cmd_explain(const std::vector<std::string>& argv) {
  Args args(argv, {}, {}, {"--storage-option"});
  const auto& pos = args.positional();
  if (pos.empty()) throw UsageError("explain needs an expression: b2lazy explain EXPR NAME=PATH ...");
  auto ops = as_usage([&] { return open_operands(pos, pos[0], storage_options(args)); }, false);
  Context ctx;
  Array a = as_usage([&] { return evaluate(pos[0], ops, &ctx); });
  std::fputs(a.explain().c_str(), stdout);
  return 0;
}

}  // namespace b2lazy::cli
