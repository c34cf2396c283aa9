// A dataset of an HDF5 file as a leaf of the graph. libhdf5 (Debian's serial build, not
// thread-safe) is called under one process-wide lock, and only for metadata: where each
// chunk lies (H5Dget_chunk_info_by_coord, cached). The chunk's bytes are read with pread
// through a descriptor of our own and decoded by the worker that asks (h5_filters.hpp), so
// reads and decoding run in parallel; a pipeline b2lazy cannot decode is read through
// libhdf5 (H5Dread, serialized). Contiguous datasets are read in row bands with pread.
// Over a byte store (open_in_store) libhdf5 reads the file's metadata through our driver
// (h5_store_vfd.hpp) and finds each chunk's place; the chunks' bytes (and contiguous
// runs) are fetched by the source, a fill's all at once, and listed for the plan's
// prefetch (store_reads): h5_store_source.cpp.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "b2lazy/byte_store.hpp"
#include "io/hdf5/h5_filters.hpp"
#include "io/hdf5/h5_storage.hpp"
#include "io/regular_file.hpp"
#include "io/unit_source.hpp"

namespace b2lazy {

class H5Source : public UnitSource {
 public:
  // Dataset `dataset` ("/group/x") of the file at `path`; empty: the file's only dataset.
  // IOError naming the file and the dataset.
  static std::shared_ptr<H5Source> open(const std::string& path, const std::string& dataset);
  // The same of the HDF5 file at key "" of `store` (a remote URL's object), read-only.
  // External storage and virtual datasets (values in other files) are refused there.
  static std::shared_ptr<H5Source> open_in_store(const StorePtr& store, const std::string& dataset);
  ~H5Source() override;
  std::string kind() const override { return "hdf5"; }
  double decode_cost() const override;
  std::string describe() const override;
  std::string source_name() const override { return name_; }
  bool stored_info(StorageInfo& out) const override;
  // UnitSource's, with check_unchanged() after it (and when it fails).
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  // Over a store: the chunks (and contiguous runs) a fill of `region` reads, one range
  // each, fetched ahead by the executor (exec/prefetcher.hpp).
  void store_reads(const Region& region, std::vector<StoreRead>& out) const override;
  int64_t store_read_bytes() const override;
  // The store a remote source reads, else nullptr.
  const StorePtr& store() const { return store_; }

  struct Handles;                                    // libhdf5's identifiers (h5_source.cpp)
  H5Source(DType t, Shape shape, std::string name);  // (the handles are given by open)

 private:
  void read_unit(int64_t id, void* dst, ThreadState& ts) const override;
  // Over a store, a contiguous dataset's units are read by range: only the items a
  // region's run needs (h5_store_source.cpp).
  bool unit_ranges() const override { return ranged_; }
  void read_unit_range(int64_t id, int64_t start, int64_t n, void* dst, ThreadState& ts) const override;
  // The dataset `dataset` of the file h->file (opened, named `path`), under the lock;
  // `remote`: a store's file. The handles go to the source.
  static std::shared_ptr<H5Source> from_file(std::unique_ptr<Handles>& h, const std::string& path,
                                             const std::string& dataset, bool remote);
  // Over a store (h5_store_source.cpp). Where unit `id`'s stored bytes lie in the object:
  // a chunk's place as libhdf5 finds it (cached), or a contiguous run's; offset -1: none
  // stored (the fill value) or not ours to fetch (compact, read through libhdf5).
  struct Place {
    int64_t offset = -1, size = 0;
    uint32_t mask = 0;  // a chunk's skipped filters
  };
  Place place_of(int64_t id) const;
  // Where a read fill() makes lies (a run of a contiguous unit: those items' bytes).
  Place place_of(const UnitRead& r) const;
  // The stored bytes of read `r` at `p`: fetched by this thread's fill, else read now.
  std::vector<uint8_t> remote_bytes(const UnitRead& r, const Place& p, ThreadState& ts) const;
  void fill_remote(const Region& region, void* out, ThreadState& ts) const;
  // A chunk through libhdf5 (a filter b2lazy does not decode), into the padded unit `dst`.
  void read_through_library(int64_t id, void* dst) const;
  void fill_value(void* dst, int64_t n) const;
  std::string layout_name() const;  // when not chunked: contiguous, compact, external or virtual
  // The end of every unit read: bools made 0/1, the read counted in ts.
  void finish_unit(int64_t id, void* dst, ThreadState& ts) const;
  // IOError "'<name>': changed on disk since it was opened" when the file was written in
  // place (as B2ndSource: a file replaced by rename keeps being read as it was opened, by
  // libhdf5 and by fd_; one written in place would mix libhdf5's cached chunk addresses
  // with new bytes). Checked after each fill (and when one fails).
  void check_unchanged() const;
  std::unique_ptr<Handles> h_;
  std::string name_;
  bool chunked_ = false, decodes_ = true, big_endian_ = false;
  std::vector<h5::Filter> filters_;
  std::vector<uint8_t> fill_;               // one item
  bool virtual_ = false;                    // a VDS: read through libhdf5 (its sources checked at open)
  std::vector<uint8_t> compact_;            // a compact dataset's values (read at open)
  int64_t data_offset_ = -1;                // contiguous: the data's file offset (-1: not allocated)
  std::vector<h5::ExternalPart> external_;  // external storage: where its bytes lie
  int fd_ = -1;
  int64_t file_size_ = 0;
  FileStamp stamp_;  // fd_'s file as opened
  int64_t stored_bytes_ = 0;
  StorePtr store_;                                     // over a store: the file's object is its key ""
  bool ranged_ = false;                                // unit_ranges(): a contiguous dataset over a store
  mutable std::unordered_map<int64_t, Place> places_;  // chunks found (under the library lock)
};

}  // namespace b2lazy
