#include "ops/random/random_node.hpp"

#include <Random123/philox.h>

#include <cmath>
#include <numbers>

#include "core/dispatch.hpp"

namespace b2lazy {

namespace philox {
std::array<uint32_t, 4> block(const std::array<uint32_t, 4>& ctr, const std::array<uint32_t, 2>& key) {
  r123::Philox4x32::ctr_type c = {{ctr[0], ctr[1], ctr[2], ctr[3]}};
  r123::Philox4x32::key_type k = {{key[0], key[1]}};
  const auto r = r123::Philox4x32()(c, k);
  return {r[0], r[1], r[2], r[3]};
}
}  // namespace philox

namespace {

// The two 64-bit words of block `index`: counter (index, stream, round).
struct Words {
  uint64_t w0, w1;
};
inline Words words(uint64_t index, uint32_t stream, uint32_t round, const r123::Philox4x32::key_type& key) {
  r123::Philox4x32::ctr_type c = {{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), stream, round}};
  const auto r = r123::Philox4x32()(c, key);
  return {uint64_t(r[0]) | uint64_t(r[1]) << 32, uint64_t(r[2]) | uint64_t(r[3]) << 32};
}

constexpr double k2pow53 = 0x1p-53;

}  // namespace

RandomNode::RandomNode(DType dtype, Shape shape, Shape chunks, RandomParams p)
    : Node(dtype, std::move(shape)), p_(p), chunks_(std::move(chunks)) {
  if (!chunks_.empty()) grid_ = ChunkGrid(this->shape(), chunks_);
}

std::string RandomNode::describe() const {
  std::string d = p_.dist == RandomDist::Uniform ? "uniform(" + std::to_string(p_.a) + ", " + std::to_string(p_.b) + ")"
                  : p_.dist == RandomDist::Normal ? "normal(" + std::to_string(p_.a) + ", " + std::to_string(p_.b) + ")"
                                                  : "integers(low=" + std::to_string(static_cast<int64_t>(p_.low)) +
                                                        ", count=" + std::to_string(p_.span) + ")";
  return "random " + d + " " + shape_str(shape()) + " " + dtype_name(dtype()) +
         " philox4x32-10 seed=" + std::to_string(p_.key.seed) + " stream=" + std::to_string(p_.key.stream);
}

void RandomNode::fill(const Region& r, void* out, ThreadState&) const {
  const size_t nd = ndim();
  const int64_t n = r.size();
  if (n == 0) return;
  const r123::Philox4x32::key_type key = {
      {static_cast<uint32_t>(p_.key.seed), static_cast<uint32_t>(p_.key.seed >> 32)}};
  const uint32_t stream = p_.key.stream;
  const Shape cs = c_strides(shape());
  // Rows along the region's last axis (a 0-d array: one row of one).
  const int64_t inner = nd ? r.count[nd - 1] : 1;
  const int64_t inner_step = nd ? r.step[nd - 1] * cs[nd - 1] : 0;
  const int64_t inner_start = nd ? r.start[nd - 1] * cs[nd - 1] : 0;
  const uint64_t reject_below = p_.span ? (0 - p_.span) % p_.span : 0;  // Lemire's threshold: 2**64 mod span
  Shape idx(nd ? nd - 1 : 0, 0);
  uint64_t cached_pair = UINT64_MAX;  // (no flat index reaches 2**64 - 1: sizes fit int64)
  Words cached{};
  bool have_normal = false;
  double z_even = 0, z_odd = 0;
  dispatch_computing(dtype(), [&]<class T>(T*) {
    if constexpr (is_complex_v<T>) {
      throw TypeError("random: complex dtypes are not supported");
    } else {
      T* o = static_cast<T*>(out);
      for (int64_t row = 0; row < n / inner; ++row) {
        int64_t base = inner_start;
        for (size_t d = 0; d + 1 < nd; ++d) base += (r.start[d] + idx[d] * r.step[d]) * cs[d];
        for (int64_t j = 0; j < inner; ++j, ++o) {
          const uint64_t flat = static_cast<uint64_t>(base + j * inner_step);
          if (p_.dist == RandomDist::Integers) {
            uint64_t v = 0;
            for (uint32_t round = 0;; ++round) {
              const Words w = words(flat, stream, round, key);
              if (p_.span == 0) {
                v = w.w0;
                break;
              }
              const unsigned __int128 m0 = static_cast<unsigned __int128>(w.w0) * p_.span;
              if (static_cast<uint64_t>(m0) >= reject_below) {
                v = static_cast<uint64_t>(m0 >> 64);
                break;
              }
              const unsigned __int128 m1 = static_cast<unsigned __int128>(w.w1) * p_.span;
              if (static_cast<uint64_t>(m1) >= reject_below) {
                v = static_cast<uint64_t>(m1 >> 64);
                break;
              }
            }
            const uint64_t x = p_.low + v;  // modulo 2**64: low + offset fits the dtype (checked at build)
            if constexpr (std::is_same_v<T, uint64_t>) *o = x;
            else *o = static_cast<T>(static_cast<int64_t>(x));
            continue;
          }
          // Uniform and normal values come in pairs: elements 2p and 2p + 1 share block p
          // (each takes one 64-bit half; Box–Muller's cos and sin), so one Philox block
          // and one log / sqrt make two values. A pair's block is kept for the next element.
          const uint64_t pair = flat >> 1;
          const bool odd = flat & 1;
          if (pair != cached_pair) {
            cached = words(pair, stream, 0, key);
            cached_pair = pair;
            have_normal = false;
          }
          const uint64_t mine = odd ? cached.w1 : cached.w0;
          if (p_.dist == RandomDist::Uniform) {
            if constexpr (std::is_same_v<T, float>) {
              const float u = static_cast<float>(mine >> 40) * 0x1p-24f;
              *o = static_cast<float>(p_.a) + static_cast<float>(p_.b - p_.a) * u;
            } else {
              const double u = static_cast<double>(mine >> 11) * k2pow53;
              *o = static_cast<T>(p_.a + (p_.b - p_.a) * u);
            }
          } else {  // Box–Muller: u1 in (0, 1] (its log finite), u2 in [0, 1)
            if (!have_normal) {
              const double u1 = static_cast<double>((cached.w0 >> 11) + 1) * k2pow53;
              const double u2 = static_cast<double>(cached.w1 >> 11) * k2pow53;
              const double radius = std::sqrt(-2.0 * std::log(u1)), angle = 2.0 * std::numbers::pi * u2;
              z_even = radius * std::cos(angle), z_odd = radius * std::sin(angle);
              have_normal = true;
            }
            *o = static_cast<T>(p_.a + p_.b * (odd ? z_odd : z_even));
          }
        }
        for (size_t d = nd < 2 ? 0 : nd - 1; d-- > 0;) {
          if (++idx[d] < r.count[d]) break;
          idx[d] = 0;
        }
      }
    }
  });
}

}  // namespace b2lazy
