// The syntax tree of an expression string.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace b2lazy::expr {

struct Node;
using NodeP = std::unique_ptr<Node>;

struct Arg {
  std::string keyword;  // empty: positional
  NodeP value;
};

struct Node {
  enum class Kind {
    Int,
    Float,
    Imaginary,
    Bool,
    None,
    String,
    Name,
    Unary,
    Binary,
    Compare,
    Call,
    Attribute,
    Subscript,
    Tuple,
    List,
    Slice,
    Ellipsis
  };
  Kind kind;
  size_t column = 0;  // 1-based position in the expression, for error messages
  size_t height = 1;  // levels of the tree below and including this node (bounded by the parser)
  int64_t i = 0;
  bool above_int64 = false;  // an Int literal in (INT64_MAX, UINT64_MAX], held in i as uint64
  double f = 0;              // a Float, or an Imaginary literal's imaginary part (2.5j)
  bool b = false;
  std::string text;              // a name, string, operator or attribute
  std::vector<NodeP> items;      // operands, elements, [target, index...], slice parts (may be null)
  std::vector<std::string> ops;  // comparison operators of a chain
  std::vector<Arg> args;         // call arguments (items[0] is the callee)
};

// Parses a whole expression; throws SyntaxError.
NodeP parse(const std::string& text);

// "message at column N" plus the expression with a caret under that column. `column` is a
// 1-based byte position; the message counts characters (UTF-8), as Python does.
std::string with_caret(const std::string& message, const std::string& text, size_t column);
// The 1-based character column of a 1-based byte position.
size_t char_column(const std::string& text, size_t byte_column);

}  // namespace b2lazy::expr
