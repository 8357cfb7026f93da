// HdrHistogram interval logs: the bucket layout is HdrHistogram's, the V2
// encoding decodes back to the same counts (and a histogram encoded by
// HdrHistogram's Java library decodes as HdrHistogram reads it), intervals
// follow the time column, and damaged text is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "hft/lab/hlog.hpp"
#include "support/temp_dir.hpp"

namespace hft::lab {
namespace {

TEST(HdrLayoutTest, matches_hdrhistogram_for_one_hour_in_nanoseconds_at_3_digits) {
  auto l = HdrLayout::make(1, kHlogHighestNs, 3);
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->sub_bucket_count, 2048);
  EXPECT_EQ(l->bucket_count, 32);
  EXPECT_EQ(l->counts_len, 33 * 1024);
  EXPECT_EQ(l->index_of(0), 0);
  EXPECT_EQ(l->index_of(2047), 2047);
  EXPECT_EQ(l->index_of(2048), 2048);
  EXPECT_EQ(l->index_of(2049), 2048);  // two units per slot from 2048 on
  EXPECT_EQ(l->index_of(4096), 3072);
  EXPECT_FALSE(HdrLayout::make(1, 1, 3));
}

TEST(HdrLayoutTest, every_value_lands_in_a_slot_within_a_thousandth) {
  auto l = HdrLayout::make(1, kHlogHighestNs, 3);
  ASSERT_TRUE(l);
  std::mt19937_64 rng(3);
  for (int k = 0; k < 100'000; ++k) {
    const auto v = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(kHlogHighestNs));
    const std::int64_t i = l->index_of(v);
    ASSERT_LE(l->value_at(i), v);
    ASSERT_GT(l->value_at(i + 1), v);
    ASSERT_LE(static_cast<double>(l->value_at(i + 1) - l->value_at(i)), std::max(1.0, 1e-3 * static_cast<double>(v)));
  }
}

HlogInterval interval_of(std::initializer_list<std::int64_t> values) {
  auto l = HdrLayout::make(1, kHlogHighestNs, 3);
  HlogInterval iv;
  for (const std::int64_t v : values) {
    const auto i = static_cast<std::size_t>(l->index_of(v));
    if (iv.counts.size() <= i) iv.counts.resize(i + 1, 0);
    ++iv.counts[i];
  }
  return iv;
}

TEST(HlogEncoding, decodes_back_to_the_same_counts) {
  const HlogInterval iv = interval_of({1, 1, 2, 900, 5'000, 123'456, 10'000'000'000, 10'000'000'000});
  auto text = encode_histogram(iv);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(text->rfind("HISTF", 0), 0u) << *text;  // V2 compressed cookie 0x1c849314 in base64
  HlogInterval back;
  ASSERT_TRUE(decode_histogram(*text, back));
  EXPECT_EQ(back.counts, iv.counts);
  EXPECT_EQ(back.total(), 8u);
  EXPECT_EQ(back.highest, kHlogHighestNs);
  EXPECT_EQ(back.significant_digits, 3);
}

TEST(HlogEncoding, decodes_a_histogram_written_by_hdrhistogram_java) {
  // Histogram(3600000000000L, 3) with 1000, 1000, 2000000 recorded, then
  // encodeIntoCompressedByteBuffer, base64 (HdrHistogram 2.1.11, Java, as
  // Debian's libhdrhistogram-java packages it).
  const std::string java = "HISTFAAAACh4nJNpmSzMwMDAzgABzFCaEch0M9ixgMH+A0TgPD/L+3WMTAB5PwbU";
  HlogInterval back;
  auto ok = decode_histogram(java, back);
  ASSERT_TRUE(ok) << ok.error().message;
  auto l = HdrLayout::make(1, back.highest, back.significant_digits);
  ASSERT_TRUE(l);
  EXPECT_EQ(back.total(), 3u);
  ASSERT_GT(back.counts.size(), static_cast<std::size_t>(l->index_of(2'000'000)));
  EXPECT_EQ(back.counts[static_cast<std::size_t>(l->index_of(1000))], 2);
  EXPECT_EQ(back.counts[static_cast<std::size_t>(l->index_of(2'000'000))], 1);
}

TEST(HlogEncoding, refuses_damaged_text) {
  auto text = encode_histogram(interval_of({5, 6, 7}));
  ASSERT_TRUE(text);
  HlogInterval back;
  std::string bad = *text;
  bad[0] = 'G';  // cookie
  EXPECT_FALSE(decode_histogram(bad, back));
  bad = *text;
  bad[bad.size() / 2] = bad[bad.size() / 2] == 'A' ? 'B' : 'A';  // inside the zlib stream
  EXPECT_FALSE(decode_histogram(bad, back));
  EXPECT_FALSE(decode_histogram(text->substr(0, text->size() - 1), back));
}

Series timed_series() {
  Series s;
  s.name = "rtt";
  s.unit = Unit::kTscTicks;
  s.ticks_per_second = 2e9;  // 0.5 ns per tick
  // Calls at 0.1 s, 0.6 s, 1.2 s and 3.7 s (interval 2 has none).
  s.time = {200'000'000, 1'200'000'000, 2'400'000'000, 7'400'000'000};
  s.values = {2'000, 4'000, 200'000, 6'000};
  return s;
}

TEST(HlogIntervals, one_interval_per_second_of_the_time_column_with_empty_gaps) {
  auto iv = hlog_intervals(timed_series(), 0);
  ASSERT_TRUE(iv) << iv.error().message;
  ASSERT_EQ(iv->size(), 4u);
  EXPECT_EQ((*iv)[0].total(), 2u);
  EXPECT_DOUBLE_EQ((*iv)[0].max_ms, 0.002);  // 4000 ticks = 2000 ns
  EXPECT_EQ((*iv)[1].total(), 1u);
  EXPECT_DOUBLE_EQ((*iv)[1].max_ms, 0.1);
  EXPECT_EQ((*iv)[2].total(), 0u);
  EXPECT_EQ((*iv)[3].total(), 1u);
  EXPECT_DOUBLE_EQ((*iv)[3].start_s, 3.0);
  EXPECT_NEAR((*iv)[3].length_s, 0.700003, 1e-9);  // to the end of the last call (3 us)
}

TEST(HlogIntervals, a_series_without_time_is_one_interval_of_the_given_length) {
  Series s = timed_series();
  s.time.clear();
  auto iv = hlog_intervals(s, 2.5);
  ASSERT_TRUE(iv);
  ASSERT_EQ(iv->size(), 1u);
  EXPECT_EQ((*iv)[0].total(), 4u);
  EXPECT_DOUBLE_EQ((*iv)[0].length_s, 2.5);
}

TEST(HlogFile, written_and_read_back_interval_by_interval) {
  test::TempDir tmp("hft_lab_hlog");
  const std::filesystem::path path = std::filesystem::path(tmp.path()) / "r001.rtt.hlog";
  Series s = timed_series();
  s.values[1] = -40;  // a negative sample is recorded as 0
  ASSERT_TRUE(write_hlog(path, s, 1764686400.25, 0));
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("#[Histogram log format version 1.3]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#[StartTime: 1764686400.250 (seconds since epoch), Tue Dec 02 14:40:00 UTC 2025]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("#[BaseTime: 1764686400.250 (seconds since epoch)]"), std::string::npos) << text;
  EXPECT_NE(text.find("1 negative samples recorded as 0"), std::string::npos) << text;
  EXPECT_NE(text.find("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"
                      "0.000,1.000,0.001,HISTF"),
            std::string::npos)
      << text;
  auto log = read_hlog(path);
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_DOUBLE_EQ(log->base_time_s, 1764686400.25);
  auto want = hlog_intervals(s, 0);
  ASSERT_TRUE(want);
  ASSERT_EQ(log->intervals.size(), want->size());
  for (std::size_t k = 0; k < want->size(); ++k) {
    EXPECT_EQ(log->intervals[k].counts, (*want)[k].counts) << "interval " << k;
    EXPECT_DOUBLE_EQ(log->intervals[k].start_s, (*want)[k].start_s);
  }
  EXPECT_EQ(log->intervals[0].counts.at(0), 1);  // the -40 ticks
}

}  // namespace
}  // namespace hft::lab
