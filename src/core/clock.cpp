#include "hft/core/clock.hpp"

namespace hft::core {

TscClock TscClock::calibrate(std::int64_t window_ns) noexcept {
  // Take the best of three windows: the one least disturbed by preemption
  // between the paired reads gives the tightest bracket.
  double best = 0;
  std::int64_t best_bracket = INT64_MAX;
  for (int round = 0; round < 3; ++round) {
    const std::int64_t a0 = monotonic_raw_ns();
    const std::uint64_t t0 = rdtsc();
    const std::int64_t a1 = monotonic_raw_ns();
    std::int64_t b0;
    std::uint64_t t1;
    std::int64_t b1;
    do {
      b0 = monotonic_raw_ns();
      t1 = rdtsc();
      b1 = monotonic_raw_ns();
    } while (b0 - a1 < window_ns);
    const std::int64_t bracket = (a1 - a0) + (b1 - b0);
    const double ns = static_cast<double>((b0 + b1) / 2 - (a0 + a1) / 2);
    if (bracket < best_bracket && ns > 0) {
      best_bracket = bracket;
      best = static_cast<double>(t1 - t0) / ns;
    }
  }
  if (best <= 0) best = 1.0;
  return TscClock(best);
}

}  // namespace hft::core
