#include "hft/session/schedule.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

namespace hft::session {
namespace {

constexpr std::int64_t kDay = 86400;
constexpr std::int64_t kNsPerSecond = 1'000'000'000;

std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Days since 1970-01-01 of a civil date (proleptic Gregorian).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
  y -= m <= 2;
  const std::int64_t era = floor_div(y, 400);
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::int64_t year_of_days(std::int64_t z) noexcept {
  z += 719468;
  const std::int64_t era = floor_div(z, 146097);
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return y + (m <= 2);
}

bool is_leap(std::int64_t y) noexcept { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned month_days(std::int64_t y, unsigned m) noexcept {
  static constexpr unsigned kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

std::uint32_t be32(const unsigned char* p) noexcept {
  return (static_cast<std::uint32_t>(p[0]) << 24) | (static_cast<std::uint32_t>(p[1]) << 16) |
         (static_cast<std::uint32_t>(p[2]) << 8) | p[3];
}
std::int64_t be64(const unsigned char* p) noexcept {
  return static_cast<std::int64_t>((static_cast<std::uint64_t>(be32(p)) << 32) | be32(p + 4));
}

// POSIX TZ pieces. Each parser advances `s` and returns false on error.
bool parse_name(std::string_view& s) noexcept {
  if (!s.empty() && s.front() == '<') {
    const auto close = s.find('>');
    if (close == std::string_view::npos) return false;
    s.remove_prefix(close + 1);
    return true;
  }
  std::size_t n = 0;
  while (n < s.size() && std::isalpha(static_cast<unsigned char>(s[n]))) ++n;
  if (n < 3) return false;
  s.remove_prefix(n);
  return true;
}

bool parse_number(std::string_view& s, int& out) noexcept {
  std::size_t n = 0;
  int v = 0;
  while (n < s.size() && n < 4 && std::isdigit(static_cast<unsigned char>(s[n]))) {
    v = v * 10 + (s[n] - '0');
    ++n;
  }
  if (n == 0) return false;
  s.remove_prefix(n);
  out = v;
  return true;
}

// [+-]hh[:mm[:ss]] -> seconds (sign as written).
bool parse_hms(std::string_view& s, std::int32_t& out) noexcept {
  int sign = 1;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    if (s.front() == '-') sign = -1;
    s.remove_prefix(1);
  }
  int h = 0, m = 0, sec = 0;
  if (!parse_number(s, h) || h > 167) return false;
  if (!s.empty() && s.front() == ':') {
    s.remove_prefix(1);
    if (!parse_number(s, m) || m > 59) return false;
    if (!s.empty() && s.front() == ':') {
      s.remove_prefix(1);
      if (!parse_number(s, sec) || sec > 59) return false;
    }
  }
  out = sign * (h * 3600 + m * 60 + sec);
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------
// TimeZone

bool TimeZone::parse_posix(std::string_view s, Rule& out) noexcept {
  Rule r;
  if (!parse_name(s)) return false;
  std::int32_t off = 0;
  if (!parse_hms(s, off)) return false;
  r.std_offset = -off;  // POSIX offsets count west of Greenwich
  if (s.empty()) {
    r.valid = true;
    out = r;
    return true;
  }
  if (!parse_name(s)) return false;
  r.has_dst = true;
  r.dst_offset = r.std_offset + 3600;
  if (!s.empty() && s.front() != ',') {
    if (!parse_hms(s, off)) return false;
    r.dst_offset = -off;
  }
  if (s.empty()) {
    // No rule: the POSIX default (US rules since 2007).
    r.start = {'M', 3, 2, 0, 0, 7200};
    r.end = {'M', 11, 1, 0, 0, 7200};
    r.valid = true;
    out = r;
    return true;
  }
  auto parse_date = [&s](Rule::Date& d) {
    if (s.empty() || s.front() != ',') return false;
    s.remove_prefix(1);
    if (s.empty()) return false;
    if (s.front() == 'M') {
      s.remove_prefix(1);
      d.kind = 'M';
      if (!parse_number(s, d.month) || d.month < 1 || d.month > 12) return false;
      if (s.empty() || s.front() != '.') return false;
      s.remove_prefix(1);
      if (!parse_number(s, d.week) || d.week < 1 || d.week > 5) return false;
      if (s.empty() || s.front() != '.') return false;
      s.remove_prefix(1);
      if (!parse_number(s, d.weekday) || d.weekday > 6) return false;
    } else if (s.front() == 'J') {
      s.remove_prefix(1);
      d.kind = 'J';
      if (!parse_number(s, d.day) || d.day < 1 || d.day > 365) return false;
    } else {
      d.kind = 'D';
      if (!parse_number(s, d.day) || d.day > 365) return false;
    }
    d.time = 7200;
    if (!s.empty() && s.front() == '/') {
      s.remove_prefix(1);
      if (!parse_hms(s, d.time)) return false;
    }
    return true;
  };
  if (!parse_date(r.start) || !parse_date(r.end) || !s.empty()) return false;
  r.valid = true;
  out = r;
  return true;
}

namespace {
// Local seconds (as if UTC) at which `date` falls in `year`, time included.
std::int64_t rule_local_time(std::int64_t year, char kind, int month, int week, int weekday,
                             int day, std::int32_t time) noexcept {
  std::int64_t days = 0;
  if (kind == 'M') {
    const std::int64_t first = days_from_civil(year, static_cast<unsigned>(month), 1);
    const int first_wday = static_cast<int>(((first % 7) + 11) % 7);  // 1970-01-01 is a Thursday (4)
    int dom = 1 + ((weekday - first_wday + 7) % 7) + (week - 1) * 7;
    while (dom > static_cast<int>(month_days(year, static_cast<unsigned>(month)))) dom -= 7;
    days = first + dom - 1;
  } else if (kind == 'J') {
    days = days_from_civil(year, 1, 1) + day - 1 + (is_leap(year) && day >= 60 ? 1 : 0);
  } else {
    days = days_from_civil(year, 1, 1) + day;
  }
  return days * kDay + time;
}
}  // namespace

std::int32_t TimeZone::rule_offset(std::int64_t utc_s) const noexcept {
  if (!rule_.has_dst) return rule_.std_offset;
  const std::int64_t year = year_of_days(floor_div(utc_s + rule_.std_offset, kDay));
  const auto& a = rule_.start;
  const auto& b = rule_.end;
  // DST starts at a local standard time and ends at a local daylight time.
  const std::int64_t start =
      rule_local_time(year, a.kind, a.month, a.week, a.weekday, a.day, a.time) - rule_.std_offset;
  const std::int64_t end =
      rule_local_time(year, b.kind, b.month, b.week, b.weekday, b.day, b.time) - rule_.dst_offset;
  const bool dst = start < end ? (utc_s >= start && utc_s < end) : !(utc_s >= end && utc_s < start);
  return dst ? rule_.dst_offset : rule_.std_offset;
}

std::int32_t TimeZone::offset_at(std::int64_t utc_s) const noexcept {
  if (transitions_.empty()) return rule_.valid ? rule_offset(utc_s) : initial_offset_;
  if (utc_s < transitions_.front()) return initial_offset_;
  if (utc_s >= transitions_.back() && rule_.valid) {
    return rule_offset(utc_s);
  }
  const auto it = std::upper_bound(transitions_.begin(), transitions_.end(), utc_s);
  return offsets_[static_cast<std::size_t>(it - transitions_.begin()) - 1];
}

std::int64_t TimeZone::to_utc(std::int64_t local_s) const noexcept {
  // Transitions are far apart, so the offsets a day either side are the two
  // candidates around any transition.
  const std::int32_t before = offset_at(local_s - kDay);
  const std::int32_t after = offset_at(local_s + kDay);
  const std::int64_t ua = local_s - before;
  const std::int64_t ub = local_s - after;
  const bool va = offset_at(ua) == before;
  const bool vb = offset_at(ub) == after;
  if (va && vb) return std::min(ua, ub);
  if (vb) return ub;
  return ua;  // valid, or skipped by a forward transition: keep the old offset
}

Expected<TimeZone> TimeZone::from_posix(std::string_view rule) {
  TimeZone tz;
  if (!parse_posix(rule, tz.rule_)) {
    return Error{"invalid POSIX TZ rule '" + std::string(rule) + "'"};
  }
  tz.name_ = std::string(rule);
  tz.initial_offset_ = tz.rule_.std_offset;
  return tz;
}

Expected<TimeZone> TimeZone::parse(std::string_view data, const std::string& name) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const std::size_t size = data.size();
  auto bad = [&name](const char* what) { return Error{name + ": " + what}; };
  if (size < 44 || data.substr(0, 4) != "TZif") return bad("not a TZif file (no 'TZif' magic)");
  const char version = data[4];

  struct Counts {
    std::uint32_t isut, isstd, leap, time, type, chars;
  };
  auto read_counts = [&](std::size_t at, Counts& c) {
    if (at + 44 > size) return false;
    const unsigned char* h = p + at + 20;
    c = {be32(h), be32(h + 4), be32(h + 8), be32(h + 12), be32(h + 16), be32(h + 20)};
    return true;
  };
  Counts c{};
  read_counts(0, c);
  auto block_size = [](const Counts& k, std::size_t time_size) {
    return k.time * time_size + k.time + k.type * 6 + k.chars + k.leap * (time_size + 4) + k.isstd +
           k.isut;
  };
  std::size_t at = 44;
  std::size_t time_size = 4;
  if (version >= '2') {
    at += block_size(c, 4);
    if (!read_counts(at, c)) return bad("truncated (second header)");
    at += 44;
    time_size = 8;
  }
  if (at + block_size(c, time_size) > size) return bad("truncated (data block)");
  if (c.type == 0) return bad("no local time types");

  TimeZone tz;
  tz.name_ = name;
  const unsigned char* times = p + at;
  const unsigned char* idx = times + c.time * time_size;
  const unsigned char* types = idx + c.time;
  auto type_offset = [&](std::size_t i) { return static_cast<std::int32_t>(be32(types + i * 6)); };
  tz.initial_offset_ = type_offset(0);
  tz.transitions_.reserve(c.time);
  tz.offsets_.reserve(c.time);
  for (std::uint32_t i = 0; i < c.time; ++i) {
    const std::int64_t t = time_size == 8 ? be64(times + i * 8)
                                          : static_cast<std::int32_t>(be32(times + i * 4));
    if (idx[i] >= c.type) return bad("transition names an undefined local time type");
    tz.transitions_.push_back(t);
    tz.offsets_.push_back(type_offset(idx[i]));
  }
  at += block_size(c, time_size);
  if (version >= '2' && at < size && data[at] == '\n') {
    const auto end = data.find('\n', at + 1);
    if (end != std::string_view::npos && end > at + 1) {
      if (!parse_posix(data.substr(at + 1, end - at - 1), tz.rule_)) {
        return bad("unreadable POSIX TZ footer");
      }
    }
  }
  return tz;
}

Expected<TimeZone> TimeZone::load(std::string_view name) {
  if (name.empty() || name == "UTC" || name == "GMT" || name == "Etc/UTC" || name == "Z") {
    return TimeZone{};
  }
  if (name.find("..") != std::string_view::npos || name.front() == '/') {
    return Error{"time zone '" + std::string(name) + "': not a TZ database name"};
  }
  const char* dir = std::getenv("TZDIR");
  const std::string path = std::string(dir && *dir ? dir : "/usr/share/zoneinfo") + "/" + std::string(name);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open time zone file"};
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto tz = parse(bytes, path);
  if (tz) tz->name_ = std::string(name);
  return tz;
}

// ---------------------------------------------------------------------------
// Parsing helpers

bool parse_weekday(std::string_view text, Weekday& out) noexcept {
  static constexpr std::string_view kNames[7] = {"sunday",   "monday", "tuesday", "wednesday",
                                                 "thursday", "friday", "saturday"};
  if (text.size() < 2) return false;
  int found = -1;
  for (int d = 0; d < 7; ++d) {
    const auto n = kNames[d];
    if (text.size() > n.size()) continue;
    bool match = true;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(text[i])) != n[i]) {
        match = false;
        break;
      }
    }
    if (match) {
      if (found >= 0) return false;  // ambiguous prefix ("t", "s")
      found = d;
    }
  }
  if (found < 0) return false;
  out = static_cast<Weekday>(found);
  return true;
}

bool parse_time_of_day(std::string_view text, std::int32_t& seconds) noexcept {
  int h = 0, m = 0, s = 0;
  auto two = [&text](int& v) {
    if (text.size() < 2 || !std::isdigit(static_cast<unsigned char>(text[0])) ||
        !std::isdigit(static_cast<unsigned char>(text[1]))) {
      return false;
    }
    v = (text[0] - '0') * 10 + (text[1] - '0');
    text.remove_prefix(2);
    return true;
  };
  if (!two(h) || text.empty() || text.front() != ':') return false;
  text.remove_prefix(1);
  if (!two(m)) return false;
  if (!text.empty()) {
    if (text.front() != ':') return false;
    text.remove_prefix(1);
    if (!two(s) || !text.empty()) return false;
  }
  if (h > 23 || m > 59 || s > 59) return false;
  seconds = h * 3600 + m * 60 + s;
  return true;
}

// ---------------------------------------------------------------------------
// Schedule

Expected<Schedule> Schedule::daily(std::string_view start_time, std::string_view end_time,
                                   TimeZone zone) {
  Schedule s;
  s.kind_ = Kind::kDaily;
  if (!parse_time_of_day(start_time, s.start_time_)) {
    return Error{"StartTime '" + std::string(start_time) + "': expected HH:MM:SS"};
  }
  if (!parse_time_of_day(end_time, s.end_time_)) {
    return Error{"EndTime '" + std::string(end_time) + "': expected HH:MM:SS"};
  }
  s.zone_ = std::move(zone);
  return s;
}

Expected<Schedule> Schedule::weekly(std::string_view start_day, std::string_view start_time,
                                    std::string_view end_day, std::string_view end_time,
                                    TimeZone zone) {
  auto base = daily(start_time, end_time, std::move(zone));
  if (!base) return base;
  Schedule s = std::move(*base);
  Weekday d{};
  if (!parse_weekday(start_day, d)) return Error{"StartDay '" + std::string(start_day) + "': not a day name"};
  s.start_day_ = static_cast<std::int8_t>(d);
  if (!parse_weekday(end_day, d)) return Error{"EndDay '" + std::string(end_day) + "': not a day name"};
  s.end_day_ = static_cast<std::int8_t>(d);
  s.kind_ = Kind::kWeekly;
  return s;
}

bool Schedule::is_open(std::int64_t utc_ns) const noexcept {
  if (kind_ == Kind::kAlways) return true;
  const std::int64_t utc_s = floor_div(utc_ns, kNsPerSecond);
  const std::int64_t local = utc_s + zone_.offset_at(utc_s);
  const std::int64_t days = floor_div(local, kDay);
  const std::int64_t tod = local - days * kDay;
  std::int64_t t = tod, start = start_time_, end = end_time_;
  if (kind_ == Kind::kWeekly) {
    const std::int64_t wday = ((days % 7) + 11) % 7;
    t += wday * kDay;
    start += start_day_ * kDay;
    end += end_day_ * kDay;
  }
  if (start < end) return t >= start && t <= end;
  return t >= start || t <= end;  // wraps midnight / the week end; equal: always open
}

std::int64_t Schedule::period_start(std::int64_t utc_ns) const noexcept {
  if (kind_ == Kind::kAlways) return 0;
  const std::int64_t utc_s = floor_div(utc_ns, kNsPerSecond);
  const std::int64_t local = utc_s + zone_.offset_at(utc_s);
  const std::int64_t days = floor_div(local, kDay);
  const std::int64_t tod = local - days * kDay;
  std::int64_t start_local = 0;
  if (kind_ == Kind::kDaily) {
    start_local = (tod >= start_time_ ? days : days - 1) * kDay + start_time_;
  } else {
    const std::int64_t wday = ((days % 7) + 11) % 7;
    const std::int64_t week_begin = (days - wday) * kDay;
    const std::int64_t t = wday * kDay + tod;
    const std::int64_t start_w = start_day_ * kDay + start_time_;
    start_local = (t >= start_w ? week_begin : week_begin - 7 * kDay) + start_w;
  }
  return zone_.to_utc(start_local) * kNsPerSecond;
}

bool Schedule::same_period(std::int64_t a, std::int64_t b) const noexcept {
  if (kind_ == Kind::kAlways) return true;
  return is_open(a) && is_open(b) && period_start(a) == period_start(b);
}

}  // namespace hft::session
