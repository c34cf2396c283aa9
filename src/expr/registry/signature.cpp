// Signatures written as Python writes them, parsed into Params and printed back.
#include <cctype>

#include "b2lazy/error.hpp"
#include "b2lazy/functions.hpp"

namespace b2lazy {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

std::vector<Param> parse_signature(std::string_view text) {
  std::vector<Param> params;
  auto bad = [&](const std::string& why) -> void { throw ValueError("signature '" + std::string(text) + "': " + why); };
  bool keyword_only = false, seen_default = false;
  std::string_view rest = text;
  while (!trim(rest).empty()) {
    const size_t comma = rest.find(',');  // defaults are simple literals: no commas inside
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item == "/") {
      if (keyword_only) bad("'/' after '*'");
      for (Param& p : params) p.kind = ParamKind::PositionalOnly;
      continue;
    }
    if (item == "*") {
      if (keyword_only) bad("two '*'");
      keyword_only = true;
      continue;
    }
    Param p;
    std::string_view name = item;
    if (name.substr(0, 1) == "*") {
      if (keyword_only) bad("'*" + std::string(name.substr(1)) + "' after '*'");
      name.remove_prefix(1);
      p.kind = ParamKind::VarPositional;
      keyword_only = true;
    } else if (keyword_only) {
      p.kind = ParamKind::KeywordOnly;
    }
    if (const size_t eq = name.find('='); eq != std::string_view::npos) {
      if (p.kind == ParamKind::VarPositional) bad("a default for *" + std::string(name.substr(0, eq)));
      p.default_value = std::string(trim(name.substr(eq + 1)));
      if (p.default_value->empty()) bad("an empty default");
      name = trim(name.substr(0, eq));
      seen_default = seen_default || p.kind != ParamKind::KeywordOnly;
    } else if (seen_default && p.kind == ParamKind::PositionalOrKeyword) {
      bad("'" + std::string(name) + "' without a default after one with a default");
    }
    if (!is_identifier(name)) bad("'" + std::string(name) + "' is not a parameter name");
    for (const Param& q : params)
      if (q.name == name) bad("'" + std::string(name) + "' twice");
    p.name = std::string(name);
    params.push_back(std::move(p));
  }
  return params;
}

std::string FunctionInfo::signature() const {
  std::string s;
  auto add = [&](const std::string& item) { s += (s.empty() ? "" : ", ") + item; };
  bool star = false;
  for (size_t i = 0; i < params.size(); ++i) {
    const Param& p = params[i];
    if (p.kind == ParamKind::KeywordOnly && !star) add("*"), star = true;
    if (p.kind == ParamKind::VarPositional) star = true;
    add((p.kind == ParamKind::VarPositional ? "*" : "") + p.name + (p.default_value ? "=" + *p.default_value : ""));
    const bool last_positional_only = p.kind == ParamKind::PositionalOnly &&
                                      (i + 1 == params.size() || params[i + 1].kind != ParamKind::PositionalOnly);
    if (last_positional_only) add("/");
  }
  return "(" + s + ")";
}

}  // namespace b2lazy
