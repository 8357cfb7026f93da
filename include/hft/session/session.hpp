// The FIX session state machine (FIX 4.0-4.4, FIXT.1.1), sans I/O.
//
//            bytes, time                         bytes to send, disconnect
//   engine ──────────────► Session ──Output──────────────────────► engine
//                           │   ▲
//         callbacks with    │   │ decisions (accept, reject, reject logon,
//         parsed messages   ▼   │ do-not-send, logout, disconnect)
//                         Application
//
// A Session never touches a socket or a clock: the engine feeds it received
// bytes (on_bytes), the passage of time (on_timer) and connection events
// (on_connected/on_disconnected), each with the current time; the session
// answers through the Output sink and the Application callbacks. Everything
// runs on the caller's thread; nothing here blocks or throws.
//
// Behaviour follows the FIX session protocol as QuickFIX 1.15 implements it
// (Reject and Logout texts, field order, which messages are ignored, rejected
// or answered with Logout/disconnect); docs/session.md lists where it differs.
//
// Outgoing messages are encoded in place in a region claimed from the
// store::MessageStore, committed, and the same bytes go to Output::send.
// Resent messages and gap fills are not stored again; they are encoded in a
// buffer the session owns. Received messages that are accepted in sequence
// are handed to MessageStore::store_inbound (the audit journal) before the
// application sees them. No message without its journal: one the store
// cannot record, in either direction, is neither sent nor accepted, and the
// session logs out and disconnects (docs/session.md, "When the store cannot
// record a message"). Throttling (OutgoingThrottleLimit,
// IncomingThrottleLimit; docs/session.md, "Throttling") refuses a send with
// kThrottled or holds its committed bytes and sends them later, in sequence,
// read back from the store; it rejects, logs out or disconnects on a
// counterparty over its limit. After Session::create nothing allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "hft/codec/types.hpp"
#include "hft/codec/validator.hpp"
#include "hft/core/byte_buffer.hpp"
#include "hft/core/expected.hpp"
#include "hft/session/application.hpp"
#include "hft/session/logger.hpp"
#include "hft/session/session_id.hpp"
#include "hft/session/settings.hpp"
#include "hft/store/message_store.hpp"

namespace hft::session {

/// The current time, in the two clock domains the session uses: UTC for
/// SendingTime, its accuracy check and the schedule; monotonic for
/// heartbeat, TestRequest, logon and logout timeouts.
struct Instant {
  std::int64_t utc_ns = 0;   ///< CLOCK_REALTIME, ns since the Unix epoch
  std::int64_t mono_ns = 0;  ///< CLOCK_MONOTONIC(_RAW), ns
  /// Both domains from one value (tests, simulations).
  [[nodiscard]] static constexpr Instant from_utc(std::int64_t ns) noexcept { return {ns, ns}; }
};

/// The largest sequence number a session takes (MsgSeqNum, NewSeqNo,
/// BeginSeqNo, EndSeqNo): a signed 64-bit integer's maximum, as engines that
/// hold sequence numbers signed can represent. A larger value is answered as
/// an incorrect data format (Reject, SessionRejectReason 6), so that a peer
/// can never move a number to where incrementing it would wrap.
inline constexpr std::uint64_t kMaxSeqNum = 0x7fff'ffff'ffff'ffffULL;

/// Why the session asks for the connection to be closed.
enum class DisconnectReason : std::uint8_t {
  kLogoutComplete,    ///< Logout sent and received
  kLogoutTimeout,     ///< our Logout was not answered within LogoutTimeout
  kLogonTimeout,      ///< no Logon (or Logon answer) within LogonTimeout
  kHeartbeatTimeout,  ///< nothing received for 2.4 heartbeat intervals (TestRequest unanswered)
  kNotLoggedOn,       ///< a message the logon state does not allow (first message not a Logon, ...)
  kInvalidLogon,      ///< the Logon was garbled, invalid, too old, for other CompIDs, out of sequence
  kLogonRejected,     ///< the application refused the Logon
  kUnauthenticated,   ///< the first Logon's credentials (Username/Password, or the
                      ///< application's on_logon_request) were refused: nothing changed
  kSeqNumTooLow,      ///< MsgSeqNum lower than expected without PossDupFlag
  kMissingMsgSeqNum,  ///< a message without MsgSeqNum (34): Logout sent, then disconnect
  kIncorrectBeginString,  ///< wrong BeginString before logon
  kOutsideSchedule,   ///< the session's schedule closed, or the logon came outside it
  kApplication,       ///< Decision::disconnect() or Session::disconnect()
  kStoreError,        ///< the store failed to record a message (either direction): Logout if
                      ///< that can be recorded, then disconnect; the peer resends what was lost
  kThrottled,         ///< IncomingThrottleAction=disconnect: the counterparty sent more than
                      ///< IncomingThrottleLimit application messages in the window
};
[[nodiscard]] std::string_view to_string(DisconnectReason reason) noexcept;

/// Where the session's output goes. The engine writes the bytes to the
/// socket (or queues them) and closes the connection on disconnect(), after
/// the bytes already given to send().
class Output {
 public:
  virtual ~Output() = default;
  /// One or more complete messages, in order. Valid only during the call.
  virtual void send(std::span<const char> bytes) noexcept = 0;
  /// Close the connection. The session has already moved to kDisconnected.
  virtual void disconnect(DisconnectReason reason) noexcept = 0;
};

/// Result of sending an application message. Negative: not sent.
enum class SendStatus : std::int8_t {
  kOk = 0,
  kNotLoggedOn = -1,  ///< the session is not logged on; nothing was stored or sent
  kDoNotSend = -2,    ///< Application::to_app declined; the sequence number was not used
  kStoreFull = -3,    ///< the store has no room (no space, no segment): not sent, no seq used;
                      ///< the session logs out and disconnects (docs/session.md)
  kStoreError = -4,   ///< the store failed (I/O): not sent, no seq used; logout and disconnect
  kEncodeError = -5,  ///< the message did not fit MaxMessageSize, or a bad field
  kBusy = -6,         ///< another message is being built (begin_app without send/abandon)
  kNotStarted = -7,   ///< send() on a message that begin_app did not open
  kThrottled = -8,    ///< OutgoingThrottleLimit reached (action `reject`, or the `queue` is
                      ///< full): nothing stored or sent, no seq used; try again later
  kStoreBusy = -9,    ///< no journal segment ready yet (the journal service is behind): nothing
                      ///< stored or sent, no seq used, the session goes on; try again later.
                      ///< (From inside a callback such a send is kStoreFull: docs/session.md.)
};
[[nodiscard]] std::string_view to_string(SendStatus status) noexcept;

/// Lifecycle of the connection as the session sees it.
enum class SessionState : std::uint8_t {
  kDisconnected,  ///< no connection
  kConnected,     ///< connected, no Logon sent or received yet
  kLogonSent,     ///< initiator: Logon sent, waiting for the answer
  kLoggedOn,      ///< Logon exchanged
  kLogoutSent,    ///< our Logout is out, waiting for the answer
};
[[nodiscard]] std::string_view to_string(SessionState state) noexcept;

/// Options of an outgoing application message.
struct SendOptions {
  bool poss_resend = false;        ///< PossResend (97=Y)
  std::string_view extra_header;   ///< more header fields, pre-encoded "115=X^128=Y^"
};

/// An application message being built in place (in the store's claimed
/// region). Obtained from Session::begin_app, finished by Session::send or
/// Session::abandon. Header fields are already written; add body fields in
/// order. A failed begin_app leaves it closed: adds are ignored and send()
/// returns the failure.
class OutgoingMessage {
 public:
  void add(int tag, std::string_view value) noexcept { writer_.add(tag, value); }
  void add_char(int tag, char value) noexcept { writer_.add_char(tag, value); }
  void add_int(int tag, std::int64_t value) noexcept { writer_.add_int(tag, value); }
  void add_uint(int tag, std::uint64_t value) noexcept { writer_.add_uint(tag, value); }
  void add_decimal(int tag, codec::Decimal value) noexcept { writer_.add_decimal(tag, value); }
  void add_bool(int tag, bool value) noexcept { writer_.add_bool(tag, value); }
  /// Appends pre-encoded fields ("a=b^c=d^").
  void add_raw(std::string_view encoded) noexcept { writer_.add_raw(encoded); }
  /// The underlying writer (timestamps, decimals, ...).
  [[nodiscard]] codec::MessageWriter& writer() noexcept { return writer_; }
  /// kOk while open; the reason begin_app failed otherwise.
  [[nodiscard]] SendStatus status() const noexcept { return status_; }
  /// MsgSeqNum this message will carry.
  [[nodiscard]] std::uint64_t seq_num() const noexcept { return seq_; }

 private:
  friend class Session;
  OutgoingMessage() noexcept : writer_(std::span<char>{}) {}
  codec::MessageWriter writer_;
  SendStatus status_ = SendStatus::kNotStarted;
  std::uint64_t seq_ = 0;
  std::int64_t utc_ns_ = 0;
  const char* room_ = nullptr;  // start of the store's claimed region
  bool open_ = false;
};

/// Counters for monitoring; monotonically increasing.
struct SessionCounters {
  std::uint64_t messages_received = 0;   ///< framed messages (valid or not)
  std::uint64_t messages_sent = 0;       ///< stored and sent, resends and gap fills included
  std::uint64_t garbled = 0;             ///< framing or parse failures (ignored)
  std::uint64_t rejects_sent = 0;        ///< session-level Rejects
  std::uint64_t business_rejects_sent = 0;
  std::uint64_t resend_requests_sent = 0;
  std::uint64_t resend_requests_received = 0;
  std::uint64_t messages_resent = 0;
  std::uint64_t gap_fills_sent = 0;
  std::uint64_t messages_queued = 0;     ///< held while a gap was filled
  std::uint64_t queue_overflows = 0;     ///< not held (queue full): re-requested later
  std::uint64_t logons = 0;
  std::uint64_t disconnects = 0;
  // Throttling (docs/session.md, "Throttling").
  std::uint64_t sends_throttled = 0;        ///< sends refused with kThrottled (limit reached, queue full)
  std::uint64_t sends_throttle_queued = 0;  ///< sends accepted and held by OutgoingThrottleAction=queue
  std::uint64_t throttle_queue_max = 0;     ///< most application messages held at once (high-water mark)
  std::uint64_t incoming_throttled = 0;     ///< received application messages over IncomingThrottleLimit
  /// Times input stopped before a message the store had no room for yet
  /// (the journal service behind: on_bytes).
  std::uint64_t input_pauses = 0;
};

class Session {
 public:
  /// Builds a session: checks the settings (errors name the key), loads the
  /// built-in dictionary when none is given, allocates every buffer and
  /// checks that the store can claim MaxMessageSize bytes. `store`, `app`,
  /// `output` and `logger` must outlive the session. Calls
  /// Application::on_create.
  static Expected<std::unique_ptr<Session>> create(SessionSettings settings, store::MessageStore& store,
                                                   Application& app, Output& output,
                                                   Logger* logger = nullptr, Instant now = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // -- Input -----------------------------------------------------------------

  /// A connection is up. An initiator sends its Logon; an acceptor waits for
  /// one (LogonTimeout).
  void on_connected(Instant now) noexcept;
  /// The connection is gone (closed by the peer, or after Output::disconnect).
  /// on_logout is called if a logon had started; ResetOnDisconnect applies.
  void on_disconnected(Instant now) noexcept;
  /// Received bytes: any split, several messages or part of one. A partial
  /// message is kept until the rest arrives. Garbled data is skipped.
  /// Returns how many of `bytes` it took: all of them, unless the store
  /// cannot record the next message yet (MessageStore::ready_for false: the
  /// journal service is behind). Then the session stops before that message
  /// with input_paused() true, having acted on nothing of it; the caller
  /// keeps the rest (and stops reading the connection: TCP flow control
  /// holds the peer) and calls on_bytes again with it, or with nothing,
  /// until input_paused() is false.
  std::size_t on_bytes(std::span<const char> bytes, Instant now) noexcept;
  /// A message is waiting for room in the store (see on_bytes).
  [[nodiscard]] bool input_paused() const noexcept { return input_paused_; }
  /// Timers: heartbeat, TestRequest, logon/logout timeouts, schedule, and the
  /// continuation of a large replay. Call it at least every 100 ms or so.
  void on_timer(Instant now) noexcept;

  // -- Sending application messages ---------------------------------------

  /// Opens an application message of `msg_type` with the header written:
  ///
  ///   auto& m = session.begin_app("D", now);
  ///   m.add(tag::kClOrdID, "ORD1"); ...
  ///   SendStatus s = session.send(m);
  ///
  /// On failure (kNotLoggedOn, kBusy, kThrottled, kStoreFull, kStoreError,
  /// kEncodeError) the message is closed and send() returns the status.
  /// kThrottled: OutgoingThrottleLimit application messages went out in the
  /// last OutgoingThrottleIntervalMs and the action is `reject`, or the
  /// `queue` holds OutgoingThrottleQueueSize already. A store failure
  /// ends the session: at once, or, inside a callback for a received
  /// message, once the callback returns, and that message is then not
  /// accepted (the peer resends it after the next logon).
  [[nodiscard]] OutgoingMessage& begin_app(std::string_view msg_type, Instant now,
                                           const SendOptions& options = {}) noexcept;
  /// Finishes, asks Application::to_app, stores and sends. kOk or a failure
  /// status (kDoNotSend, kEncodeError, kStoreFull, kStoreError, or the
  /// begin_app failure). With OutgoingThrottleAction=queue, kOk may mean
  /// stored and held: it goes out, in sequence, once the throttle's window
  /// allows (throttle_queue_depth()); a disconnect first leaves it to the
  /// peer's ResendRequest. The message is closed afterwards either way. A
  /// message the store did not record is never sent and its MsgSeqNum is
  /// used by the next message; the session ends as for begin_app.
  [[nodiscard]] SendStatus send(OutgoingMessage& message) noexcept;
  /// Drops an open message; its sequence number is not used.
  void abandon(OutgoingMessage& message) noexcept;
  /// begin_app + fill(message) + send.
  template <typename Fill>
  [[nodiscard]] SendStatus send_app(std::string_view msg_type, Instant now, Fill&& fill,
                                    const SendOptions& options = {}) noexcept {
    OutgoingMessage& m = begin_app(msg_type, now, options);
    if (m.status() != SendStatus::kOk) return send(m);
    fill(m);
    return send(m);
  }

  // -- Control -------------------------------------------------------------

  /// Starts a Logout with `text` (empty: none) and waits LogoutTimeout for
  /// the answer. While logged out by this call the session does not log on
  /// again until enable() (QuickFIX's Session::logout()/logon()).
  void logout(std::string_view text, Instant now) noexcept;
  /// Allows logons again after logout().
  void enable() noexcept { enabled_ = true; }
  /// Closes the connection now, without a Logout.
  void disconnect(Instant now) noexcept;
  /// Sequence numbers back to 1 (a Logout first if logged on, then disconnect).
  void reset(Instant now) noexcept;
  void set_next_sender_seq(std::uint64_t seq) noexcept;
  void set_next_target_seq(std::uint64_t seq) noexcept;
  /// Sends a SequenceReset (35=4) of our own with NewSeqNo `new_seq` (and
  /// GapFillFlag=Y when `gap_fill`), journaled like any admin message, then
  /// makes `new_seq` our next MsgSeqNum: the operator's way to move the
  /// counterparty's expected number up (llfix's SequenceReset command).
  /// kOk; kNotLoggedOn (also once our Logout is out); kEncodeError if
  /// `new_seq` is not above next_sender_seq() (the MsgSeqNum the
  /// SequenceReset itself carries) or is above kMaxSeqNum; kStoreError if
  /// the store could not record it (the session then ends, as for any message).
  [[nodiscard]] SendStatus send_sequence_reset(std::uint64_t new_seq, bool gap_fill, Instant now) noexcept;

  /// Whether a received Logon carries the Username and Password `settings`
  /// require (none required: true), compared in constant time. Before
  /// FIX.4.3 the password is in RawData (96). What an acceptor checks before
  /// anything else (the engine also before creating a template's session).
  [[nodiscard]] static bool logon_credentials_match(const SessionSettings& settings,
                                                    const codec::MessageView& logon) noexcept;

  // -- Queries -----------------------------------------------------------

  [[nodiscard]] const SessionID& id() const noexcept { return id_; }
  [[nodiscard]] const SessionSettings& settings() const noexcept { return settings_; }
  [[nodiscard]] SessionState state() const noexcept;
  [[nodiscard]] bool is_logged_on() const noexcept { return received_logon_ && sent_logon_; }
  [[nodiscard]] bool is_connected() const noexcept { return connected_; }
  [[nodiscard]] std::uint64_t next_sender_seq() const noexcept { return store_.next_sender_seq(); }
  [[nodiscard]] std::uint64_t next_target_seq() const noexcept { return store_.next_target_seq(); }
  /// The store's counters (journals' rotations, spare misses, ...).
  [[nodiscard]] store::StoreStats store_stats() const noexcept { return store_.stats(); }
  /// Sub-second digits of the timestamps this session sends (SendingTime,
  /// OrigSendingTime); applications use it for theirs (TransactTime).
  [[nodiscard]] codec::TimePrecision timestamp_precision() const noexcept { return precision_; }
  /// The heartbeat interval in force (the peer's, for an acceptor), seconds.
  [[nodiscard]] std::int32_t heart_bt_int() const noexcept { return heart_bt_int_; }
  /// FIXT: the counterparty's DefaultApplVerID from its Logon.
  [[nodiscard]] std::string_view target_default_appl_ver_id() const noexcept {
    return {target_appl_ver_id_, target_appl_ver_id_len_};
  }
  [[nodiscard]] const SessionCounters& counters() const noexcept { return counters_; }
  /// True while a ResendRequest is being answered in batches.
  [[nodiscard]] bool replay_pending() const noexcept { return replay_.active; }
  /// True while we wait for a gap we asked for to be filled.
  [[nodiscard]] bool resend_requested() const noexcept { return resend_begin_ != 0 || resend_end_ != 0; }
  /// Messages held until a gap is filled.
  [[nodiscard]] std::size_t queued_messages() const noexcept;
  /// Application messages sent with OutgoingThrottleAction=queue that are
  /// stored but held back by the throttle (0 when off).
  [[nodiscard]] std::size_t throttle_queue_depth() const noexcept { return held_app_; }
  [[nodiscard]] codec::FixVersion version() const noexcept { return version_; }

 private:
  class Queue;
  struct ReplayState {
    bool active = false;
    std::uint64_t request_begin = 0;  // BeginSeqNo as received (clamped >= 1)
    std::uint64_t next = 0;           // next seq to read from the store
    std::uint64_t end = 0;            // last seq to replay
    std::uint64_t current = 0;        // QuickFIX's "current": one past the last seq seen
    std::uint64_t gap_begin = 0;      // start of a pending gap fill, 0 = none
    std::uint64_t last_seq = 0;       // last stored seq visited, 0 = none
  };
  class ReplayCollector;
  class Window;
  class HeldCollector;
  /// One direction's throttle: the window and its WARN line, said once a window.
  struct Throttle {
    std::unique_ptr<Window> window;  // null: no limit in this direction
    std::int64_t reported_ns = 0;    // when the last WARN line was said
    bool reported = false;
    std::uint64_t unreported = 0;  // events since that line
  };

  Session(SessionSettings settings, store::MessageStore& store, Application& app, Output& output,
          Logger* logger);
  Expected<void> init(Instant now);

  // Inbound
  void consume(std::string_view data, std::size_t& used) noexcept;
  // `framed`: the bytes run from "8=FIX" to a "10=" trailer (a message that
  // RejectGarbledMessage may answer), not resynchronisation garbage.
  void on_garbled(std::string_view bytes, std::string_view why, bool framed = false) noexcept;
  // RejectGarbledMessage: true if the garbled message was answered.
  bool reject_garbled(std::string_view bytes, std::string_view why) noexcept;
  // EnableLastMsgSeqNumProcessed: 369 after the header just started in `w`.
  void add_last_processed(codec::MessageWriter& w) const noexcept;
  /// `refusal`: the message cannot be read whole (larger than
  /// MaxMessageSize): `bytes` is its header, answered with a Reject saying so.
  void handle_message(std::string_view bytes, bool queued, std::string_view refusal = {}) noexcept;
  // A message whose BodyLength is above MaxMessageSize (up to kOversizeFactor
  // times it) is skipped as it arrives, never buffered, its header and
  // trailer kept, and answered with a Reject once it has all come: dropping
  // it would make its resend be dropped too and the session stall.
  enum class Oversize : std::uint8_t { kStarted, kWait, kGarbage };
  static constexpr std::uint64_t kOversizeFactor = 16;
  [[nodiscard]] Oversize begin_oversize(std::string_view data) noexcept;
  /// Consumes the bytes of the message being skipped; returns how many.
  std::size_t skip_oversize(std::string_view data) noexcept;
  void finish_oversize() noexcept;
  void dispatch(const codec::MessageView& msg, std::string_view msg_type) noexcept;
  /// `app`: an application message, which IncomingThrottleLimit counts.
  bool verify(const codec::MessageView& msg, bool check_too_high, bool check_too_low, bool app = false) noexcept;
  /// IncomingThrottleLimit: true if `msg` (next in sequence) is within the
  /// limit; otherwise applies IncomingThrottleAction and returns false.
  bool admit_incoming(const codec::MessageView& msg) noexcept;
  bool valid_logon_state(std::string_view msg_type) const noexcept;
  void next_logon(const codec::MessageView& msg) noexcept;
  void next_heartbeat(const codec::MessageView& msg) noexcept;
  void next_test_request(const codec::MessageView& msg) noexcept;
  void next_logout(const codec::MessageView& msg) noexcept;
  void next_reject(const codec::MessageView& msg) noexcept;
  void next_sequence_reset(const codec::MessageView& msg) noexcept;
  void next_resend_request(const codec::MessageView& msg) noexcept;
  void next_app(const codec::MessageView& msg, std::string_view msg_type) noexcept;
  bool apply_decision(const codec::MessageView& msg, const Decision& d) noexcept;
  void do_target_too_high(const codec::MessageView& msg, std::uint64_t seq) noexcept;
  void do_target_too_low(const codec::MessageView& msg, std::uint64_t seq) noexcept;
  void process_queue() noexcept;
  void check_resend_satisfied(std::uint64_t seq) noexcept;
  [[nodiscard]] bool is_good_time(const codec::MessageView& msg) const noexcept;
  [[nodiscard]] bool is_correct_comp_id(const codec::MessageView& msg) const noexcept;
  void incr_target() noexcept;
  // A sequence-number field as a number in 0..kMaxSeqNum (false: absent, not
  // a number, or larger).
  [[nodiscard]] static bool read_seq_num(const codec::MessageView& msg, int tag, std::uint64_t& out) noexcept;
  /// Dictionary validation of an inbound message: session messages of FIXT
  /// against the transport dictionary, the rest against the session's
  /// (combined) dictionary; a header tag another FIX version defines and this
  /// one does not is reported in header order, ahead of body faults.
  [[nodiscard]] codec::ValidationResult validate(const codec::MessageView& msg, bool admin) const noexcept;

  // Outbound
  struct Build;
  bool begin_admin(Build& b, std::string_view msg_type, const codec::HeaderExtras& extras,
                   bool reserve = false) noexcept;
  bool finish_admin(Build& b) noexcept;
  void generate_logon() noexcept;
  void add_credentials(codec::MessageWriter& w) noexcept;
  [[nodiscard]] bool credentials_match(const codec::MessageView& msg) const noexcept {
    return logon_credentials_match(settings_, msg);
  }
  void refuse_logon(std::string_view text) noexcept;
  void generate_logon_reply(const codec::MessageView& logon) noexcept;
  /// A Heartbeat; with `echo_id`, TestReqID (112) = `test_req_id`, even empty.
  void generate_heartbeat(std::string_view test_req_id, bool echo_id) noexcept;
  bool generate_test_request(std::string_view id) noexcept;
  void generate_resend_request(std::uint64_t begin, std::uint64_t end) noexcept;
  void generate_sequence_reset(std::uint64_t seq, std::uint64_t new_seq) noexcept;
  void generate_logout(std::string_view text) noexcept;
  /// `quiet`: no WARN line (the caller says it, once for many).
  bool generate_reject(const codec::MessageView& msg, int reason, int ref_tag, std::string_view text = {},
                       bool quiet = false) noexcept;
  void generate_reject_text(const codec::MessageView& msg, std::string_view text) noexcept;
  void generate_business_reject(const codec::MessageView& msg, int reason, int ref_tag,
                                std::string_view text) noexcept;
  void send_bytes(std::span<const char> bytes) noexcept;
  /// OutgoingThrottleAction=queue: sends what the window allows of the held
  /// messages [hold_from_, next sender seq), in sequence, from the store.
  void release_held() noexcept;
  /// Gap-fills held messages [hold_from_, up_to) the store no longer has.
  void fill_held(std::uint64_t up_to) noexcept;
  /// True (and a WARN line if none was said in this window) when `t` says so.
  bool throttle_event(Throttle& t, std::uint32_t interval_ms) noexcept;
  std::size_t reverse_route(const codec::MessageView& msg, char* out, std::size_t cap) const noexcept;
  void start_replay(std::uint64_t begin, std::uint64_t end) noexcept;
  void continue_replay() noexcept;
  void resend_stored(std::uint64_t seq, std::span<const char> stored, bool admin) noexcept;
  [[nodiscard]] bool should_send_reset() const noexcept;

  // State changes
  void do_disconnect(DisconnectReason reason) noexcept;
  /// The store could not record a message (either direction). Inside an application send during input the
  /// session ends after the callback (store_failure_pending_); otherwise now (end_for_store).
  void store_failed(store::StoreStatus status, bool defer) noexcept;
  /// ERROR line naming the store's failure, Logout (from the store's
  /// reserve) with a Text, disconnect with kStoreError.
  void end_for_store() noexcept;
  void reset_store() noexcept;
  void check_schedule() noexcept;

  // Logging: a line formatted into log_buf_.
  [[nodiscard]] bool log_enabled(LogLevel level) const noexcept {
    return logger_ != nullptr && logger_->enabled(level);
  }
  void log(LogLevel level, std::string_view text) noexcept;

  SessionSettings settings_;
  SessionID id_;
  store::MessageStore& store_;
  Application& app_;
  Output& output_;
  Logger* logger_;
  codec::FixVersion version_ = codec::FixVersion::kFix44;
  codec::TimePrecision precision_ = codec::TimePrecision::kMillis;
  char appl_ver_id_[8] = {};  // our DefaultApplVerID code (FIXT)
  std::size_t appl_ver_id_len_ = 0;
  char target_appl_ver_id_[8] = {};
  std::size_t target_appl_ver_id_len_ = 0;

  std::shared_ptr<const codec::Dictionary> dictionary_;      // session / combined
  std::shared_ptr<const codec::Dictionary> app_dictionary_;  // FIXT app (may be null)
  std::unique_ptr<codec::Validator> validator_;
  // FIXT: session-level messages are checked against the transport
  // dictionary alone (a tag only the application dictionary knows is not a
  // tag of a Heartbeat); null for the other versions.
  std::shared_ptr<const codec::Dictionary> transport_dictionary_;
  std::unique_ptr<codec::Validator> admin_validator_;
  bool validate_app_ = true;
  codec::FrameOptions frame_options_;
  codec::HeaderTemplate header_;
  codec::TimestampFormatter formatter_;

  // Protocol state (QuickFIX's SessionState)
  bool connected_ = false;
  bool enabled_ = true;
  bool received_logon_ = false;
  bool sent_logon_ = false;
  bool sent_logout_ = false;
  bool sent_reset_ = false;
  bool received_reset_ = false;
  std::int32_t heart_bt_int_ = 30;
  std::int32_t test_requests_ = 0;
  std::int64_t last_sent_mono_ = 0;
  std::int64_t last_received_mono_ = 0;
  std::int64_t connected_mono_ = 0;
  std::uint64_t resend_begin_ = 0;  // outstanding ResendRequest: [begin, end] of the chunk
  std::uint64_t resend_end_ = 0;
  std::uint64_t resend_target_end_ = 0;  // last seq of the whole gap (chunked requests)
  char logout_reason_[128] = {};
  std::size_t logout_reason_len_ = 0;
  bool pending_logout_ = false;  // Decision::logout(): send once the message is handled
  bool outside_schedule_reset_ = false;
  Instant now_{};
  bool in_input_ = false;  // on_bytes/on_timer running: not re-entrant
  bool input_paused_ = false;  // a received message waits for the store (on_bytes)
  // A store failure ends the session once; a received message being handled
  // when it happened is not accepted.
  bool store_failure_pending_ = false;
  bool ending_for_store_ = false;
  store::StoreStatus store_failure_ = store::StoreStatus::kOk;

  // Buffers, allocated once; resident only as far as they are written.
  core::ByteBuffer rx_;  // partial message carried between on_bytes calls
  std::size_t rx_len_ = 0;
  struct OversizeState {
    std::uint64_t size = 0;       // the whole message, trailer included
    std::uint64_t remaining = 0;  // bytes still to come (0: none being skipped)
    std::uint32_t sum = 0;        // byte sum of what came
    std::size_t head_len = 0;     // bytes kept in oversize_head_
    char tail[8] = {};            // the last bytes that came: "^10=ddd^" at the end
  };
  OversizeState oversize_;
  core::ByteBuffer oversize_head_;  // the first bytes of that message (its header)
  core::ByteBuffer tx_;             // resends (not stored)
  core::ByteBuffer gap_fill_;       // gap fills (not stored), built while a resend waits in tx_
  std::unique_ptr<Queue> queue_;
  std::unique_ptr<codec::MessageView> view_;         // the message being handled
  std::unique_ptr<codec::MessageView> replay_view_;  // a stored message being resent
  OutgoingMessage app_msg_;
  OutgoingMessage busy_msg_;  // handed out by begin_app while app_msg_ is open
  ReplayState replay_;
  // Throttling. Outbound with `queue`: the messages from hold_from_ to the
  // last one stored are journaled but not yet on the wire (session messages
  // among them, so that nothing overtakes a held message); 0: none held.
  Throttle out_throttle_;
  Throttle in_throttle_;
  std::uint64_t hold_from_ = 0;
  std::size_t held_app_ = 0;           // application messages among them
  bool store_replay_running_ = false;  // continue_replay or release_held is reading the store
  bool from_gap_queue_ = false;        // process_queue is handing on a message held behind a gap
  SessionCounters counters_;
  char log_buf_[512] = {};
};

}  // namespace hft::session
