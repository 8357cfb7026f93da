// A raw latency series and the recorder that fills it.
//
// Rule 1 of the lab (LAB.md): every measured call is kept. A Recorder owns a
// preallocated, pre-touched array of exactly `capacity` samples; it never
// grows. Warm-up calls are counted and not stored; calls after the array is
// full are counted (overflow) and not stored. Samples stay in the unit of the
// clock that produced them (nanoseconds or TSC ticks) together with that
// clock's frequency, so a conversion is always explicit and durations from
// two clocks are never mixed (rule 5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hft::lab {

/// Unit of the samples of a series.
enum class Unit : std::uint8_t {
  kNanoseconds = 0,  ///< int64 nanoseconds (ticks_per_second is 1e9)
  kTscTicks = 1,     ///< int64 TSC ticks; ticks_per_second is the calibrated TSC frequency
};

/// "ns" or "tsc_ticks".
[[nodiscard]] std::string_view to_string(Unit unit) noexcept;
/// Parses the names to_string returns; false if unknown.
[[nodiscard]] bool parse_unit(std::string_view name, Unit& out) noexcept;

/// One raw series: a value per measured call, in call order.
///
/// `values[k]` is the k-th recorded call. `time`, when not empty, has the same
/// length and holds the call's start (or planned arrival, for paced series)
/// as an offset from the start of the measured phase, in the same unit and
/// clock as `values`; it is the x axis of "long calls over time".
struct Series {
  std::string name;                   ///< e.g. "rtt", "service", "scheduler_delay", "response"
  Unit unit = Unit::kNanoseconds;
  double ticks_per_second = 1e9;      ///< clock frequency of `values` and `time`
  std::vector<std::int64_t> values;
  std::vector<std::int64_t> time;     ///< empty or values.size() entries

  /// Nanoseconds per unit (1 for kNanoseconds).
  [[nodiscard]] double ns_per_unit() const noexcept { return 1e9 / ticks_per_second; }
  /// values[k] in nanoseconds.
  [[nodiscard]] double ns(std::size_t k) const noexcept {
    return static_cast<double>(values[k]) * ns_per_unit();
  }
  [[nodiscard]] std::size_t size() const noexcept { return values.size(); }
};

/// Fixed-capacity sample recorder (see the file comment).
///
/// Construction allocates and touches every page (outside any timed region);
/// record() never allocates, never throws, and never grows the array.
class Recorder {
 public:
  /// `capacity` samples are stored after `warmup` calls are skipped.
  /// `with_time` also stores a start offset per sample (Series::time).
  Recorder(std::string name, std::size_t capacity, std::uint64_t warmup, Unit unit,
           double ticks_per_second, bool with_time = false);

  /// Records one call. The first `warmup` calls only count; once `capacity`
  /// samples are stored, further calls count as overflow and are dropped.
  void record(std::int64_t value, std::int64_t time = 0) noexcept {
    if (warmup_seen_ < warmup_) {
      ++warmup_seen_;
      return;
    }
    if (size_ == series_.values.size()) {
      ++overflow_;
      return;
    }
    series_.values[size_] = value;
    if (!series_.time.empty()) series_.time[size_] = time;
    ++size_;
  }

  /// True while the next record() call is a warm-up call.
  [[nodiscard]] bool in_warmup() const noexcept { return warmup_seen_ < warmup_; }
  /// True once `capacity` samples are stored.
  [[nodiscard]] bool full() const noexcept { return size_ == series_.values.size(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return series_.values.size(); }
  [[nodiscard]] std::uint64_t warmup_seen() const noexcept { return warmup_seen_; }
  [[nodiscard]] std::uint64_t overflow() const noexcept { return overflow_; }
  /// The stored samples so far.
  [[nodiscard]] std::span<const std::int64_t> values() const noexcept {
    return {series_.values.data(), size_};
  }

  /// Hands over the stored samples (truncated to size()); the recorder is
  /// empty afterwards.
  [[nodiscard]] Series take() &&;

 private:
  Series series_;
  std::size_t size_ = 0;
  std::uint64_t warmup_;
  std::uint64_t warmup_seen_ = 0;
  std::uint64_t overflow_ = 0;
};

}  // namespace hft::lab
