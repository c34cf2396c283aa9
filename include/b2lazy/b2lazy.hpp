// b2lazy: lazy expressions over chunked, compressed N-d arrays, evaluated one output
// chunk at a time. Include this header for the whole public API.
#pragma once
#include "b2lazy/array.hpp"
#include "b2lazy/box.hpp"
#include "b2lazy/checked.hpp"
#include "b2lazy/context.hpp"
#include "b2lazy/distribute.hpp"
#include "b2lazy/driver.hpp"
#include "b2lazy/dtype.hpp"
#include "b2lazy/error.hpp"
#include "b2lazy/expr.hpp"
#include "b2lazy/functions.hpp"
#include "b2lazy/interrupt.hpp"
#include "b2lazy/node.hpp"
#include "b2lazy/ops.hpp"
#include "b2lazy/stats.hpp"
#include "b2lazy/udf.hpp"
