// Open-loop pacing with explicit coordinated omission (LAB.md rules 6 and 7).
//
// Call i (0-based, measured calls only) is planned to arrive at
//
//     planned(i) = t0 + round(i * ticks_per_second / rate)
//
// computed from i every time (no accumulated increments, no drift). The
// schedule is fixed when start(t0) is called and is never moved: after a
// stall, the calls that follow show the accumulated delay instead of being
// re-planned from "now". For each call the pacer keeps three series in the
// clock's unit:
//
//   scheduler_delay = actual issue - planned     (time the call waited to go out)
//   service         = completion - actual issue  (what a closed loop would see)
//   response        = completion - planned       (what a client arriving on
//                                                  schedule experiences)
//
// At most `window` calls are in flight; a call whose planned time has passed
// while the window is full simply waits (its scheduler delay grows). A call
// is late when its scheduler delay reaches `late_threshold`; with a shed
// policy, a call that would be later than `shed_after` is not issued at all
// and is counted as shed, with its index kept. Achieved rate is completed
// calls divided by the measured wall time (t0 to the last completion).
//
// The pacer reads no clock: the caller passes every timestamp, so one clock
// domain is used throughout and tests drive it with a fake clock. Storage for
// every series is allocated in the constructor; issue() and complete() do not
// allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hft/lab/series.hpp"

namespace hft::lab {

/// Pacer parameters. Times are in the caller's clock ticks.
struct PacerSettings {
  double rate_per_s = 50'000;       ///< target arrivals per second (> 0)
  double ticks_per_second = 1e9;    ///< frequency of the caller's clock
  std::uint32_t window = 64;        ///< calls in flight at most (>= 1)
  /// Scheduler delay at or above which a call counts as late; < 0 means one
  /// inter-arrival period.
  std::int64_t late_threshold = -1;
  /// If >= 0, a call not issued within this many ticks of its planned time is
  /// shed (never issued) instead of issued late. < 0: never shed (default).
  std::int64_t shed_after = -1;
};

/// The paced schedule and its per-call records. See the file comment.
class Pacer {
 public:
  /// Preallocates the series for `calls` measured calls.
  Pacer(std::size_t calls, const PacerSettings& settings, Unit unit);

  /// Fixes the schedule: planned(0) = t0.
  void start(std::int64_t t0) noexcept;

  /// Planned arrival of call i.
  [[nodiscard]] std::int64_t planned(std::uint64_t i) const noexcept;
  /// Index of the next call to issue (== calls() when all were issued or shed).
  [[nodiscard]] std::uint64_t next() const noexcept { return next_; }
  [[nodiscard]] std::uint64_t calls() const noexcept { return calls_; }
  [[nodiscard]] std::uint32_t in_flight() const noexcept {
    return static_cast<std::uint32_t>(issued_ - completed_);
  }
  [[nodiscard]] bool window_full() const noexcept { return in_flight() >= settings_.window; }
  /// True when the next call may be issued at `now`: it exists, its planned
  /// time has come and the window has room.
  [[nodiscard]] bool due(std::int64_t now) const noexcept {
    return next_ < calls_ && now >= planned(next_) && !window_full();
  }
  /// Ticks from `now` until the next planned arrival (0 if already due, or
  /// -1 if every call has been issued).
  [[nodiscard]] std::int64_t until_next(std::int64_t now) const noexcept;

  /// With a shed policy: sheds every call whose planned time is more than
  /// shed_after before `now` and is not issued yet. Returns how many were
  /// shed by this call. Without a shed policy, does nothing.
  std::uint64_t shed_overdue(std::int64_t now) noexcept;

  /// Marks call next() as issued at `issue_time` and returns its index.
  /// Precondition: next() < calls() and the window is not full.
  std::uint64_t issue(std::int64_t issue_time) noexcept;

  /// Marks issued call i complete at `completion_time`. Completing a call
  /// twice or one not issued is counted as an error (see errors()), not stored.
  void complete(std::uint64_t i, std::int64_t completion_time) noexcept;

  /// True when every call was issued or shed and every issued call completed.
  [[nodiscard]] bool done() const noexcept {
    return next_ == calls_ && completed_ == issued_;
  }

  /// Ends the measured phase. The series are final afterwards.
  void finish() noexcept;

  [[nodiscard]] std::uint64_t issued() const noexcept { return issued_; }
  [[nodiscard]] std::uint64_t completed() const noexcept { return completed_; }
  [[nodiscard]] std::uint64_t late() const noexcept { return late_; }
  [[nodiscard]] std::uint64_t shed() const noexcept { return shed_; }
  [[nodiscard]] std::uint64_t errors() const noexcept { return errors_; }
  [[nodiscard]] std::uint32_t max_in_flight() const noexcept { return max_in_flight_; }
  /// Planned indices of the shed calls, ascending.
  [[nodiscard]] const std::vector<std::uint64_t>& shed_indices() const noexcept { return shed_indices_; }
  [[nodiscard]] std::int64_t period() const noexcept;
  [[nodiscard]] std::int64_t late_threshold() const noexcept;
  [[nodiscard]] std::int64_t start_time() const noexcept { return t0_; }
  /// Time of the last completion (t0 if none).
  [[nodiscard]] std::int64_t last_completion() const noexcept { return last_completion_; }
  /// Measured wall time in ticks: t0 to the last completion.
  [[nodiscard]] std::int64_t wall_ticks() const noexcept { return last_completion_ - t0_; }
  /// completed / wall time, in calls per second (0 if no wall time).
  [[nodiscard]] double achieved_rate() const noexcept;
  [[nodiscard]] const PacerSettings& settings() const noexcept { return settings_; }

  /// The three series, one entry per completed call in planned-index order
  /// (shed calls are left out; see shed_indices()). Series::time holds each
  /// call's planned arrival relative to t0. Valid after finish().
  [[nodiscard]] const Series& scheduler_delay() const noexcept { return delay_; }
  [[nodiscard]] const Series& service() const noexcept { return service_; }
  [[nodiscard]] const Series& response() const noexcept { return response_; }
  /// Moves the three series out, in the order service, response, scheduler_delay.
  [[nodiscard]] std::vector<Series> take_series() &&;

 private:
  static constexpr std::int64_t kNotIssued = INT64_MIN;
  static constexpr std::int64_t kShed = INT64_MIN + 1;

  PacerSettings settings_;
  std::uint64_t calls_;
  double ticks_per_call_;
  std::int64_t t0_ = 0;
  std::uint64_t next_ = 0;
  std::uint64_t issued_ = 0;
  std::uint64_t completed_ = 0;
  std::uint64_t late_ = 0;
  std::uint64_t shed_ = 0;
  std::uint64_t errors_ = 0;
  std::uint32_t max_in_flight_ = 0;
  std::int64_t last_completion_ = 0;
  bool finished_ = false;
  // Indexed by planned call index until finish(), then compacted.
  Series delay_;
  Series service_;
  Series response_;
  std::vector<std::uint64_t> shed_indices_;
};

}  // namespace hft::lab
