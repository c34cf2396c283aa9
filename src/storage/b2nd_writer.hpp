// Writes output chunks into a new b2nd array, under a temporary name until finish().
// The output path is checked before any work (storage/output_path.hpp): only a b2nd
// array is ever replaced, and only once the new one is complete.
#pragma once
#include <blosc2.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "b2lazy/context.hpp"
#include "b2lazy/driver.hpp"
#include "b2lazy/dtype.hpp"
#include "runtime/context_uid.hpp"

#include <b2nd.h>

namespace b2lazy {

class B2ndSource;
class OutputTemp;
class ThreadState;

class B2ndWriter : public Sink {
 public:
  B2ndWriter(const Shape& shape, DType dtype, const Shape& chunks, const Shape& blocks, const ComputeOptions& opts);
  ~B2ndWriter() override;  // removes the temporary output unless finish() succeeded
  B2ndWriter(const B2ndWriter&) = delete;

  const ChunkGrid& grid() const override { return grid_; }
  const Shape& blocks() const { return blocks_; }
  const Shape& extchunk() const { return extchunk_; }
  DType dtype() const { return dtype_; }
  // `data`: the chunk's box in dense C order.
  void write_chunk(int64_t id, const void* data, ThreadState& ts) override;
  // `data`: the chunk in Blosc2's block-major padded layout (extchunk items).
  bool block_major(const Shape& blocks) const override { return blocks == blocks_; }
  int64_t block_major_items() const override { return prod(extchunk_); }
  void write_block_major(int64_t id, const void* data, ThreadState& ts) override;
  // Moves the result into place and returns it as a source, opened before the move so
  // that it is this writer's array whatever later happens at the path; an in-memory
  // result is named `<prefix>#<n>` in stats.
  std::shared_ptr<B2ndSource> finish_source(const std::string& prefix);
  NodePtr finish() override;
  int64_t bytes_written() const override { return bytes_written_; }
  // A Blosc2 chunk of this layout (its header is checked), inserted as it is.
  void write_compressed(int64_t id, const void* data, size_t nbytes) override;
  std::vector<uint8_t> compressed_chunk(int64_t id) const override;
  // Chunk `id` (its box in dense C order) compressed as write_chunk() would store it, not
  // stored: a stage piece's chunks travel without a frame holding them too.
  std::vector<uint8_t> compress_chunk(int64_t id, const void* data, ThreadState& ts) const;

 private:
  const uint64_t ctx_uid_ = next_context_uid();  // (its threads' Blosc2 contexts: runtime/context_uid.hpp)
  void to_block_major(int64_t id, const void* data, ThreadState& ts,
                      const std::function<void(const void*)>& then) const;
  void compress_block_major(int64_t id, const void* data, ThreadState& ts,
                            const std::function<void(const uint8_t*, int)>& use) const;

  b2nd_array_t* arr_ = nullptr;
  DType dtype_;
  ChunkGrid grid_;
  Shape blocks_, extchunk_;
  bool c_order_blocks_ = false;  // block-major order is the chunk's C order
  std::string final_path_;
  std::unique_ptr<OutputTemp> temp_;  // on disk: the reserved temporary
  blosc2_cparams cparams_;
  std::mutex mu_;
  int64_t bytes_written_ = 0;
};

}  // namespace b2lazy
