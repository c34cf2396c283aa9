// b2lazy info PATH: layout and compression of a stored array (b2nd, Zarr); a saved lazy
// expression is described by Python's b2lazy package (b2lazy/_cli.py).
#include <cstdio>

#include "args.hpp"
#include "b2lazy/b2lazy.hpp"
#include "commands.hpp"

namespace b2lazy::cli {

int cmd_info(const std::vector<std::string>& argv) {
  Args args(argv, {}, {}, {"--storage-option"});
  if (args.positional().size() != 1) throw UsageError("info takes one path: b2lazy info PATH");
  const std::string& path = args.positional()[0];
  if (!is_remote_url(path) && is_saved_expression(path))
    run_python({"info", path}, "info on a saved expression reads it");
  // A remote array: opened through its store (metadata only), described as opened.
  const StorageInfo s = is_remote_url(path) ? storage_info(open(path, storage_options(args))) : storage_info(path);
  const double ratio = s.cbytes ? static_cast<double>(s.nbytes) / static_cast<double>(s.cbytes) : 0.0;
  const bool b2nd = s.format == "b2nd";
  if (b2nd) std::printf("path    %s (%s)\n", s.urlpath.c_str(), s.contiguous ? "contiguous frame" : "sparse directory");
  else std::printf("path    %s (%s)\n", s.urlpath.c_str(), s.format.c_str());
  std::printf("shape   %s\n", shape_str(s.shape).c_str());
  std::printf("dtype   %s\n", dtype_name(s.dtype));
  std::printf("chunks  %s\n", shape_str(s.chunks).c_str());
  if (b2nd) {
    std::printf("blocks  %s\n", shape_str(s.blocks).c_str());
    std::printf("codec   %s, clevel %d, filters %s\n", s.codec.c_str(), s.clevel, s.filters.c_str());
  } else {
    if (!s.blocks.empty()) std::printf("shards  %s\n", shape_str(s.blocks).c_str());
    std::printf("codecs  %s\n", s.codec.c_str());
  }
  std::printf("size    %s uncompressed, %s compressed\n", human_bytes(static_cast<double>(s.nbytes)).c_str(),
              human_bytes(static_cast<double>(s.cbytes)).c_str());
  std::printf("ratio   %.2fx\n", ratio);
  return 0;
}

}  // namespace b2lazy::cli
