#include "io/remote/xml_listing.hpp"

#include <cstdlib>

namespace b2lazy::remote {

namespace {

void append_utf8(std::string& out, unsigned long cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::string xml_decode(std::string_view t) {
  std::string out;
  out.reserve(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '&') {
      out += t[i];
      continue;
    }
    const size_t semi = t.find(';', i);
    if (semi == std::string_view::npos || semi - i > 12) {
      out += t[i];
      continue;
    }
    const std::string_view name = t.substr(i + 1, semi - i - 1);
    if (name == "amp") out += '&';
    else if (name == "lt") out += '<';
    else if (name == "gt") out += '>';
    else if (name == "quot") out += '"';
    else if (name == "apos") out += '\'';
    else if (name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x' || name[1] == 'X';
      const std::string digits(name.substr(hex ? 2 : 1));
      char* end = nullptr;
      const unsigned long cp = std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
      if (digits.empty() || *end != 0 || cp > 0x10FFFF) {
        out += t[i];
        continue;
      }
      append_utf8(out, cp);
    } else {
      out += t[i];
      continue;
    }
    i = semi;
  }
  return out;
}

std::string xml_escape(std::string_view t) {
  std::string out;
  out.reserve(t.size());
  for (char c : t) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<std::string_view> xml_elements(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> out;
  const std::string open = "<" + std::string(tag);
  const std::string close = "</" + std::string(tag) + ">";
  size_t at = 0;
  for (;;) {
    size_t p = xml.find(open, at);
    if (p == std::string_view::npos) break;
    const size_t after = p + open.size();
    if (after >= xml.size()) break;
    const char c = xml[after];
    if (c != '>' && c != ' ' && c != '/' && c != '\t' && c != '\n' && c != '\r') {  // a longer name
      at = after;
      continue;
    }
    const size_t gt = xml.find('>', after);
    if (gt == std::string_view::npos) break;
    if (xml[gt - 1] == '/') {  // <tag/>
      out.emplace_back();
      at = gt + 1;
      continue;
    }
    const size_t end = xml.find(close, gt + 1);
    if (end == std::string_view::npos) break;
    out.push_back(xml.substr(gt + 1, end - gt - 1));
    at = end + close.size();
  }
  return out;
}

std::string xml_text(std::string_view xml, std::string_view tag) {
  const auto e = xml_elements(xml, tag);
  return e.empty() ? std::string() : xml_decode(e[0]);
}

ListPage parse_list_page(std::string_view xml) {
  ListPage page;
  for (const auto c : xml_elements(xml, "Contents")) {
    ObjectInfo o;
    o.key = xml_text(c, "Key");
    const std::string size = xml_text(c, "Size");
    o.size = size.empty() ? -1 : std::atoll(size.c_str());
    o.version = xml_text(c, "ETag");
    page.objects.push_back(std::move(o));
  }
  page.truncated = xml_text(xml, "IsTruncated") == "true";
  page.next_token = xml_text(xml, "NextContinuationToken");
  return page;
}

std::string parse_error_body(std::string_view xml) {
  const auto err = xml_elements(xml, "Error");
  if (err.empty()) return {};
  std::string code = xml_text(err[0], "Code");
  const std::string message = xml_text(err[0], "Message");
  if (!message.empty()) code += (code.empty() ? "" : ": ") + message;
  return code;
}

}  // namespace b2lazy::remote
