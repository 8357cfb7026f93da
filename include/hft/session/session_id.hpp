// Identity of a FIX session and the routing key an acceptor derives from an
// inbound message to find the session it belongs to.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace hft::session {

/// A session is named by BeginString, our SenderCompID, our TargetCompID and
/// an optional qualifier that tells apart sessions with the same CompIDs
/// (QuickFIX's SessionQualifier). Sub and location IDs are not part of the
/// identity (as in QuickFIX).
struct SessionID {
  std::string begin_string;
  std::string sender_comp_id;
  std::string target_comp_id;
  std::string qualifier;

  /// "FIX.4.4:ISLD->TW44" (":qualifier" appended when there is one).
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const SessionID&, const SessionID&) = default;
  friend auto operator<=>(const SessionID&, const SessionID&) = default;
};

/// What an inbound message says about the session it is for, from our side:
/// its 8, its 56 (our SenderCompID) and its 49 (our TargetCompID). The views
/// point into the message text.
struct RouteKey {
  std::string_view begin_string;
  std::string_view sender_comp_id;  ///< the message's TargetCompID (56)
  std::string_view target_comp_id;  ///< the message's SenderCompID (49)
  std::string_view msg_type;        ///< 35, to tell a Logon from anything else

  /// True if the key names `id` (qualifier ignored: the wire does not carry it).
  [[nodiscard]] bool matches(const SessionID& id) const noexcept {
    return begin_string == id.begin_string && sender_comp_id == id.sender_comp_id &&
           target_comp_id == id.target_comp_id;
  }
};

/// Reads 8, 35, 49 and 56 of one framed message ("8=...^10=nnn^") with a
/// linear scan, without parsing it fully: what an acceptor needs to bind a new
/// connection to a session. Returns false if any of the four is missing or
/// empty. Never allocates.
[[nodiscard]] bool peek_route(std::string_view message, RouteKey& out) noexcept;

}  // namespace hft::session

template <>
struct std::hash<hft::session::SessionID> {
  std::size_t operator()(const hft::session::SessionID& id) const noexcept {
    const std::hash<std::string> h;
    std::size_t v = h(id.begin_string);
    v = v * 31 + h(id.sender_comp_id);
    v = v * 31 + h(id.target_comp_id);
    return v * 31 + h(id.qualifier);
  }
};
