#include "hft/lab/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace hft::lab {

double Stats::quantile(std::string_view label) const noexcept {
  for (std::size_t q = 0; q < kQuantiles.size(); ++q) {
    if (kQuantiles[q].label == label) return quantile_ns[q];
  }
  return std::numeric_limits<double>::quiet_NaN();
}

double Summary::quantile(std::string_view label) const noexcept {
  for (std::size_t q = 0; q < kQuantiles.size(); ++q) {
    if (kQuantiles[q].label == label) return median_quantile_ns[q];
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::int64_t quantile_sorted(std::span<const std::int64_t> sorted, std::uint32_t ppm) noexcept {
  return sorted[nearest_rank(ppm, sorted.size()) - 1];
}

namespace {

Stats stats_from(std::span<const std::int64_t> values, std::span<const std::int64_t> sorted,
                 double ns_per_unit) {
  Stats s;
  s.count = values.size();
  if (values.empty()) return s;
  s.min_ns = static_cast<double>(sorted.front()) * ns_per_unit;
  s.max_ns = static_cast<double>(sorted.back()) * ns_per_unit;
  // long double holds every int64 sum below 2^64 exactly, far beyond any run.
  long double sum = 0;
  std::size_t max_index = 0;
  for (std::size_t k = 0; k < values.size(); ++k) {
    sum += static_cast<long double>(values[k]);
    if (values[k] > values[max_index]) max_index = k;
  }
  s.max_index = max_index;
  s.mean_ns = static_cast<double>(sum / static_cast<long double>(values.size())) * ns_per_unit;
  for (std::size_t q = 0; q < kQuantiles.size(); ++q) {
    s.quantile_ns[q] = static_cast<double>(quantile_sorted(sorted, kQuantiles[q].ppm)) * ns_per_unit;
  }
  // Thresholds compare in ns; each sample is converted the same way as the
  // reported values so a call shown as 100.000 us is counted as >= 100 us.
  for (std::size_t k = 0; k < values.size(); ++k) {
    const double ns = static_cast<double>(values[k]) * ns_per_unit;
    if (ns < static_cast<double>(kLongCallThresholdsNs[0])) continue;
    for (std::size_t t = 0; t < kLongCallThresholdsNs.size(); ++t) {
      if (ns >= static_cast<double>(kLongCallThresholdsNs[t])) s.long_indices[t].push_back(k);
    }
  }
  return s;
}

std::vector<std::int64_t> sorted_copy(std::span<const std::int64_t> values) {
  std::vector<std::int64_t> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

}  // namespace

Stats compute_stats(std::span<const std::int64_t> values, double ns_per_unit) {
  const std::vector<std::int64_t> sorted = sorted_copy(values);
  return stats_from(values, sorted, ns_per_unit);
}

Stats compute_stats(const Series& series) { return compute_stats(series.values, series.ns_per_unit()); }

std::vector<CurvePoint> percentile_curve(std::span<const std::int64_t> sorted, double ns_per_unit,
                                         int points_per_decade) {
  std::vector<CurvePoint> curve;
  if (sorted.empty()) return curve;
  const double n = static_cast<double>(sorted.size());
  const double top = std::log10(n);
  const int steps = static_cast<int>(std::floor(top * points_per_decade));
  std::uint64_t last_rank = 0;
  for (int k = 0; k <= steps; ++k) {
    const double x = static_cast<double>(k) / points_per_decade;
    const double p = 1.0 - std::pow(10.0, -x);
    // Exact rank from p in ppm would lose resolution beyond p99.9999; the
    // plot uses the real-valued nearest rank instead (the table does not).
    auto rank = static_cast<std::uint64_t>(std::ceil(p * n - 1e-9));
    if (rank < 1) rank = 1;
    if (rank > sorted.size()) rank = sorted.size();
    if (rank == last_rank && k != 0) continue;
    last_rank = rank;
    curve.push_back({p, static_cast<double>(sorted[rank - 1]) * ns_per_unit});
  }
  const double p_max = sorted.size() > 1 ? 1.0 - 1.0 / n : 0.0;
  if (curve.empty() || curve.back().p < p_max || sorted.size() == 1) {
    curve.push_back({p_max, static_cast<double>(sorted.back()) * ns_per_unit});
  } else {
    curve.back().value_ns = static_cast<double>(sorted.back()) * ns_per_unit;
  }
  return curve;
}

Analysis analyze(const Series& series, std::size_t max_points) {
  Analysis a;
  const double npu = series.ns_per_unit();
  const std::vector<std::int64_t> sorted = sorted_copy(series.values);
  a.stats = stats_from(series.values, sorted, npu);
  a.curve = percentile_curve(sorted, npu);
  if (series.values.empty()) return a;

  const double p999 = a.stats.quantile("p99.9");
  a.long_threshold_ns = std::min(static_cast<double>(kLongCallThresholdsNs[0]), p999);
  std::vector<std::uint64_t> picked;
  for (std::size_t k = 0; k < series.values.size(); ++k) {
    if (static_cast<double>(series.values[k]) * npu >= a.long_threshold_ns) picked.push_back(k);
  }
  if (picked.size() > max_points) {
    // Keep the largest, drawn in time order: the plot is about the tail.
    std::nth_element(picked.begin(), picked.begin() + static_cast<std::ptrdiff_t>(max_points), picked.end(),
                     [&](std::uint64_t x, std::uint64_t y) { return series.values[x] > series.values[y]; });
    picked.resize(max_points);
    std::sort(picked.begin(), picked.end());
    a.long_threshold_ns = static_cast<double>(series.values[*std::min_element(
                              picked.begin(), picked.end(),
                              [&](std::uint64_t x, std::uint64_t y) { return series.values[x] < series.values[y]; })]) *
                          npu;
  }
  a.time_from_index = series.time.empty();
  a.long_points.reserve(picked.size());
  for (const std::uint64_t k : picked) {
    const double t = series.time.empty() ? static_cast<double>(k)
                                         : static_cast<double>(series.time[k]) * npu * 1e-9;
    a.long_points.push_back({k, t, static_cast<double>(series.values[k]) * npu});
  }
  return a;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  if (n % 2 == 1) return values[n / 2];
  return (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

Summary summarize(std::span<const Stats> runs) {
  Summary s;
  s.runs = runs.size();
  if (runs.empty()) return s;
  auto collect = [&](auto get) {
    std::vector<double> v;
    v.reserve(runs.size());
    for (const Stats& r : runs) v.push_back(get(r));
    return median(std::move(v));
  };
  s.median_min_ns = collect([](const Stats& r) { return r.min_ns; });
  s.median_mean_ns = collect([](const Stats& r) { return r.mean_ns; });
  for (std::size_t q = 0; q < kQuantiles.size(); ++q) {
    s.median_quantile_ns[q] = collect([q](const Stats& r) { return r.quantile_ns[q]; });
  }
  for (std::size_t t = 0; t < kLongCallThresholdsNs.size(); ++t) {
    s.long_median[t] = collect([t](const Stats& r) { return static_cast<double>(r.long_count(t)); });
  }
  for (std::size_t k = 0; k < runs.size(); ++k) {
    s.total_count += runs[k].count;
    if (k == 0 || runs[k].max_ns > s.largest_max_ns) {
      s.largest_max_ns = runs[k].max_ns;
      s.largest_max_run = k;
    }
    for (std::size_t t = 0; t < kLongCallThresholdsNs.size(); ++t) s.long_total[t] += runs[k].long_count(t);
  }
  return s;
}

}  // namespace hft::lab
