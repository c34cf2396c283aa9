// The libcurl stores, registered for their schemes by io/store/byte_store.cpp's registry:
// http, https (HttpStore), s3 (S3Store), gs and gcs (GcsStore).
#pragma once
#include <string>

#include "b2lazy/byte_store.hpp"

namespace b2lazy::remote {

StorePtr make_http_store(const std::string& url, const StoreOptions& options);
StorePtr make_s3_store(const std::string& url, const StoreOptions& options);
StorePtr make_gcs_store(const std::string& url, const StoreOptions& options);

}  // namespace b2lazy::remote
