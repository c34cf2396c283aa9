// compute(urlpath="s3://bucket/out.b2nd"): the b2nd output written to a local temporary
// file, then uploaded whole with the store's write (S3: multipart above its threshold,
// aborted on failure), so that no half-written object ever appears at the URL.
#pragma once
#include <memory>

#include "b2lazy/driver.hpp"

namespace b2lazy {

std::unique_ptr<Sink> create_b2nd_store_sink(const SinkSpec& spec, const StorePtr& store);

}  // namespace b2lazy
