// HdrHistogram interval logs (.hlog) of a raw series, for HdrHistogram's
// tools (HistogramLogAnalyzer, HistogramLogProcessor, HdrHistogram_c's
// hdr_log_read, ...). Written after a run from the raw series, never on the
// hot path; the report's numbers come from the raw series, not from these.
//
// Text format (HdrHistogram's interval log, version 1.3):
//
//   #[Histogram log format version 1.3]
//   #[StartTime: 1764686400.123 (seconds since epoch), Tue Dec 02 14:40:00 UTC 2026]
//   #[BaseTime: 1764686400.123 (seconds since epoch)]
//   #[hft-lab series rtt, values in nanoseconds, 1 s intervals of the measured phase, 3 significant digits]
//   "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//   0.000,1.000,0.127,HISTFAAAA...
//
// StartTimestamp: seconds since the start of the measured phase (relative
// to BaseTime, the run's start by the wall clock); Interval_Length in
// seconds; Interval_Max the interval's true maximum in milliseconds (values
// are nanoseconds; HdrHistogram's tools divide by 1e6 by default); all three
// with 3 decimals. Interval k holds the samples whose time column (call
// start or planned arrival) falls in [k, k+1) s; every interval up to the
// last sample is written, an interval without samples as an empty
// histogram. A series without a time column is one interval.
//
// Histogram: lowest discernible value 1 ns, highest trackable
// kHlogHighestNs (or the series' maximum if larger), 3 significant digits.
// A negative sample (a scheduler delay of a call issued early) is recorded
// as 0 and counted in a comment line.
//
// Compressed histogram, V2 encoding, all integers big-endian:
//
//   offset size  field
//   ------ ----  -------------------------------------------------------
//        0    4  cookie           0x1c849314 (V2 compressed)
//        4    4  length           bytes of the zlib stream that follows
//        8    n  zlib (DEFLATE) of:
//                   0    4  cookie                   0x1c849313 (V2 encoding)
//                   4    4  payload_length           bytes of counts below
//                   8    4  normalizing_index_offset 0
//                  12    4  significant_digits       3
//                  16    8  lowest_discernible_value 1
//                  24    8  highest_trackable_value
//                  32    8  conversion ratio         IEEE double 1.0
//                  40    p  counts: ZigZag LEB128 (at most 9 bytes each); a
//                           negative number -k stands for k zero counts;
//                           up to the bucket of the maximum
//
// then base64 (RFC 4648, with padding) on the line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/lab/series.hpp"

namespace hft::lab {

inline constexpr int kHlogSignificantDigits = 3;
inline constexpr std::int64_t kHlogHighestNs = 3'600'000'000'000;  ///< one hour

/// HdrHistogram's bucket layout for (lowest, highest, significant digits):
/// which counts index a value falls in, and back.
struct HdrLayout {
  std::int64_t lowest = 1;
  std::int64_t highest = kHlogHighestNs;
  int significant_digits = kHlogSignificantDigits;
  int unit_magnitude = 0;
  int sub_bucket_half_count_magnitude = 0;
  std::int64_t sub_bucket_count = 0;
  std::int64_t sub_bucket_half_count = 0;
  std::int64_t sub_bucket_mask = 0;
  int bucket_count = 0;
  std::int64_t counts_len = 0;

  /// Layout of HdrHistogram's hdr_init / Java's Histogram for these
  /// parameters (lowest >= 1, highest >= 2 * lowest, digits 1..5).
  [[nodiscard]] static Expected<HdrLayout> make(std::int64_t lowest, std::int64_t highest, int significant_digits);
  /// Counts index of `value` (0 <= value <= highest).
  [[nodiscard]] std::int64_t index_of(std::int64_t value) const noexcept;
  /// Lowest value that falls in counts index `index`.
  [[nodiscard]] std::int64_t value_at(std::int64_t index) const noexcept;
};

/// One interval of an interval log.
struct HlogInterval {
  double start_s = 0;     ///< since the start of the measured phase
  double length_s = 0;
  double max_ms = 0;      ///< true maximum of the interval's samples, ms
  std::int64_t highest = kHlogHighestNs;
  int significant_digits = kHlogSignificantDigits;
  std::vector<std::int64_t> counts;  ///< by counts index, up to the last non-zero
  [[nodiscard]] std::uint64_t total() const noexcept;
};

/// An interval log as read back.
struct Hlog {
  double start_time_s = 0;  ///< #[StartTime: ...], seconds since the epoch
  double base_time_s = 0;   ///< #[BaseTime: ...]
  std::vector<HlogInterval> intervals;
};

/// The intervals `series` gives (see the file comment). `untimed_length_s`
/// is the interval length of a series without a time column (its run's
/// measured wall time). `negative` (if given) gets the negative samples.
[[nodiscard]] Expected<std::vector<HlogInterval>> hlog_intervals(const Series& series, double untimed_length_s,
                                                                std::uint64_t* negative = nullptr);

/// Writes `series` as an interval log; `start_epoch_s` goes in StartTime
/// and BaseTime. Error names the path.
[[nodiscard]] Expected<void> write_hlog(const std::filesystem::path& path, const Series& series,
                                        double start_epoch_s, double untimed_length_s);

/// Reads an interval log (lines of this format; Tag= lines are refused).
/// Errors name the path and line.
[[nodiscard]] Expected<Hlog> read_hlog(const std::filesystem::path& path);

/// Base64 of the compressed V2 encoding of one interval's histogram.
[[nodiscard]] Expected<std::string> encode_histogram(const HlogInterval& interval);
/// Decodes what encode_histogram (or HdrHistogram) wrote into counts,
/// highest and significant digits of `out`.
[[nodiscard]] Expected<void> decode_histogram(std::string_view base64, HlogInterval& out);

}  // namespace hft::lab
