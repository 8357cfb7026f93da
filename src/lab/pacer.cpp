#include "hft/lab/pacer.hpp"

#include <cmath>
#include <utility>

namespace hft::lab {

namespace {

Series make_series(const char* name, std::size_t calls, Unit unit, double ticks_per_second, std::int64_t fill) {
  Series s;
  s.name = name;
  s.unit = unit;
  s.ticks_per_second = ticks_per_second;
  s.values.assign(calls, fill);  // touches every page before measuring
  s.time.assign(calls, 0);
  return s;
}

}  // namespace

Pacer::Pacer(std::size_t calls, const PacerSettings& settings, Unit unit)
    : settings_(settings),
      calls_(calls),
      ticks_per_call_(settings.ticks_per_second / settings.rate_per_s),
      delay_(make_series("scheduler_delay", calls, unit, settings.ticks_per_second, kNotIssued)),
      service_(make_series("service", calls, unit, settings.ticks_per_second, 0)),
      response_(make_series("response", calls, unit, settings.ticks_per_second, 0)) {
  if (settings_.window == 0) settings_.window = 1;
  if (settings_.shed_after >= 0) shed_indices_.reserve(calls);
}

void Pacer::start(std::int64_t t0) noexcept {
  t0_ = t0;
  last_completion_ = t0;
}

std::int64_t Pacer::planned(std::uint64_t i) const noexcept {
  // From i every time: no accumulated rounding, and no way to re-anchor.
  return t0_ + static_cast<std::int64_t>(std::llround(static_cast<double>(i) * ticks_per_call_));
}

std::int64_t Pacer::period() const noexcept {
  return static_cast<std::int64_t>(std::llround(ticks_per_call_));
}

std::int64_t Pacer::late_threshold() const noexcept {
  return settings_.late_threshold >= 0 ? settings_.late_threshold : period();
}

std::int64_t Pacer::until_next(std::int64_t now) const noexcept {
  if (next_ >= calls_) return -1;
  const std::int64_t d = planned(next_) - now;
  return d > 0 ? d : 0;
}

std::uint64_t Pacer::shed_overdue(std::int64_t now) noexcept {
  if (settings_.shed_after < 0) return 0;
  std::uint64_t n = 0;
  while (next_ < calls_ && now - planned(next_) > settings_.shed_after) {
    delay_.values[next_] = kShed;
    shed_indices_.push_back(next_);  // reserved in the constructor
    ++shed_;
    ++next_;
    ++n;
  }
  return n;
}

std::uint64_t Pacer::issue(std::int64_t issue_time) noexcept {
  const std::uint64_t i = next_++;
  const std::int64_t delay = issue_time - planned(i);
  delay_.values[i] = delay;
  if (delay >= late_threshold()) ++late_;
  ++issued_;
  const std::uint32_t flying = in_flight();
  if (flying > max_in_flight_) max_in_flight_ = flying;
  return i;
}

void Pacer::complete(std::uint64_t i, std::int64_t completion_time) noexcept {
  if (i >= next_ || delay_.values[i] == kNotIssued || delay_.values[i] == kShed ||
      delay_.time[i] != 0 /* marks "completed" until finish() */) {
    ++errors_;
    return;
  }
  const std::int64_t planned_at = planned(i);
  const std::int64_t issued_at = planned_at + delay_.values[i];
  service_.values[i] = completion_time - issued_at;
  response_.values[i] = completion_time - planned_at;
  delay_.time[i] = 1;
  ++completed_;
  if (completion_time > last_completion_) last_completion_ = completion_time;
}

void Pacer::finish() noexcept {
  if (finished_) return;
  finished_ = true;
  // Compact: keep completed calls in planned order. Issued-but-never-completed
  // calls (a run aborted early) and shed calls have no service or response.
  std::size_t out = 0;
  for (std::uint64_t i = 0; i < calls_; ++i) {
    if (delay_.time[i] == 0) continue;
    const std::int64_t offset = planned(i) - t0_;
    delay_.values[out] = delay_.values[i];
    service_.values[out] = service_.values[i];
    response_.values[out] = response_.values[i];
    delay_.time[out] = offset;
    service_.time[out] = offset;
    response_.time[out] = offset;
    ++out;
  }
  for (Series* s : {&delay_, &service_, &response_}) {
    s->values.resize(out);
    s->time.resize(out);
  }
}

double Pacer::achieved_rate() const noexcept {
  const std::int64_t wall = wall_ticks();
  if (wall <= 0) return 0;
  return static_cast<double>(completed_) * settings_.ticks_per_second / static_cast<double>(wall);
}

std::vector<Series> Pacer::take_series() && {
  finish();
  std::vector<Series> out;
  out.push_back(std::move(service_));
  out.push_back(std::move(response_));
  out.push_back(std::move(delay_));
  return out;
}

}  // namespace hft::lab
