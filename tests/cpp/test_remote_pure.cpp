// The remote stores' pure parts: which range requests serve which ranges (coalescing,
// caps, splits), the XML of S3 listings and errors, the retry policy's backoff, and the
// AWS config files' syntax.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "b2lazy/error.hpp"
#include "io/remote/aws_credentials.hpp"
#include "io/remote/range_plan.hpp"
#include "io/remote/remote_store.hpp"
#include "io/remote/s3_compatible_store.hpp"
#include "io/remote/transfer_engine.hpp"
#include "io/remote/xml_listing.hpp"

namespace b2lazy::remote {
namespace {

// Every byte of every range comes from exactly one slice of one fetch, inside the fetch.
void expect_covers(const std::vector<ByteRange>& ranges, const std::vector<Fetch>& fetches) {
  std::vector<std::vector<int>> seen(ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i)
    seen[i].assign(static_cast<size_t>(std::max<int64_t>(ranges[i].length, 0)), 0);
  for (const auto& f : fetches) {
    for (const auto& s : f.slices) {
      const auto& r = ranges[s.piece];
      if (s.length < 0) {
        EXPECT_EQ(r.length, -1);
        EXPECT_EQ(f.offset, r.offset);
        continue;
      }
      ASSERT_GE(f.length, s.fetch_at + s.length);
      EXPECT_EQ(f.offset + s.fetch_at, r.offset + s.piece_at);  // the same bytes of the object
      for (int64_t b = 0; b < s.length; ++b) ++seen[s.piece][static_cast<size_t>(s.piece_at + b)];
    }
  }
  for (const auto& v : seen)
    for (int c : v) EXPECT_EQ(c, 1);
}

TEST(RangePlan, AdjacentAndNearRangesMerge) {
  const std::vector<ByteRange> r{{0, 100}, {100, 100}, {250, 50}, {10'000, 10}};
  const auto f = plan_fetches(r, {64, 1 << 20});
  ASSERT_EQ(f.size(), 2u);  // [0, 300) with a 50-byte gap read, and [10000, 10010)
  EXPECT_EQ(f[0].offset, 0);
  EXPECT_EQ(f[0].length, 300);
  EXPECT_EQ(f[1].offset, 10'000);
  EXPECT_EQ(f[1].length, 10);
  expect_covers(r, f);
}

TEST(RangePlan, GapThresholdAndCapHold) {
  const std::vector<ByteRange> r{{0, 100}, {165, 10}};
  EXPECT_EQ(plan_fetches(r, {64, 1 << 20}).size(), 2u);  // gap 65 > 64
  EXPECT_EQ(plan_fetches(r, {65, 1 << 20, 1.0}).size(), 1u);
  EXPECT_EQ(plan_fetches(r, {65, 174, 1.0}).size(), 2u);  // merged would be 175 > cap
  EXPECT_EQ(plan_fetches(r, {65, 1 << 20}).size(), 2u);   // a 65-byte gap is 59% of the 110 asked
}

TEST(RangePlan, GapsStayWithinTheWasteFraction) {
  std::mt19937_64 rng(40);
  for (int round = 0; round < 300; ++round) {
    std::vector<ByteRange> r;
    int64_t at = 0, asked = 0;
    const int n = static_cast<int>(rng() % 40) + 1;
    for (int i = 0; i < n; ++i) {  // disjoint ranges, gaps of 0 to 4000 bytes
      at += static_cast<int64_t>(rng() % 4000);
      const int64_t len = static_cast<int64_t>(rng() % 3000) + 1;
      r.push_back({at, len});
      at += len;
      asked += len;
    }
    const double waste = static_cast<double>(rng() % 50) / 100;
    const auto f = plan_fetches(r, {int64_t{1} << 20, int64_t{1} << 30, waste});
    int64_t fetched = 0;
    for (const auto& x : f) fetched += x.length;
    EXPECT_LE(static_cast<double>(fetched), (1 + waste) * static_cast<double>(asked) + 1e-9);
    expect_covers(r, f);
  }
}

TEST(RangePlan, LongRangesSplitAndToTheEndStandsAlone) {
  const std::vector<ByteRange> r{{5, 1000}, {2000, -1}, {7, 0}};
  const auto f = plan_fetches(r, {0, 300});
  // 1000 bytes in 4 fetches of at most 300, plus the to-the-end fetch; nothing for 0 bytes
  ASSERT_EQ(f.size(), 5u);
  for (const auto& x : f) {
    if (x.length >= 0) {
      EXPECT_LE(x.length, 300);
    }
  }
  EXPECT_EQ(std::count_if(f.begin(), f.end(), [](const Fetch& x) { return x.length < 0; }), 1);
  expect_covers(r, f);
}

TEST(RangePlan, OverlappingAndUnsortedRangesRandomly) {
  std::mt19937_64 rng(39);
  for (int round = 0; round < 300; ++round) {
    std::vector<ByteRange> r;
    const int n = static_cast<int>(rng() % 20) + 1;
    for (int i = 0; i < n; ++i) r.push_back({static_cast<int64_t>(rng() % 5000), static_cast<int64_t>(rng() % 700)});
    const CoalesceLimits lim{static_cast<int64_t>(rng() % 300), static_cast<int64_t>(rng() % 2000) + 1};
    const auto f = plan_fetches(r, lim);
    for (const auto& x : f) EXPECT_LE(x.length, lim.max_size);
    expect_covers(r, f);
  }
}

TEST(Xml, EntitiesDecode) {
  EXPECT_EQ(xml_decode("a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos;"), "a & b <c> \"d\" 'e'");
  EXPECT_EQ(xml_decode("&#65;&#x42;&#xe9;&#x1F600;"), "AB\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(xml_decode("&bogus; & &#xZZ;"), "&bogus; & &#xZZ;");  // kept as they are
  EXPECT_EQ(xml_decode(xml_escape("<&>\"'x")), "<&>\"'x");
}

TEST(Xml, ListPageParsed) {
  const std::string page = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>p/</Prefix>
<KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated>
<Contents><Key>p/a &amp; b.bin</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified>
<ETag>&quot;abc&quot;</ETag><Size>123</Size><StorageClass>STANDARD</StorageClass></Contents>
<Contents><Key>p/&#x3C;x&#x3E;</Key><ETag>"def-2"</ETag><Size>0</Size></Contents>
<NextContinuationToken>tok/+=</NextContinuationToken></ListBucketResult>)";
  const auto p = parse_list_page(page);
  ASSERT_EQ(p.objects.size(), 2u);
  EXPECT_EQ(p.objects[0].key, "p/a & b.bin");
  EXPECT_EQ(p.objects[0].size, 123);
  EXPECT_EQ(p.objects[0].version, "\"abc\"");
  EXPECT_EQ(p.objects[1].key, "p/<x>");
  EXPECT_EQ(p.objects[1].size, 0);
  EXPECT_TRUE(p.truncated);
  EXPECT_EQ(p.next_token, "tok/+=");
  const auto last =
      parse_list_page("<ListBucketResult><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>");
  EXPECT_TRUE(last.objects.empty());
  EXPECT_FALSE(last.truncated);
}

TEST(Xml, ErrorBodies) {
  EXPECT_EQ(parse_error_body("<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The key &amp; all</Message>"
                             "<Key>k</Key></Error>"),
            "NoSuchKey: The key & all");
  EXPECT_EQ(parse_error_body("<html>nope</html>"), "");
  EXPECT_EQ(parse_error_body(""), "");
  EXPECT_EQ(xml_text("<A><Key/><Key>x</Key></A>", "Key"), "");
  EXPECT_EQ(xml_elements("<A><Key/><Key>x</Key></A>", "Key").size(), 2u);
  EXPECT_TRUE(xml_elements("<Error><Code>X", "Code").empty());  // unterminated: nothing
}

TEST(RetryPolicy, StatusesRetried) {
  for (long s : {500L, 502L, 503L, 504L, 429L, 408L}) EXPECT_TRUE(is_retryable_status(s)) << s;
  for (long s : {200L, 206L, 301L, 400L, 401L, 403L, 404L, 416L, 501L}) EXPECT_FALSE(is_retryable_status(s)) << s;
}

TEST(RetryPolicy, BackoffIsJitteredExponentialAndCapped) {
  TransferSettings s;
  s.backoff_base_seconds = 0.1;
  s.backoff_max_seconds = 2.0;
  EXPECT_DOUBLE_EQ(backoff_seconds(s, 1, 0, 1.0), 0.1);
  EXPECT_DOUBLE_EQ(backoff_seconds(s, 3, 0, 1.0), 0.4);
  EXPECT_DOUBLE_EQ(backoff_seconds(s, 3, 0, 0.5), 0.2);
  EXPECT_DOUBLE_EQ(backoff_seconds(s, 10, 0, 1.0), 2.0);   // capped
  EXPECT_DOUBLE_EQ(backoff_seconds(s, 60, 0, 1.0), 2.0);   // no overflow
  EXPECT_DOUBLE_EQ(backoff_seconds(s, 1, 1.5, 0.0), 1.5);  // Retry-After honoured ...
  EXPECT_DOUBLE_EQ(backoff_seconds(s, 1, 30, 0.0), 2.0);   // ... up to the cap
}

TEST(UrlEncoding, SigV4Canonical) {
  EXPECT_EQ(url_encode_path("a b/c+d/é~_.-"), "a%20b/c%2Bd/%C3%A9~_.-");
  EXPECT_EQ(url_encode_value("dir/x=y&z"), "dir%2Fx%3Dy%26z");
}

TEST(S3Addressing, PathStyleForCustomEndpointsAndDottedBuckets) {
  EXPECT_FALSE(use_path_style("", false, "my-bucket"));
  EXPECT_TRUE(use_path_style("", false, "my.dotted.bucket"));
  EXPECT_TRUE(use_path_style("auto", true, "my-bucket"));
  EXPECT_FALSE(use_path_style("virtual", true, "my-bucket"));
  EXPECT_TRUE(use_path_style("path", false, "my-bucket"));
  EXPECT_THROW(use_path_style("sideways", false, "b"), IOError);
  EXPECT_EQ(bucket_url("https://s3.eu-west-1.amazonaws.com", "bkt", false), "https://bkt.s3.eu-west-1.amazonaws.com");
  EXPECT_EQ(bucket_url("http://127.0.0.1:5000", "bkt", true), "http://127.0.0.1:5000/bkt");
  EXPECT_EQ(split_bucket_url("s3://bkt/a/b/"), (std::pair<std::string, std::string>{"bkt", "a/b"}));
  EXPECT_EQ(split_bucket_url("gs://bkt"), (std::pair<std::string, std::string>{"bkt", ""}));
  EXPECT_THROW(split_bucket_url("s3:///x"), ValueError);
}

TEST(AwsFiles, IniParsed) {
  const auto f =
      parse_ini("# c\n[default]\naws_access_key_id = AK \nregion=eu-west-1\n\n[profile x]\n; c\nregion = us-west-2\n");
  EXPECT_EQ(f.at("default").at("aws_access_key_id"), "AK");
  EXPECT_EQ(f.at("default").at("region"), "eu-west-1");
  EXPECT_EQ(f.at("profile x").at("region"), "us-west-2");
}

}  // namespace
}  // namespace b2lazy::remote
