// The drivers b2lazy ships, registered when the registry is first used.
#pragma once
#include <vector>

#include "b2lazy/driver.hpp"

namespace b2lazy {

std::vector<Driver> builtin_drivers();

}  // namespace b2lazy
