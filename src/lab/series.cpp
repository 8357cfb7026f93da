#include "hft/lab/series.hpp"

#include <utility>

namespace hft::lab {

std::string_view to_string(Unit unit) noexcept {
  switch (unit) {
    case Unit::kNanoseconds: return "ns";
    case Unit::kTscTicks: return "tsc_ticks";
  }
  return "?";
}

bool parse_unit(std::string_view name, Unit& out) noexcept {
  if (name == "ns") {
    out = Unit::kNanoseconds;
    return true;
  }
  if (name == "tsc_ticks") {
    out = Unit::kTscTicks;
    return true;
  }
  return false;
}

Recorder::Recorder(std::string name, std::size_t capacity, std::uint64_t warmup, Unit unit,
                   double ticks_per_second, bool with_time)
    : warmup_(warmup) {
  series_.name = std::move(name);
  series_.unit = unit;
  series_.ticks_per_second = ticks_per_second;
  // Value-initialisation writes every element, so every page is faulted in
  // here and not on the first record() of each page during measurement.
  series_.values.assign(capacity, 0);
  if (with_time) series_.time.assign(capacity, 0);
}

Series Recorder::take() && {
  series_.values.resize(size_);
  if (!series_.time.empty()) series_.time.resize(size_);
  Series out = std::move(series_);
  series_ = Series{};
  size_ = 0;
  return out;
}

}  // namespace hft::lab
