// What expressions add to the call values of b2lazy/call.hpp: descriptions for messages,
// literal lists as arrays, the device check.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "b2lazy/array.hpp"
#include "b2lazy/call.hpp"
#include "b2lazy/functions.hpp"

namespace b2lazy::expr {

// What a value is, for messages: "array of shape (3, 4) and dtype float64", "int 3", ...
std::string describe(const Value& v);

// A literal (nested) list of numbers as an array: bool, int64 or float64 as Python would.
Array literal_array(const Value& v, const std::string& where);
// An index array from a literal list or an evaluated array.
IndexArray index_array(const Value& v, Context* ctx, const std::string& where);

// device= of the Array API: "cpu" or None (b2lazy has one device); else TypeError.
void check_device(const Args& x);

using Function = FunctionCall;
// Methods (a.sum(...)): the function called with the array as first argument.
bool is_method(const std::string& name);

}  // namespace b2lazy::expr
