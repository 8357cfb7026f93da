// Exact statistics of a raw series, and the summary across runs.
//
// Quantile method: nearest rank. For n samples sorted ascending
// x(1) <= ... <= x(n), the p-quantile is x(r) with r = ceil(p * n), and
// r = 1 when that is 0. p is held as an integer in parts per million so that
// r is computed exactly ((ppm * n + 999999) / 1000000), never through a
// floating-point product that lands a hair above an integer. The quantile is
// therefore always one of the measured values; nothing is interpolated.
// With n = 1000: p50 = x(500), p99.9 = x(999), p99.99 = x(1000) = max.
//
// Across runs (rule 4) nothing is pooled: each statistic of the summary is
// the median of that statistic over the runs (the mean of the two middle
// values when the number of runs is even), except the maximum, which is the
// largest actual maximum, and the long-call counts, which are totals.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "hft/lab/series.hpp"

namespace hft::lab {

/// A reported quantile: its label and p in parts per million.
struct QuantileSpec {
  std::string_view label;  ///< "p50", "p99.9", ...
  std::uint32_t ppm;       ///< p * 1e6
};

/// The quantiles every report carries, in this order.
inline constexpr std::array<QuantileSpec, 6> kQuantiles{{
    {"p50", 500'000},
    {"p90", 900'000},
    {"p95", 950'000},
    {"p99", 990'000},
    {"p99.9", 999'000},
    {"p99.99", 999'900},
}};

/// Long-call thresholds (rule 3): calls at or above these are counted and
/// their indices kept.
inline constexpr std::array<std::int64_t, 3> kLongCallThresholdsNs{100'000, 1'000'000, 10'000'000};
inline constexpr std::array<std::string_view, 3> kLongCallLabels{">=100us", ">=1ms", ">=10ms"};

/// 1-based nearest rank of the ppm-quantile among n samples (n > 0).
[[nodiscard]] constexpr std::uint64_t nearest_rank(std::uint32_t ppm, std::uint64_t n) noexcept {
  const std::uint64_t r = (static_cast<std::uint64_t>(ppm) * n + 999'999ULL) / 1'000'000ULL;
  return r == 0 ? 1 : (r > n ? n : r);
}

/// Statistics of one run's series. All times in nanoseconds (converted from
/// the series' unit with its own clock frequency).
struct Stats {
  std::uint64_t count = 0;
  double min_ns = 0;
  double max_ns = 0;          ///< the true maximum
  std::uint64_t max_index = 0;  ///< index of the (first) maximum in the series
  double mean_ns = 0;
  std::array<double, kQuantiles.size()> quantile_ns{};  ///< in kQuantiles order
  /// Indices (positions in the series, ascending) of the calls at or above
  /// each of kLongCallThresholdsNs.
  std::array<std::vector<std::uint64_t>, kLongCallThresholdsNs.size()> long_indices;

  /// The quantile with this label ("p99"); NaN if not a reported label.
  [[nodiscard]] double quantile(std::string_view label) const noexcept;
  [[nodiscard]] std::uint64_t long_count(std::size_t threshold) const noexcept {
    return long_indices[threshold].size();
  }
};

/// Computes Stats of `values` (in units of `ns_per_unit` nanoseconds).
/// Sorts a copy; `values` is left as it is. An empty series gives count 0.
[[nodiscard]] Stats compute_stats(std::span<const std::int64_t> values, double ns_per_unit);
/// Same for a Series.
[[nodiscard]] Stats compute_stats(const Series& series);

/// The ppm-quantile of an ascending-sorted, non-empty sample (nearest rank).
[[nodiscard]] std::int64_t quantile_sorted(std::span<const std::int64_t> sorted, std::uint32_t ppm) noexcept;

/// One point of a percentile curve: p, and the nearest-rank value at p.
struct CurvePoint {
  double p;         ///< in [0, 1)
  double value_ns;
};

/// Percentile curve for a plot on a log 1/(1-p) axis: points at
/// 1/(1-p) = 10^(k / points_per_decade) up to n, then the true maximum as
/// the last point (drawn at 1/(1-p) = n, i.e. p = 1 - 1/n).
[[nodiscard]] std::vector<CurvePoint> percentile_curve(std::span<const std::int64_t> sorted,
                                                       double ns_per_unit,
                                                       int points_per_decade = 20);

/// A call drawn on the "long calls over time" plot.
struct LongPoint {
  std::uint64_t index;
  double time_s;     ///< start offset in seconds (index-based if the series has no time)
  double value_ns;
};

/// Everything a report needs from one series, computed with one sort.
struct Analysis {
  Stats stats;
  std::vector<CurvePoint> curve;
  /// Calls at or above min(100 us, p99.9), the largest `max_points` of them,
  /// in index order; `long_threshold_ns` is the threshold used.
  std::vector<LongPoint> long_points;
  double long_threshold_ns = 0;
  bool time_from_index = false;  ///< the series had no time column: LongPoint::time_s is the index
};

/// Analyses a series: stats, percentile curve and long-call points.
[[nodiscard]] Analysis analyze(const Series& series, std::size_t max_points = 2000);

/// Median of the values (mean of the two middle ones when even); 0 if empty.
[[nodiscard]] double median(std::vector<double> values);

/// Summary of one statistic set over several runs (rule 4).
struct Summary {
  std::size_t runs = 0;
  std::uint64_t total_count = 0;      ///< samples over all runs
  double median_min_ns = 0;
  double median_mean_ns = 0;
  std::array<double, kQuantiles.size()> median_quantile_ns{};
  double largest_max_ns = 0;          ///< the largest actual maximum of any run
  std::size_t largest_max_run = 0;    ///< position (in the input) of that run
  std::array<std::uint64_t, kLongCallThresholdsNs.size()> long_total{};  ///< summed over runs
  std::array<double, kLongCallThresholdsNs.size()> long_median{};        ///< median per run

  [[nodiscard]] double quantile(std::string_view label) const noexcept;
};

/// Summarises per-run statistics without pooling samples.
[[nodiscard]] Summary summarize(std::span<const Stats> runs);

}  // namespace hft::lab
