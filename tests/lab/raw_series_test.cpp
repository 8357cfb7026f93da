// Raw series files: CSV and HFTRAW round trips, and readers that refuse
// truncated or corrupt files instead of returning partial data.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

#include "hft/lab/raw_series.hpp"

namespace hft::lab {
namespace {

class RawSeries : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hft_lab_raw_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static Series sample_series(bool with_time) {
    Series s;
    s.name = "rtt";
    s.unit = Unit::kTscTicks;
    s.ticks_per_second = 2'893'204'117.25;
    std::mt19937_64 rng(7);
    for (int k = 0; k < 5'000; ++k) {
      s.values.push_back(static_cast<std::int64_t>(rng() % 100'000'000));
      if (with_time) s.time.push_back(k * 1'000);
    }
    s.values[17] = INT64_MAX;  // extremes survive
    s.values[18] = -5;
    return s;
  }

  std::filesystem::path dir_;
};

void expect_same(const Series& a, const Series& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.unit, b.unit);
  EXPECT_EQ(a.ticks_per_second, b.ticks_per_second);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.time, b.time);
}

TEST_F(RawSeries, binary_round_trip_keeps_every_sample_unit_and_frequency) {
  for (const bool with_time : {false, true}) {
    const Series s = sample_series(with_time);
    const auto path = dir_ / "s.hftraw";
    ASSERT_TRUE(write_binary(path, s).ok());
    EXPECT_EQ(std::filesystem::file_size(path), 64 + 8 + 8 * s.values.size() * (with_time ? 2 : 1));
    auto back = read_binary(path);
    ASSERT_TRUE(back.ok()) << back.error().message;
    expect_same(s, *back);
  }
}

TEST_F(RawSeries, binary_header_is_laid_out_as_documented) {
  Series s;
  s.name = "service";
  s.unit = Unit::kNanoseconds;
  s.ticks_per_second = 1e9;
  s.values = {1, 2, 3};
  const auto path = dir_ / "h.hftraw";
  ASSERT_TRUE(write_binary(path, s).ok());
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 64u + 8u + 24u);
  EXPECT_EQ(std::memcmp(bytes.data(), "HFTRAW\0\0", 8), 0);
  std::uint16_t version = 0;
  std::memcpy(&version, bytes.data() + 8, 2);
  EXPECT_EQ(version, 1);
  EXPECT_EQ(bytes[12], 0);  // unit ns
  EXPECT_EQ(bytes[13], 0);  // no time column
  std::uint64_t count = 0;
  std::memcpy(&count, bytes.data() + 16, 8);
  EXPECT_EQ(count, 3u);
  double hz = 0;
  std::memcpy(&hz, bytes.data() + 24, 8);
  EXPECT_EQ(hz, 1e9);
  std::uint32_t name_length = 0;
  std::memcpy(&name_length, bytes.data() + 32, 4);
  EXPECT_EQ(name_length, 7u);
  EXPECT_EQ(std::string(bytes.data() + 64, 7), "service");
  std::int64_t third = 0;
  std::memcpy(&third, bytes.data() + 64 + 8 + 16, 8);
  EXPECT_EQ(third, 3);
}

TEST_F(RawSeries, binary_reader_rejects_truncation_corruption_and_bad_magic) {
  const Series s = sample_series(true);
  const auto path = dir_ / "c.hftraw";
  ASSERT_TRUE(write_binary(path, s).ok());
  const auto size = std::filesystem::file_size(path);

  std::filesystem::resize_file(path, size - 8);
  auto truncated = read_binary(path);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.error().message.find("truncated"), std::string::npos) << truncated.error().message;

  ASSERT_TRUE(write_binary(path, s).ok());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 100));
    f.put('\x55');
  }
  auto corrupt = read_binary(path);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.error().message.find("CRC"), std::string::npos) << corrupt.error().message;

  ASSERT_TRUE(write_binary(path, s).ok());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.put('X');
  }
  auto magic = read_binary(path);
  ASSERT_FALSE(magic.ok());
  EXPECT_NE(magic.error().message.find("magic"), std::string::npos);
}

TEST_F(RawSeries, csv_round_trip_keeps_every_sample_unit_and_frequency) {
  for (const bool with_time : {false, true}) {
    const Series s = sample_series(with_time);
    const auto path = dir_ / "s.csv";
    ASSERT_TRUE(write_csv(path, s).ok());
    auto back = read_csv(path);
    ASSERT_TRUE(back.ok()) << back.error().message;
    expect_same(s, *back);
  }
}

TEST_F(RawSeries, csv_starts_with_its_documented_header) {
  Series s;
  s.name = "rtt";
  s.values = {10, 20};
  s.time = {0, 15};
  const auto path = dir_ / "h.csv";
  ASSERT_TRUE(write_csv(path, s).ok());
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text,
            "# hft-lab raw series, csv v1\n# name=rtt\n# unit=ns\n# ticks_per_second=1000000000\n# count=2\n"
            "index,value,time\n0,10,0\n1,20,15\n");
}

TEST_F(RawSeries, csv_reader_rejects_a_truncated_file_with_its_line) {
  const Series s = sample_series(false);
  const auto path = dir_ / "t.csv";
  ASSERT_TRUE(write_csv(path, s).ok());
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  auto back = read_csv(path);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message.find("t.csv:"), std::string::npos) << back.error().message;
}

TEST(Crc32, matches_the_standard_check_value) {
  const char* text = "123456789";
  EXPECT_EQ(crc32(std::span(reinterpret_cast<const std::uint8_t*>(text), 9)), 0xCBF43926U);
}

}  // namespace
}  // namespace hft::lab
