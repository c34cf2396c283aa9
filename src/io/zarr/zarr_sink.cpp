#include "io/zarr/zarr_sink.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "b2lazy/error.hpp"
#include "core/strided_copy.hpp"
#include "io/zarr/blosc1.hpp"
#include "io/zarr/zarr_source.hpp"

namespace b2lazy {

static_assert(std::endian::native == std::endian::little,
              "Zarr outputs are written little-endian as they are in memory");

const ReplaceRule& zarr_replace_rule() {
  static const ReplaceRule rule{"Zarr",
                                [](const std::string& path, bool dir) {
                                  if (!dir) return false;
                                  struct stat st;
                                  if (::lstat((path + "/.zarray").c_str(), &st) == 0 && S_ISREG(st.st_mode))
                                    return true;
                                  if (::lstat((path + "/zarr.json").c_str(), &st) != 0 || !S_ISREG(st.st_mode))
                                    return false;
                                  try {  // an array's, not a group's
                                    std::ifstream f(path + "/zarr.json");
                                    const auto j = nlohmann::json::parse(f);
                                    return j.is_object() && j.value("node_type", "") == "array";
                                  } catch (const std::exception& e) {
                                    throw IOError("'" + path + "/zarr.json': not valid JSON");
                                  }
                                },
                                {"zarr.json", ".zarray"}};
  return rule;
}

namespace {

zarr::BytesCodec compressor(const CParams& c) {
  zarr::BytesCodec b{zarr::BytesCodec::Kind::Blosc, c.compressor};
  b.level = c.clevel;
  if (c.compressor == "blosc") {
    if (!zarr::blosc1_writes(c.codec))
      throw ValueError("compute: Zarr's blosc codec is written with codec lz4, lz4hc, zlib or zstd, not '" + c.codec +
                       "'");
    if (c.filter != "shuffle" && c.filter != "nofilter")
      throw ValueError("compute: Zarr's blosc codec is written with filter shuffle or nofilter, not '" + c.filter +
                       "'");
    if (c.clevel < 0 || c.clevel > 9) throw ValueError("compute: clevel must be 0..9, got " + std::to_string(c.clevel));
    b.cname = c.codec;
    b.shuffle = c.filter == "shuffle";
  } else if (c.compressor == "zstd") {
    b.kind = zarr::BytesCodec::Kind::Zstd;
    if (c.clevel < -7 || c.clevel > 22)
      throw ValueError("compute: zstd's level must be -7..22, got " + std::to_string(c.clevel));
  } else {
    throw ValueError("compute: compressor must be 'blosc' or 'zstd' for Zarr outputs, got '" + c.compressor + "'");
  }
  return b;
}

}  // namespace

namespace zarr {

Metadata output_metadata(const SinkSpec& spec, const std::string& name) {
  const ComputeOptions& o = *spec.options;
  Metadata meta;
  if (o.contiguous.value_or(false))
    throw ValueError("compute: a Zarr array is a directory; contiguous=True applies to b2nd outputs ('" + name + "')");
  meta.version = 3;
  meta.shape = spec.shape;
  meta.dtype = spec.dtype;
  meta.chunks = spec.chunks;  // the shards, when sharded (the plan's output chunks)
  Pipeline inner;
  inner.bytes_codecs.push_back(compressor(o.cparams));
  if (!o.shards.empty()) {
    if (o.shards.size() != spec.shape.size())
      throw ValueError("compute: shards " + shape_str(o.shards) + " do not match shape " + shape_str(spec.shape));
    if (o.chunks.empty())
      throw ValueError("compute: shards " + shape_str(o.shards) +
                       " need chunks: the inner chunks, dividing the shards");
    for (size_t d = 0; d < o.shards.size(); ++d)
      if (o.chunks[d] <= 0 || o.shards[d] % o.chunks[d] != 0)
        throw ValueError("compute: shards " + shape_str(o.shards) + " are not multiples of chunks " +
                         shape_str(o.chunks));
    auto s = std::make_shared<Sharding>();
    s->inner = o.chunks;
    s->codecs = inner;
    s->index_codecs.bytes_codecs.push_back({BytesCodec::Kind::Crc32c, "crc32c"});
    meta.codecs.sharding = s;
  } else {
    meta.codecs = inner;
  }
  for (auto& c : meta.chunks) c = std::max<int64_t>(c, 1);
  return meta;
}

bool encode_output_chunk(const Metadata& meta, const ChunkGrid& grid, int64_t id, const void* data,
                         std::vector<uint8_t>& bytes) {
  const size_t isz = itemsize(meta.dtype), nd = meta.shape.size();
  const Box box = grid.chunk_box(id);
  const Shape bs = box.shape();
  const int64_t n = prod(meta.chunks);
  const uint8_t* chunk = static_cast<const uint8_t*>(data);
  std::vector<uint8_t> padded;
  if (bs != meta.chunks) {  // an edge chunk: stored whole, padded with the fill value (0)
    padded.assign(static_cast<size_t>(n) * isz, 0);
    const Shape src = byte_strides(bs, isz), dst = byte_strides(meta.chunks, isz);
    copy_strided(nd, bs.data(), static_cast<const char*>(data), src.data(), reinterpret_cast<char*>(padded.data()),
                 dst.data(), isz);
    chunk = padded.data();
  }
  bool all_fill = true;
  for (int64_t k = 0; k < n && all_fill; ++k) all_fill = std::memcmp(chunk + k * isz, meta.fill, isz) == 0;
  if (all_fill) return false;
  encode(meta.codecs, chunk, meta.chunks, meta.dtype, bytes, meta.fill);
  return true;
}

}  // namespace zarr

ZarrSink::ZarrSink(const SinkSpec& spec) {
  init(spec);
  classify_output(final_, zarr_replace_rule());  // before anything is created
  temp_ = std::make_unique<OutputTemp>(final_, zarr_replace_rule());
  const std::string& dir = temp_->array_path();
  if (::mkdir(dir.c_str(), 0755) != 0 || (dirfd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    throw IOError("cannot create output '" + final_ + "' (" + std::strerror(errno) + ")");
}

ZarrSink::ZarrSink(const SinkSpec& spec, const std::string& staging) {
  init(spec);
  if ((dirfd_ = ::open(staging.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    throw IOError("cannot write output '" + final_ + "': its staging directory '" + staging + "' (" +
                  std::strerror(errno) + ")");
}

std::string ZarrSink::staging_path() const { return temp_ ? temp_->array_path() : std::string(); }

void ZarrSink::init(const SinkSpec& spec) {
  final_ = strip_trailing_slashes(spec.path);
  meta_ = zarr::output_metadata(spec, final_);
  grid_ = ChunkGrid(meta_.shape, meta_.chunks);
}

ZarrSink::~ZarrSink() {
  if (dirfd_ >= 0) ::close(dirfd_);
  temp_.reset();  // removes the temporary unless finish() moved it
}

void ZarrSink::write_file(const std::string& key, const uint8_t* data, size_t n) {
  auto fail = [&](const std::string& what) {
    throw IOError("cannot write output '" + final_ + "': " + key + ": " + what + " (" + std::strerror(errno) + ")");
  };
  for (size_t slash = key.find('/'); slash != std::string::npos; slash = key.find('/', slash + 1))
    if (::mkdirat(dirfd_, key.substr(0, slash).c_str(), 0755) != 0 && errno != EEXIST)
      fail("cannot create its directory");
  const int fd = ::openat(dirfd_, key.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create");
  size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(fd, data + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = errno;
      ::close(fd);
      errno = err;
      fail("cannot write");
    }
    done += static_cast<size_t>(w);
  }
  if (::close(fd) != 0) fail("cannot write");
  written_ += static_cast<int64_t>(n);
}

void ZarrSink::write_chunk(int64_t id, const void* data, ThreadState& /*ts*/) {
  std::vector<uint8_t> bytes;
  if (!zarr::encode_output_chunk(meta_, grid_, id, data, bytes)) {
    // All fill: left out; a part sink removes what a killed earlier attempt left there.
    if (!temp_) ::unlinkat(dirfd_, meta_.key(grid_.chunk_coords(id)).c_str(), 0);
    return;
  }
  write_file(meta_.key(grid_.chunk_coords(id)), bytes.data(), bytes.size());
}

NodePtr ZarrSink::finish() {
  if (!temp_) throw ValueError("a part sink of '" + final_ + "' is not finished: its committer is");
  const std::string json = zarr::v3_json(meta_);
  write_file("zarr.json", reinterpret_cast<const uint8_t*>(json.data()), json.size());
  // Opened from the temporary, through a descriptor that follows it into place.
  auto result = ZarrSource::open(temp_->array_path(), final_);
  temp_->commit();
  temp_.reset();
  return result;
}

}  // namespace b2lazy
