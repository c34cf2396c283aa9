#include "storage/blosc2_objects.hpp"

#include <cstring>
#include <vector>

namespace b2lazy {

namespace {
constexpr int32_t kMaxPayload = 1 << 20;
constexpr int kMaxDepth = 64;

// nlohmann's DOM builder behind a depth limit: msgpack's reader recurses once per nested
// array or map, and stops as soon as start_array/start_object refuses.
class BoundedSax {
 public:
  explicit BoundedSax(nlohmann::json& out) : dom_(out, false) {}
  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(nlohmann::json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(nlohmann::json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(nlohmann::json::number_float_t v, const std::string& s) { return dom_.number_float(v, s); }
  bool string(std::string& v) { return dom_.string(v); }
  bool binary(nlohmann::json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return ++depth_ <= kMaxDepth && dom_.start_object(n); }
  bool key(std::string& k) { return dom_.key(k); }
  bool end_object() { return --depth_, dom_.end_object(); }
  bool start_array(std::size_t n) { return ++depth_ <= kMaxDepth && dom_.start_array(n); }
  bool end_array() { return --depth_, dom_.end_array(); }
  template <class Exception> bool parse_error(std::size_t, const std::string&, const Exception&) { return false; }
  bool too_deep() const { return depth_ > kMaxDepth; }

 private:
  nlohmann::detail::json_sax_dom_parser<nlohmann::json> dom_;
  int depth_ = 0;
};

// `len` bytes of msgpack as JSON, or null with `problem` set.
nlohmann::json from_msgpack(const uint8_t* p, int64_t len, std::string& problem) {
  nlohmann::json out;
  BoundedSax sax(out);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(p, p + len, &sax, nlohmann::json::input_format_t::msgpack, true);
  } catch (const std::exception&) {
    ok = false;
  }
  if (!ok) {
    problem = sax.too_deep() ? "its metadata nests deeper than 64 levels" : "its metadata is not valid msgpack";
    return nullptr;
  }
  return out;
}

const blosc2_metalayer* find(blosc2_metalayer* const* layers, int n, const char* name) {
  for (int i = 0; i < n && i < BLOSC2_MAX_METALAYERS; ++i)
    if (layers[i] && layers[i]->name && std::strcmp(layers[i]->name, name) == 0) return layers[i];
  return nullptr;
}

// A vlmeta entry is a compressed chunk: its header checked before it is decompressed.
nlohmann::json vlmeta(const blosc2_schunk* sc, const char* name, std::string& problem) {
  const blosc2_metalayer* m = nullptr;
  for (int i = 0; i < sc->nvlmetalayers && i < BLOSC2_MAX_VLMETALAYERS; ++i)
    if (sc->vlmetalayers[i] && sc->vlmetalayers[i]->name && std::strcmp(sc->vlmetalayers[i]->name, name) == 0)
      m = sc->vlmetalayers[i];
  if (!m) return nullptr;
  int32_t nbytes = 0, cbytes = 0, blocksize = 0;
  if (!m->content || m->content_len < BLOSC_MIN_HEADER_LENGTH ||
      blosc2_cbuffer_sizes(m->content, &nbytes, &cbytes, &blocksize) < 0 || cbytes != m->content_len || nbytes < 0 ||
      nbytes > kMaxPayload) {
    problem = std::string("its vlmeta '") + name + "' is not a readable Blosc2 chunk of at most 1 MiB";
    return nullptr;
  }
  std::vector<uint8_t> raw(static_cast<size_t>(nbytes) + 1);
  const int got = blosc2_decompress(m->content, m->content_len, raw.data(), nbytes);
  if (got != nbytes) {
    problem = std::string("its vlmeta '") + name + "' does not decompress";
    return nullptr;
  }
  return from_msgpack(raw.data(), nbytes, problem);
}
}  // namespace

std::optional<Blosc2Object> blosc2_object(const blosc2_schunk* sc) {
  if (!sc) return std::nullopt;
  Blosc2Object o;
  if (const blosc2_metalayer* m = find(sc->metalayers, sc->nmetalayers, "b2o")) {
    const nlohmann::json marker = m->content_len > 0 && m->content_len <= kMaxPayload
                                      ? from_msgpack(m->content, m->content_len, o.problem)
                                      : nlohmann::json(nullptr);
    o.kind = marker.is_object() && marker.contains("kind") && marker["kind"].is_string()
                 ? marker["kind"].get<std::string>()
                 : "?";
    if (o.problem.empty()) o.payload = vlmeta(sc, "b2o", o.problem);
    return o;
  }
  if (find(sc->metalayers, sc->nmetalayers, "LazyArray")) {
    o.kind = "LazyArray";
    o.payload = vlmeta(sc, "_LazyArray", o.problem);
    return o;
  }
  return std::nullopt;
}

}  // namespace b2lazy
