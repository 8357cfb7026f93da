#include "hft/session/session_id.hpp"

#include "hft/codec/types.hpp"

namespace hft::session {

std::string SessionID::to_string() const {
  std::string s;
  s.reserve(begin_string.size() + sender_comp_id.size() + target_comp_id.size() + qualifier.size() + 4);
  s += begin_string;
  s += ':';
  s += sender_comp_id;
  s += "->";
  s += target_comp_id;
  if (!qualifier.empty()) {
    s += ':';
    s += qualifier;
  }
  return s;
}

bool peek_route(std::string_view message, RouteKey& out) noexcept {
  out = RouteKey{};
  std::size_t pos = 0;
  int found = 0;
  while (pos < message.size() && found < 4) {
    const std::size_t eq = message.find('=', pos);
    if (eq == std::string_view::npos) break;
    std::size_t soh = message.find(codec::kSoh, eq + 1);
    if (soh == std::string_view::npos) soh = message.size();
    const std::string_view tag = message.substr(pos, eq - pos);
    const std::string_view value = message.substr(eq + 1, soh - eq - 1);
    if (tag == "8" && out.begin_string.empty()) {
      out.begin_string = value;
      ++found;
    } else if (tag == "35" && out.msg_type.empty()) {
      out.msg_type = value;
      ++found;
    } else if (tag == "49" && out.target_comp_id.empty()) {
      out.target_comp_id = value;
      ++found;
    } else if (tag == "56" && out.sender_comp_id.empty()) {
      out.sender_comp_id = value;
      ++found;
    } else if (tag == "95" || tag == "212" || tag == "93") {
      // A data field follows whose value may hold SOH: the routing fields
      // are all in the header, before any of these, so stop here.
      break;
    }
    pos = soh + 1;
  }
  return !out.begin_string.empty() && !out.msg_type.empty() && !out.sender_comp_id.empty() &&
         !out.target_comp_id.empty();
}

}  // namespace hft::session
