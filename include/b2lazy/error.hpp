// Exceptions. Every message names the operand, shape, path or argument at fault.
#pragma once
#include <stdexcept>
#include <string>

namespace b2lazy {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Shapes that do not broadcast, bad axes, bad argument values.
struct ValueError : Error {
  using Error::Error;
};
// An axis argument out of range for the array's dimensions. Python raises NumPy's
// numpy.exceptions.AxisError for it, which is both a ValueError and an IndexError.
struct AxisError : ValueError {
  using ValueError::ValueError;
};
// A matrix a factorisation cannot take (not positive definite, singular). Python raises
// NumPy's numpy.linalg.LinAlgError for it, a ValueError.
struct LinAlgError : ValueError {
  using ValueError::ValueError;
};
// Unsupported dtype for an operation.
struct TypeError : Error {
  using Error::Error;
};
// Out-of-range index.
struct IndexError : Error {
  using Error::Error;
};
// An evaluation stopped by EvalOptions::cancel or a signal (b2lazy/interrupt.hpp); its
// partial output is gone.
struct Cancelled : Error {
  using Error::Error;
};
// Missing/corrupted/unwritable files and Blosc2 failures.
struct IOError : Error {
  using Error::Error;
};

}  // namespace b2lazy
