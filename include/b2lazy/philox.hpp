// The counter-based generator under b2lazy/random.hpp (exposed for its tests).
#pragma once
#include <array>
#include <cstdint>

namespace b2lazy {

namespace philox {
// One Philox4x32-10 block: the four 32-bit words for counter `ctr` under `key`.
std::array<uint32_t, 4> block(const std::array<uint32_t, 4>& ctr, const std::array<uint32_t, 2>& key);
}  // namespace philox

}  // namespace b2lazy
