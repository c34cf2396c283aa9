#include "io/zarr/metadata.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "b2lazy/checked.hpp"
#include "b2lazy/error.hpp"
#include "core/dispatch.hpp"

namespace b2lazy::zarr {

namespace {

using json = nlohmann::json;

// Errors name the file and the key they are about.
struct Where {
  const std::string& file;
  std::string key;
  Where at(const std::string& k) const { return {file, key.empty() ? k : key + "." + k}; }
  Where at(size_t i) const { return {file, key + "[" + std::to_string(i) + "]"}; }
  [[noreturn]] void fail(const std::string& what) const {
    throw IOError("'" + file + "': " + (key.empty() ? "" : key + ": ") + what);
  }
};

const json& field(const json& obj, const char* name, const Where& w) {
  if (!obj.is_object()) w.fail("expected an object");
  auto it = obj.find(name);
  if (it == obj.end()) w.fail(std::string("missing '") + name + "'");
  return *it;
}

const json* optional_field(const json& obj, const char* name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::string text(const json& v, const Where& w) {
  if (!v.is_string()) w.fail("expected a string, got " + v.dump());
  return v.get<std::string>();
}

int64_t integer(const json& v, const Where& w, int64_t lo = std::numeric_limits<int64_t>::min()) {
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)))
    w.fail("expected an integer, got " + v.dump());
  const int64_t i = v.get<int64_t>();
  if (i < lo) w.fail("expected an integer of at least " + std::to_string(lo) + ", got " + std::to_string(i));
  return i;
}

Shape int_list(const json& v, const Where& w, int64_t lo) {
  if (!v.is_array()) w.fail("expected a list of integers, got " + v.dump());
  Shape s;
  for (size_t i = 0; i < v.size(); ++i) s.push_back(integer(v[i], w.at(i), lo));
  return s;
}

DType dtype_v3(const std::string& name, const Where& w) {
  static const std::pair<const char*, DType> names[] = {
      {"bool", DType::Bool},       {"int8", DType::I8},     {"int16", DType::I16},   {"int32", DType::I32},
      {"int64", DType::I64},       {"uint8", DType::U8},    {"uint16", DType::U16},  {"uint32", DType::U32},
      {"uint64", DType::U64},      {"float32", DType::F32}, {"float64", DType::F64}, {"complex64", DType::C64},
      {"complex128", DType::C128}, {"float16", DType::F16}};
  for (const auto& [n, t] : names)
    if (name == n) return t;
  throw TypeError("'" + w.file + "': " + w.key + ": data type '" + name +
                  "' is not supported (b2lazy has bool, int8..int64, uint8..uint64, float16, float32, float64, "
                  "complex64, complex128)");
}

// v2's NumPy type string ("<f8", "|b1", ">i4"): the type and whether it is big-endian.
DType dtype_v2(const json& v, const Where& w, bool& big) {
  if (!v.is_string()) w.fail("structured data types are not supported, got " + v.dump());
  const std::string s = v.get<std::string>();
  big = !s.empty() && s[0] == '>';
  const std::string bare = !s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=') ? s.substr(1) : s;
  static const std::pair<const char*, DType> names[] = {
      {"b1", DType::Bool}, {"i1", DType::I8},  {"i2", DType::I16},   {"i4", DType::I32}, {"i8", DType::I64},
      {"u1", DType::U8},   {"u2", DType::U16}, {"u4", DType::U32},   {"u8", DType::U64}, {"f4", DType::F32},
      {"f8", DType::F64},  {"c8", DType::C64}, {"c16", DType::C128}, {"f2", DType::F16}};
  for (const auto& [n, t] : names)
    if (bare == n) return t;
  throw TypeError("'" + w.file + "': " + w.key + ": data type '" + s +
                  "' is not supported (b2lazy has bool, int8..int64, uint8..uint64, float16, float32, float64, "
                  "complex64, complex128)");
}

// The fill value as the array's type, in native byte order. Floats may be "NaN",
// "Infinity", "-Infinity" or "0x..." (the bit pattern). null, where `null_ok`, is 0 (v2:
// "no fill value"); elsewhere it is refused, as zarr-python refuses it (v3, and the parts
// of a complex value).
void parse_fill(const json& v, DType t, unsigned char* out, const Where& w, bool null_ok = false) {
  std::memset(out, 0, kMaxItemsize);
  if (v.is_null()) {
    if (null_ok) return;
    w.fail(std::string("null is not a fill value of data type ") + dtype_name(t) + " (zarr-python refuses it too)");
  }
  if (t == DType::F16) {  // a bit pattern as it is; a number or a name through float32
    if (v.is_string() && v.get<std::string>().rfind("0x", 0) == 0) {
      const std::string s = v.get<std::string>();
      unsigned long bits = 0;
      try {
        bits = std::stoul(s.substr(2), nullptr, 16);
      } catch (const std::exception&) {
        w.fail("not a hexadecimal bit pattern: '" + s + "'");
      }
      if (bits > 0xFFFF) w.fail("bit pattern '" + s + "' does not fit float16");
      const uint16_t b16 = static_cast<uint16_t>(bits);
      std::memcpy(out, &b16, 2);
    } else {
      unsigned char wide[kMaxItemsize];
      parse_fill(v, DType::F32, wide, w);
      float f;
      std::memcpy(&f, wide, sizeof f);
      const half h(f);
      std::memcpy(out, &h, sizeof h);
    }
    return;
  }
  if (is_complex(t)) {  // [real, imaginary], each as a float of the part's type
    if (!v.is_array() || v.size() != 2)
      w.fail("fill value " + v.dump() + " of a complex data type is not a [real, imaginary] pair");
    const DType part = real_of(t);
    parse_fill(v[0], part, out, w.at(size_t(0)));
    unsigned char im[kMaxItemsize];
    parse_fill(v[1], part, im, w.at(size_t(1)));
    std::memcpy(out + itemsize(part), im, itemsize(part));
    return;
  }
  const size_t isz = itemsize(t);
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s.rfind("0x", 0) == 0 && is_float(t)) {
      uint64_t bits = 0;
      try {
        bits = std::stoull(s.substr(2), nullptr, 16);
      } catch (const std::exception&) {
        w.fail("not a hexadecimal bit pattern: '" + s + "'");
      }
      if (isz == 4) {
        const uint32_t b32 = static_cast<uint32_t>(bits);
        std::memcpy(out, &b32, 4);
      } else {
        std::memcpy(out, &bits, 8);
      }
      return;
    }
    double d;
    if (s == "NaN") d = std::numeric_limits<double>::quiet_NaN();
    else if (s == "Infinity") d = std::numeric_limits<double>::infinity();
    else if (s == "-Infinity") d = -std::numeric_limits<double>::infinity();
    else w.fail("fill value '" + s + "' does not fit data type " + dtype_name(t));
    if (!is_float(t)) w.fail("fill value '" + s + "' does not fit data type " + dtype_name(t));
    if (t == DType::F32) {
      const float f = static_cast<float>(d);
      std::memcpy(out, &f, 4);
    } else {
      std::memcpy(out, &d, 8);
    }
    return;
  }
  if (!v.is_boolean() && !v.is_number()) w.fail("fill value " + v.dump() + " does not fit data type " + dtype_name(t));
  dispatch_real(t, "a fill value", [&]<class T>(T*) {
    T x;
    if (v.is_boolean()) {
      x = static_cast<T>(v.get<bool>());
    } else if (t == DType::Bool) {
      x = static_cast<T>(v.get<double>() != 0);
    } else if constexpr (std::is_floating_point_v<T>) {
      x = static_cast<T>(v.get<double>());
    } else {
      if (!v.is_number_integer())
        w.fail("fill value " + v.dump() + " is not an integer (data type " + dtype_name(t) + ")");
      if constexpr (std::is_unsigned_v<T>) {
        if (v.is_number_unsigned() ? v.get<uint64_t>() > std::numeric_limits<T>::max() : v.get<int64_t>() < 0)
          w.fail("fill value " + v.dump() + " does not fit data type " + dtype_name(t));
        x = static_cast<T>(v.is_number_unsigned() ? v.get<uint64_t>() : static_cast<uint64_t>(v.get<int64_t>()));
      } else {
        if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
          w.fail("fill value " + v.dump() + " does not fit data type " + dtype_name(t));
        const int64_t i = v.get<int64_t>();
        if (i < std::numeric_limits<T>::min() || i > std::numeric_limits<T>::max())
          w.fail("fill value " + v.dump() + " does not fit data type " + dtype_name(t));
        x = static_cast<T>(i);
      }
    }
    std::memcpy(out, &x, sizeof(T));
  });
}

Pipeline parse_codecs(const json& list, size_t ndim, size_t itemsz, const Where& w);

// One v3 codec, added to `p`; `stage` is 0 while array -> array codecs may come, 1 after
// the array -> bytes codec.
void parse_codec(const json& c, size_t ndim, size_t itemsz, Pipeline& p, int& stage, const Where& w0) {
  const std::string name = text(field(c, "name", w0), w0.at("name"));
  const Where w = {w0.file, w0.key + " (" + name + ")"};
  static const json empty = json::object();
  const json* cfg = optional_field(c, "configuration");
  const json& conf = cfg ? *cfg : empty;
  auto array_to_bytes_done = [&] {
    if (stage != 0) w.fail("a second array -> bytes codec");
    stage = 1;
  };
  if (name == "transpose") {
    if (stage != 0) w.fail("transpose must come before the bytes or sharding codec");
    const json& o = field(conf, "order", w.at("configuration"));
    std::vector<int> order;
    if (o.is_string()) {  // early v3 drafts: "C" or "F"
      const std::string s = o.get<std::string>();
      if (s != "C" && s != "F") w.fail("order '" + s + "' is neither a permutation nor C or F");
      for (size_t i = 0; i < ndim; ++i) order.push_back(static_cast<int>(s == "C" ? i : ndim - 1 - i));
    } else {
      const Shape v = int_list(o, w.at("configuration.order"), 0);
      std::vector<bool> seen(ndim, false);
      for (int64_t k : v) {
        if (k >= static_cast<int64_t>(ndim) || seen[k])
          w.fail("order " + o.dump() + " is not a permutation of " + std::to_string(ndim) + " axes");
        seen[k] = true;
        order.push_back(static_cast<int>(k));
      }
      if (order.size() != ndim)
        w.fail("order " + o.dump() + " is not a permutation of " + std::to_string(ndim) + " axes");
    }
    // Compose with earlier transposes: encoded axis k is chunk axis p.order[order[k]].
    if (!p.order.empty())
      for (int& k : order) k = p.order[k];
    p.order = order;
  } else if (name == "bytes") {
    array_to_bytes_done();
    const json* e = optional_field(conf, "endian");
    if (e) {
      const std::string s = text(*e, w.at("configuration.endian"));
      if (s != "little" && s != "big") w.fail("endian '" + s + "' is neither little nor big");
      p.big_endian = s == "big";
    } else if (itemsz > 1) {
      w.fail("missing 'endian' (needed for " + std::to_string(itemsz) + "-byte items)");
    }
  } else if (name == "sharding_indexed") {
    array_to_bytes_done();
    auto s = std::make_shared<Sharding>();
    s->inner = int_list(field(conf, "chunk_shape", w.at("configuration")), w.at("configuration.chunk_shape"), 1);
    if (s->inner.size() != ndim)
      w.fail("chunk_shape " + shape_str(s->inner) + " has not " + std::to_string(ndim) + " axes");
    s->codecs = parse_codecs(field(conf, "codecs", w.at("configuration")), ndim, itemsz, w.at("configuration.codecs"));
    s->index_codecs = parse_codecs(field(conf, "index_codecs", w.at("configuration")), ndim + 1, 8,
                                   w.at("configuration.index_codecs"));
    if (s->index_codecs.sharding) w.fail("index_codecs may not shard");
    for (const BytesCodec& b : s->index_codecs.bytes_codecs)
      if (b.kind != BytesCodec::Kind::Crc32c)
        w.fail("index_codecs: '" + b.name + "' is not fixed-size (the index must be: bytes, crc32c)");
    if (const json* loc = optional_field(conf, "index_location")) {
      const std::string l = text(*loc, w.at("configuration.index_location"));
      if (l != "start" && l != "end") w.fail("index_location '" + l + "' is neither start nor end");
      s->index_at_end = l == "end";
    }
    p.sharding = s;
  } else {
    if (stage != 1) w.fail("a bytes -> bytes codec before the bytes or sharding codec");
    BytesCodec b{BytesCodec::Kind::Blosc, name};
    if (name == "blosc") {
      b.kind = BytesCodec::Kind::Blosc;
      if (const json* cn = optional_field(conf, "cname")) b.cname = text(*cn, w.at("configuration.cname"));
    } else if (name == "zstd") {
      b.kind = BytesCodec::Kind::Zstd;
    } else if (name == "gzip") {
      b.kind = BytesCodec::Kind::Deflate;
    } else if (name == "crc32c") {
      b.kind = BytesCodec::Kind::Crc32c;
    } else {
      w.fail("unknown codec '" + name +
             "' (b2lazy reads bytes, transpose, blosc, zstd, gzip, crc32c, sharding_indexed)");
    }
    p.bytes_codecs.push_back(b);
  }
}

Pipeline parse_codecs(const json& list, size_t ndim, size_t itemsz, const Where& w) {
  if (!list.is_array()) w.fail("expected a list of codecs, got " + list.dump());
  Pipeline p;
  int stage = 0;
  for (size_t i = 0; i < list.size(); ++i) parse_codec(list[i], ndim, itemsz, p, stage, w.at(i));
  if (stage == 0) w.fail("no bytes or sharding_indexed codec");
  return p;
}

// v2's compressor as a bytes -> bytes codec.
void parse_compressor(const json& c, Pipeline& p, const Where& w) {
  const std::string id = text(field(c, "id", w), w.at("id"));
  const Where wc = {w.file, w.key + " (" + id + ")"};
  BytesCodec b{BytesCodec::Kind::Blosc, id};
  if (id == "blosc") {
    b.kind = BytesCodec::Kind::Blosc;
    if (const json* cn = optional_field(c, "cname")) b.cname = text(*cn, wc.at("cname"));
  } else if (id == "zstd") {
    b.kind = BytesCodec::Kind::Zstd;
  } else if (id == "zlib" || id == "gzip") {
    b.kind = BytesCodec::Kind::Deflate;
  } else if (id == "lz4") {
    b.kind = BytesCodec::Kind::Lz4;
  } else {
    wc.fail("unknown compressor '" + id + "' (b2lazy reads blosc, zstd, zlib, gzip, lz4 and none)");
  }
  p.bytes_codecs.push_back(b);
}

Metadata parse_v3(const json& j, const std::string& file) {
  const Where w{file, ""};
  Metadata m;
  m.version = 3;
  if (integer(field(j, "zarr_format", w), w.at("zarr_format")) != 3) w.at("zarr_format").fail("expected 3");
  const std::string node = text(field(j, "node_type", w), w.at("node_type"));
  if (node != "array") w.at("node_type").fail("'" + node + "' is not an array (name an array inside it)");
  m.shape = int_list(field(j, "shape", w), w.at("shape"), 0);
  m.dtype = dtype_v3(text(field(j, "data_type", w), w.at("data_type")), w.at("data_type"));
  const json& grid = field(j, "chunk_grid", w);
  const std::string gname = text(field(grid, "name", w.at("chunk_grid")), w.at("chunk_grid.name"));
  if (gname != "regular") w.at("chunk_grid.name").fail("chunk grid '" + gname + "' is not supported (regular)");
  m.chunks =
      int_list(field(field(grid, "configuration", w.at("chunk_grid")), "chunk_shape", w.at("chunk_grid.configuration")),
               w.at("chunk_grid.configuration.chunk_shape"), 1);
  if (m.chunks.size() != m.shape.size())
    w.at("chunk_grid").fail("chunk_shape " + shape_str(m.chunks) + " does not match shape " + shape_str(m.shape));
  const json& kenc = field(j, "chunk_key_encoding", w);
  const std::string kname = text(field(kenc, "name", w.at("chunk_key_encoding")), w.at("chunk_key_encoding.name"));
  if (kname != "default" && kname != "v2")
    w.at("chunk_key_encoding.name").fail("unknown chunk key encoding '" + kname + "' (default, v2)");
  m.c_prefix = kname == "default";
  m.separator = m.c_prefix ? '/' : '.';
  if (const json* cfg = optional_field(kenc, "configuration"))
    if (const json* sep = optional_field(*cfg, "separator")) {
      const std::string s = text(*sep, w.at("chunk_key_encoding.configuration.separator"));
      if (s != "/" && s != ".")
        w.at("chunk_key_encoding.configuration.separator").fail("separator '" + s + "' is neither / nor .");
      m.separator = s[0];
    }
  m.codecs = parse_codecs(field(j, "codecs", w), m.shape.size(), itemsize(m.dtype), w.at("codecs"));
  if (const json* st = optional_field(j, "storage_transformers"))
    if (!st->is_array() || !st->empty()) w.at("storage_transformers").fail("storage transformers are not supported");
  // (v3 needs a fill value; zarr-python reads null as False for bool alone, as bool(None))
  parse_fill(field(j, "fill_value", w), m.dtype, m.fill, w.at("fill_value"), m.dtype == DType::Bool);
  return m;
}

Metadata parse_v2(const json& j, const std::string& file) {
  const Where w{file, ""};
  Metadata m;
  m.version = 2;
  if (integer(field(j, "zarr_format", w), w.at("zarr_format")) != 2) w.at("zarr_format").fail("expected 2");
  m.shape = int_list(field(j, "shape", w), w.at("shape"), 0);
  m.chunks = int_list(field(j, "chunks", w), w.at("chunks"), 1);
  if (m.chunks.size() != m.shape.size())
    w.at("chunks").fail(shape_str(m.chunks) + " does not match shape " + shape_str(m.shape));
  m.dtype = dtype_v2(field(j, "dtype", w), w.at("dtype"), m.codecs.big_endian);
  if (itemsize(m.dtype) == 1) m.codecs.big_endian = false;
  const std::string order = j.contains("order") ? text(j["order"], w.at("order")) : "C";
  if (order != "C" && order != "F") w.at("order").fail("'" + order + "' is neither C nor F");
  if (order == "F")  // stored as the transposed chunk in C order
    for (size_t i = 0; i < m.shape.size(); ++i) m.codecs.order.push_back(static_cast<int>(m.shape.size() - 1 - i));
  if (const json* f = optional_field(j, "filters"))
    if (!f->is_array() || !f->empty()) {
      std::string ids;
      if (f->is_array())
        for (const json& x : *f)
          ids += (ids.empty() ? "" : ", ") + (x.is_object() && x.contains("id") ? x["id"].dump() : x.dump());
      w.at("filters").fail("filters are not supported (" + (ids.empty() ? f->dump() : ids) + ")");
    }
  if (const json* c = optional_field(j, "compressor")) parse_compressor(*c, m.codecs, w.at("compressor"));
  m.c_prefix = false;
  m.separator = '.';
  if (const json* sep = optional_field(j, "dimension_separator")) {
    const std::string s = text(*sep, w.at("dimension_separator"));
    if (s != "/" && s != ".") w.at("dimension_separator").fail("'" + s + "' is neither / nor .");
    m.separator = s[0];
  }
  // (v2 requires the key; null there means no fill value: missing chunks read as 0, as zarr-python reads them)
  parse_fill(field(j, "fill_value", w), m.dtype, m.fill, w.at("fill_value"), true);
  return m;
}

json codec_json(const BytesCodec& b, size_t itemsz) {
  switch (b.kind) {
    case BytesCodec::Kind::Blosc:
      return {{"name", "blosc"},
              {"configuration",
               {{"cname", b.cname},
                {"clevel", b.level},
                {"shuffle", b.shuffle ? "shuffle" : "noshuffle"},
                {"typesize", itemsz},
                {"blocksize", 0}}}};
    case BytesCodec::Kind::Zstd:
      return {{"name", "zstd"}, {"configuration", {{"level", b.level}, {"checksum", false}}}};
    case BytesCodec::Kind::Deflate: return {{"name", "gzip"}, {"configuration", {{"level", b.level}}}};
    case BytesCodec::Kind::Crc32c: return {{"name", "crc32c"}};
    case BytesCodec::Kind::Lz4: break;
  }
  throw Error("internal: codec '" + b.name + "' is not written in Zarr v3");
}

json codecs_json(const Pipeline& p, size_t itemsz) {
  json list = json::array();
  if (!p.order.empty()) list.push_back({{"name", "transpose"}, {"configuration", {{"order", p.order}}}});
  if (p.sharding) {
    const Sharding& s = *p.sharding;
    list.push_back({{"name", "sharding_indexed"},
                    {"configuration",
                     {{"chunk_shape", s.inner},
                      {"codecs", codecs_json(s.codecs, itemsz)},
                      {"index_codecs", codecs_json(s.index_codecs, 8)},
                      {"index_location", s.index_at_end ? "end" : "start"}}}});
  } else {
    list.push_back({{"name", "bytes"}, {"configuration", {{"endian", p.big_endian ? "big" : "little"}}}});
  }
  for (const BytesCodec& b : p.bytes_codecs) list.push_back(codec_json(b, itemsz));
  return list;
}

json fill_json(const Metadata& m) {
  json v;
  auto number = [](auto x) -> json {
    if (std::isnan(x)) return "NaN";
    if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
    return static_cast<double>(x);
  };
  dispatch(m.dtype, [&]<class T>(T*) {
    T x;
    std::memcpy(&x, m.fill, sizeof(T));
    if constexpr (is_complex_v<T>) {
      v = json::array({number(x.real()), number(x.imag())});
    } else if constexpr (std::is_same_v<T, half>) {
      v = number(static_cast<float>(x));
    } else if constexpr (std::is_floating_point_v<T>) {
      v = number(x);
    } else if (m.dtype == DType::Bool) {
      v = x != 0;
    } else {
      v = x;
    }
  });
  return v;
}

}  // namespace

std::string Metadata::key(const Shape& coords) const {
  std::string k = c_prefix ? "c" : "";
  if (coords.empty()) return c_prefix ? k : "0";
  for (size_t d = 0; d < coords.size(); ++d) {
    if (d > 0 || c_prefix) k += separator;
    k += std::to_string(coords[d]);
  }
  return k;
}

Metadata parse_metadata(const std::string& text, int version, const std::string& file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw IOError("'" + file + "': not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw IOError("'" + file + "': expected a JSON object");
  try {
    Metadata m = version == 3 ? parse_v3(j, file) : parse_v2(j, file);
    checked_prod(m.shape, "'" + file + "': shape");
    checked_prod(m.chunks, "'" + file + "': chunks");
    return m;
  } catch (const json::exception& e) {  // (the accessors check types first; a last resort)
    throw IOError("'" + file + "': " + e.what());
  } catch (const ValueError& e) {  // sizes beyond int64
    throw IOError(e.what());
  }
}

std::string v3_json(const Metadata& m) {
  const size_t isz = itemsize(m.dtype);
  json j = {
      {"zarr_format", 3},
      {"node_type", "array"},
      {"shape", m.shape},
      {"data_type", dtype_name(m.dtype)},
      {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", m.chunks}}}}},
      {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", std::string(1, m.separator)}}}}},
      {"fill_value", fill_json(m)},
      {"codecs", codecs_json(m.codecs, isz)},
      {"attributes", json::object()}};
  return j.dump(2) + "\n";
}

}  // namespace b2lazy::zarr
