// Clocks. Three domains, never mixed (LAB.md rule 5):
//  - TSC ticks (rdtsc), converted with a frequency calibrated against
//    CLOCK_MONOTONIC_RAW at start;
//  - CLOCK_MONOTONIC_RAW nanoseconds, for intervals and timeouts;
//  - CLOCK_REALTIME nanoseconds since the Unix epoch, for SendingTime and logs.
#pragma once

#include <cstdint>
#include <ctime>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace hft::core {

/// Reads the time-stamp counter. Not serialising: cheap, for intervals.
[[nodiscard]] inline std::uint64_t rdtsc() noexcept {
#if defined(__x86_64__)
  return __rdtsc();
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
#endif
}

/// Reads the time-stamp counter between two lfence instructions, so that the
/// read neither drifts into nor out of the code it brackets (a timed sample
/// covers exactly the calls between two reads).
[[nodiscard]] inline std::uint64_t rdtsc_fenced() noexcept {
#if defined(__x86_64__)
  _mm_lfence();
  const std::uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
#else
  return rdtsc();
#endif
}

/// Nanoseconds of CLOCK_MONOTONIC_RAW.
[[nodiscard]] inline std::int64_t monotonic_raw_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

/// Nanoseconds of CLOCK_MONOTONIC (vDSO-fast, same rate as REALTIME).
[[nodiscard]] inline std::int64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

/// Nanoseconds since the Unix epoch (CLOCK_REALTIME).
[[nodiscard]] inline std::int64_t realtime_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

/// TSC frequency calibrated against CLOCK_MONOTONIC_RAW.
class TscClock {
 public:
  /// Calibrates over `window_ns` of MONOTONIC_RAW (spinning). 20 ms gives
  /// better than 0.01% on an invariant TSC.
  static TscClock calibrate(std::int64_t window_ns = 20'000'000) noexcept;

  /// Ticks per nanosecond.
  [[nodiscard]] double ticks_per_ns() const noexcept { return ticks_per_ns_; }
  /// Frequency in Hz.
  [[nodiscard]] double hz() const noexcept { return ticks_per_ns_ * 1e9; }
  /// Converts a tick difference to nanoseconds.
  [[nodiscard]] double to_ns(std::uint64_t ticks) const noexcept {
    return static_cast<double>(ticks) / ticks_per_ns_;
  }
  /// Converts nanoseconds to ticks.
  [[nodiscard]] std::uint64_t to_ticks(double ns) const noexcept {
    return static_cast<std::uint64_t>(ns * ticks_per_ns_);
  }

  explicit TscClock(double ticks_per_ns) noexcept : ticks_per_ns_(ticks_per_ns) {}

 private:
  double ticks_per_ns_;
};

}  // namespace hft::core
