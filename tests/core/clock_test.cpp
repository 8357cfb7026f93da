#include <gtest/gtest.h>

#include <thread>

#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "hft/core/idle.hpp"

namespace {

TEST(Clock, tsc_calibration_converts_ticks_to_monotonic_time_within_one_percent) {
  const auto tsc = hft::core::TscClock::calibrate(10'000'000);
  ASSERT_GT(tsc.ticks_per_ns(), 0.1);
  const auto t0 = hft::core::rdtsc();
  const auto m0 = hft::core::monotonic_raw_ns();
  while (hft::core::monotonic_raw_ns() - m0 < 20'000'000) {
  }
  const auto t1 = hft::core::rdtsc();
  const auto m1 = hft::core::monotonic_raw_ns();
  const double ratio = tsc.to_ns(t1 - t0) / static_cast<double>(m1 - m0);
  EXPECT_NEAR(ratio, 1.0, 0.01);
}

TEST(Clock, realtime_is_after_2020) {
  EXPECT_GT(hft::core::realtime_ns(), 1'577'836'800LL * 1'000'000'000LL);
}

TEST(Cpu, pinning_to_a_missing_cpu_fails_and_to_cpu_zero_succeeds) {
  EXPECT_FALSE(hft::core::pin_current_thread(100000));
  std::thread t([] {
    EXPECT_TRUE(hft::core::pin_current_thread(0));
    EXPECT_EQ(hft::core::current_cpu(), 0);
  });
  t.join();
  EXPECT_TRUE(hft::core::cpu_exists(0));
  EXPECT_GE(hft::core::available_cpus(), 1);
}

TEST(Idle, names_round_trip_and_unknown_is_refused) {
  for (auto k : {hft::core::IdleKind::kBusySpin, hft::core::IdleKind::kBackoff, hft::core::IdleKind::kSleep}) {
    auto parsed = hft::core::parse_idle_kind(hft::core::to_string(k));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, k);
  }
  EXPECT_FALSE(hft::core::parse_idle_kind("napping").has_value());
}

}  // namespace
