#include "io/hdf5/h5_source.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "core/saturating.hpp"
#include "core/strided_copy.hpp"
#include "io/hdf5/h5_handles.hpp"
#include "io/hdf5/h5_library.hpp"
#include "io/hdf5/h5_storage.hpp"
#include "io/regular_file.hpp"
#include "io/zarr/codecs.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"
#include "storage/blosc2_util.hpp"

namespace b2lazy {

namespace {

constexpr int64_t kUnitBytes = int64_t(4) << 20;    // a contiguous dataset's read unit, about
constexpr int64_t kCompactMax = int64_t(64) << 10;  // a compact dataset's values, at most

using h5::H5Lock;
std::mutex& h5_lock() { return h5::library_lock(); }

// The datasets in the file, by path (to name them when none or a wrong one is asked for).
std::vector<std::string> datasets(hid_t file) {
  std::vector<std::string> out;
  auto visit = [](hid_t group, const char* name, const H5L_info_t*, void* data) -> herr_t {
    const hid_t d = H5Dopen2(group, name, H5P_DEFAULT);
    if (d >= 0) {
      static_cast<std::vector<std::string>*>(data)->push_back(std::string("/") + name);
      H5Dclose(d);
    }
    return 0;
  };
  H5Lvisit(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit, &out);
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 20; ++i) s += (s.empty() ? "" : ", ") + v[i];
  if (v.size() > 20) s += ", ...";
  return s.empty() ? "none" : s;
}

// An integer of whole bytes (no padding bits): how b2lazy reads the stored bytes.
bool whole_integer(hid_t type, size_t sz) {
  return H5Tget_precision(type) == 8 * sz && H5Tget_offset(type) == 0 && H5Tget_order(type) != H5T_ORDER_ERROR &&
         H5Tget_sign(type) != H5T_SGN_ERROR;
}

// An IEEE 754 binary16/32/64 float, either byte order: any other layout (a damaged or
// unusual header) would be read as the wrong numbers, and converting one has crashed
// libhdf5 1.10.
bool ieee_float(hid_t type, size_t sz) {
  size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
  if (H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) < 0) return false;
  const size_t e = sz == 2 ? 5 : sz == 4 ? 8 : 11, m = 8 * sz - 1 - e;
  return (sz == 2 || sz == 4 || sz == 8) && H5Tget_precision(type) == 8 * sz && H5Tget_offset(type) == 0 &&
         spos == 8 * sz - 1 && epos == m && esize == e && mpos == 0 && msize == m &&
         H5Tget_ebias(type) == (size_t(1) << (e - 1)) - 1 && H5Tget_norm(type) == H5T_NORM_IMPLIED &&
         (H5Tget_order(type) == H5T_ORDER_LE || H5Tget_order(type) == H5T_ORDER_BE);
}

// h5py stores complex numbers as a compound of two floats named r and i, back to back, in
// one byte order.
bool is_complex_pair(hid_t type, size_t sz) {
  if (H5Tget_nmembers(type) != 2) return false;
  bool ok = true;
  H5T_order_t order = H5T_ORDER_ERROR;
  for (unsigned k = 0; k < 2 && ok; ++k) {
    char* name = H5Tget_member_name(type, k);
    const hid_t m = H5Tget_member_type(type, k);
    ok = name && m >= 0 && std::string(name) == (k == 0 ? "r" : "i") && H5Tget_class(m) == H5T_FLOAT &&
         H5Tget_size(m) == sz / 2 && ieee_float(m, sz / 2) && H5Tget_member_offset(type, k) == k * sz / 2 &&
         (k == 0 || H5Tget_order(m) == order);
    if (ok) order = H5Tget_order(m);
    if (m >= 0) H5Tclose(m);
    if (name) H5free_memory(name);
  }
  return ok;
}

// h5py's bool: an enum over one whole byte of exactly FALSE = 0 and TRUE = 1 (h5py reads
// any other enum as its integers, and so does b2lazy).
bool is_bool_enum(hid_t type) {
  if (H5Tget_size(type) != 1 || H5Tget_nmembers(type) != 2) return false;
  bool ok = true;
  for (unsigned k = 0; k < 2 && ok; ++k) {
    char* name = H5Tget_member_name(type, k);
    uint8_t value = 0xff;
    ok = name && H5Tget_member_value(type, k, &value) >= 0 && std::string(name) == (value == 0 ? "FALSE" : "TRUE") &&
         value <= 1;
    if (name) H5free_memory(name);
  }
  return ok;
}

// An enum's integers: a whole-byte integer base, little-endian when wider than a byte
// (its values are read as they are stored, without conversion).
bool integer_enum(hid_t type) {
  const hid_t base = H5Tget_super(type);
  const size_t sz = base >= 0 ? H5Tget_size(base) : 0;
  const bool ok = base >= 0 && H5Tget_class(base) == H5T_INTEGER && whole_integer(base, sz) &&
                  (sz == 1 || H5Tget_order(base) == H5T_ORDER_LE);
  if (base >= 0) H5Tclose(base);
  return ok;
}

// The type reads convert into: the file's own (checked to be a standard layout by
// dtype_of) made little-endian; h5py's complex as a compound of native floats; an enum as
// it is (its integers; a bool's bytes are made 0/1 after reading). Not H5Tget_native_type, which converts
// an enum's values and has crashed on damaged ones.
hid_t memory_type(hid_t type, DType t) {
  if (is_complex(t)) {
    const size_t half_size = itemsize(t) / 2;
    const hid_t part = half_size == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    const hid_t m = H5Tcreate(H5T_COMPOUND, itemsize(t));
    H5Tinsert(m, "r", 0, part);
    H5Tinsert(m, "i", half_size, part);
    return m;
  }
  const hid_t m = H5Tcopy(type);
  if (m >= 0 && H5Tget_class(type) != H5T_ENUM) H5Tset_order(m, H5T_ORDER_LE);
  return m;
}

DType dtype_of(hid_t type, bool& big_endian, const std::string& where) {
  const H5T_class_t c = H5Tget_class(type);
  const size_t sz = H5Tget_size(type);
  if (c == H5T_ENUM && is_bool_enum(type)) return DType::Bool;
  const bool int_enum = c == H5T_ENUM && integer_enum(type);
  if ((c == H5T_INTEGER && whole_integer(type, sz)) || int_enum) {
    const hid_t base = int_enum ? H5Tget_super(type) : H5Tcopy(type);
    big_endian = H5Tget_order(base) == H5T_ORDER_BE;
    const bool s = H5Tget_sign(base) == H5T_SGN_2;
    H5Tclose(base);
    switch (sz) {
      case 1: return s ? DType::I8 : DType::U8;
      case 2: return s ? DType::I16 : DType::U16;
      case 4: return s ? DType::I32 : DType::U32;
      case 8: return s ? DType::I64 : DType::U64;
    }
  }
  if (c == H5T_FLOAT && ieee_float(type, sz)) {
    big_endian = H5Tget_order(type) == H5T_ORDER_BE;
    return sz == 2 ? DType::F16 : sz == 4 ? DType::F32 : DType::F64;
  }
  if (c == H5T_COMPOUND && (sz == 8 || sz == 16) && is_complex_pair(type, sz)) {  // h5py's complex
    const hid_t part = H5Tget_member_type(type, 0);
    big_endian = H5Tget_order(part) == H5T_ORDER_BE;
    H5Tclose(part);
    return sz == 8 ? DType::C64 : DType::C128;
  }
  throw IOError("'" + where + "': an HDF5 datatype of class " + std::to_string(static_cast<int>(c)) + " and " +
                std::to_string(sz) + " bytes is not one b2lazy reads (bool, integers, float16/32/64, complex64/128" +
                " in their standard layouts)");
}

}  // namespace

std::shared_ptr<H5Source> H5Source::open(const std::string& path, const std::string& dataset) {
  ensure_blosc2();  // (blosc and blosc2 filters are decoded by C-Blosc2)
  std::lock_guard<std::mutex> g(h5_lock());
  h5::keep_library_at_exit();
  h5::quiet_this_thread();
  auto h = std::make_unique<Handles>();
  HandlesMadeUnderLock unlock{h};
  check_regular_file(path, path);  // (libhdf5's open of a FIFO would block)
  // Our descriptor first: the source, once made, must not be freed here (its end takes the lock).
  struct Fd {
    int fd;
    ~Fd() {
      if (fd >= 0) ::close(fd);
    }
  } fd{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  struct stat st;
  if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0) throw IOError("cannot open '" + path + "': " + std::strerror(errno));
  h->file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (h->file < 0) throw IOError("cannot open '" + path + "' as an HDF5 file (damaged or not HDF5)" + h5::said());
  auto src = from_file(h, path, dataset, false);
  src->fd_ = std::exchange(fd.fd, -1);
  src->file_size_ = static_cast<int64_t>(st.st_size);
  src->stamp_ = FileStamp::of(st);
  return src;
}

std::shared_ptr<H5Source> H5Source::from_file(std::unique_ptr<Handles>& h, const std::string& path,
                                              const std::string& dataset, bool remote) {
  std::string ds = dataset;
  if (ds.empty()) {
    const auto all = datasets(h->file);
    if (all.size() != 1)
      throw IOError("'" + path + "' holds " + std::to_string(all.size()) + " datasets (" + joined(all) +
                    "): name one, as '" + path + "#/group/x' (b2lazy.open(path, dataset=...))");
    ds = all[0];
  }
  const std::string name = path + "#" + ds;
  h->dset = H5Dopen2(h->file, ds.c_str(), H5P_DEFAULT);
  if (h->dset < 0) {
    const std::string why = h5::last_error();
    throw IOError("'" + path + "' has no dataset '" + ds + "' (datasets: " + joined(datasets(h->file)) + ")" +
                  (why.empty() ? "" : " (libhdf5: " + why + ")"));
  }
  const hid_t space = H5Dget_space(h->dset);
  if (space >= 0 && H5Sget_simple_extent_type(space) == H5S_NULL) {
    H5Sclose(space);
    throw IOError("'" + path + "#" + ds + "': a null dataspace (an empty dataset, h5py.Empty) holds no array to read");
  }
  const int nd = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
  std::vector<hsize_t> dims(static_cast<size_t>(std::max(nd, 0))), maxdims(dims.size());
  if (nd > 0) H5Sget_simple_extent_dims(space, dims.data(), maxdims.data());
  if (space >= 0) H5Sclose(space);
  if (nd < 0) throw IOError("'" + name + "': not a simple dataspace" + h5::said());
  const hid_t type = H5Dget_type(h->dset);
  bool be = false;
  DType t;
  try {
    t = dtype_of(type, be, name);
  } catch (...) {
    H5Tclose(type);
    throw;
  }
  h->mem_type = memory_type(type, t);
  H5Tclose(type);
  if (h->mem_type < 0) throw IOError("'" + name + "': cannot read its datatype" + h5::said());
  // A damaged dataspace may claim any size: past its own maximum or past what int64
  // counts is damage, named here (libhdf5 1.10 does not check the maximum).
  __int128 total = static_cast<__int128>(itemsize(t));
  for (size_t d = 0; d < dims.size(); ++d) {
    if (maxdims[d] != H5S_UNLIMITED && dims[d] > maxdims[d])
      throw IOError("'" + name + "': its dimension " + std::to_string(d) + " of " + std::to_string(dims[d]) +
                    " exceeds its maximum " + std::to_string(maxdims[d]) + " (damaged)");
    if (dims[d] > uint64_t(INT64_MAX) || (total *= static_cast<__int128>(dims[d])) > INT64_MAX)
      throw IOError("'" + name + "': a dataspace of more than 2**63 bytes (" +
                    shape_str(Shape(dims.begin(), dims.end())) + ", damaged)");
  }
  Shape shape(dims.begin(), dims.end());
  struct Plist {  // closed on every way out
    hid_t id;
    ~Plist() { H5Pclose(id); }
  } dcpl{H5Dget_create_plist(h->dset)};
  const H5D_layout_t layout = dcpl.id >= 0 ? H5Pget_layout(dcpl.id) : H5D_LAYOUT_ERROR;
  if (layout == H5D_LAYOUT_ERROR) throw IOError("'" + name + "': cannot read its storage layout" + h5::said());
  const size_t isz = itemsize(t);
  const int64_t nbytes = sat_mul(prod(shape), static_cast<int64_t>(isz));
  Shape unit = shape;
  std::vector<h5::Filter> filters;
  std::vector<uint8_t> fill(isz, 0);
  if (nd > 0 && layout == H5D_CHUNKED) {
    std::vector<hsize_t> c(static_cast<size_t>(nd));
    H5Pget_chunk(dcpl.id, nd, c.data());
    for (int d = 0; d < nd; ++d) unit[static_cast<size_t>(d)] = static_cast<int64_t>(c[static_cast<size_t>(d)]);
    const int nf = H5Pget_nfilters(dcpl.id);
    for (int i = 0; i < nf; ++i) {
      unsigned flags = 0, cd[32];
      size_t ncd = 32;
      char fname[256] = {0};
      unsigned config = 0;
      const H5Z_filter_t id =
          H5Pget_filter2(dcpl.id, static_cast<unsigned>(i), &flags, &ncd, cd, sizeof fname, fname, &config);
      filters.push_back({static_cast<int>(id), std::vector<unsigned>(cd, cd + std::min<size_t>(ncd, 32)), fname});
    }
  } else if (nd > 0) {  // contiguous, compact, external or virtual: C-order runs of about kUnitBytes
    size_t k = static_cast<size_t>(nd) - 1;
    int64_t inner = static_cast<int64_t>(isz);
    while (k > 0 && sat_mul(inner, shape[k]) <= kUnitBytes) inner = sat_mul(inner, shape[k--]);
    for (size_t d = 0; d < k; ++d) unit[d] = 1;
    unit[k] = std::max<int64_t>(1, std::min<int64_t>(shape[k], kUnitBytes / std::max<int64_t>(inner, 1)));
  }
  H5D_fill_value_t defined;
  if (H5Pfill_value_defined(dcpl.id, &defined) >= 0 && defined != H5D_FILL_VALUE_UNDEFINED)
    H5Pget_fill_value(dcpl.id, h->mem_type, fill.data());
  for (auto& e : unit) e = std::max<int64_t>(e, 1);
  // Where the values are: external files, other datasets (virtual), the file.
  std::vector<h5::ExternalPart> external;
  if (remote && (H5Pget_external_count(dcpl.id) > 0 || layout == H5D_VIRTUAL))  // (values in other files)
    throw IOError("'" + name + "': " + (layout == H5D_VIRTUAL ? "a virtual dataset" : "external storage") +
                  " (values in other files) is not read over a store; read a local copy");
  if (H5Pget_external_count(dcpl.id) > 0) external = h5::external_parts(dcpl.id, path, nbytes, name);
  if (layout == H5D_VIRTUAL) h5::check_virtual(dcpl.id, h->file, path, name);
  int64_t data_offset = -1;
  std::vector<uint8_t> compact;
  if (layout == H5D_CONTIGUOUS && external.empty()) {
    const haddr_t a = H5Dget_offset(h->dset);
    data_offset = a == HADDR_UNDEF ? -1 : static_cast<int64_t>(a);
    const hsize_t held = H5Dget_storage_size(h->dset);  // (a larger shape would read what follows)
    if (data_offset >= 0 && held != static_cast<hsize_t>(nbytes))
      throw IOError("'" + name + "': its contiguous data holds " + std::to_string(held) + " bytes, not the " +
                    std::to_string(nbytes) + " of its shape and type (damaged)");
  } else if (layout == H5D_COMPACT) {
    if (nbytes > kCompactMax)  // (a compact dataset's values lie in its header: 64 KiB at most)
      throw IOError("'" + name + "': a compact dataset of " + std::to_string(nbytes) + " bytes (damaged)");
    // libhdf5 1.10 reads past a compact buffer shorter than the dataspace says.
    const hsize_t held = H5Dget_storage_size(h->dset);
    if (held != static_cast<hsize_t>(nbytes))
      throw IOError("'" + name + "': its compact data holds " + std::to_string(held) + " bytes, not the " +
                    std::to_string(nbytes) + " of its shape and type (damaged)");
    compact.resize(static_cast<size_t>(nbytes));
    if (!compact.empty() && H5Dread(h->dset, h->mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, compact.data()) < 0)
      throw IOError("'" + name + "': cannot read its (compact) data" + h5::said());
  }
  // (A chunked dataset's size walks its whole chunk index: over a store, every node of it
  // a round trip at open. Not known there, as a remote Zarr array's.)
  const int64_t stored = remote && layout == H5D_CHUNKED ? 0 : static_cast<int64_t>(H5Dget_storage_size(h->dset));
  // The source may refuse the shape (the Node): the handles go to it only once it is
  // made, since its end takes the lock (held here; `unlock` releases it first).
  auto src = std::make_shared<H5Source>(t, shape, name);
  src->h_ = std::move(h);
  src->big_endian_ = be;
  src->chunked_ = layout == H5D_CHUNKED;
  src->virtual_ = layout == H5D_VIRTUAL;
  src->filters_ = std::move(filters);
  src->decodes_ = h5::decodes(src->filters_);
  src->fill_ = std::move(fill);
  src->read_grid_ = ChunkGrid(shape, unit);
  src->stored_bytes_ = stored;
  src->data_offset_ = data_offset;
  src->compact_ = std::move(compact);
  src->external_ = std::move(external);
  return src;
}

H5Source::H5Source(DType t, Shape shape, std::string name) : UnitSource(t, std::move(shape)), name_(std::move(name)) {}

H5Source::~H5Source() {
  if (fd_ >= 0) ::close(fd_);
}

std::string H5Source::describe() const {
  std::string f;
  for (const auto& x : filters_) f += (f.empty() ? "" : "+") + (x.name.empty() ? std::to_string(x.id) : x.name);
  return "hdf5 '" + name_ + "' " + shape_str(shape()) + " " + dtype_name(dtype()) +
         (chunked_ ? " chunks=" + shape_str(read_grid_.chunks()) : " " + layout_name()) +
         (f.empty() ? "" : " filters " + f) + (decodes_ ? "" : " (read through libhdf5)");
}

std::string H5Source::layout_name() const {
  return virtual_ ? "virtual" : !external_.empty() ? "external" : !compact_.empty() ? "compact" : "contiguous";
}

void H5Source::fill_value(void* dst, int64_t n) const {
  auto* d = static_cast<uint8_t*>(dst);
  const size_t isz = fill_.size();
  for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * static_cast<int64_t>(isz), fill_.data(), isz);
}

void H5Source::fill(const Region& region, void* out, ThreadState& ts) const {
  if (store_) return fill_remote(region, out, ts);
  try {
    UnitSource::fill(region, out, ts);
  } catch (const IOError&) {  // (a file written in place can look damaged: say why)
    check_unchanged();
    throw;
  }
  check_unchanged();  // after the reads: what was read is what was opened
}

void H5Source::read_unit(int64_t id, void* dst, ThreadState& ts) const {
  const size_t isz = itemsize(dtype());
  const Shape& u = read_grid_.chunks();
  const int64_t n = prod(u), bytes_n = n * static_cast<int64_t>(isz);
  const Box box = read_grid_.chunk_box(id);
  const std::string where = name_ + " (chunk " + shape_str(read_grid_.chunk_coords(id)) + ")";
  if (!chunked_) {
    // A C-order run of the data: in place when the dataset is contiguous, padded with the
    // fill value past the array's end (the last run).
    const int64_t first = [&] {
      int64_t f = 0;
      const Shape st = c_strides(shape());
      for (size_t d = 0; d < ndim(); ++d) f += box.start[d] * st[d];
      return f;
    }();
    const int64_t have = std::min(n, prod(shape()) - first);
    fill_value(static_cast<char*>(dst) + have * static_cast<int64_t>(isz), n - have);
    if (virtual_) {
      read_through_library(id, dst);
      return finish_unit(id, dst, ts);
    }
    if (!external_.empty()) {
      h5::read_external(external_, first * static_cast<int64_t>(isz), static_cast<size_t>(have) * isz, dst, where);
      if (big_endian_) zarr::byteswap(dst, have * zarr::parts_of(dtype()), isz / zarr::parts_of(dtype()));
      return finish_unit(id, dst, ts);
    }
    if (!compact_.empty()) {
      std::memcpy(dst, compact_.data() + first * static_cast<int64_t>(isz), static_cast<size_t>(have) * isz);
      return;
    }
    if (data_offset_ < 0) {
      fill_value(dst, have);
      return;
    }
    const size_t len = static_cast<size_t>(have) * isz;
    if (store_) {
      const std::vector<uint8_t> got = remote_bytes({id}, place_of(id), ts);
      std::memcpy(dst, got.data(), len);
    } else {
      const ssize_t r = ::pread(fd_, dst, len, data_offset_ + first * static_cast<int64_t>(isz));
      if (r != static_cast<ssize_t>(len))
        throw IOError("'" + where + "': the file is shorter than its data (truncated?)");
    }
    if (big_endian_) zarr::byteswap(dst, have * zarr::parts_of(dtype()), isz / zarr::parts_of(dtype()));
  } else {
    std::vector<hsize_t> off(ndim());
    for (size_t d = 0; d < ndim(); ++d) off[d] = static_cast<hsize_t>(box.start[d]);
    // The chunk is found as H5Dread finds it (a search of the index): a walk over the
    // index (H5Dget_chunk_info_by_coord) costs O(chunks) per chunk and, on a damaged index
    // that names one chunk twice, returns another record than libhdf5 itself reads.
    if (store_ && decodes_) {
      const Place p = place_of(id);
      if (p.offset < 0) {
        fill_value(dst, n);
        return;
      }
      const std::vector<uint8_t> raw = remote_bytes({id}, p, ts);
      h5::decode(filters_, p.mask, isz, raw.data(), raw.size(), dst, static_cast<size_t>(bytes_n), where, ts);
      if (big_endian_) zarr::byteswap(dst, n * zarr::parts_of(dtype()), isz / zarr::parts_of(dtype()));
      return finish_unit(id, dst, ts);
    }
    hsize_t size = 0;
    {
      H5Lock g;
      const bool found = H5Dget_chunk_storage_size(h_->dset, off.data(), &size) >= 0 && size > 0;
      h5::last_error();  // (clears the stack: not stored is no error, the fill value)
      if (!found) {
        fill_value(dst, n);
        return;
      }
    }
    if (!decodes_) {
      read_through_library(id, dst);
    } else {
      // A stored chunk is not much larger than its values: a damaged index cannot make us
      // allocate more (h5_filters.hpp bounds the rest); libhdf5 refuses one past the file's end.
      if (size > static_cast<hsize_t>(h5::max_stored(bytes_n)))
        throw IOError("'" + where + "': its chunk claims " + std::to_string(size) + " stored bytes, more than " +
                      std::to_string(h5::max_stored(bytes_n)) + " for " + std::to_string(bytes_n) +
                      " bytes of values (damaged)");
      ScratchScope scope(ts.scratch);  // (not zeroed: the read fills it)
      auto* raw = static_cast<uint8_t*>(scope.alloc(static_cast<size_t>(size)));
      uint32_t mask = 0;
      {
        H5Lock g;
        if (H5Dread_chunk(h_->dset, H5P_DEFAULT, off.data(), &mask, raw) < 0)
          throw IOError("'" + where + "': its stored chunk cannot be read (" + h5::last_error() + ")");
      }
      h5::decode(filters_, mask, isz, raw, static_cast<size_t>(size), dst, static_cast<size_t>(bytes_n), where, ts);
      if (big_endian_) zarr::byteswap(dst, n * zarr::parts_of(dtype()), isz / zarr::parts_of(dtype()));
    }
  }
  finish_unit(id, dst, ts);
}

double H5Source::decode_cost() const { return chunked_ ? h5::decode_cost(filters_) : 1.0; }

void H5Source::check_unchanged() const {
  if (fd_ < 0) return;  // (over a store: the pages and chunks read are of the object as first read)
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !(FileStamp::of(st) == stamp_))
    throw IOError("'" + name_ + "': changed on disk since it was opened");
}

void H5Source::finish_unit(int64_t id, void* dst, ThreadState& ts) const {
  const int64_t n = prod(read_grid_.chunks());
  if (dtype() == DType::Bool) {  // any byte other than 0 is True, as 1
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t k = 0; k < n; ++k) b[k] = b[k] != 0;
  }
  ts.decompressed[this][id]++;
  ts.decompressed_bytes[this] += n * static_cast<int64_t>(itemsize(dtype()));
}

void H5Source::read_through_library(int64_t id, void* dst) const {
  const size_t isz = itemsize(dtype()), nd = ndim();
  const Box box = read_grid_.chunk_box(id);
  const Shape part = box.shape(), unit = read_grid_.chunks();
  std::vector<uint8_t> buf(static_cast<size_t>(prod(part)) * isz);
  {
    H5Lock g;
    herr_t rc;
    std::string why;  // (taken before the next call clears libhdf5's error stack)
    if (nd == 0) {
      rc = H5Dread(h_->dset, h_->mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
      if (rc < 0) why = h5::said();
    } else {
      std::vector<hsize_t> start(nd), count(nd);
      for (size_t d = 0; d < nd; ++d)
        start[d] = static_cast<hsize_t>(box.start[d]), count[d] = static_cast<hsize_t>(part[d]);
      const hid_t fs = H5Dget_space(h_->dset);
      const hid_t ms = H5Screate_simple(static_cast<int>(nd), count.data(), nullptr);
      rc = fs >= 0 && ms >= 0 ? H5Sselect_hyperslab(fs, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr)
                              : -1;
      if (rc >= 0) rc = H5Dread(h_->dset, h_->mem_type, ms, fs, H5P_DEFAULT, buf.data());
      if (rc < 0) why = h5::said();
      if (ms >= 0) H5Sclose(ms);
      if (fs >= 0) H5Sclose(fs);
    }
    if (rc < 0) {
      if (!chunked_)
        throw IOError("'" + name_ + "': libhdf5 cannot read its " + layout_name() + " data at " + shape_str(box.start) +
                      why);
      std::string f;
      for (const auto& x : filters_)
        f += (f.empty() ? "" : ", ") + (x.name.empty() ? std::to_string(x.id) : x.name) + " (" + std::to_string(x.id) +
             ")";
      throw IOError("'" + name_ + "': libhdf5 cannot read chunk " + shape_str(read_grid_.chunk_coords(id)) +
                    " (filters " + f + "; a filter plugin may be missing: HDF5_PLUGIN_PATH)" + why);
    }
  }
  fill_value(dst, prod(unit));
  const Shape ds = byte_strides(unit, isz), ss = byte_strides(part, isz);
  copy_strided(nd, part.data(), reinterpret_cast<const char*>(buf.data()), ss.data(), static_cast<char*>(dst),
               ds.data(), isz);
}

bool H5Source::stored_info(StorageInfo& info) const {
  info.format = "hdf5";
  info.urlpath = name_;
  info.shape = shape();
  info.chunks = chunked_ ? read_grid_.chunks() : Shape{};
  info.dtype = dtype();
  std::string f;
  for (const auto& x : filters_) f += (f.empty() ? "" : "+") + (x.name.empty() ? std::to_string(x.id) : x.name);
  info.codec = chunked_                        ? (f.empty() ? "none" : f)
               : layout_name() == "contiguous" ? "contiguous, uncompressed"
                                               : layout_name();
  info.nbytes = sat_mul(prod(shape()), static_cast<int64_t>(itemsize(dtype())));
  info.cbytes = stored_bytes_;
  info.contiguous = true;
  return true;
}

}  // namespace b2lazy
