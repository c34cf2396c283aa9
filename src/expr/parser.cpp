// A recursive-descent parser with Python's operator precedence (lowest first):
// comparisons, |, ^, &, << >>, + -, * / // % @, unary + - ~, **, then calls, indexing and
// attributes. `and`, `or`, `not` are refused with the operator to use instead.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "b2lazy/expr.hpp"
#include "expr/ast.hpp"

namespace b2lazy::expr {

size_t char_column(const std::string& text, size_t byte_column) {
  size_t chars = 1;
  for (size_t k = 0; k + 1 < byte_column && k < text.size(); ++k)
    chars += (static_cast<unsigned char>(text[k]) & 0xC0) != 0x80;  // UTF-8: not a continuation byte
  return chars + (byte_column > text.size() + 1 ? byte_column - text.size() - 1 : 0);
}

std::string with_caret(const std::string& message, const std::string& text, size_t column) {
  std::string line;  // control characters as spaces (NUL would end the message), one per byte
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    line += u < 32 || u == 127 ? ' ' : c;
  }
  std::string msg;  // the message quotes the user's text: control characters escaped
  for (char c : message) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 32 || u == 127) {
      static const char hex[] = "0123456789abcdef";
      msg += std::string("\\x") + hex[u >> 4] + hex[u & 15];
    } else {
      msg += c;
    }
  }
  const size_t col = char_column(text, column);
  return msg + " at column " + std::to_string(col) + "\n  " + line + "\n  " + std::string(col - 1, ' ') + "^";
}

namespace {

struct Token {
  enum class Kind { Int, Float, Imaginary, String, Name, Op, End } kind;
  std::string text;
  size_t column;
  int64_t i = 0;
  bool above_int64 = false;
  double f = 0;
};

constexpr int kMaxDepth = 200;  // nesting limit: deep input must not overflow the stack
// Height limit of the syntax tree: a + a + ... parses in a loop but builds (and the
// evaluator walks) one level per operator, about 2.5 KB of stack each.
constexpr size_t kMaxHeight = 1000;

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) { tokenize(); }

  NodeP parse_all() {
    NodeP e = expression();
    if (peek().kind != Token::Kind::End) fail("unexpected '" + peek().text + "'", peek().column);
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& message, size_t column) const {
    throw SyntaxError(with_caret(message, text_, column), char_column(text_, column));
  }

  // --- tokens ---------------------------------------------------------------------------
  void tokenize() {
    size_t p = 0;
    const size_t n = text_.size();
    while (p < n) {
      const char c = text_[p];
      const size_t col = p + 1;
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++p;
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && p + 1 < n && std::isdigit(static_cast<unsigned char>(text_[p + 1])))) {
        p = number(p);
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t q = p;
        while (q < n && (std::isalnum(static_cast<unsigned char>(text_[q])) || text_[q] == '_')) ++q;
        tokens_.push_back({Token::Kind::Name, text_.substr(p, q - p), col});
        p = q;
      } else if (c == '\'' || c == '"') {
        size_t q = p + 1;
        while (q < n && text_[q] != c) ++q;
        if (q >= n) fail("unterminated string", col);
        tokens_.push_back({Token::Kind::String, text_.substr(p + 1, q - p - 1), col});
        p = q + 1;
      } else {
        static const char* const ops[] = {"...", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+",
                                          "-",   "*",  "/",  "%",  "@",  "&",  "|",  "^",  "~",  "<",
                                          ">",   "(",  ")",  "[",  "]",  ",",  ":",  ".",  "="};
        bool found = false;
        for (const char* op : ops) {
          const std::string s(op);
          if (text_.compare(p, s.size(), s) == 0) {
            tokens_.push_back({Token::Kind::Op, s, col});
            p += s.size();
            found = true;
            break;
          }
        }
        if (!found) {
          const unsigned char u = static_cast<unsigned char>(c);
          size_t len = u >= 0xF0 && u < 0xF5 ? 4 : u >= 0xE0 && u < 0xF0 ? 3 : u >= 0xC2 && u < 0xE0 ? 2 : 1;
          for (size_t k = 1; k < len; ++k)
            if (p + k >= n || (static_cast<unsigned char>(text_[p + k]) & 0xC0) != 0x80) len = 0;
          if (u >= 32 && u < 127) fail("unexpected character '" + std::string(1, c) + "'", col);
          if (u >= 0x80 && len > 1) fail("unexpected character '" + text_.substr(p, len) + "'", col);
          fail("unexpected byte " + std::to_string(u), col);
        }
      }
    }
    tokens_.push_back({Token::Kind::End, "end of expression", n + 1});
  }

  // A number as Python reads it: decimal, 0x / 0o / 0b integers, floats with . and e,
  // single underscores between digits. Floats too large are inf, too small 0 (Python's).
  size_t number(size_t p) {
    const size_t start = p, n = text_.size();
    bool is_float = false, bad = false;
    int base = 10;
    auto is_digit = [&](char c) {
      const unsigned char u = static_cast<unsigned char>(c);
      return base == 16  ? std::isxdigit(u) != 0
             : base == 8 ? (c >= '0' && c <= '7')
             : base == 2 ? (c == '0' || c == '1')
                         : std::isdigit(u) != 0;
    };
    // digits with single underscores between them (after_prefix: 0x_ff is valid); false if none
    auto digits = [&](bool after_prefix = false) {
      const size_t from = p;
      while (p < n) {
        if (is_digit(text_[p])) {
          ++p;
        } else if (text_[p] == '_' && (p > from || after_prefix) && p + 1 < n && is_digit(text_[p + 1])) {
          ++p;
        } else {
          break;
        }
      }
      return p > from;
    };
    if (text_[p] == '0' && p + 1 < n && std::strchr("xXoObB", text_[p + 1]) && text_[p + 1] != '\0') {
      const char b = static_cast<char>(std::tolower(static_cast<unsigned char>(text_[p + 1])));
      base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
      p += 2;
      bad = !digits(true);
    } else {
      const bool whole = digits();
      if (p < n && text_[p] == '.') {
        is_float = true;
        ++p;
        if (p < n && text_[p] != '_') digits();
        bad = !whole && p == start + 1;
      }
      if (p < n && (text_[p] == 'e' || text_[p] == 'E')) {
        size_t q = p + 1;
        if (q < n && (text_[q] == '+' || text_[q] == '-')) ++q;
        if (q < n && std::isdigit(static_cast<unsigned char>(text_[q]))) {
          is_float = true;
          p = q;
          digits();
        }
      }
      // Python refuses leading zeros in a decimal int (012), not 00 (nor 012j)
      if (!is_float && text_[start] == '0' && text_.find_first_not_of("0_", start) < p &&
          !(p < n && (text_[p] == 'j' || text_[p] == 'J')))
        bad = true;
    }
    const size_t digits_end = p;
    bool imaginary = false;
    if (base == 10 && p < n && (text_[p] == 'j' || text_[p] == 'J')) {  // 2j, 1.5e3J: Python's imaginary literals
      imaginary = true;
      is_float = true;
      ++p;
    }
    if (bad || (p < n && (std::isalnum(static_cast<unsigned char>(text_[p])) || text_[p] == '_')))
      fail("invalid number '" + text_.substr(start, std::min(p + 1, n) - start) + "'", start + 1);
    std::string s;
    for (size_t k = start + (base == 10 ? 0 : 2); k < digits_end; ++k)
      if (text_[k] != '_') s += text_[k];
    Token t{imaginary  ? Token::Kind::Imaginary
            : is_float ? Token::Kind::Float
                       : Token::Kind::Int,
            text_.substr(start, p - start), start + 1};
    char* end = nullptr;
    if (is_float) {
      t.f = std::strtod(s.c_str(), &end);  // ERANGE: inf or a (sub)normal, as Python's
    } else {
      errno = 0;
      t.i = std::strtoll(s.c_str(), &end, base);
      if (errno == ERANGE) {  // 2**63 .. 2**64 - 1: a Python int usable with uint64 (and -2**63)
        errno = 0;
        t.i = static_cast<int64_t>(std::strtoull(s.c_str(), &end, base));
        t.above_int64 = true;
        if (errno == ERANGE) fail("integer out of range of int64 and uint64 '" + t.text + "'", start + 1);
      }
    }
    tokens_.push_back(t);
    return p;
  }

  const Token& peek(size_t k = 0) const { return tokens_[std::min(pos_ + k, tokens_.size() - 1)]; }
  bool at_op(const char* s) const { return peek().kind == Token::Kind::Op && peek().text == s; }
  bool accept(const char* s) {
    if (!at_op(s)) return false;
    ++pos_;
    return true;
  }
  void expect(const char* s, const char* what) {
    if (!accept(s)) {
      const Token& t = peek();
      fail(std::string("expected ") + what +
               (t.kind == Token::Kind::End ? ", got the end of the expression" : ", got '" + t.text + "'"),
           t.column);
    }
  }

  struct Depth {
    Parser& p;
    explicit Depth(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) p.fail("expression nested too deeply", p.peek().column);
    }
    ~Depth() { --p.depth_; }
  };

  static NodeP make(Node::Kind k, size_t column) {
    auto n = std::make_unique<Node>();
    n->kind = k;
    n->column = column;
    return n;
  }
  NodeP binary(const std::string& op, NodeP a, NodeP b, size_t column) {
    NodeP n = make(Node::Kind::Binary, column);
    n->text = op;
    n->items.push_back(std::move(a));
    n->items.push_back(std::move(b));
    return done(std::move(n));
  }
  // A node with all its children: its height, checked.
  NodeP done(NodeP n) {
    size_t h = 0;
    for (const auto& c : n->items)
      if (c) h = std::max(h, c->height);
    for (const auto& a : n->args) h = std::max(h, a.value->height);
    n->height = h + 1;
    if (n->height > kMaxHeight)
      fail("expression nested too deeply (more than " + std::to_string(kMaxHeight) + " levels)", n->column);
    return n;
  }

  // --- grammar --------------------------------------------------------------------------
  NodeP expression() {
    Depth d(*this);
    NodeP e = comparison();
    if (peek().kind == Token::Kind::Name) {
      const std::string& w = peek().text;
      if (w == "and" || w == "or")
        fail("'" + w + "' is not supported on arrays: use " + (w == "and" ? "&" : "|") + " (with parentheses)",
             peek().column);
      if (w == "if" || w == "for" || w == "in" || w == "is" || w == "else" || w == "lambda")
        fail("'" + w + "' is not part of b2lazy expressions", peek().column);
    }
    return e;
  }

  NodeP comparison() {
    NodeP first = bitor_();
    static const char* const cmp[] = {"<", "<=", ">", ">=", "==", "!="};
    NodeP chain;
    while (true) {
      const char* found = nullptr;
      for (const char* c : cmp)
        if (at_op(c)) found = c;
      if (!found) break;
      if (!chain) {
        chain = make(Node::Kind::Compare, first->column);
        chain->items.push_back(std::move(first));
      }
      ++pos_;
      chain->ops.push_back(found);
      chain->items.push_back(bitor_());
    }
    return chain ? done(std::move(chain)) : std::move(first);
  }

  template <class Next> NodeP left_assoc(Next next, std::initializer_list<const char*> ops) {
    NodeP e = (this->*next)();
    while (true) {
      const char* found = nullptr;
      for (const char* o : ops)
        if (at_op(o)) found = o;
      if (!found) return e;
      const size_t col = peek().column;
      ++pos_;
      e = binary(found, std::move(e), (this->*next)(), col);
    }
  }
  NodeP bitor_() { return left_assoc(&Parser::bitxor_, {"|"}); }
  NodeP bitxor_() { return left_assoc(&Parser::bitand_, {"^"}); }
  NodeP bitand_() { return left_assoc(&Parser::shift, {"&"}); }
  NodeP shift() { return left_assoc(&Parser::arith, {"<<", ">>"}); }
  NodeP arith() { return left_assoc(&Parser::term, {"+", "-"}); }
  NodeP term() { return left_assoc(&Parser::factor, {"*", "/", "//", "%", "@"}); }

  NodeP factor() {
    Depth d(*this);
    if (peek().kind == Token::Kind::Name && peek().text == "not")
      fail("'not' is not supported on arrays: use ~ (with parentheses)", peek().column);
    for (const char* u : {"-", "+", "~"}) {
      if (at_op(u)) {
        NodeP n = make(Node::Kind::Unary, peek().column);
        ++pos_;
        n->text = u;
        n->items.push_back(factor());
        return done(std::move(n));
      }
    }
    return power();
  }

  NodeP power() {
    NodeP base = primary();
    if (at_op("**")) {
      const size_t col = peek().column;
      ++pos_;
      return binary("**", std::move(base), factor(), col);  // right-associative, binds -b
    }
    return base;
  }

  NodeP primary() {
    NodeP e = atom();
    while (true) {
      const size_t col = peek().column;
      if (accept("(")) {
        NodeP call = make(Node::Kind::Call, e->column);
        call->i = static_cast<int64_t>(col);  // the '(' (the column is the callee's)
        call->items.push_back(std::move(e));
        arguments(*call);
        e = done(std::move(call));
      } else if (accept("[")) {
        NodeP sub = make(Node::Kind::Subscript, col);
        sub->items.push_back(std::move(e));
        subscript(*sub);
        e = done(std::move(sub));
      } else if (accept(".")) {
        if (peek().kind != Token::Kind::Name) fail("expected an attribute or method name after '.'", peek().column);
        NodeP a = make(Node::Kind::Attribute, peek().column);
        a->text = peek().text;
        ++pos_;
        a->items.push_back(std::move(e));
        e = done(std::move(a));
      } else {
        return e;
      }
    }
  }

  void arguments(Node& call) {
    Depth d(*this);
    bool keywords = false;
    while (!at_op(")")) {
      Arg a;
      if (peek().kind == Token::Kind::Name && peek(1).kind == Token::Kind::Op && peek(1).text == "=") {
        a.keyword = peek().text;
        for (const Arg& other : call.args)
          if (other.keyword == a.keyword) fail("keyword argument '" + a.keyword + "' repeated", peek().column);
        pos_ += 2;
        keywords = true;
      } else if (keywords) {
        fail("positional argument follows keyword argument", peek().column);
      }
      a.value = expression();
      call.args.push_back(std::move(a));
      if (!accept(",")) break;
    }
    expect(")", "')' to close the call");
  }

  void subscript(Node& sub) {
    Depth d(*this);
    do {
      if (at_op("]")) break;
      sub.items.push_back(slice_or_expression());
    } while (accept(","));
    expect("]", "']' to close the index");
    if (sub.items.size() == 1) fail("empty index", sub.column);
  }

  NodeP slice_or_expression() {
    const size_t col = peek().column;
    NodeP start;
    if (!at_op(":")) {
      start = expression();
      if (!at_op(":")) return start;
    }
    NodeP s = make(Node::Kind::Slice, col);
    ++pos_;  // the ':'
    NodeP stop, step;
    if (!at_op(":") && !at_op(",") && !at_op("]")) stop = expression();
    if (accept(":") && !at_op(",") && !at_op("]")) step = expression();
    s->items.push_back(std::move(start));
    s->items.push_back(std::move(stop));
    s->items.push_back(std::move(step));
    return done(std::move(s));
  }

  NodeP atom() {
    Depth d(*this);
    const Token t = peek();
    switch (t.kind) {
      case Token::Kind::Int: {
        ++pos_;
        NodeP n = make(Node::Kind::Int, t.column);
        n->i = t.i;
        n->above_int64 = t.above_int64;
        return n;
      }
      case Token::Kind::Float:
      case Token::Kind::Imaginary: {
        ++pos_;
        NodeP n = make(t.kind == Token::Kind::Float ? Node::Kind::Float : Node::Kind::Imaginary, t.column);
        n->f = t.f;
        return n;
      }
      case Token::Kind::String: {
        ++pos_;
        NodeP n = make(Node::Kind::String, t.column);
        n->text = t.text;
        return n;
      }
      case Token::Kind::Name: {
        if (t.text == "and" || t.text == "or" || t.text == "not" || t.text == "if" || t.text == "lambda")
          fail("unexpected '" + t.text + "'", t.column);
        ++pos_;
        if (t.text == "True" || t.text == "False") {
          NodeP n = make(Node::Kind::Bool, t.column);
          n->b = t.text == "True";
          return n;
        }
        if (t.text == "None") return make(Node::Kind::None, t.column);
        NodeP n = make(Node::Kind::Name, t.column);
        n->text = t.text;
        return n;
      }
      case Token::Kind::Op:
        if (accept("...")) return make(Node::Kind::Ellipsis, t.column);
        if (accept("(")) return sequence(Node::Kind::Tuple, ")", t.column);
        if (accept("[")) return sequence(Node::Kind::List, "]", t.column);
        break;
      case Token::Kind::End: fail("unexpected end of expression", t.column);
    }
    fail("unexpected '" + t.text + "'", t.column);
  }

  // (a), (a,), (a, b), (), [a, b], []
  NodeP sequence(Node::Kind kind, const char* close, size_t column) {
    NodeP n = make(kind, column);
    bool comma = false;
    while (!at_op(close)) {
      n->items.push_back(expression());
      if (!accept(",")) break;
      comma = true;
    }
    expect(close, kind == Node::Kind::Tuple ? "')'" : "']' to close the list");
    if (kind == Node::Kind::Tuple && n->items.size() == 1 && !comma) return std::move(n->items[0]);  // parentheses
    return done(std::move(n));
  }

  const std::string& text_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

NodeP parse(const std::string& text) { return Parser(text).parse_all(); }

}  // namespace b2lazy::expr
