// Expression strings (python-blosc2 / NumPy syntax), parsed and built in C++; shared by
// the Python package (b2lazy.evaluate) and the b2lazy command.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"

namespace b2lazy {

// A malformed expression: the message names the column (1-based) and shows the
// expression with a caret under it.
struct SyntaxError : ValueError {
  SyntaxError(const std::string& message, size_t column) : ValueError(message), column(column) {}
  size_t column;
};
// An unknown operand or function; the message lists the close matches.
struct NameError : ValueError {
  using ValueError::ValueError;
};

// The lazy Array an expression describes: literals, operand names, Python's operators
// and precedence (including @, **, comparisons, ~ & | ^ << >>), calls with positional and
// keyword arguments, methods (a.sum(axis=0)), .T / .mT, and indexing with integers,
// slices, ..., None and literal lists. Operands are arrays or numbers (numbers stay weak,
// as Python's: `f32 * k` is float32). `ctx` runs the passes some functions need when
// they are built (the counting pass of a mask).
Array evaluate(const std::string& expression, const std::map<std::string, Operand>& operands, Context* ctx = nullptr);
// The operand names an expression refers to, in order of first use, without building it
// (throws SyntaxError if it does not parse).
std::vector<std::string> expression_names(const std::string& expression);
// Every function name an expression can call.
std::vector<std::string> expression_functions();

}  // namespace b2lazy
