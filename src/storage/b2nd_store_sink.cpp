#include "storage/b2nd_store_sink.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "b2lazy/error.hpp"
#include "storage/b2nd_source.hpp"
#include "storage/b2nd_writer.hpp"

namespace b2lazy {

namespace {

// A private temporary directory, removed with what is in it.
class TempDir {
 public:
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "b2lazy-upload-XXXXXX").string();
    if (!::mkdtemp(t.data())) throw IOError(std::string("cannot make a temporary directory: ") + std::strerror(errno));
    path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Uploads the file at `path` as object "" of `store`, mapped rather than copied.
void upload(const std::string& path, ByteStore& store) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IOError("cannot read the output '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw IOError("cannot read the output '" + path + "': " + std::strerror(errno));
  }
  const size_t n = static_cast<size_t>(st.st_size);
  void* p = n ? ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd, 0) : nullptr;
  ::close(fd);
  if (p == MAP_FAILED) throw IOError("cannot map the output '" + path + "': " + std::strerror(errno));
  std::unique_ptr<void, std::function<void(void*)>> unmap(p, [n](void* q) {
    if (q) ::munmap(q, n);
  });
  store.write("", p, n);
}

class B2ndStoreSink : public Sink {
 public:
  B2ndStoreSink(const SinkSpec& s, const StorePtr& store) : store_(store) {
    ComputeOptions o = *s.options;
    const std::string url = store->url_of("");
    if (o.contiguous.has_value() && !*o.contiguous)
      throw ValueError("compute: '" + url +
                       "': a sparse b2nd directory is no single object; remote b2nd outputs are contiguous");
    if (!o.shards.empty()) throw ValueError("compute: shards apply to Zarr outputs; the output '" + url + "' is b2nd");
    if (o.cparams.compressor != "blosc")
      throw ValueError("compute: compressor '" + o.cparams.compressor + "' applies to Zarr outputs; the output '" +
                       url + "' is b2nd (Blosc2: choose codec, clevel and filter)");
    o.contiguous = true;
    o.urlpath = dir_.path() + "/out.b2nd";
    local_path_ = o.urlpath;
    writer_ = std::make_unique<B2ndWriter>(s.shape, s.dtype, s.chunks, s.blocks, o);
  }
  const ChunkGrid& grid() const override { return writer_->grid(); }
  void write_chunk(int64_t id, const void* data, ThreadState& ts) override { writer_->write_chunk(id, data, ts); }
  bool block_major(const Shape& blocks) const override { return writer_->block_major(blocks); }
  int64_t block_major_items() const override { return writer_->block_major_items(); }
  void write_block_major(int64_t id, const void* data, ThreadState& ts) override {
    writer_->write_block_major(id, data, ts);
  }
  void write_compressed(int64_t id, const void* data, size_t nbytes) override {
    writer_->write_compressed(id, data, nbytes);
  }
  std::vector<uint8_t> compressed_chunk(int64_t id) const override { return writer_->compressed_chunk(id); }
  int64_t bytes_written() const override { return writer_->bytes_written(); }
  NodePtr finish() override {
    writer_->finish();  // the complete file, in place at local_path_
    writer_.reset();
    upload(local_path_, *store_);
    return B2ndSource::open_in_store(store_);  // what is at the URL now
  }

 private:
  StorePtr store_;
  TempDir dir_;
  std::string local_path_;
  std::unique_ptr<B2ndWriter> writer_;
};

}  // namespace

std::unique_ptr<Sink> create_b2nd_store_sink(const SinkSpec& spec, const StorePtr& store) {
  return std::make_unique<B2ndStoreSink>(spec, store);
}

}  // namespace b2lazy
