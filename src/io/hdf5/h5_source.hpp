// A dataset of an HDF5 file as a leaf of the graph. libhdf5 (Debian's serial build, not
// thread-safe) is called under one process-wide lock, and only for metadata: where each
// chunk lies (H5Dget_chunk_info_by_coord, cached). The chunk's bytes are read with pread
// through a descriptor of our own and decoded by the worker that asks (h5_filters.hpp), so
// reads and decoding run in parallel; a pipeline b2lazy cannot decode is read through
// libhdf5 (H5Dread, serialized). Contiguous datasets are read in row bands with pread.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

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
  ~H5Source() override;
  std::string kind() const override { return "hdf5"; }
  double decode_cost() const override;
  std::string describe() const override;
  std::string source_name() const override { return name_; }
  bool stored_info(StorageInfo& out) const override;
  // UnitSource's, with check_unchanged() after it (and when it fails).
  void fill(const Region& region, void* out, ThreadState& ts) const override;

  struct Handles;  // libhdf5's identifiers (h5_source.cpp)
  H5Source(DType t, Shape shape, std::string name);  // (the handles are given by open)

 private:
  void read_unit(int64_t id, void* dst, ThreadState& ts) const override;
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
  std::vector<uint8_t> fill_;    // one item
  bool virtual_ = false;           // a VDS: read through libhdf5 (its sources checked at open)
  std::vector<uint8_t> compact_;  // a compact dataset's values (read at open)
  int64_t data_offset_ = -1;      // contiguous: the data's file offset (-1: not allocated)
  std::vector<h5::ExternalPart> external_;  // external storage: where its bytes lie
  int fd_ = -1;
  int64_t file_size_ = 0;
  FileStamp stamp_;  // fd_'s file as opened
  int64_t stored_bytes_ = 0;
};

}  // namespace b2lazy
