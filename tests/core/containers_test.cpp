#include <gtest/gtest.h>

#include <thread>

#include "hft/core/object_pool.hpp"
#include "hft/core/spsc_ring.hpp"
#include "support/alloc_counter.hpp"

namespace {

TEST(SpscRing, reports_full_and_empty_and_keeps_order) {
  hft::core::SpscRing<int> ring(3);
  EXPECT_EQ(ring.capacity(), 4u);
  int out = 0;
  EXPECT_FALSE(ring.try_pop(out));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(ring.try_push(i));
  EXPECT_FALSE(ring.try_push(99));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out, i);
  }
  EXPECT_FALSE(ring.try_pop(out));
}

TEST(SpscRing, transfers_a_million_values_between_threads_in_order_without_allocating) {
  hft::core::SpscRing<std::uint64_t> ring(1024);
  constexpr std::uint64_t kCount = 1'000'000;
  std::uint64_t producer_allocs = 0;
  std::thread producer([&] {
    hft::test::AllocationScope scope;
    for (std::uint64_t i = 0; i < kCount; ++i) {
      while (!ring.try_push(i)) {
      }
    }
    producer_allocs = scope.count();
  });
  std::uint64_t expected = 0;
  hft::test::AllocationScope scope;
  while (expected < kCount) {
    std::uint64_t v;
    if (ring.try_pop(v)) {
      ASSERT_EQ(v, expected);
      ++expected;
    }
  }
  EXPECT_EQ(scope.count(), 0u);
  producer.join();
  EXPECT_EQ(producer_allocs, 0u);
}

TEST(ObjectPool, exhaustion_is_counted_not_grown) {
  hft::core::ObjectPool<int> pool(2);
  int* a = pool.acquire();
  int* b = pool.acquire();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool.acquire(), nullptr);
  EXPECT_EQ(pool.exhausted(), 1u);
  pool.release(a);
  EXPECT_EQ(pool.acquire(), a);
  EXPECT_EQ(pool.capacity(), 2u);
}

}  // namespace
