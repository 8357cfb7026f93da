#include "hft/core/idle.hpp"

namespace hft::core {

std::optional<IdleKind> parse_idle_kind(std::string_view name) noexcept {
  if (name == "busy-spin" || name == "busyspin" || name == "spin") return IdleKind::kBusySpin;
  if (name == "backoff") return IdleKind::kBackoff;
  if (name == "sleep") return IdleKind::kSleep;
  return std::nullopt;
}

std::string_view to_string(IdleKind kind) noexcept {
  switch (kind) {
    case IdleKind::kBusySpin: return "busy-spin";
    case IdleKind::kBackoff: return "backoff";
    case IdleKind::kSleep: return "sleep";
  }
  return "?";
}

}  // namespace hft::core
