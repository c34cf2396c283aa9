#include "io/hdf5/h5_store_vfd.hpp"

#include <H5FDpublic.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <utility>

namespace b2lazy::h5 {

namespace {

// What the open callback takes: libhdf5 asks for the file by name (H5Fopen's), the store
// behind it is handed over here (under the lock, for the one H5Fopen in progress). Other
// names asked of the driver — an external link's file, a virtual dataset's source — are
// refused: b2lazy reads one object per URL.
struct Opening {
  std::shared_ptr<ObjectPages> pages;
  std::string url;
};
Opening* opening = nullptr;

std::vector<RawRead>* recording = nullptr;  // locate_raw_reads's, while it runs
std::string store_failure;                  // take_store_failure's

// The driver's file: libhdf5's part first (it is handed H5FD_t*).
struct StoreFile {
  H5FD_t pub;
  std::shared_ptr<ObjectPages> pages;
  std::string url;
  haddr_t eoa = 0;
  int64_t eof = 0;
};

constexpr haddr_t kMaxAddr = static_cast<haddr_t>(INT64_MAX);

// libhdf5's error stack gets what went wrong, for last_error() to say.
void push_error(const char* func, const std::string& what) {
  H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, H5E_ERR_CLS, H5E_VFL, H5E_READERROR, "%s", what.c_str());
}

H5FD_t* store_open(const char* name, unsigned flags, hid_t, haddr_t maxaddr) {
  if (!opening || !name || opening->url != name) {
    push_error("store_open", std::string("b2lazy reads one HDF5 file per URL: '") + (name ? name : "") +
                                 "' (an external link or a virtual dataset's source) is not read over a store");
    return nullptr;
  }
  if (flags & (H5F_ACC_RDWR | H5F_ACC_TRUNC | H5F_ACC_CREAT)) {
    push_error("store_open", "'" + opening->url + "': HDF5 files over a store are read-only");
    return nullptr;
  }
  try {
    const int64_t size = opening->pages->size();
    if (maxaddr == 0 || maxaddr == HADDR_UNDEF) maxaddr = kMaxAddr;
    if (static_cast<haddr_t>(size) > maxaddr) {
      push_error("store_open", "'" + opening->url + "': larger than libhdf5 addresses");
      return nullptr;
    }
    auto* f = new StoreFile{};
    f->pages = opening->pages;
    f->url = opening->url;
    f->eof = size;
    return &f->pub;
  } catch (const std::exception& e) {
    push_error("store_open", e.what());
    return nullptr;
  }
}

herr_t store_close(H5FD_t* file) {
  delete reinterpret_cast<StoreFile*>(file);
  return 0;
}

int store_cmp(const H5FD_t* a, const H5FD_t* b) {
  const auto* x = reinterpret_cast<const StoreFile*>(a)->pages.get();
  const auto* y = reinterpret_cast<const StoreFile*>(b)->pages.get();
  return x < y ? -1 : x > y ? 1 : 0;
}

herr_t store_query(const H5FD_t*, unsigned long* flags) {
  // Metadata gathered into larger reads (fewer calls into the pages); read-only, so no
  // allocation features; no data sieve:
  // values are fetched by H5Source, not through libhdf5.
  if (flags) *flags = H5FD_FEAT_ACCUMULATE_METADATA;
  return 0;
}

haddr_t store_get_eoa(const H5FD_t* file, H5FD_mem_t) { return reinterpret_cast<const StoreFile*>(file)->eoa; }

herr_t store_set_eoa(H5FD_t* file, H5FD_mem_t, haddr_t addr) {
  reinterpret_cast<StoreFile*>(file)->eoa = addr;
  return 0;
}

haddr_t store_get_eof(const H5FD_t* file, H5FD_mem_t) {
  return static_cast<haddr_t>(reinterpret_cast<const StoreFile*>(file)->eof);
}

herr_t store_read(H5FD_t* file, H5FD_mem_t type, hid_t, haddr_t addr, size_t size, void* buf) {
  auto* f = reinterpret_cast<StoreFile*>(file);
  if (addr == HADDR_UNDEF || addr > kMaxAddr || size > static_cast<size_t>(INT64_MAX) - addr) {
    push_error("store_read", "'" + f->url + "': a read at an address past what a file holds (damaged)");
    return -1;
  }
  if (type == H5FD_MEM_DRAW && recording) {
    recording->push_back({static_cast<int64_t>(addr), static_cast<int64_t>(size)});
    return 0;
  }
  try {
    // As libhdf5's own drivers: what lies past the end reads as zeros (libhdf5 checked at
    // open that the file holds what its superblock says it does).
    const int64_t at = static_cast<int64_t>(addr);
    const int64_t held = std::clamp<int64_t>(f->eof - at, 0, static_cast<int64_t>(size));
    if (held > 0) f->pages->read(at, held, buf);
    std::memset(static_cast<char*>(buf) + held, 0, size - static_cast<size_t>(held));
    return 0;
  } catch (const std::exception& e) {
    store_failure = e.what();
    push_error("store_read", e.what());
    return -1;
  }
}

herr_t store_write(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t, size_t, const void*) {
  push_error("store_write", "'" + reinterpret_cast<StoreFile*>(file)->url + "': HDF5 files over a store are read-only");
  return -1;
}

const H5FD_class_t kStoreClass = {
    "b2lazy_store",        // name
    kMaxAddr,              // maxaddr
    H5F_CLOSE_WEAK,        // fc_degree
    nullptr,               // terminate
    nullptr,               // sb_size
    nullptr,               // sb_encode
    nullptr,               // sb_decode
    0,                     // fapl_size
    nullptr,               // fapl_get
    nullptr,               // fapl_copy
    nullptr,               // fapl_free
    0,                     // dxpl_size
    nullptr,               // dxpl_copy
    nullptr,               // dxpl_free
    store_open,            // open
    store_close,           // close
    store_cmp,             // cmp
    store_query,           // query
    nullptr,               // get_type_map
    nullptr,               // alloc
    nullptr,               // free
    store_get_eoa,         // get_eoa
    store_set_eoa,         // set_eoa
    store_get_eof,         // get_eof
    nullptr,               // get_handle
    store_read,            // read
    store_write,           // write
    nullptr,               // flush
    nullptr,               // truncate
    nullptr,               // lock
    nullptr,               // unlock
    H5FD_FLMAP_DICHOTOMY,  // fl_map
};

hid_t driver_id() {
  static const hid_t id = H5FDregister(&kStoreClass);  // (once, under the lock; never unregistered)
  return id;
}

}  // namespace

hid_t open_in_pages(const std::shared_ptr<ObjectPages>& pages, const std::string& url) {
  const hid_t id = driver_id();
  if (id < 0) return -1;
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0) return -1;
  if (H5Pset_driver(fapl, id, nullptr) < 0) {
    H5Pclose(fapl);
    return -1;
  }
  Opening o{pages, url};
  opening = &o;
  const hid_t file = H5Fopen(url.c_str(), H5F_ACC_RDONLY, fapl);
  opening = nullptr;
  H5Pclose(fapl);
  return file;
}

std::string take_store_failure() { return std::exchange(store_failure, std::string()); }

void locate_raw_reads(const std::function<void()>& call, std::vector<RawRead>& out) {
  struct Scope {
    explicit Scope(std::vector<RawRead>* r) { recording = r; }
    ~Scope() { recording = nullptr; }
  } scope(&out);
  call();
}

}  // namespace b2lazy::h5
