// b2lazy functions [NAME ...]: what expression strings can call, from the function
// registry (the same table the Python package's signatures come from).
#include <cstdio>

#include "args.hpp"
#include "b2lazy/functions.hpp"
#include "commands.hpp"

namespace b2lazy::cli {

namespace {
void print_one(const FunctionInfo& f, bool detail) {
  std::printf("%s%s\n", f.name.c_str(), f.signature().c_str());
  if (!detail) return;
  std::printf("    family: %s\n    result dtype: %s\n", family_name(f.family), f.dtype_rule.c_str());
  if (!f.aliases.empty()) {
    std::string list;
    for (const std::string& a : f.aliases) list += (list.empty() ? "" : ", ") + a;
    std::printf("    aliases: %s\n", list.c_str());
  }
  if (f.method) std::printf("    also a method: x.%s(...)\n", f.name.c_str());
}
}  // namespace

int cmd_functions(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    FunctionFamily family = FunctionFamily::Creation;
    bool first = true;
    for (const FunctionInfo& f : function_registry()) {
      if (first || f.family != family) std::printf("%s# %s\n", first ? "" : "\n", family_name(f.family));
      family = f.family, first = false;
      print_one(f, false);
    }
    return 0;
  }
  for (const std::string& name : argv) {
    const FunctionInfo* f = find_function(name);
    if (f == nullptr) throw UsageError("no function '" + name + "' (b2lazy functions lists them)");
    print_one(*f, true);
  }
  return 0;
}

}  // namespace b2lazy::cli
