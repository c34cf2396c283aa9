// x[key] = value (issue #15, item 4): the lazy assign node on strided and reversed keys and
// regions, what it reads of its value, and the write-through to a stored b2nd file.
#include <gtest/gtest.h>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

TEST(Assign, BasicKeysAndRegions) {
  Context ctx(1);
  Array x = zeros({3, 4}, DType::I32);
  // x[1] = [1 2 3 4]
  Array a = assign(x, {Index::at(1)}, arange(1, 5, 1, DType::I32));
  EXPECT_EQ(a.to_vector(&ctx), (std::vector<double>{0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0}));
  // x[::-2, 1::2] = [[1, 2], [3, 4]]: rows 2, 0 and columns 1, 3
  Array b = assign(x, {Index::slice({}, {}, -2), Index::slice(1, {}, 2)}, arange(1, 5, 1, DType::F64, {2, 2}));
  EXPECT_EQ(b.to_vector(&ctx), (std::vector<double>{0, 3, 0, 4, 0, 0, 0, 0, 0, 1, 0, 2}));
  // read back through a strided, reversed region of the result
  Array r = b[{Index::slice({}, {}, -1), Index::slice({}, {}, -3)}];
  EXPECT_EQ(r.to_vector(&ctx), (std::vector<double>{2, 0, 0, 0, 4, 0}));
  // a scalar broadcast, with None in the key
  Array c = assign(x, {Index::newaxis(), Index::slice(), Index::at(-1)}, scalar(7));
  EXPECT_EQ(c.to_vector(&ctx), (std::vector<double>{0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 7}));
  EXPECT_EQ(c.dtype(), DType::I32);
  EXPECT_THROW(assign(x, {Index::slice()}, arange(0, 3)), ValueError);
  EXPECT_THROW(assign(x, {Index::at(3)}, scalar(1)), IndexError);
}

TEST(Assign, PullsOnlyTheValueItCovers) {
  Context ctx(2);
  Array value = stored(arange(0, 100, 1, DType::F64, {10, 10}), {5, 10}, {5, 10}, ctx);
  Array x = assign(zeros({40, 10}), {Index::slice(30, 40)}, value);
  Array head = x[{Index::slice(0, 30)}].compute({}, &ctx);
  EXPECT_TRUE(head.stats()->bytes_decompressed.empty());
  Array tail = x[{Index::slice(32, 34)}].compute({}, &ctx);
  EXPECT_EQ(tail.to_vector(&ctx)[0], 20.0);
  EXPECT_EQ(tail.stats()->distinct_chunks_decompressed.begin()->second, 1);
}

TEST(Assign, WrittenThroughToTheTouchedChunksOnly) {
  Context ctx(1);
  const auto dir = b2lazy::test::temp_dir("assign");
  const std::string path = (dir / "x.b2nd").string();
  ComputeOptions o;
  o.urlpath = path;
  o.chunks = {4, 4};
  o.blocks = {2, 4};
  arange(0, 64, 1, DType::F64, {8, 8}).compute(o, &ctx);
  // x[5, ::3] = -1: columns 0, 3, 6 of row 5, in chunks (1, 0) and (1, 1)
  EXPECT_EQ(assign_stored(path, {Index::at(5), Index::slice({}, {}, 3)}, scalar(-1.0), &ctx), 2);
  // x[0, 4::8] touches chunk (0, 1) only; x[0:4, 1:3:8] none beyond (0, 0)
  EXPECT_EQ(assign_stored(path, {Index::slice(0, 1), Index::slice(4, {}, 8)}, scalar(-2.0), &ctx), 1);
  // the value reads the file itself: x[1:] = x[:-1] shifts the old rows
  EXPECT_EQ(assign_stored(path, {Index::slice(1, {})}, open(path)[{Index::slice({}, -1)}], &ctx), 4);
  std::vector<double> v = open(path).to_vector(&ctx);
  std::vector<double> want(64);
  for (int i = 0; i < 64; ++i) want[i] = i;
  for (int j : {0, 3, 6}) want[5 * 8 + j] = -1;
  want[4] = -2;
  std::vector<double> shifted = want;
  for (int i = 8; i < 64; ++i) shifted[i] = want[i - 8];
  EXPECT_EQ(v, shifted);
  EXPECT_THROW(assign_stored(path, {Index::at(0)}, arange(0, 3), &ctx), ValueError);
  std::filesystem::remove_all(dir);
}

// Chunks replaced without writing over what readers use (storage/frame_update.hpp): files
// and directories read back right, a damaged frame is refused naming it before anything is
// written, and a file's dead space stays bounded over many statements.
TEST(Assign, ReplacedChunksInFilesAndDirectories) {
  Context ctx(1);
  const auto dir = b2lazy::test::temp_dir("assign_frames");
  for (bool contiguous : {true, false}) {
    const std::string path = (dir / (contiguous ? "x.b2nd" : "xdir")).string();
    ComputeOptions o;
    o.urlpath = path;
    o.chunks = {4, 8};
    o.blocks = {2, 8};
    o.contiguous = contiguous;
    arange(0, 64, 1, DType::F64, {8, 8}).compute(o, &ctx);
    EXPECT_EQ(assign_stored(path, {Index::slice(0, 4)}, scalar(0.0), &ctx), 1);  // a chunk of zeros: a mark
    EXPECT_EQ(assign_stored(path, {Index::slice(2, 6)}, scalar(3.0), &ctx), 2);
    std::vector<double> want(64);
    for (int i = 0; i < 64; ++i) want[i] = i < 16 ? 0 : i < 48 ? 3 : i;
    EXPECT_EQ(open(path).to_vector(&ctx), want) << path;
  }
  // A file whose header lengths point outside it: refused, naming it, and left as it was.
  const std::string bad = (dir / "bad.b2nd").string();
  std::filesystem::copy_file(dir / "x.b2nd", bad);
  std::vector<char> bytes(static_cast<size_t>(std::filesystem::file_size(bad)));
  {
    std::FILE* f = std::fopen(bad.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fread(bytes.data(), 1, bytes.size(), f), bytes.size());
    bytes[40] = 0x7f;  // the chunk-bytes field: far past the end
    std::fseek(f, 0, SEEK_SET);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  try {
    assign_stored(bad, {Index::at(0)}, scalar(1.0), &ctx);
    ADD_FAILURE() << "a damaged frame was written to";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.b2nd"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::filesystem::file_size(bad), bytes.size());
  std::filesystem::remove_all(dir);
}
