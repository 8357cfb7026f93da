// Configuration of one session. Field names follow QuickFIX's settings keys
// (noted next to each), so the engine's INI reader maps them one to one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hft/codec/dictionary.hpp"
#include "hft/codec/parser.hpp"
#include "hft/codec/types.hpp"
#include "hft/codec/validator.hpp"
#include "hft/core/expected.hpp"
#include "hft/session/schedule.hpp"
#include "hft/session/session_id.hpp"

namespace hft::session {

/// ApplVerID (1128/1137) code of an application version name: "FIX.5.0SP2"
/// or "FIX50SP2" -> "9", "FIX.4.4" -> "6", ...; a code ("9") is returned as
/// is. Empty if unknown.
[[nodiscard]] std::string_view appl_ver_id_code(std::string_view name_or_code) noexcept;

/// OutgoingThrottleAction: what a send over OutgoingThrottleLimit does.
enum class OutgoingThrottleAction : std::uint8_t {
  kReject,  ///< `reject`: the send returns SendStatus::kThrottled (nothing stored or sent)
  kQueue,   ///< `queue`: stored and held, sent when the window allows (up to OutgoingThrottleQueueSize)
};

/// IncomingThrottleAction: what an application message over IncomingThrottleLimit gets.
enum class IncomingThrottleAction : std::uint8_t {
  kReject,      ///< `reject`: Reject (35=3, SessionRejectReason 99), its MsgSeqNum consumed
  kLogout,      ///< `logout`: that Reject, then a Logout with the same Text
  kDisconnect,  ///< `disconnect`: the connection is closed at once; the message is not accepted
};

/// Largest OutgoingThrottleLimit, IncomingThrottleLimit and
/// OutgoingThrottleQueueSize (the window keeps one timestamp per message of
/// the limit: 8 MB at most).
inline constexpr std::uint32_t kMaxThrottleLimit = 1'000'000;
/// Longest throttle window, ms.
inline constexpr std::uint32_t kMaxThrottleIntervalMs = 60'000;

struct SessionSettings {
  // Identity --------------------------------------------------------------
  std::string begin_string = "FIX.4.4";  ///< BeginString: FIX.4.0 .. FIX.4.4, FIXT.1.1
  std::string sender_comp_id;            ///< SenderCompID
  std::string sender_sub_id;             ///< SenderSubID (50), sent on every message
  std::string sender_location_id;        ///< SenderLocationID (142)
  std::string target_comp_id;            ///< TargetCompID
  std::string target_sub_id;             ///< TargetSubID (57)
  std::string target_location_id;        ///< TargetLocationID (143)
  std::string session_qualifier;         ///< SessionQualifier

  // Credentials -------------------------------------------------------------
  /// Username. Initiator: sent as Username (553) in our Logon (FIX.4.3+).
  /// Acceptor: the peer's first Logon must carry this Username. Empty: none.
  std::string username;
  /// Password. Initiator: sent as Password (554) in our Logon (FIX.4.3+), as
  /// RawDataLength/RawData (95/96) before FIX.4.3. Acceptor: the peer's first
  /// Logon must carry it there. Empty: none.
  std::string password;

  // Role and heartbeats ----------------------------------------------------
  bool initiator = false;        ///< ConnectionType=initiator; else acceptor
  std::int32_t heart_bt_int = 30;  ///< HeartBtInt (s) an initiator proposes; an acceptor uses the peer's
  std::int32_t logon_timeout = 10;   ///< LogonTimeout (s): Logon answer (initiator) / first Logon (acceptor)
  std::int32_t logout_timeout = 2;   ///< LogoutTimeout (s): wait for the Logout answer

  // Sequence numbers ------------------------------------------------------
  bool reset_on_logon = false;       ///< ResetOnLogon
  bool reset_on_logout = false;      ///< ResetOnLogout
  bool reset_on_disconnect = false;  ///< ResetOnDisconnect
  /// RefreshOnLogon. The engine refuses Y (unsupported: sequence numbers are
  /// not reloaded from the store at Logon); kept so that N round-trips.
  bool refresh_on_logon = false;
  bool send_next_expected_msg_seq_num = false;  ///< SendNextExpectedMsgSeqNum: 789 on Logon (4.4+)
  /// EnableLastMsgSeqNumProcessed: LastMsgSeqNumProcessed (369), the last
  /// MsgSeqNum received in sequence, on every message we send (resends keep
  /// the original's).
  bool enable_last_msg_seq_num_processed = false;
  bool send_redundant_resend_requests = false;  ///< SendRedundantResendRequests
  std::uint64_t resend_request_chunk_size = 0;  ///< ResendRequestChunkSize: 0 = whole gap at once
  std::uint32_t max_resend_batch = 512;  ///< MaxResendBatch: messages replayed per call before yielding

  // Checks ------------------------------------------------------------------
  bool check_comp_id = true;      ///< CheckCompID
  bool check_latency = true;      ///< CheckLatency: SendingTime accuracy
  std::int32_t max_latency = 120; ///< MaxLatency (s)
  bool validate_length_and_checksum = true;  ///< ValidateLengthAndChecksum
  /// ValidateChecksum (QuickFIX/J's key): N accepts a message whose CheckSum
  /// is wrong (its "10=ddd" shape is still required). Either key at N turns
  /// the CheckSum check off.
  bool validate_checksum = true;
  /// RejectGarbledMessage (QuickFIX/J's key): a garbled message that is
  /// framed ("8=FIX..." to "10=ddd"), carries its MsgSeqNum and is next in
  /// sequence gets a Reject "Message failed basic validity check" (Text only,
  /// RefSeqNum, RefMsgType) and its number is consumed, instead of being
  /// ignored. A garbled Logon still disconnects.
  bool reject_garbled_message = false;
  codec::ValidationOptions validation;       ///< ValidateFieldsOutOfOrder, ValidateFieldsHaveValues,
                                             ///< ValidateUserDefinedFields, AllowUnknownMsgFields, ...

  // Versions and dictionaries ------------------------------------------------
  /// DefaultApplVerID (FIXT.1.1 only): "FIX.5.0SP2", "9", ...; sent as 1137 on Logon.
  std::string default_appl_ver_id;
  /// DataDictionary (FIX.4.x) or TransportDataDictionary (FIXT.1.1). Null: built in.
  std::shared_ptr<const codec::Dictionary> dictionary;
  /// AppDataDictionary (FIXT.1.1 only). Null: application messages are not
  /// checked against a dictionary (only their header).
  std::shared_ptr<const codec::Dictionary> app_dictionary;
  /// FIXT.1.1 with an app_dictionary: the two combined (what the session
  /// validates against), made once and shared by every session with the
  /// same pair (the engine's DictionaryCache: about 7 MB and 10 ms each for
  /// FIXT11 + FIX50SP2). Null: the session combines them itself.
  std::shared_ptr<const codec::Dictionary> combined_dictionary;
  /// TimestampPrecision: digits of SendingTime/OrigSendingTime. Unset:
  /// milliseconds for FIX 4.2+ and FIXT, seconds for 4.0/4.1.
  std::optional<codec::TimePrecision> timestamp_precision;

  // Schedule ------------------------------------------------------------------
  Schedule schedule;  ///< StartTime/EndTime/StartDay/EndDay/TimeZone; always open by default

  // Capacities (allocated once at Session::create) --------------------------
  /// MaxMessageSize: largest message received (larger ones are garbled) and
  /// the size of every claim from the store (which must allow claims this large).
  std::size_t max_message_size = 64 * 1024;
  /// MaxFieldsPerMessage: fields a received message may have. The session's
  /// field index is allocated for this many at Session::create (12 bytes a
  /// field, touched only by messages that long). A message with more is
  /// answered with a Reject (SessionRejectReason 99 Other) and its MsgSeqNum
  /// is consumed. 1 .. codec::MessageView::kMaxFieldsLimit.
  std::size_t max_fields_per_message = codec::MessageView::kDefaultMaxFields;
  std::size_t queue_capacity_bytes = 1 << 20;  ///< messages held while a gap is being filled
  std::size_t queue_capacity_messages = 4096;

  // Throttling (docs/session.md, "Throttling"); off by default ---------------
  /// OutgoingThrottleLimit: application messages sent in any window of
  /// OutgoingThrottleIntervalMs, at most (0: no limit). Session messages and
  /// resends do not count and are never refused. 0 .. kMaxThrottleLimit.
  std::uint32_t outgoing_throttle_limit = 0;
  /// OutgoingThrottleIntervalMs: the window, ms. 1 .. kMaxThrottleIntervalMs.
  std::uint32_t outgoing_throttle_interval_ms = 1000;
  OutgoingThrottleAction outgoing_throttle_action = OutgoingThrottleAction::kReject;  ///< OutgoingThrottleAction
  /// OutgoingThrottleQueueSize: with `queue`, application messages held at
  /// most; one more is refused with kThrottled. 1 .. kMaxThrottleLimit.
  std::uint32_t outgoing_throttle_queue_size = 1000;
  /// IncomingThrottleLimit: application messages accepted from the
  /// counterparty in any window of IncomingThrottleIntervalMs, at most (0: no
  /// limit). Session messages, messages held behind a gap and PossDup resends
  /// we asked for do not count. 0 .. kMaxThrottleLimit.
  std::uint32_t incoming_throttle_limit = 0;
  /// IncomingThrottleIntervalMs: the window, ms. 1 .. kMaxThrottleIntervalMs.
  std::uint32_t incoming_throttle_interval_ms = 1000;
  IncomingThrottleAction incoming_throttle_action = IncomingThrottleAction::kReject;  ///< IncomingThrottleAction

  [[nodiscard]] SessionID id() const {
    return SessionID{begin_string, sender_comp_id, target_comp_id, session_qualifier};
  }
  /// Checks the settings; errors name the key ("SenderCompID: empty").
  [[nodiscard]] Expected<void> check() const;
};

}  // namespace hft::session
