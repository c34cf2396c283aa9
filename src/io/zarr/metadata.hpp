// Zarr array metadata: v3's zarr.json and v2's .zarray (with .zattrs ignored), parsed
// into one form; and v3 metadata written for an output.
#pragma once
#include <string>

#include "b2lazy/box.hpp"
#include "b2lazy/dtype.hpp"
#include "io/zarr/codecs.hpp"

namespace b2lazy::zarr {

struct Metadata {
  int version = 3;
  Shape shape;
  Shape chunks;  // the chunk grid's cells (shards, when sharded)
  DType dtype = DType::F64;
  alignas(16) unsigned char fill[kMaxItemsize] = {};  // the fill value, native byte order
  Pipeline codecs;
  // Chunk keys: v3 "default" encoding is "c" then the coordinates; v2 (and v3 "v2") the
  // coordinates alone; joined by `separator`.
  bool c_prefix = true;
  char separator = '/';
  std::string key(const Shape& coords) const;
};

// Parses the text of `file` ("zarr.json" or ".zarray") of the array at `path`. Errors are
// IOError naming the file and the key ("'a.zarr/zarr.json': codecs[1] (blosc): ..."),
// TypeError for a data type b2lazy has no equivalent of.
Metadata parse_metadata(const std::string& text, int version, const std::string& file);

// The zarr.json of a v3 array with this layout.
std::string v3_json(const Metadata& m);

}  // namespace b2lazy::zarr
