// Exact statistics: nearest-rank quantiles against known data, long-call
// counting with indices, the per-run-median summary, and the recorder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "hft/lab/series.hpp"
#include "hft/lab/stats.hpp"
#include "support/alloc_counter.hpp"

namespace hft::lab {
namespace {

std::vector<std::int64_t> one_to(std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1);
  return v;
}

TEST(Stats, nearest_rank_quantiles_of_one_to_thousand_are_exact) {
  const Stats s = compute_stats(one_to(1000), 1.0);
  EXPECT_EQ(s.count, 1000u);
  EXPECT_EQ(s.quantile("p50"), 500);
  EXPECT_EQ(s.quantile("p90"), 900);
  EXPECT_EQ(s.quantile("p95"), 950);
  EXPECT_EQ(s.quantile("p99"), 990);
  EXPECT_EQ(s.quantile("p99.9"), 999);
  EXPECT_EQ(s.quantile("p99.99"), 1000);  // ceil(0.9999 * 1000) = 1000
  EXPECT_EQ(s.min_ns, 1);
  EXPECT_EQ(s.max_ns, 1000);
  EXPECT_EQ(s.max_index, 999u);
  EXPECT_DOUBLE_EQ(s.mean_ns, 500.5);
}

TEST(Stats, shuffled_input_gives_the_same_quantiles_and_keeps_the_input_order) {
  std::vector<std::int64_t> v = one_to(1000);
  std::mt19937_64 rng(42);
  std::shuffle(v.begin(), v.end(), rng);
  const std::vector<std::int64_t> before = v;
  const Stats s = compute_stats(v, 1.0);
  EXPECT_EQ(v, before) << "compute_stats must sort a copy";
  EXPECT_EQ(s.quantile("p50"), 500);
  EXPECT_EQ(s.quantile("p99.9"), 999);
  EXPECT_EQ(s.max_ns, 1000);
  const auto it = std::find(v.begin(), v.end(), 1000);
  EXPECT_EQ(s.max_index, static_cast<std::uint64_t>(it - v.begin()));
}

TEST(Stats, nearest_rank_does_not_round_up_on_exact_products) {
  // 0.999 * 1000 is 999.0000000000001 in binary floating point; the rank must
  // still be 999, and for n = 10,000 p99.99 is rank 9,999, not 10,000.
  EXPECT_EQ(nearest_rank(999'000, 1000), 999u);
  EXPECT_EQ(nearest_rank(999'900, 10'000), 9'999u);
  EXPECT_EQ(nearest_rank(500'000, 1), 1u);
  EXPECT_EQ(nearest_rank(500'000, 3), 2u);
  EXPECT_EQ(nearest_rank(0, 5), 1u);
  const Stats s = compute_stats(one_to(10'000), 1.0);
  EXPECT_EQ(s.quantile("p99.99"), 9'999);
  EXPECT_EQ(s.quantile("p99.9"), 9'990);
}

TEST(Stats, single_sample_and_empty_series) {
  const Stats one = compute_stats(std::vector<std::int64_t>{7}, 1.0);
  for (const double q : one.quantile_ns) EXPECT_EQ(q, 7);
  EXPECT_EQ(one.max_ns, 7);
  const Stats none = compute_stats(std::vector<std::int64_t>{}, 1.0);
  EXPECT_EQ(none.count, 0u);
}

TEST(Stats, tick_series_convert_with_their_own_frequency) {
  // 3 GHz: 3000 ticks = 1000 ns.
  Series s;
  s.unit = Unit::kTscTicks;
  s.ticks_per_second = 3e9;
  s.values = {3000, 6000, 300'000, 300'000'000};
  const Stats st = compute_stats(s);
  EXPECT_DOUBLE_EQ(st.min_ns, 1000);
  EXPECT_DOUBLE_EQ(st.max_ns, 100'000'000);
  EXPECT_DOUBLE_EQ(st.quantile("p50"), 2000);
  // 300,000 ticks = exactly 100 us: counted as >= 100 us.
  ASSERT_EQ(st.long_count(0), 2u);
  EXPECT_EQ(st.long_indices[0], (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(st.long_indices[2], (std::vector<std::uint64_t>{3}));
}

TEST(Stats, counts_long_calls_at_each_threshold_with_their_indices) {
  std::vector<std::int64_t> v(100, 1'000);  // 1 us calls
  v[10] = 99'999;       // just under 100 us: not long
  v[20] = 100'000;      // exactly 100 us
  v[30] = 999'999;      // >= 100 us only
  v[40] = 1'000'000;    // >= 1 ms
  v[50] = 10'000'000;   // >= 10 ms
  v[60] = 55'000'000;   // >= 10 ms
  const Stats s = compute_stats(v, 1.0);
  EXPECT_EQ(s.long_indices[0], (std::vector<std::uint64_t>{20, 30, 40, 50, 60}));
  EXPECT_EQ(s.long_indices[1], (std::vector<std::uint64_t>{40, 50, 60}));
  EXPECT_EQ(s.long_indices[2], (std::vector<std::uint64_t>{50, 60}));
  EXPECT_EQ(s.max_ns, 55'000'000);
  EXPECT_EQ(s.max_index, 60u);
}

TEST(Summary, takes_the_median_of_each_per_run_statistic_and_the_largest_max) {
  // Three runs with known per-run statistics; the summary must not pool them.
  std::vector<Stats> runs;
  for (const std::int64_t offset : {0, 100, 50}) {
    std::vector<std::int64_t> v = one_to(1000);
    for (auto& x : v) x += offset;
    runs.push_back(compute_stats(v, 1.0));
  }
  runs[1].max_ns = 5e6;  // a stall in the second run only
  runs[1].long_indices[1] = {7};
  const Summary s = summarize(runs);
  EXPECT_EQ(s.runs, 3u);
  EXPECT_EQ(s.total_count, 3000u);
  EXPECT_DOUBLE_EQ(s.quantile("p50"), 550);  // median of 500, 600, 550
  EXPECT_DOUBLE_EQ(s.quantile("p99"), 1040);
  EXPECT_DOUBLE_EQ(s.median_mean_ns, 550.5);
  EXPECT_DOUBLE_EQ(s.largest_max_ns, 5e6);
  EXPECT_EQ(s.largest_max_run, 1u);
  EXPECT_EQ(s.long_total[1], 1u);
  EXPECT_DOUBLE_EQ(s.long_median[1], 0);
}

TEST(Summary, median_of_an_even_number_of_runs_is_the_mean_of_the_middle_two) {
  EXPECT_DOUBLE_EQ(median({659, 650}), 654.5);  // the seed records' two-run medians
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
  std::vector<Stats> runs{compute_stats(std::vector<std::int64_t>{659}, 1.0),
                          compute_stats(std::vector<std::int64_t>{650}, 1.0)};
  const Summary s = summarize(runs);
  EXPECT_DOUBLE_EQ(s.quantile("p50"), 654.5);
  EXPECT_DOUBLE_EQ(s.largest_max_ns, 659);
}

TEST(Analysis, percentile_curve_starts_at_the_minimum_and_ends_at_the_true_maximum) {
  Series s;
  s.values = one_to(1000);
  s.values[123] = 777'777;
  const Analysis a = analyze(s);
  ASSERT_FALSE(a.curve.empty());
  EXPECT_EQ(a.curve.front().p, 0.0);
  EXPECT_EQ(a.curve.front().value_ns, 1);
  EXPECT_EQ(a.curve.back().value_ns, 777'777);
  EXPECT_NEAR(a.curve.back().p, 0.999, 1e-12);
  for (std::size_t k = 1; k < a.curve.size(); ++k) {
    EXPECT_GT(a.curve[k].p, a.curve[k - 1].p);
    EXPECT_GE(a.curve[k].value_ns, a.curve[k - 1].value_ns);
  }
  // Long points: min(100 us, p99.9) = 999 ns here, so the top two calls.
  EXPECT_TRUE(a.time_from_index);
  ASSERT_EQ(a.long_points.size(), 2u);
  EXPECT_EQ(a.long_points[0].index, 123u);
  EXPECT_EQ(a.long_points[0].value_ns, 777'777);
}

TEST(Recorder, skips_warmup_counts_overflow_and_never_grows) {
  Recorder r("rtt", 5, 3, Unit::kNanoseconds, 1e9, /*with_time=*/true);
  const std::int64_t* data = r.values().data();
  for (std::int64_t i = 0; i < 10; ++i) r.record(100 + i, i);
  EXPECT_EQ(r.warmup_seen(), 3u);
  EXPECT_EQ(r.size(), 5u);
  EXPECT_TRUE(r.full());
  EXPECT_EQ(r.overflow(), 2u);
  EXPECT_EQ(r.values().data(), data) << "the sample array must never be reallocated";
  EXPECT_EQ(std::vector<std::int64_t>(r.values().begin(), r.values().end()),
            (std::vector<std::int64_t>{103, 104, 105, 106, 107}));
  const Series s = std::move(r).take();
  EXPECT_EQ(s.values.size(), 5u);
  EXPECT_EQ(s.time, (std::vector<std::int64_t>{3, 4, 5, 6, 7}));
  EXPECT_EQ(s.name, "rtt");
}

TEST(Recorder, record_does_not_allocate) {
  Recorder r("rtt", 10'000, 100, Unit::kTscTicks, 3e9, true);
  const hft::test::AllocationScope scope;
  for (std::int64_t i = 0; i < 20'000; ++i) r.record(i, i);
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_EQ(r.size(), 10'000u);
  EXPECT_EQ(r.overflow(), 9'900u);
}

TEST(Recorder, take_truncates_to_the_recorded_samples) {
  Recorder r("x", 100, 0, Unit::kNanoseconds, 1e9);
  r.record(5);
  r.record(6);
  const Series s = std::move(r).take();
  EXPECT_EQ(s.values, (std::vector<std::int64_t>{5, 6}));
  EXPECT_TRUE(s.time.empty());
}

}  // namespace
}  // namespace hft::lab
