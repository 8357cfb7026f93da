#include "hft/core/byte_buffer.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace {

#if defined(__SANITIZE_ADDRESS__)
// Blocks come from the heap under ASan (so that it guards their ends):
// which pages are resident is then the sanitizer's.
#define SKIP_UNDER_ASAN() GTEST_SKIP() << "mapped blocks are measured in builds without ASan (build/release)"
#else
#define SKIP_UNDER_ASAN() (void)0
#endif

/// How many of the pages of [p, p + bytes) are resident (p page-aligned).
std::size_t resident_pages(const void* p, std::size_t bytes) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t pages = (bytes + page - 1) / page;
  std::vector<unsigned char> in(pages);
  EXPECT_EQ(::mincore(const_cast<void*>(p), bytes, in.data()), 0);
  std::size_t n = 0;
  for (const unsigned char c : in) n += c & 1u;
  return n;
}

/// Where transparent huge pages are on for every mapping, one write could
/// make 2 MiB resident: the counts below are of 4 KiB pages.
void small_pages(void* p, std::size_t bytes) {
  ::madvise(p, bytes, MADV_NOHUGEPAGE);
}

TEST(ByteBuffer, a_large_buffer_is_mapped_and_only_the_pages_written_become_resident) {
  SKIP_UNDER_ASAN();
  hft::core::ByteBuffer b(64 * 1024 + 256);
  ASSERT_EQ(b.size(), 64u * 1024 + 256);
  small_pages(b.data(), b.size());
  EXPECT_EQ(resident_pages(b.data(), b.size()), 0u);
  std::memset(b.data(), 'x', 100);
  b.data()[b.size() - 1] = 'y';
  EXPECT_EQ(resident_pages(b.data(), b.size()), 2u);
  EXPECT_EQ(b.data()[99], 'x');
  EXPECT_EQ(b.data()[b.size() - 1], 'y');
}

TEST(ByteBuffer, a_small_buffer_comes_from_the_heap_and_moves_with_its_bytes) {
  hft::core::ByteBuffer a(2048);
  std::memcpy(a.data(), "8=FIX.4.4", 9);
  hft::core::ByteBuffer b = std::move(a);
  EXPECT_EQ(b.size(), 2048u);
  EXPECT_EQ(std::memcmp(b.data(), "8=FIX.4.4", 9), 0);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from buffer is empty
  EXPECT_EQ(a.size(), 0u);
}

TEST(ZeroedArray, reads_zero_everywhere_and_becomes_resident_only_where_written) {
  SKIP_UNDER_ASAN();
  hft::core::ZeroedArray<std::uint64_t> index(2048);  // a view's tag index: 16 KiB
  ASSERT_TRUE(index.mapped());
  small_pages(index.data(), 2048 * sizeof(std::uint64_t));
  EXPECT_EQ(resident_pages(index.data(), 2048 * sizeof(std::uint64_t)), 0u);
  index[35] = 7;
  EXPECT_EQ(resident_pages(index.data(), 2048 * sizeof(std::uint64_t)), 1u);
  std::uint64_t sum = 0;
  for (const std::uint64_t v : index) sum += v;
  EXPECT_EQ(sum, 7u);
}

TEST(ZeroedArray, a_small_array_from_the_heap_is_zero_too) {
  // Fill the heap with non-zero bytes and free them, so that a small array
  // is likely to reuse them: it must still read zero.
  for (int i = 0; i < 64; ++i) {
    hft::core::UninitArray<char> dirty(512);
    std::memset(dirty.data(), 0x5a, dirty.size());
  }
  hft::core::ZeroedArray<std::uint32_t> small(100);
  EXPECT_FALSE(small.mapped());
  for (const std::uint32_t v : small) EXPECT_EQ(v, 0u);
}

TEST(ResidentArray, every_page_is_resident_and_zero_from_construction) {
  struct Slot {
    std::uint64_t hash = 0;
    char key[40] = {};
  };
  const std::size_t n = 100'000;  // 4.6 MiB
  hft::core::ResidentArray<Slot> table(n);
  ASSERT_EQ(table.size(), n);
  EXPECT_EQ(resident_pages(table.data(), n * sizeof(Slot)), (n * sizeof(Slot) + 4095) / 4096);
  for (std::size_t i = 0; i < n; i += 997) EXPECT_EQ(table[i].hash, 0u);
  hft::core::ResidentArray<Slot> moved = std::move(table);
  EXPECT_EQ(moved.size(), n);
  EXPECT_EQ(table.data(), nullptr);  // NOLINT(bugprone-use-after-move)
}

}  // namespace
