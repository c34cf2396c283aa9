// Python values as the engine's (integers, shapes, dtypes, scalars, operands, index keys)
// and back: the argument conversions the binding's source files share.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <b2lazy/b2lazy.hpp>

namespace b2lazy_py {

namespace nb = nanobind;

std::string py_repr(const nb::handle& h);

bool is_integer(const nb::handle& h);  // int, np.integer, 0-d int arrays

// An integer argument (anything with __index__) as int64, with `overflow` set to +1 / -1
// (and the value clamped) when it is beyond int64; TypeError naming `what` otherwise.
int64_t to_int64(const nb::handle& h, const std::string& what, int& overflow);

// As above; beyond int64 is a ValueError naming `what` (NumPy: "Maximum allowed dimension exceeded").
int64_t to_int64(const nb::handle& h, const std::string& what);

// A shape-like argument (shape, chunks, blocks, shifts): None (empty), an integer or a
// sequence of integers, each within int64; TypeError / ValueError naming `what`.
b2lazy::Shape to_shape(const nb::handle& obj, const std::string& what);

// max_memory: None (the default) or a positive number of bytes within int64.
std::optional<size_t> to_max_memory(const nb::handle& h);

nb::tuple shape_tuple(const b2lazy::Shape& s);

// Anything NumPy accepts as a dtype (big-endian ones are a TypeError).
b2lazy::DType dtype_of(const nb::handle& dt);

// None, or a dtype as dtype_of reads it.
std::optional<b2lazy::DType> opt_dtype(const nb::handle& dt);

// Python bool/int/float/complex -> Scalar; nullopt for anything else.
std::optional<b2lazy::Scalar> as_scalar(const nb::handle& h);

// A b2lazy Array or a Python scalar: argument `pos` of `fn` (TypeError otherwise).
b2lazy::Operand as_operand(const nb::handle& h, const char* fn, size_t pos);

// Zero-copy wrap of a NumPy array; the array stays alive as long as the node.
b2lazy::Array from_numpy(nb::ndarray<nb::ro, nb::device::cpu> a, nb::handle owner, const std::string& name);

// The basic entries of `key`; `first` is the position of its first entry in the whole key.
std::vector<b2lazy::Index> parse_index(const nb::handle& key, size_t first = 0);

using Int64Array = nb::ndarray<const int64_t, nb::c_contig, nb::device::cpu>;

// Indices the package has already made int64 and C-contiguous.
b2lazy::IndexArray int64_values(const Int64Array& a);

// An index entry that is a NumPy array (the package turns lists and lazy arrays into
// NumPy first): its values as int64, or as 0/1 for booleans, any strides.
b2lazy::IndexArray index_array(nb::ndarray<nb::ro, nb::device::cpu> a, const nb::handle& obj);

// An int, a NumPy integer or a 0-d integer array (not a 0-d boolean one).
bool integer_scalar(const nb::handle& k);

// np.float64(2.0) and the like (np.bool_ is a 0-d boolean index; arrays have a length).
bool non_bool_numpy_scalar(const nb::handle& k);

// A whole key: basic entries as parse_index reads them, NumPy arrays as index arrays,
// a Python bool as a 0-d boolean array (NumPy: a new axis of length 1 or 0).
std::vector<b2lazy::IndexItem> parse_key(const nb::handle& key);

}  // namespace b2lazy_py
