#include "io/hdf5/h5_storage.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "b2lazy/error.hpp"
#include "io/hdf5/h5_library.hpp"

namespace b2lazy::h5 {

namespace {

constexpr int kMaxExternalParts = 4096;  // files (or runs of one) an external dataset may list
constexpr int kMaxVirtualDepth = 4;      // virtual datasets whose sources are virtual, and so on

std::string dir_of(const std::string& path) {
  const size_t s = path.rfind('/');
  return s == std::string::npos ? "." : s == 0 ? "/" : path.substr(0, s);
}

std::string base_of(const std::string& path) {
  const size_t s = path.rfind('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

bool is_regular_file(const std::string& path, int64_t* size = nullptr) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (size) *size = static_cast<int64_t>(st.st_size);
  return true;
}

// A libhdf5 identifier closed at the end of its scope.
struct Id {
  hid_t id = -1;
  herr_t (*close)(hid_t) = nullptr;
  Id(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  ~Id() {
    if (id >= 0 && close) close(id);
  }
};

// A string property of a VDS mapping (its source file or dataset name).
std::string mapping_string(ssize_t (*get)(hid_t, size_t, char*, size_t), hid_t dcpl, size_t i) {
  const ssize_t n = get(dcpl, i, nullptr, 0);
  if (n < 0) return {};
  std::string s(static_cast<size_t>(n) + 1, '\0');
  get(dcpl, i, s.data(), s.size());
  s.resize(static_cast<size_t>(n));
  return s;
}

// The source file `name` of the VDS at `vds_path`, where libhdf5 looks for it: as given
// when absolute, then (by its last component when absolute) under each directory of
// HDF5_VDS_PREFIX, in the VDS file's directory, and in the working directory. The first
// that opens as HDF5 (as libhdf5 takes it); `found` is its path. -1 when none.
hid_t open_source_file(const std::string& name, const std::string& vds_path, std::string& found) {
  std::vector<std::string> tries;
  const bool absolute = !name.empty() && name[0] == '/';
  if (absolute) tries.push_back(name);
  const std::string rel = absolute ? base_of(name) : name;
  if (const char* env = std::getenv("HDF5_VDS_PREFIX"); env && *env) {
    std::string prefixes = env;
    for (size_t a = 0; a <= prefixes.size();) {
      size_t b = prefixes.find(':', a);
      if (b == std::string::npos) b = prefixes.size();
      std::string p = prefixes.substr(a, b - a);
      if (p.rfind("${ORIGIN}", 0) == 0) p = dir_of(vds_path) + p.substr(9);
      if (!p.empty()) tries.push_back(p + "/" + rel);
      a = b + 1;
    }
  }
  tries.push_back(dir_of(vds_path) + "/" + rel);
  tries.push_back(rel);
  for (const std::string& t : tries) {
    if (!is_regular_file(t)) continue;  // (a FIFO would block libhdf5's open)
    const hid_t f = H5Fopen(t.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f >= 0) {
      found = t;
      return f;
    }
    H5Eclear2(H5E_DEFAULT);
  }
  return -1;
}

}  // namespace

std::vector<ExternalPart> external_parts(hid_t dcpl, const std::string& file, int64_t nbytes, const std::string& name) {
  const int count = H5Pget_external_count(dcpl);
  if (count < 0) throw IOError("'" + name + "': cannot read its list of external files" + said());
  if (count > kMaxExternalParts)
    throw IOError("'" + name + "': its data lies in " + std::to_string(count) + " external files (at most " +
                  std::to_string(kMaxExternalParts) + " are read)");
  std::vector<ExternalPart> parts;
  int64_t at = 0;
  for (int i = 0; i < count && at < nbytes; ++i) {
    char ext[4096] = {0};
    off_t offset = 0;
    hsize_t size = 0;
    if (H5Pget_external(dcpl, static_cast<unsigned>(i), sizeof ext, ext, &offset, &size) < 0)
      throw IOError("'" + name + "': cannot read its external file " + std::to_string(i) + said());
    ext[sizeof ext - 1] = '\0';
    if (std::strlen(ext) >= sizeof ext - 1 || ext[0] == '\0')
      throw IOError("'" + name + "': the name of its external file " + std::to_string(i) + " is empty or too long");
    const std::string path = ext[0] == '/' ? std::string(ext) : dir_of(file) + "/" + ext;
    const int64_t take =
        size == H5F_UNLIMITED || size >= static_cast<hsize_t>(nbytes - at) ? nbytes - at : static_cast<int64_t>(size);
    const std::string what = "'" + name + "': its external file '" + path + "'";
    int64_t have = 0;
    if (::access(path.c_str(), F_OK) != 0) throw IOError(what + " is missing");
    if (!is_regular_file(path, &have)) throw IOError(what + " is not a regular file");
    if (offset < 0 || static_cast<int64_t>(offset) > have || take > have - static_cast<int64_t>(offset))
      throw IOError(what + " holds " + std::to_string(have) + " bytes, fewer than the " + std::to_string(take) +
                    " it should from offset " + std::to_string(static_cast<int64_t>(offset)) + " (truncated?)");
    if (take > 0) parts.push_back({path, static_cast<int64_t>(offset), at, take});
    at += take;
  }
  if (at < nbytes)
    throw IOError("'" + name + "': its external files hold " + std::to_string(at) + " bytes, fewer than its " +
                  std::to_string(nbytes));
  return parts;
}

void read_external(const std::vector<ExternalPart>& parts, int64_t start, size_t n, void* dst,
                   const std::string& where) {
  auto* out = static_cast<char*>(dst);
  const int64_t end = start + static_cast<int64_t>(n);
  // The first part that ends past `start`.
  auto it = std::upper_bound(parts.begin(), parts.end(), start,
                             [](int64_t s, const ExternalPart& p) { return s < p.start + p.size; });
  for (int64_t at = start; at < end; ++it) {
    if (it == parts.end() || it->start > at)
      throw IOError("'" + where + "': no external file holds byte " + std::to_string(at));
    const int64_t len = std::min(end, it->start + it->size) - at;
    const int fd = ::open(it->path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      const std::string why = fd < 0 ? std::strerror(errno) : "not a regular file";
      if (fd >= 0) ::close(fd);
      throw IOError("'" + where + "': cannot read its external file '" + it->path + "': " + why);
    }
    int64_t done = 0;
    while (done < len) {
      const ssize_t r = ::pread(fd, out + (at - start) + done, static_cast<size_t>(len - done),
                                static_cast<off_t>(it->file_offset + (at - it->start) + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        ::close(fd);
        throw IOError("'" + where + "': its external file '" + it->path + "' is shorter than its data (truncated?)");
      }
      done += r;
    }
    ::close(fd);
    at += len;
  }
}

void check_virtual(hid_t dcpl, hid_t file, const std::string& path, const std::string& name, int depth) {
  if (depth >= kMaxVirtualDepth)
    throw IOError("'" + name + "': virtual datasets nested more than " + std::to_string(kMaxVirtualDepth) +
                  " deep (or a cycle) are not read");
  size_t count = 0;
  if (H5Pget_virtual_count(dcpl, &count) < 0)
    throw IOError("'" + name + "': cannot read its virtual mappings" + said());
  for (size_t i = 0; i < count; ++i) {
    const std::string fname = mapping_string(H5Pget_virtual_filename, dcpl, i);
    const std::string dname = mapping_string(H5Pget_virtual_dsetname, dcpl, i);
    const std::string src = "'" + fname + "' (dataset '" + dname + "')";
    if (fname.empty() || dname.empty())
      throw IOError("'" + name + "': cannot read its virtual mapping " + std::to_string(i) + said());
    if (fname.find('%') != std::string::npos || dname.find('%') != std::string::npos)
      throw IOError("'" + name + "': its virtual source " + src +
                    " is named by a pattern (an unlimited mapping): not read");
    // The region of the source this mapping reads: all of it (its extent is then not
    // stored: as many points as the region of the VDS it fills), or a selection.
    Id sel(H5Pget_virtual_srcspace(dcpl, i), H5Sclose);
    Id vsel(H5Pget_virtual_vspace(dcpl, i), H5Sclose);
    const H5S_sel_type type = sel.id >= 0 ? H5Sget_select_type(sel.id) : H5S_SEL_ERROR;
    const bool all = type == H5S_SEL_ALL;
    const int snd = sel.id >= 0 ? H5Sget_simple_extent_ndims(sel.id) : -1;
    std::vector<hsize_t> lo(static_cast<size_t>(std::max(snd, 0))), hi(lo.size());
    const hssize_t npoints = all           ? (vsel.id >= 0 ? H5Sget_select_npoints(vsel.id) : -1)
                             : sel.id >= 0 ? H5Sget_select_npoints(sel.id)
                                           : -1;
    if (type == H5S_SEL_ERROR || snd < 0 || npoints < 0 ||
        (!all && npoints > 0 && (snd == 0 || H5Sget_select_bounds(sel.id, lo.data(), hi.data()) < 0)))
      throw IOError("'" + name + "': cannot read the region its virtual source " + src + " maps" + said());
    std::string found = path;
    Id other(fname == "." ? -1 : open_source_file(fname, path, found), H5Fclose);
    if (fname != "." && other.id < 0)
      throw IOError("'" + name + "': its virtual source file '" + fname +
                    "' is missing or not HDF5 (looked for it in '" + dir_of(path) +
                    "' and the working directory); libhdf5 would read its region as the fill value");
    const hid_t sf = fname == "." ? file : other.id;
    Id ds(H5Dopen2(sf, dname.c_str(), H5P_DEFAULT), H5Dclose);
    if (ds.id < 0) {
      H5Eclear2(H5E_DEFAULT);
      throw IOError("'" + name + "': its virtual source file '" + found + "' has no dataset '" + dname +
                    "'; libhdf5 would read its region as the fill value");
    }
    const std::string sname = found + "#" + dname;
    Id space(H5Dget_space(ds.id), H5Sclose);
    const int nd = space.id >= 0 ? H5Sget_simple_extent_ndims(space.id) : -1;
    std::vector<hsize_t> dims(static_cast<size_t>(std::max(nd, 0)));
    if (nd > 0) H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
    bool covers = nd >= 0 && (all ? H5Sget_simple_extent_npoints(space.id) == npoints : nd == snd);
    for (size_t d = 0; covers && !all && npoints > 0 && d < dims.size(); ++d) covers = hi[d] < dims[d];
    if (!covers)
      throw IOError("'" + name + "': its virtual source '" + sname + "' is smaller than the region mapped from it " +
                    "(libhdf5 would read the rest as the fill value)");
    Id sdcpl(H5Dget_create_plist(ds.id), H5Pclose);
    if (sdcpl.id < 0) throw IOError("'" + name + "': cannot read its virtual source '" + sname + "'" + said());
    if (H5Pget_external_count(sdcpl.id) > 0)
      throw IOError("'" + name + "': its virtual source '" + sname + "' has external storage: not read");
    if (H5Pget_layout(sdcpl.id) == H5D_VIRTUAL) check_virtual(sdcpl.id, sf, found, name + " -> " + sname, depth + 1);
  }
}

}  // namespace b2lazy::h5
