// einsum's subscript strings (NumPy's grammar): terms of letters with at most one "..."
// each, separated by commas, an optional "->" and output term.
#include <algorithm>
#include <map>

#include "b2lazy/einsum.hpp"
#include "b2lazy/error.hpp"

namespace b2lazy {

namespace {

[[noreturn]] void fail(const std::string& what) { throw ValueError("einsum: " + what); }

int letter_label(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

// One term: its letters' labels, with -1 where its "..." stands.
std::vector<int> parse_term(const std::string& term, const std::string& where) {
  std::vector<int> out;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (term.compare(i, 3, "...") != 0) fail(where + " has a '.' that is not part of an ellipsis '...'");
      if (ellipsis) fail(where + " has more than one ellipsis '...'");
      ellipsis = true;
      out.push_back(-1);
      i += 2;
      continue;
    }
    const int l = letter_label(c);
    if (l < 0) fail(std::string("invalid subscript '") + c + "' in " + where + " (letters a-z, A-Z and '...' only)");
    out.push_back(l);
  }
  return out;
}

}  // namespace

std::string einsum_label_name(int label) {
  if (label >= kEinsumEllipsis) return "...[" + std::to_string(label - kEinsumEllipsis) + "]";
  return std::string(1, label < 26 ? static_cast<char>('A' + label) : static_cast<char>('a' + label - 26));
}

EinsumSubscripts parse_einsum(const std::string& subscripts, const std::vector<size_t>& ndims) {
  if (ndims.empty()) fail("at least one operand is required");
  std::string lhs = subscripts, rhs;
  const size_t arrow = subscripts.find("->");
  const bool explicit_out = arrow != std::string::npos;
  if (explicit_out) {
    lhs = subscripts.substr(0, arrow);
    rhs = subscripts.substr(arrow + 2);
    if (rhs.find("->") != std::string::npos) fail("subscripts '" + subscripts + "' have more than one '->'");
  }
  if (lhs.find('>') != std::string::npos || rhs.find('-') != std::string::npos || rhs.find('>') != std::string::npos ||
      lhs.find('-') != std::string::npos)
    fail("subscripts '" + subscripts + "' have a '-' or '>' that is not part of '->'");
  std::vector<std::string> terms;
  for (size_t b = 0;;) {
    const size_t e = lhs.find(',', b);
    terms.push_back(lhs.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (terms.size() != ndims.size())
    fail("subscripts '" + subscripts + "' name " + std::to_string(terms.size()) + " operand(s), " +
         std::to_string(ndims.size()) + " given");
  EinsumSubscripts s;
  // The ellipsis's axes per operand, and the broadcast ellipsis's length.
  std::vector<std::vector<int>> raw;
  std::vector<size_t> ell(terms.size(), 0);
  size_t nell = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    const std::string where = "operand " + std::to_string(k) + "'s subscripts '" + terms[k] + "'";
    raw.push_back(parse_term(terms[k], where));
    const bool has_ell = std::count(raw[k].begin(), raw[k].end(), -1) > 0;
    const size_t letters = raw[k].size() - (has_ell ? 1 : 0);
    if (has_ell ? letters > ndims[k] : letters != ndims[k])
      fail(where + " name " + std::to_string(letters) + " axes; the operand has " + std::to_string(ndims[k]));
    ell[k] = has_ell ? ndims[k] - letters : 0;
    nell = std::max(nell, ell[k]);
  }
  std::map<int, int> count;
  for (size_t k = 0; k < terms.size(); ++k) {
    std::vector<int> labels;
    for (int l : raw[k]) {
      if (l >= 0) {
        labels.push_back(l);
        ++count[l];
        continue;
      }
      for (size_t j = 0; j < ell[k]; ++j) labels.push_back(kEinsumEllipsis + static_cast<int>(nell - ell[k] + j));
    }
    s.inputs.push_back(std::move(labels));
  }
  if (!explicit_out) {
    for (size_t j = 0; j < nell; ++j) s.output.push_back(kEinsumEllipsis + static_cast<int>(j));
    for (const auto& [l, n] : count)  // (a map: in label order, which is ASCII order)
      if (n == 1) s.output.push_back(l);
    return s;
  }
  const std::vector<int> out = parse_term(rhs, "the output subscripts '" + rhs + "'");
  bool out_ell = false;
  for (int l : out) {
    if (l < 0) {
      out_ell = true;
      for (size_t j = 0; j < nell; ++j) s.output.push_back(kEinsumEllipsis + static_cast<int>(j));
      continue;
    }
    if (!count.count(l))
      fail("output subscript '" + einsum_label_name(l) + "' does not appear in the input subscripts");
    if (std::count(out.begin(), out.end(), l) > 1)
      fail("output subscript '" + einsum_label_name(l) + "' appears more than once");
    s.output.push_back(l);
  }
  if (!out_ell && nell > 0)
    fail("the operands' ellipsis stands for " + std::to_string(nell) + " axes, but the output subscripts '" + rhs +
         "' have no '...' to put them");
  return s;
}

}  // namespace b2lazy
