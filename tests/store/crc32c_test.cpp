#include "hft/store/crc32c.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace hft::store {
namespace {

TEST(Crc32c, matches_the_standard_check_value) {
  const std::string check = "123456789";
  EXPECT_EQ(crc32c(check.data(), check.size()), 0xE3069283u);
  EXPECT_EQ(crc32c_portable(check.data(), check.size()), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
}

TEST(Crc32c, matches_known_vectors_from_rfc3720) {
  std::vector<unsigned char> zeros(32, 0), ones(32, 0xFF), inc(32);
  for (int i = 0; i < 32; ++i) inc[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(crc32c(inc.data(), 32), 0x46DD794Eu);
}

TEST(Crc32c, fast_path_equals_portable_table_for_every_length_and_alignment) {
  std::mt19937_64 rng(42);
  std::vector<unsigned char> buf(6000 + 16);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  for (std::size_t len = 0; len <= 2000; ++len) {
    for (std::size_t shift : {0, 1, 3, 7}) {
      ASSERT_EQ(crc32c(buf.data() + shift, len), crc32c_portable(buf.data() + shift, len)) << len << "+" << shift;
    }
  }
  for (std::size_t len : {3000, 4607, 4608, 4609, 6000}) {
    ASSERT_EQ(crc32c(buf.data(), len), crc32c_portable(buf.data(), len)) << len;
  }
}

TEST(Crc32c, extend_equals_crc_of_the_concatenation) {
  std::mt19937_64 rng(7);
  std::vector<unsigned char> buf(700);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  for (std::size_t split = 0; split <= buf.size(); split += 13) {
    const std::uint32_t a = crc32c(buf.data(), split);
    EXPECT_EQ(crc32c_extend(a, buf.data() + split, buf.size() - split), crc32c(buf.data(), buf.size()));
  }
}

}  // namespace
}  // namespace hft::store
