#include "hft/lab/lane.hpp"

#include <algorithm>
#include <utility>

#include "hft/lab/engine_adapter.hpp"
#include "hft/lab/floor_lane.hpp"
#include "hft/lab/pacer.hpp"

namespace hft::lab {

std::string_view to_string(AuditResult::Status status) noexcept {
  switch (status) {
    case AuditResult::Status::kNotRun: return "not-run";
    case AuditResult::Status::kNotApplicable: return "not-applicable";
    case AuditResult::Status::kPass: return "pass";
    case AuditResult::Status::kFail: return "fail";
  }
  return "?";
}

Lane placeholder_lane(std::string name, std::string summary) {
  Lane lane;
  lane.name = std::move(name);
  lane.summary = std::move(summary);
  lane.available = false;
  return lane;
}

LaneRegistry::LaneRegistry() {
  add(make_floor_lane());
  add(placeholder_lane("tx", "build + encode + journal + send() return of a NewOrderSingle, per call"));
  add(placeholder_lane("rtt", "NewOrderSingle -> ExecutionReport round trip against hft-venue"));
  add(placeholder_lane("rx", "N clients stream orders into one hft-venue thread; messages/s and ns/message"));
  add(placeholder_lane("codec", "encode, parse, parse+validate of one message, no I/O"));
}

LaneRegistry& LaneRegistry::instance() {
  static LaneRegistry registry;
  return registry;
}

void LaneRegistry::add(Lane lane) {
  for (Lane& existing : lanes_) {
    if (existing.name == lane.name) {
      existing = std::move(lane);
      return;
    }
  }
  lanes_.push_back(std::move(lane));
}

const Lane* LaneRegistry::find(std::string_view name) const {
  for (const Lane& lane : lanes_) {
    if (lane.name == name) return &lane;
  }
  return nullptr;
}

std::vector<std::string> LaneRegistry::names() const {
  std::vector<std::string> out;
  for (const Lane& lane : lanes_) out.push_back(lane.name);
  return out;
}

std::vector<std::string> LaneRegistry::available_names() const {
  std::vector<std::string> out;
  for (const Lane& lane : lanes_) {
    if (lane.available) out.push_back(lane.name);
  }
  return out;
}

LaneRegistrar::LaneRegistrar(Lane (*factory)()) { LaneRegistry::instance().add(factory()); }

EngineRegistry::EngineRegistry() {
  add(EngineInfo{"libhft", false, {}, {}, {}});
  add(EngineInfo{"quickfix", false, {}, {}, "install libquickfix-dev and configure with -DHFT_QUICKFIX=ON"});
  add(EngineInfo{"llfix", false, {}, {},
                 "configure with -DHFT_LLFIX_DIR=<llfix source tree> (e.g. $PWD/../shared/third_party/llfix)"});
}

EngineRegistry& EngineRegistry::instance() {
  static EngineRegistry registry;
  return registry;
}

void EngineRegistry::add(EngineInfo engine) {
  for (EngineInfo& existing : engines_) {
    if (existing.name == engine.name) {
      existing = std::move(engine);
      return;
    }
  }
  engines_.push_back(std::move(engine));
}

const EngineInfo* EngineRegistry::find(std::string_view name) const {
  for (const EngineInfo& e : engines_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::vector<std::string> EngineRegistry::names() const {
  std::vector<std::string> out;
  for (const EngineInfo& e : engines_) out.push_back(e.name);
  return out;
}

EngineRegistrar::EngineRegistrar(EngineInfo (*factory)()) { EngineRegistry::instance().add(factory()); }

void take_pacer_result(Pacer&& pacer, RunResult& out) {
  const PacerSettings& ps = pacer.settings();
  out.completed = pacer.completed();
  out.target_rate = ps.rate_per_s;
  out.achieved_rate = pacer.achieved_rate();
  out.wall_seconds = static_cast<double>(pacer.wall_ticks()) / ps.ticks_per_second;
  out.late = pacer.late();
  out.late_threshold_ns = static_cast<double>(pacer.late_threshold()) * 1e9 / ps.ticks_per_second;
  out.shed = pacer.shed();
  out.shed_indices = pacer.shed_indices();
  out.window = ps.window;
  out.max_in_flight = pacer.max_in_flight();
  out.series = std::move(pacer).take_series();
}

}  // namespace hft::lab
