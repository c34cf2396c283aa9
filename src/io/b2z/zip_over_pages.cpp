#include "io/b2z/zip_over_pages.hpp"

#include <unzip.h>

#include <algorithm>
#include <cstring>

#include "b2lazy/error.hpp"

namespace b2lazy {

namespace {
// minizip looks for the end of central directory in the last 64 KiB + 1 KiB (a comment of
// up to 65535 bytes): read at once, the directory of a small zip comes with it.
constexpr int64_t kTail = (int64_t(64) << 10) + 2048;
constexpr int64_t kDirectoryReadAhead = int64_t(1) << 20;
constexpr int64_t kDirectoryReadAheadMax = int64_t(4) << 20;  // (a quarter of the pages kept)
// A member's last bytes read with its header (a b2nd frame's chunk index and trailer), and
// the room allowed for the header's name and extra field.
constexpr int64_t kMemberTail = int64_t(16) << 10;
constexpr int64_t kSlack = 1024;
}  // namespace

struct ZipOverPages::Stream {
  ObjectPages* pages = nullptr;
  int64_t pos = 0;
  int64_t member_bytes = -1, member_ahead = 0;  // expect_member's, for the next miss
  int64_t read_ahead = kDirectoryReadAhead;
  std::string error;
};

namespace {

using Stream = ZipOverPages::Stream;

voidpf open_stream(voidpf, const void* filename, int mode) {
  if ((mode & ZLIB_FILEFUNC_MODE_READWRITEFILTER) != ZLIB_FILEFUNC_MODE_READ) return nullptr;
  return const_cast<void*>(filename);  // the Stream, owned by ZipOverPages
}

uLong read_stream(voidpf, voidpf stream, void* buf, uLong size) {
  auto& s = *static_cast<Stream*>(stream);
  try {
    const int64_t total = s.pages->size();
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(size), std::max<int64_t>(0, total - s.pos));
    if (n <= 0) return 0;
    if (!s.pages->holds(s.pos, n)) {
      std::vector<ByteRange> ranges;
      if (s.member_bytes >= 0) {  // a member's local header: its data's first and last bytes come with it
        // (The header's name and extra field are short in python-blosc2's zips: kSlack.)
        const int64_t data_end = s.pos + 30 + s.member_bytes;
        ranges.push_back({s.pos, n + kSlack + s.member_ahead});
        ranges.push_back({std::max<int64_t>(s.pos, data_end - kMemberTail), kMemberTail + kSlack});
        s.member_bytes = -1;
      } else {  // the central directory, entry by entry: a MiB ahead, then twice as much each time
        ranges.push_back({s.pos, std::max(n, s.read_ahead)});
        s.read_ahead = std::min(2 * s.read_ahead, kDirectoryReadAheadMax);
      }
      s.pages->warm(ranges);
    }
    s.pages->read(s.pos, n, buf);
    s.pos += n;
    return static_cast<uLong>(n);
  } catch (const std::exception& e) {
    s.error = e.what();
    return 0;
  }
}

uLong write_stream(voidpf, voidpf, const void*, uLong) { return 0; }

ZPOS64_T tell_stream(voidpf, voidpf stream) { return static_cast<ZPOS64_T>(static_cast<Stream*>(stream)->pos); }

long seek_stream(voidpf, voidpf stream, ZPOS64_T offset, int origin) {
  auto& s = *static_cast<Stream*>(stream);
  try {
    int64_t base = 0;
    if (origin == ZLIB_FILEFUNC_SEEK_CUR) base = s.pos;
    else if (origin == ZLIB_FILEFUNC_SEEK_END) base = s.pages->size();
    else if (origin != ZLIB_FILEFUNC_SEEK_SET) return -1;
    if (offset > static_cast<ZPOS64_T>(INT64_MAX - base)) return -1;
    s.pos = base + static_cast<int64_t>(offset);
    return 0;
  } catch (const std::exception& e) {
    s.error = e.what();
    return -1;
  }
}

int close_stream(voidpf, voidpf) { return 0; }
int error_stream(voidpf, voidpf stream) { return static_cast<Stream*>(stream)->error.empty() ? 0 : 1; }

}  // namespace

ZipOverPages::ZipOverPages(std::shared_ptr<ObjectPages> pages)
    : pages_(std::move(pages)), stream_(std::make_unique<Stream>()) {
  stream_->pages = pages_.get();
  pages_->warm_tail(kTail);  // (the whole zip when shorter)
  zlib_filefunc64_def io{};
  io.zopen64_file = open_stream;
  io.zread_file = read_stream;
  io.zwrite_file = write_stream;
  io.ztell64_file = tell_stream;
  io.zseek64_file = seek_stream;
  io.zclose_file = close_stream;
  io.zerror_file = error_stream;
  zip_ = unzOpen2_64(stream_.get(), &io);
  if (!zip_) {
    if (!stream_->error.empty()) throw IOError(stream_->error);
    throw IOError("cannot open '" + pages_->url() +
                  "' as a .b2z store (python-blosc2's DictStore zip): not a zip file");
  }
}

ZipOverPages::~ZipOverPages() {
  if (zip_) unzClose(zip_);
}

void ZipOverPages::expect_member(int64_t data_bytes, int64_t ahead) {
  stream_->member_bytes = data_bytes < 0 ? -1 : data_bytes;  // (-1: expect nothing)
  stream_->member_ahead = std::max<int64_t>(0, ahead);
}

std::string ZipOverPages::store_error() const { return stream_->error; }

}  // namespace b2lazy
