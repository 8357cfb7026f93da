// Session schedules: when a session may be logged on, and when one session
// period ends and the next begins (sequence numbers reset between periods).
// Times of day are wall-clock times in a time zone read from the TZ
// database (TZif files under /usr/share/zoneinfo, or $TZDIR).
//
// Loading is a start-up path (allocates, reports errors as values); the
// queries are noexcept and allocation-free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hft/core/expected.hpp"

namespace hft::session {

/// A time zone: UTC offsets over time, from a TZif file (transitions plus the
/// POSIX rule in its footer for instants after the last transition).
class TimeZone {
 public:
  /// UTC (offset 0, no transitions).
  TimeZone() = default;

  /// Loads "UTC", "Europe/London", "America/New_York", ... from the TZ
  /// database directory ($TZDIR, else /usr/share/zoneinfo). An empty name or
  /// "UTC" gives UTC without reading a file. Errors name the file and problem.
  static Expected<TimeZone> load(std::string_view name);
  /// Parses TZif bytes (`name` stands for the file in error messages).
  static Expected<TimeZone> parse(std::string_view tzif, const std::string& name);
  /// Builds a zone from a POSIX TZ rule such as "EST5EDT,M3.2.0,M11.1.0".
  static Expected<TimeZone> from_posix(std::string_view rule);

  /// Offset from UTC, in seconds, at the UTC instant `utc_s` (seconds since
  /// the Unix epoch). East of Greenwich is positive.
  [[nodiscard]] std::int32_t offset_at(std::int64_t utc_s) const noexcept;
  /// UTC instant of a local wall time (`local_s`: the local date and time
  /// counted as if they were UTC seconds since the epoch). A time skipped by
  /// a forward transition maps as if the old offset still applied (02:30 on
  /// a spring-forward night becomes 03:30 local); an ambiguous time maps to
  /// its first occurrence.
  [[nodiscard]] std::int64_t to_utc(std::int64_t local_s) const noexcept;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  struct Rule {  // POSIX TZ footer rule
    bool valid = false;
    bool has_dst = false;
    std::int32_t std_offset = 0;  // seconds east of UTC
    std::int32_t dst_offset = 0;
    // Transition dates: kind 'M' (month, week, weekday), 'J' (Julian day
    // 1..365, no leap day) or 'D' (zero-based day 0..365); plus the local
    // time of day (seconds, may be negative or > 24h).
    struct Date {
      char kind = 'M';
      int month = 0, week = 0, weekday = 0, day = 0;
      std::int32_t time = 7200;
    } start, end;
  };
  [[nodiscard]] std::int32_t rule_offset(std::int64_t utc_s) const noexcept;
  static bool parse_posix(std::string_view text, Rule& out) noexcept;

  std::string name_ = "UTC";
  std::vector<std::int64_t> transitions_;  // UTC seconds, ascending
  std::vector<std::int32_t> offsets_;      // offset in force from transitions_[i]
  std::int32_t initial_offset_ = 0;        // before the first transition
  Rule rule_;
};

/// Weekday numbers as QuickFIX's StartDay/EndDay use them after parsing.
enum class Weekday : std::int8_t {
  kSunday = 0, kMonday, kTuesday, kWednesday, kThursday, kFriday, kSaturday,
};

/// Parses "Sunday"/"sun"/"Su"... (case-insensitive, any unambiguous prefix of
/// at least two letters). False if not a day name.
[[nodiscard]] bool parse_weekday(std::string_view text, Weekday& out) noexcept;
/// Parses "HH:MM:SS" (or "HH:MM") into seconds of the day. False if malformed.
[[nodiscard]] bool parse_time_of_day(std::string_view text, std::int32_t& seconds) noexcept;

/// When a session is open. The default is always open, one endless period.
///
/// Daily: open from start_time to end_time every day (if end <= start the
/// session runs overnight: 17:00 -> 16:00 closes one hour a day; end == start
/// is open all day, with a new period starting at start_time each day).
/// Weekly: open from (start_day, start_time) to (end_day, end_time) once a
/// week. Times are wall-clock times in the schedule's time zone.
class Schedule {
 public:
  Schedule() = default;

  [[nodiscard]] static Schedule always_open() noexcept { return Schedule{}; }
  /// Daily schedule. Times "HH:MM:SS". Errors name the bad value.
  static Expected<Schedule> daily(std::string_view start_time, std::string_view end_time,
                                  TimeZone zone = {});
  /// Weekly schedule. Days as parse_weekday() accepts.
  static Expected<Schedule> weekly(std::string_view start_day, std::string_view start_time,
                                   std::string_view end_day, std::string_view end_time,
                                   TimeZone zone = {});

  [[nodiscard]] bool is_always_open() const noexcept { return kind_ == Kind::kAlways; }

  /// True if the session may be logged on at `utc_ns`.
  [[nodiscard]] bool is_open(std::int64_t utc_ns) const noexcept;
  /// Start (UTC ns) of the period that contains `utc_ns`, or of the last
  /// period that began before it when the schedule is closed. 0 for always open.
  [[nodiscard]] std::int64_t period_start(std::int64_t utc_ns) const noexcept;
  /// True if both instants are open and in the same period (QuickFIX's
  /// TimeRange::isInSameRange): sequence numbers carry over between them.
  [[nodiscard]] bool same_period(std::int64_t a_utc_ns, std::int64_t b_utc_ns) const noexcept;

  [[nodiscard]] const TimeZone& zone() const noexcept { return zone_; }

 private:
  enum class Kind : std::uint8_t { kAlways, kDaily, kWeekly };
  Kind kind_ = Kind::kAlways;
  std::int32_t start_time_ = 0;  // seconds of the local day
  std::int32_t end_time_ = 0;
  std::int8_t start_day_ = 0;    // weekly only
  std::int8_t end_day_ = 0;
  TimeZone zone_;
};

}  // namespace hft::session
