// The pacer with a fake clock: planned arrivals, scheduler delay, service and
// response series, no re-anchoring after a stall, late and shed counting,
// achieved rate.
#include <gtest/gtest.h>

#include <vector>

#include "hft/lab/pacer.hpp"
#include "support/alloc_counter.hpp"

namespace hft::lab {
namespace {

/// 1 tick = 1 us; 1000 calls/s -> a period of 1000 ticks.
PacerSettings us_clock(double rate = 1000, std::uint32_t window = 64) {
  PacerSettings s;
  s.rate_per_s = rate;
  s.ticks_per_second = 1e6;
  s.window = window;
  return s;
}

TEST(Pacer, plans_arrival_i_at_t0_plus_i_over_rate) {
  Pacer p(10, us_clock(), Unit::kNanoseconds);
  p.start(5'000);
  for (std::uint64_t i = 0; i < 10; ++i) EXPECT_EQ(p.planned(i), 5'000 + static_cast<std::int64_t>(i) * 1'000);
  EXPECT_EQ(p.period(), 1'000);
}

TEST(Pacer, planned_arrivals_do_not_drift_with_a_fractional_period) {
  // 3 calls/s on a 10 Hz clock: 3.333... ticks apart. Computed from i, the
  // 3000th arrival is exactly 10000 ticks after t0.
  PacerSettings s;
  s.rate_per_s = 3;
  s.ticks_per_second = 10;
  Pacer p(4, s, Unit::kNanoseconds);
  p.start(0);
  EXPECT_EQ(p.planned(1), 3);
  EXPECT_EQ(p.planned(2), 7);
  EXPECT_EQ(p.planned(3), 10);
  EXPECT_EQ(p.planned(3000), 10'000);
}

TEST(Pacer, records_scheduler_delay_service_and_response_separately) {
  Pacer p(3, us_clock(), Unit::kNanoseconds);
  p.start(0);
  EXPECT_TRUE(p.due(0));
  EXPECT_EQ(p.issue(2), 0u);        // 2 late
  p.complete(0, 52);                // service 50
  EXPECT_FALSE(p.due(999));
  EXPECT_TRUE(p.due(1'000));
  EXPECT_EQ(p.issue(1'000), 1u);    // on time
  p.complete(1, 1'010);             // service 10
  EXPECT_EQ(p.issue(2'300), 2u);    // 300 late
  p.complete(2, 2'400);             // service 100
  EXPECT_TRUE(p.done());
  p.finish();
  EXPECT_EQ(p.scheduler_delay().values, (std::vector<std::int64_t>{2, 0, 300}));
  EXPECT_EQ(p.service().values, (std::vector<std::int64_t>{50, 10, 100}));
  EXPECT_EQ(p.response().values, (std::vector<std::int64_t>{52, 10, 400}));
  EXPECT_EQ(p.response().time, (std::vector<std::int64_t>{0, 1'000, 2'000}));
  EXPECT_EQ(p.late(), 0u);          // below one period
  EXPECT_EQ(p.errors(), 0u);
}

TEST(Pacer, never_reanchors_after_a_stall_so_later_calls_carry_the_accumulated_delay) {
  // The issuing thread is stalled from t = 1500 to t = 6000: calls 2..6 were
  // due at 2000..6000. They go out back to back at 6000, 6001, ...; the
  // schedule is not moved, so each shows its full delay, and call 7 is
  // again on time at 7000.
  Pacer p(8, us_clock(), Unit::kNanoseconds);
  p.start(0);
  p.complete(p.issue(0), 10);
  p.complete(p.issue(1'000), 1'010);
  std::int64_t now = 6'000;
  for (std::uint64_t i = 2; i <= 6; ++i) {
    ASSERT_TRUE(p.due(now));
    ASSERT_EQ(p.issue(now), i);
    p.complete(i, now + 10);
    ++now;
  }
  EXPECT_FALSE(p.due(now)) << "call 7 is planned at 7000, not re-planned from the stall";
  EXPECT_EQ(p.planned(7), 7'000);
  p.complete(p.issue(7'000), 7'010);
  p.finish();
  EXPECT_EQ(p.scheduler_delay().values, (std::vector<std::int64_t>{0, 0, 4'000, 3'001, 2'002, 1'003, 4, 0}));
  EXPECT_EQ(p.service().values, (std::vector<std::int64_t>{10, 10, 10, 10, 10, 10, 10, 10}));
  EXPECT_EQ(p.response().values, (std::vector<std::int64_t>{10, 10, 4'010, 3'011, 2'012, 1'013, 14, 10}));
  // Late = delay >= one period (1000 ticks): calls 2, 3, 4 and 5.
  EXPECT_EQ(p.late(), 4u);
}

TEST(Pacer, a_full_window_delays_issue_and_the_delay_is_recorded) {
  Pacer p(3, us_clock(1000, /*window=*/1), Unit::kNanoseconds);
  p.start(0);
  EXPECT_EQ(p.issue(0), 0u);
  EXPECT_TRUE(p.window_full());
  EXPECT_FALSE(p.due(1'500)) << "call 1 is planned but the window is full";
  p.complete(0, 2'500);  // a slow reply
  EXPECT_TRUE(p.due(2'500));
  EXPECT_EQ(p.issue(2'500), 1u);
  p.complete(1, 2'600);
  EXPECT_EQ(p.issue(2'600), 2u);
  p.complete(2, 2'700);
  p.finish();
  EXPECT_EQ(p.scheduler_delay().values, (std::vector<std::int64_t>{0, 1'500, 600}));
  EXPECT_EQ(p.response().values, (std::vector<std::int64_t>{2'500, 1'600, 700}));
  EXPECT_EQ(p.max_in_flight(), 1u);
  EXPECT_EQ(p.late(), 1u);
}

TEST(Pacer, achieved_rate_is_completed_calls_over_measured_wall_time) {
  Pacer p(4, us_clock(), Unit::kNanoseconds);
  p.start(1'000);
  for (std::uint64_t i = 0; i < 4; ++i) {
    const std::int64_t t = p.planned(i);
    p.complete(p.issue(t), t + 100);
  }
  p.finish();
  // Completed 4 calls between t0 = 1000 and the last completion 4100 (3100 us).
  EXPECT_EQ(p.wall_ticks(), 3'100);
  EXPECT_NEAR(p.achieved_rate(), 4 / 3100e-6, 1e-6);
  EXPECT_EQ(p.completed(), 4u);
}

TEST(Pacer, out_of_order_completions_keep_series_in_planned_order) {
  Pacer p(3, us_clock(1000, 8), Unit::kNanoseconds);
  p.start(0);
  p.issue(0);
  p.issue(1'000);
  p.issue(2'000);
  EXPECT_EQ(p.in_flight(), 3u);
  EXPECT_EQ(p.max_in_flight(), 3u);
  p.complete(2, 2'050);
  p.complete(0, 2'100);
  p.complete(1, 2'200);
  p.complete(1, 2'300);  // twice: an error, not a sample
  p.finish();
  EXPECT_EQ(p.errors(), 1u);
  EXPECT_EQ(p.service().values, (std::vector<std::int64_t>{2'100, 1'200, 50}));
}

TEST(Pacer, sheds_overdue_calls_when_asked_and_counts_them) {
  PacerSettings s = us_clock(1000, 64);
  s.shed_after = 1'500;
  Pacer p(6, s, Unit::kNanoseconds);
  p.start(0);
  p.complete(p.issue(0), 10);
  // Stalled until 4000: calls 1 (planned 1000) and 2 (2000) are more than
  // 1500 late and are shed; call 3 (3000) is 1000 late and still issued.
  EXPECT_EQ(p.shed_overdue(4'000), 2u);
  EXPECT_EQ(p.next(), 3u);
  p.complete(p.issue(4'000), 4'010);
  p.complete(p.issue(4'000), 4'020);
  p.complete(p.issue(5'000), 5'010);
  EXPECT_TRUE(p.done());
  p.finish();
  EXPECT_EQ(p.shed(), 2u);
  EXPECT_EQ(p.shed_indices(), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(p.completed(), 4u);
  EXPECT_EQ(p.scheduler_delay().values, (std::vector<std::int64_t>{0, 1'000, 0, 0}));
  EXPECT_EQ(p.scheduler_delay().time, (std::vector<std::int64_t>{0, 3'000, 4'000, 5'000}));
}

TEST(Pacer, without_a_shed_policy_nothing_is_shed) {
  Pacer p(3, us_clock(), Unit::kNanoseconds);
  p.start(0);
  EXPECT_EQ(p.shed_overdue(1'000'000), 0u);
  EXPECT_EQ(p.next(), 0u);
  EXPECT_EQ(p.until_next(0), 0);
}

TEST(Pacer, issue_and_complete_do_not_allocate) {
  Pacer p(1'000, us_clock(1000, 64), Unit::kTscTicks);
  p.start(0);
  const hft::test::AllocationScope scope;
  for (std::uint64_t i = 0; i < 1'000; ++i) {
    const std::int64_t t = p.planned(i);
    p.complete(p.issue(t + 1), t + 5);
  }
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_EQ(p.completed(), 1'000u);
}

TEST(Pacer, until_next_reports_the_wait_to_the_next_planned_arrival) {
  Pacer p(2, us_clock(), Unit::kNanoseconds);
  p.start(100);
  EXPECT_EQ(p.until_next(40), 60);
  p.issue(100);
  EXPECT_EQ(p.until_next(300), 800);
  p.issue(1'100);
  EXPECT_EQ(p.until_next(2'000), -1);
}

}  // namespace
}  // namespace hft::lab
