// The application's side of a session, in the spirit of QuickFIX's
// Application, with decisions returned as values instead of thrown
// (QuickFIX's RejectLogon, DoNotSend, FieldNotFound, IncorrectTagValue,
// UnsupportedMessageType exceptions).
//
// Every callback runs on the session's thread, inside Session::on_bytes /
// on_timer / on_connected / on_disconnected or a send. A callback may send
// application messages on the same session (an echo, an execution report):
// the session is re-entrant for sends, not for on_bytes/on_timer.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "hft/codec/types.hpp"
#include "hft/session/session_id.hpp"

namespace hft::session {

class Session;
enum class SendStatus : std::int8_t;  // session.hpp

/// BusinessRejectReason (380) values.
enum class BusinessRejectReason : std::int16_t {
  kOther = 0,
  kUnknownId = 1,
  kUnknownSecurity = 2,
  kUnsupportedMessageType = 3,
  kApplicationNotAvailable = 4,
  kConditionallyRequiredFieldMissing = 5,
  kNotAuthorized = 6,
  kDeliverToFirmNotAvailable = 7,
};

/// QuickFIX's Text (58) for a business reject reason ("Unsupported Message Type", ...).
[[nodiscard]] std::string_view business_reject_text(BusinessRejectReason reason) noexcept;

/// What the session does with an inbound message after the application saw it,
/// or with an outbound one before it leaves. Texts are views: they must stay
/// valid until the callback's caller is done (static strings, or storage the
/// application owns).
struct Decision {
  enum class Kind : std::uint8_t {
    kAccept,          ///< process normally (and, outbound, send)
    kReject,          ///< session-level Reject (35=3) with reason, RefTagID, Text
    kBusinessReject,  ///< BusinessMessageReject (35=j); a Reject with Text before FIX 4.2
    kRejectLogon,     ///< Logon only: answer with Logout(Text) and disconnect
    kLogout,          ///< accept the message, then start a Logout with Text
    kDisconnect,      ///< drop the connection without a word
    kDoNotSend,       ///< outbound only: do not send (replays gap-fill over it)
  };

  Kind kind = Kind::kAccept;
  std::int16_t reason = 0;  ///< codec::RejectReason or BusinessRejectReason
  std::int32_t ref_tag = 0; ///< RefTagID (371) for Reject; named in Text for BusinessReject
  std::string_view text;    ///< empty: the standard text of `reason`

  [[nodiscard]] static constexpr Decision accept() noexcept { return {}; }
  /// Session-level Reject, e.g. reject(RejectReason::kValueIncorrect, 44).
  [[nodiscard]] static constexpr Decision reject(codec::RejectReason r, std::int32_t tag = 0,
                                                 std::string_view text = {}) noexcept {
    return {Kind::kReject, static_cast<std::int16_t>(r), tag, text};
  }
  [[nodiscard]] static constexpr Decision business_reject(BusinessRejectReason r, std::int32_t tag = 0,
                                                          std::string_view text = {}) noexcept {
    return {Kind::kBusinessReject, static_cast<std::int16_t>(r), tag, text};
  }
  /// QuickFIX's UnsupportedMessageType: BusinessMessageReject 380=3 (FIX 4.2+),
  /// Reject "Unsupported message type" before.
  [[nodiscard]] static constexpr Decision unsupported_message_type() noexcept {
    return business_reject(BusinessRejectReason::kUnsupportedMessageType);
  }
  [[nodiscard]] static constexpr Decision reject_logon(std::string_view text) noexcept {
    return {Kind::kRejectLogon, 0, 0, text};
  }
  [[nodiscard]] static constexpr Decision logout(std::string_view text = {}) noexcept {
    return {Kind::kLogout, 0, 0, text};
  }
  [[nodiscard]] static constexpr Decision disconnect() noexcept { return {Kind::kDisconnect, 0, 0, {}}; }
  [[nodiscard]] static constexpr Decision do_not_send() noexcept { return {Kind::kDoNotSend, 0, 0, {}}; }
};

/// The credentials and parameters of an inbound Logon, for authentication.
struct LogonRequest {
  std::string_view username;      ///< 553, empty if absent
  std::string_view password;      ///< 554
  std::string_view new_password;  ///< 925
  std::int64_t heart_bt_int = 0;  ///< 108
  bool reset_seq_num = false;     ///< 141=Y
  std::uint64_t msg_seq_num = 0;  ///< 34
  const codec::MessageView* message = nullptr;  ///< the whole Logon
};

/// What the session knows about an inbound application message that its
/// fields alone do not say.
struct InboundInfo {
  std::uint64_t seq = 0;  ///< MsgSeqNum (34): the message is in sequence
  /// PossDupFlag (43) is Y: the peer is resending a message it sent before
  /// (answering a ResendRequest). It may be one the application already
  /// processed (before a crash or a restart, or on an earlier connection):
  /// an order must not be executed again (docs/session.md, "PossDup").
  bool poss_dup = false;
};

/// Application callbacks. Default implementations accept everything and
/// answer unknown application messages with "unsupported message type".
class Application {
 public:
  virtual ~Application() = default;

  /// The session object exists (at Session::create).
  virtual void on_create(Session& /*session*/) noexcept {}
  /// Logon completed in both directions.
  virtual void on_logon(Session& /*session*/) noexcept {}
  /// A logged-on (or logging-on) session ended: Logout, disconnect or timeout.
  virtual void on_logout(Session& /*session*/) noexcept {}
  /// An initiator's connect attempt to `endpoint` ("host:port") failed with
  /// errno `error` (ETIMEDOUT when SocketConnectTimeoutMs passed); the engine
  /// tries the next endpoint, or again after ReconnectInterval. Also logged
  /// (WARN) with the error's text.
  virtual void on_connect_failed(Session& /*session*/, std::string_view /*endpoint*/, int /*error*/) noexcept {}
  /// A message another thread queued with a non-zero `tag` (engine::SendRing)
  /// that the session did not send: `status` says why (kNotLoggedOn,
  /// kStoreFull, kDoNotSend, kThrottled: over OutgoingThrottleLimit, nothing
  /// stored, so it may be queued again later, ...). On the engine thread.
  virtual void on_queued_send_failed(Session& /*session*/, std::uint64_t /*tag*/, SendStatus /*status*/) noexcept {}

  /// The first Logon on a connection, once it has passed validation, the
  /// logon-state checks and (acceptor) the Username/Password settings, and
  /// before it changes anything: ResetSeqNumFlag (141=Y) has not reset the
  /// sequence numbers yet. accept() lets it go on to the sequence checks and
  /// from_admin; anything else refuses it: the peer gets a Logout whose Text
  /// is the decision's text (not journaled, no sequence number used) and the
  /// connection is closed, with the session as it was.
  virtual Decision on_logon_request(Session& /*session*/, const LogonRequest& /*logon*/) noexcept {
    return Decision::accept();
  }

  /// An outbound session message (Logon, Heartbeat, Logout, ...) is being
  /// built: `body` may append fields (Username/Password on a Logon) before
  /// it is finished. `msg_type` is "A", "0", "5", ...
  virtual void to_admin(Session& /*session*/, std::string_view /*msg_type*/,
                        codec::MessageWriter& /*body*/) noexcept {}
  /// An outbound application message is complete (`message`: the wire bytes).
  /// `poss_dup` is true when it is being resent for a ResendRequest.
  /// accept() sends it; do_not_send() drops it (a resend is gap-filled).
  virtual Decision to_app(Session& /*session*/, std::span<const char> /*message*/,
                          bool /*poss_dup*/) noexcept {
    return Decision::accept();
  }

  /// An inbound session message passed validation and sequencing.
  /// accept(), reject(...), logout(...), disconnect(); reject_logon(...) for a Logon.
  virtual Decision from_admin(Session& /*session*/, const codec::MessageView& /*message*/) noexcept {
    return Decision::accept();
  }
  /// An inbound application message passed validation and sequencing.
  /// accept(), reject(...), business_reject(...), unsupported_message_type(),
  /// logout(...), disconnect().
  virtual Decision from_app(Session& /*session*/, const codec::MessageView& /*message*/) noexcept {
    return Decision::unsupported_message_type();
  }
  /// The session calls this one; by default it calls from_app(session,
  /// message). Override it to see `info.poss_dup`: a resent message the
  /// session hands on (its MsgSeqNum is the next expected) may already have
  /// been processed, so an application that acts on messages (executes
  /// orders, books trades) looks up the message's own identity (ClOrdID,
  /// ExecID, ...) before acting again. Same decisions as above.
  virtual Decision from_app(Session& session, const codec::MessageView& message,
                            const InboundInfo& /*info*/) noexcept {
    return from_app(session, message);
  }
};

}  // namespace hft::session
