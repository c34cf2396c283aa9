// The little XML that S3's (and GCS's XML API's) answers need: ListObjectsV2 pages,
// InitiateMultipartUpload's UploadId, and <Error> bodies. Elements are found by name
// (no namespaces, no CDATA, as these documents have none) and their text entity-decoded.
// Pure: unit-tested in tests/cpp/test_remote_pure.cpp.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "b2lazy/byte_store.hpp"

namespace b2lazy::remote {

// "&amp;" -> "&", "&#x41;" / "&#65;" -> "A" (as UTF-8); an unknown entity is kept as is.
std::string xml_decode(std::string_view text);
// "&", "<", ">", '"' and "'" escaped.
std::string xml_escape(std::string_view text);
// The raw contents of each <tag ...>...</tag> (or "" for <tag/>) in `xml`, in order.
std::vector<std::string_view> xml_elements(std::string_view xml, std::string_view tag);
// The decoded text of the first <tag>, "" when there is none.
std::string xml_text(std::string_view xml, std::string_view tag);

struct ListPage {
  std::vector<ObjectInfo> objects;  // keys as the server names them (not relative)
  bool truncated = false;
  std::string next_token;  // NextContinuationToken
};
ListPage parse_list_page(std::string_view xml);

// "Code: Message" of an <Error> body; "" when the body is not one.
std::string parse_error_body(std::string_view xml);

}  // namespace b2lazy::remote
