// The timed thread's own operating-system counters, sampled after every
// call (docs/lab.md, "Event trace and attribution"): context switches
// (voluntary and involuntary) and page faults (minor and major) from
// getrusage(RUSAGE_THREAD). A sample that differs from the previous one
// records the window between them (TSC stamps, from just after the previous
// sample to this one) and the differences, in an
// array preallocated at construction; a full array counts what it drops.
//
// Each sample is one system call, made between calls, never inside a timed
// region; it is a control (--os-counters) because it still runs on the
// timed thread between its calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hft/lab/events.hpp"

namespace hft::lab {

class ThreadCounterSampler {
 public:
  /// Room for `capacity` windows with a change (allocated and touched now).
  explicit ThreadCounterSampler(std::size_t capacity);

  /// Takes the baseline on the calling thread at TSC `now`.
  void start(std::uint64_t now) noexcept;
  /// Samples on the calling thread (the one start() ran on) at TSC `now`.
  void sample(std::uint64_t now) noexcept;

  /// The windows with a change as "os" events (one per counter that
  /// changed, `a` = the difference), their stamps made offsets from
  /// `origin` (TSC), named after `thread`.
  [[nodiscard]] std::vector<RunEvent> events(std::uint64_t origin, const std::string& thread) const;
  /// Windows with a change that found the array full.
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_; }
  /// Samples taken (start excluded).
  [[nodiscard]] std::uint64_t samples() const noexcept { return samples_; }

 private:
  struct Counters {
    std::uint64_t involuntary = 0, voluntary = 0, minor = 0, major = 0;
  };
  struct Window {
    std::uint64_t begin = 0, end = 0;
    Counters delta;
  };
  static Counters read() noexcept;

  std::vector<Window> windows_;
  std::size_t size_ = 0;
  Counters last_;
  std::uint64_t last_tsc_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t samples_ = 0;
};

}  // namespace hft::lab
