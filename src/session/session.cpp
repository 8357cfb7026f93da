// The session state machine. Structure and names follow QuickFIX 1.15's
// Session.cpp (next_logon ~ nextLogon, verify ~ verify, ...) so that its
// behaviour can be checked against it line by line; docs/session.md lists
// the places where this implementation deliberately differs.
#include "hft/session/session.hpp"

#include <algorithm>
#include <cstring>

#include "hft/core/trace.hpp"
#include "text.hpp"

namespace hft::session {

using codec::MessageView;
using codec::RejectReason;
namespace tag = codec::tag;
using detail::is_admin_type;
using detail::Line;

namespace {

constexpr std::int64_t kNsPerSecond = 1'000'000'000;
/// Store flag of session-level messages: a replay gap-fills over them
/// without parsing them.
constexpr std::uint8_t kAdminFlag = 1;
/// Text of the Reject and Logout an inbound message over IncomingThrottleLimit gets.
constexpr std::string_view kThrottleText = "Throttle limit exceeded";

/// What a failed claim or commit means to the application.
SendStatus send_status(store::StoreStatus status) noexcept {
  return status == store::StoreStatus::kNoSpace || status == store::StoreStatus::kNoSpare
             ? SendStatus::kStoreFull
             : SendStatus::kStoreError;
}

std::int64_t floor_seconds(std::int64_t ns) noexcept {
  return ns >= 0 ? ns / kNsPerSecond : -((-ns + kNsPerSecond - 1) / kNsPerSecond);
}

bool flag_set(const MessageView& m, int t) noexcept {
  const std::string_view v = m.get(t);
  return v.size() == 1 && v[0] == 'Y';
}

}  // namespace

// ---------------------------------------------------------------------------
// Static texts

std::string_view to_string(DisconnectReason reason) noexcept {
  switch (reason) {
    case DisconnectReason::kLogoutComplete: return "logout complete";
    case DisconnectReason::kLogoutTimeout: return "timed out waiting for logout response";
    case DisconnectReason::kLogonTimeout: return "timed out waiting for logon";
    case DisconnectReason::kHeartbeatTimeout: return "timed out waiting for heartbeat";
    case DisconnectReason::kNotLoggedOn: return "message not allowed in the logon state";
    case DisconnectReason::kInvalidLogon: return "invalid logon";
    case DisconnectReason::kLogonRejected: return "logon rejected";
    case DisconnectReason::kUnauthenticated: return "logon credentials refused";
    case DisconnectReason::kSeqNumTooLow: return "MsgSeqNum too low";
    case DisconnectReason::kMissingMsgSeqNum: return "message without MsgSeqNum";
    case DisconnectReason::kIncorrectBeginString: return "incorrect BeginString";
    case DisconnectReason::kOutsideSchedule: return "outside the session schedule";
    case DisconnectReason::kApplication: return "application request";
    case DisconnectReason::kStoreError: return "message store error";
    case DisconnectReason::kThrottled: return "incoming throttle limit exceeded";
  }
  return "unknown";
}

std::string_view to_string(SendStatus status) noexcept {
  switch (status) {
    case SendStatus::kOk: return "ok";
    case SendStatus::kNotLoggedOn: return "not logged on";
    case SendStatus::kDoNotSend: return "application declined (do not send)";
    case SendStatus::kStoreFull: return "store full";
    case SendStatus::kStoreError: return "store error";
    case SendStatus::kEncodeError: return "encode error";
    case SendStatus::kBusy: return "another message is being built";
    case SendStatus::kNotStarted: return "message not started";
    case SendStatus::kThrottled: return "throttled (OutgoingThrottleLimit reached)";
    case SendStatus::kStoreBusy:
      return "store busy (no journal segment ready yet)";
  }
  return "unknown";
}

std::string_view to_string(SessionState state) noexcept {
  switch (state) {
    case SessionState::kDisconnected: return "disconnected";
    case SessionState::kConnected: return "connected";
    case SessionState::kLogonSent: return "logon sent";
    case SessionState::kLoggedOn: return "logged on";
    case SessionState::kLogoutSent: return "logout sent";
  }
  return "unknown";
}

std::string_view to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kError: return "ERROR";
  }
  return "INFO";
}

std::string_view business_reject_text(BusinessRejectReason reason) noexcept {
  switch (reason) {
    case BusinessRejectReason::kOther: return "Other";
    case BusinessRejectReason::kUnknownId: return "Unknown ID";
    case BusinessRejectReason::kUnknownSecurity: return "Unknown Security";
    case BusinessRejectReason::kUnsupportedMessageType: return "Unsupported Message Type";
    case BusinessRejectReason::kApplicationNotAvailable: return "Application not available";
    case BusinessRejectReason::kConditionallyRequiredFieldMissing: return "Conditionally required field missing";
    case BusinessRejectReason::kNotAuthorized: return "Not authorized";
    case BusinessRejectReason::kDeliverToFirmNotAvailable: return "DeliverTo firm not available at this time";
  }
  return "Other";
}

// ---------------------------------------------------------------------------
// The queue of messages received ahead of a gap (QuickFIX's SessionState
// queue): raw bytes in one arena, indexed by MsgSeqNum. Sized at creation.

class Session::Queue {
 public:
  // Neither the arena nor the index is written until messages are queued
  // (a gap being filled): a session that never queues keeps none of either
  // in memory.
  Queue(std::size_t bytes, std::size_t messages) : arena_(bytes), arena_size_(bytes), entries_(messages) {}

  /// Holds a copy of `bytes` as message `seq` (replacing an older copy).
  bool push(std::uint64_t seq, std::string_view bytes) noexcept {
    erase(seq);
    if (count_ == entries_.size()) return false;
    if (arena_size_ - used_ < bytes.size()) {
      compact();
      if (arena_size_ - used_ < bytes.size()) return false;
    }
    if (!bytes.empty()) std::memcpy(arena_.data() + used_, bytes.data(), bytes.size());
    entries_[count_++] = Entry{seq, used_, bytes.size()};
    used_ += bytes.size();
    return true;
  }
  /// Removes message `seq` and returns a view of its bytes, valid until the
  /// next push (pushes do not happen while a queued message is handled).
  bool take(std::uint64_t seq, std::string_view& out) noexcept {
    for (std::size_t i = 0; i < count_; ++i) {
      if (entries_[i].seq == seq) {
        out = {arena_.data() + entries_[i].offset, entries_[i].length};
        entries_[i] = entries_[--count_];
        if (count_ == 0) used_ = 0;  // the view stays valid: nothing is overwritten yet
        return true;
      }
    }
    return false;
  }
  /// Drops messages below `seq` (overtaken by a SequenceReset).
  void drop_below(std::uint64_t seq) noexcept {
    for (std::size_t i = 0; i < count_;) {
      if (entries_[i].seq < seq) {
        entries_[i] = entries_[--count_];
      } else {
        ++i;
      }
    }
    if (count_ == 0) used_ = 0;
  }
  void clear() noexcept {
    count_ = 0;
    used_ = 0;
  }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }

 private:
  struct Entry {
    std::uint64_t seq;
    std::size_t offset;
    std::size_t length;
  };
  void erase(std::uint64_t seq) noexcept {
    for (std::size_t i = 0; i < count_; ++i) {
      if (entries_[i].seq == seq) {
        entries_[i] = entries_[--count_];
        return;
      }
    }
  }
  void compact() noexcept {
    std::sort(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(count_),
              [](const Entry& a, const Entry& b) { return a.offset < b.offset; });
    std::size_t at = 0;
    for (std::size_t i = 0; i < count_; ++i) {
      std::memmove(arena_.data() + at, arena_.data() + entries_[i].offset, entries_[i].length);
      entries_[i].offset = at;
      at += entries_[i].length;
    }
    used_ = at;
  }

  core::ByteBuffer arena_;
  std::size_t arena_size_ = 0;
  core::UninitArray<Entry> entries_;  // the first count_ are held
  std::size_t count_ = 0;
  std::size_t used_ = 0;
};

std::size_t Session::queued_messages() const noexcept { return queue_->size(); }

// ---------------------------------------------------------------------------
// A throttle's window: the times of the last `limit` events, oldest first, in
// a ring allocated at creation. An event at t is allowed when fewer than
// `limit` happened in (t - interval, t], so no interval of that length ever
// holds more than `limit` of them.

class Session::Window {
 public:
  Window(std::uint32_t limit, std::uint32_t interval_ms)
      : times_(std::make_unique<std::int64_t[]>(limit)),
        limit_(limit),
        interval_ns_(std::int64_t{interval_ms} * 1'000'000) {}

  /// True if an event at `t` would be one too many.
  [[nodiscard]] bool full(std::int64_t t) const noexcept {
    return count_ == limit_ && t - times_[head_] < interval_ns_;
  }
  /// An event at `t` (not full(t)).
  void record(std::int64_t t) noexcept {
    if (count_ < limit_) {
      times_[count_++] = t;  // head_ stays 0 until the ring is full
      return;
    }
    times_[head_] = t;
    if (++head_ == limit_) head_ = 0;
  }
  [[nodiscard]] std::uint32_t limit() const noexcept { return limit_; }

 private:
  std::unique_ptr<std::int64_t[]> times_;
  std::uint32_t limit_;
  std::uint32_t head_ = 0;  // oldest, once full
  std::uint32_t count_ = 0;
  std::int64_t interval_ns_;
};

// ---------------------------------------------------------------------------
// Construction

Session::Session(SessionSettings settings, store::MessageStore& store, Application& app, Output& output,
                 Logger* logger)
    : settings_(std::move(settings)),
      id_(settings_.id()),
      store_(store),
      app_(app),
      output_(output),
      logger_(logger) {}

Session::~Session() = default;

Expected<std::unique_ptr<Session>> Session::create(SessionSettings settings, store::MessageStore& store,
                                                   Application& app, Output& output, Logger* logger,
                                                   Instant now) {
  if (auto ok = settings.check(); !ok) return ok.error();
  std::unique_ptr<Session> s(new Session(std::move(settings), store, app, output, logger));
  if (auto ok = s->init(now); !ok) return ok.error();
  app.on_create(*s);
  return s;
}

Expected<void> Session::init(Instant now) {
  now_ = now;
  (void)codec::parse_begin_string(settings_.begin_string, version_);
  precision_ = settings_.timestamp_precision.value_or(
      version_ >= codec::FixVersion::kFix42 ? codec::TimePrecision::kMillis : codec::TimePrecision::kSeconds);
  heart_bt_int_ = settings_.heart_bt_int;

  if (version_ == codec::FixVersion::kFixT11) {
    const std::string_view code = appl_ver_id_code(settings_.default_appl_ver_id);
    appl_ver_id_len_ = std::min(code.size(), sizeof(appl_ver_id_));
    if (appl_ver_id_len_ != 0) std::memcpy(appl_ver_id_, code.data(), appl_ver_id_len_);
  }

  // Dictionaries: the session's own (built in when none), combined with the
  // application's for FIXT. Without an application dictionary, application
  // messages are checked for their header only.
  std::shared_ptr<const codec::Dictionary> session_dict =
      settings_.dictionary ? settings_.dictionary : codec::Dictionary::builtin(version_);
  if (!session_dict) return Error{"DataDictionary: no built-in dictionary for " + settings_.begin_string};
  if (version_ == codec::FixVersion::kFixT11 && settings_.app_dictionary) {
    dictionary_ = settings_.combined_dictionary ? settings_.combined_dictionary
                                                : codec::Dictionary::combine(*session_dict, *settings_.app_dictionary);
    app_dictionary_ = settings_.app_dictionary;
    validate_app_ = true;
  } else {
    dictionary_ = session_dict;
    validate_app_ = version_ != codec::FixVersion::kFixT11 && settings_.dictionary != nullptr;
  }
  codec::ValidationOptions vo = settings_.validation;
  vo.check_begin_string = false;  // checked here first: a wrong one is answered with a Logout
  validator_ = std::make_unique<codec::Validator>(*dictionary_, vo);
  if (version_ == codec::FixVersion::kFixT11 && settings_.app_dictionary) {
    transport_dictionary_ = session_dict;
    admin_validator_ = std::make_unique<codec::Validator>(*transport_dictionary_, vo);
  }

  frame_options_.max_body_length = settings_.max_message_size;
  frame_options_.verify_checksum = settings_.validate_length_and_checksum && settings_.validate_checksum;

  char statics[512];
  Line st(statics, sizeof(statics));
  auto add_static = [&st](int t, const std::string& v) {
    if (!v.empty()) st << t << '=' << v << codec::kSoh;
  };
  add_static(tag::kSenderSubID, settings_.sender_sub_id);
  add_static(142, settings_.sender_location_id);
  add_static(tag::kTargetSubID, settings_.target_sub_id);
  add_static(143, settings_.target_location_id);
  if (!header_.init(settings_.begin_string, settings_.sender_comp_id, settings_.target_comp_id, st.view())) {
    return Error{"SenderCompID/TargetCompID/SubID/LocationID: the session header does not encode "
                 "(too long or malformed)"};
  }

  rx_ = core::ByteBuffer(settings_.max_message_size + 256);
  oversize_head_ = core::ByteBuffer(std::min<std::size_t>(settings_.max_message_size, 4096));
  tx_ = core::ByteBuffer(settings_.max_message_size + 1024);
  gap_fill_ = core::ByteBuffer(2048);
  queue_ = std::make_unique<Queue>(settings_.queue_capacity_bytes, settings_.queue_capacity_messages);
  // Sized once from MaxFieldsPerMessage: a longer message is rejected, never
  // a reason to grow on the receive path.
  view_ = std::make_unique<MessageView>(settings_.max_fields_per_message);
  replay_view_ = std::make_unique<MessageView>(settings_.max_fields_per_message);
  if (settings_.outgoing_throttle_limit != 0) {
    out_throttle_.window =
        std::make_unique<Window>(settings_.outgoing_throttle_limit, settings_.outgoing_throttle_interval_ms);
  }
  if (settings_.incoming_throttle_limit != 0) {
    in_throttle_.window =
        std::make_unique<Window>(settings_.incoming_throttle_limit, settings_.incoming_throttle_interval_ms);
  }

  // Every outgoing message is claimed at MaxMessageSize: find out now if the
  // store cannot give that much (without claiming: a journal that has no
  // segment yet creates none before the first message).
  if (store_.max_claim() < settings_.max_message_size) {
    return Error{"MaxMessageSize: the message store cannot claim " + std::to_string(settings_.max_message_size) +
                 " bytes (" + std::string(store::to_string(store::StoreStatus::kTooLarge)) + ", at most " +
                 std::to_string(store_.max_claim()) +
                 "); configure the store for messages this large or lower MaxMessageSize"};
  }

  if (now.utc_ns != 0 && !settings_.schedule.is_always_open() &&
      !settings_.schedule.same_period(now.utc_ns, store_.creation_time())) {
    reset_store();
  }
  return {};
}

// ---------------------------------------------------------------------------
// Logging

void Session::log(LogLevel level, std::string_view text) noexcept {
  if (logger_ != nullptr && logger_->enabled(level)) logger_->log(level, id_, text);
}

#define HFT_SESSION_LOG(level, expr)                 \
  do {                                               \
    if (log_enabled(level)) {                        \
      Line line_(log_buf_, sizeof(log_buf_));        \
      line_ << expr;                                 \
      logger_->log(level, id_, line_.view());        \
    }                                                \
  } while (0)

// ---------------------------------------------------------------------------
// Input

void Session::on_connected(Instant now) noexcept {
  now_ = now;
  if (connected_) return;
  connected_ = true;
  rx_len_ = 0;
  oversize_ = OversizeState{};
  connected_mono_ = now.mono_ns;
  last_received_mono_ = now.mono_ns;
  last_sent_mono_ = now.mono_ns;
  test_requests_ = 0;
  log(LogLevel::kInfo, "Connected");
  check_schedule();
  if (!connected_) return;
  if (settings_.initiator && enabled_ && settings_.schedule.is_open(now.utc_ns)) generate_logon();
}

void Session::on_disconnected(Instant now) noexcept {
  now_ = now;
  if (!connected_ && !received_logon_ && !sent_logon_) return;
  log(LogLevel::kInfo, "Disconnected by the counterparty");
  if (connected_) ++counters_.disconnects;
  connected_ = false;  // the peer closed: do not ask the Output to close again
  do_disconnect(DisconnectReason::kApplication);
}

std::size_t Session::on_bytes(std::span<const char> bytes, Instant now) noexcept {
  if (in_input_) return bytes.size();  // not re-entrant: an application callback fed bytes
  now_ = now;
  if (!connected_) return bytes.size();
  in_input_ = true;
  const bool replaying = replay_.active;  // a replay started by these bytes already sent a batch
  const bool was_paused = input_paused_;
  input_paused_ = false;
  check_schedule();
  if (was_paused && rx_len_ != 0 && connected_) {
    // The message that waited for the store may be the one carried here.
    std::size_t used = 0;
    consume({rx_.data(), rx_len_}, used);
    std::memmove(rx_.data(), rx_.data() + used, rx_len_ - used);
    rx_len_ -= used;
  }
  std::size_t pos = input_paused_              ? 0
                    : oversize_.remaining != 0 ? skip_oversize({bytes.data(), bytes.size()})
                                               : 0;
  if (rx_len_ == 0 && connected_ && !input_paused_ && pos < bytes.size()) {
    // Common case: frame straight from the caller's buffer, keep only a tail.
    std::size_t used = pos;
    consume({bytes.data(), bytes.size()}, used);
    pos = bytes.size();
    if (input_paused_) {
      pos = used;  // the rest stays the caller's
    } else if (const std::size_t rest = bytes.size() - used; connected_ && rest > 0) {
      if (rest <= rx_.size()) {
        std::memcpy(rx_.data(), bytes.data() + used, rest);
        rx_len_ = rest;
      } else {
        ++counters_.garbled;  // cannot be a message within MaxMessageSize
      }
    }
  }
  while (pos < bytes.size() && connected_ && !input_paused_) {
    if (oversize_.remaining != 0) {
      pos += skip_oversize({bytes.data() + pos, bytes.size() - pos});
      continue;
    }
    const std::size_t n = std::min(rx_.size() - rx_len_, bytes.size() - pos);
    if (n != 0) std::memcpy(rx_.data() + rx_len_, bytes.data() + pos, n);
    rx_len_ += n;
    pos += n;
    std::size_t used = 0;
    consume({rx_.data(), rx_len_}, used);
    if (!connected_) break;
    if (used == 0 && rx_len_ == rx_.size() && !input_paused_) {
      on_garbled({rx_.data(), rx_len_}, codec::to_string(codec::FrameError::kBodyLengthTooLarge));
      used = rx_len_;
    }
    std::memmove(rx_.data(), rx_.data() + used, rx_len_ - used);
    rx_len_ -= used;
  }
  if (!connected_) {
    rx_len_ = 0;
    pos = bytes.size();
  }
  if (input_paused_ && !was_paused) ++counters_.input_pauses;
  if (replaying) continue_replay();
  release_held();
  if (store_failure_pending_) end_for_store();
  in_input_ = false;
  return pos;
}

void Session::consume(std::string_view data, std::size_t& used) noexcept {
  while (connected_ && used < data.size()) {
    const codec::FrameResult fr = codec::frame(data.substr(used), frame_options_);
    if (fr.status == codec::FrameStatus::kNeedMore) break;
    if (fr.error == codec::FrameError::kBodyLengthTooLarge) {
      const Oversize o = begin_oversize(data.substr(used));
      if (o == Oversize::kWait) break;
      if (o == Oversize::kStarted) {
        used += skip_oversize(data.substr(used));
        continue;
      }
    }
    const std::string_view bytes = data.substr(used, fr.size);
    used += fr.size;
    if (fr.status == codec::FrameStatus::kGarbled) {
      on_garbled(bytes, codec::to_string(fr.error), fr.error == codec::FrameError::kBadCheckSum);
    } else {
      // Nothing of it is acted on before the store has room for it and an
      // answer: while the journal service is behind, the message waits
      // (on_bytes) rather than failing and ending the session.
      if (!store_.ready_for(bytes.size(), settings_.max_message_size)) [[unlikely]] {
        used -= fr.size;
        input_paused_ = true;
        break;
      }
      ++counters_.messages_received;
      handle_message(bytes, false);
    }
  }
}

Session::Oversize Session::begin_oversize(std::string_view data) noexcept {
  // frame() has checked "8=FIX...^9=" and that the digits exceed the limit.
  const std::size_t soh = data.find(codec::kSoh);
  if (soh == std::string_view::npos || soh + 3 > data.size()) return Oversize::kGarbage;
  std::uint64_t body_length = 0;
  std::size_t q = soh + 3;
  for (; q < data.size() && data[q] != codec::kSoh; ++q) {
    const unsigned d = static_cast<unsigned char>(data[q] - '0');
    if (d > 9 || q - (soh + 3) >= 20) return Oversize::kGarbage;
    if (__builtin_mul_overflow(body_length, 10u, &body_length) ||
        __builtin_add_overflow(body_length, d, &body_length))
      return Oversize::kGarbage;
  }
  if (q == data.size()) return Oversize::kWait;  // the rest of the digits is still to come
  // Beyond kOversizeFactor x MaxMessageSize a BodyLength is more likely
  // garbage than a message: framing resynchronises at the next "8=FIX".
  if (body_length / kOversizeFactor > settings_.max_message_size) return Oversize::kGarbage;
  oversize_ = OversizeState{};
  oversize_.size = q + 1 + body_length + 7;  // "10=ddd^" follows the body
  oversize_.remaining = oversize_.size;
  return Oversize::kStarted;
}

std::size_t Session::skip_oversize(std::string_view data) noexcept {
  OversizeState& o = oversize_;
  if (o.remaining == 0) return 0;
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(o.remaining, data.size()));
  const std::size_t keep = std::min(n, oversize_head_.size() - o.head_len);
  if (keep != 0) std::memcpy(oversize_head_.data() + o.head_len, data.data(), keep);
  o.head_len += keep;
  for (std::size_t i = 0; i < n; ++i) o.sum += static_cast<unsigned char>(data[i]);
  if (n >= sizeof(o.tail)) {
    std::memcpy(o.tail, data.data() + n - sizeof(o.tail), sizeof(o.tail));
  } else {
    std::memmove(o.tail, o.tail + n, sizeof(o.tail) - n);
    std::memcpy(o.tail + sizeof(o.tail) - n, data.data(), n);
  }
  o.remaining -= n;
  if (o.remaining == 0) finish_oversize();
  return n;
}

void Session::finish_oversize() noexcept {
  const OversizeState& o = oversize_;
  const char* t = o.tail;
  const auto digit = [](char c) { return static_cast<unsigned char>(c - '0') <= 9; };
  bool ok = t[0] == codec::kSoh && t[1] == '1' && t[2] == '0' && t[3] == '=' && digit(t[4]) && digit(t[5]) &&
            digit(t[6]) && t[7] == codec::kSoh;
  if (ok && frame_options_.verify_checksum) {
    std::uint32_t trailer = 0;
    for (int i = 1; i < 8; ++i) trailer += static_cast<unsigned char>(t[i]);
    const unsigned declared = static_cast<unsigned>((t[4] - '0') * 100 + (t[5] - '0') * 10 + (t[6] - '0'));
    ok = ((o.sum - trailer) & 0xffu) == declared;
  }
  // The header, cut after its last whole field.
  std::string_view head(oversize_head_.data(), o.head_len);
  head = head.substr(0, head.rfind(codec::kSoh) + 1);
  if (!ok) {
    on_garbled(head, "BodyLength above MaxMessageSize, and no valid CheckSum where it ends");
    return;
  }
  ++counters_.messages_received;
  char text[128];
  Line line(text, sizeof(text));
  line << "Message of " << o.size << " bytes is larger than MaxMessageSize (" << settings_.max_message_size
       << ')';
  handle_message(head, false, line.view());
}

void Session::on_garbled(std::string_view bytes, std::string_view why, bool framed) noexcept {
  ++counters_.garbled;
  // QuickFIX: an invalid Logon ends the connection; other garbage is ignored
  // (or, with RejectGarbledMessage, rejected).
  const bool logon = bytes.substr(0, 5) == "8=FIX" && detail::peek_msg_type(bytes) == "A";
  if (!logon && framed && settings_.reject_garbled_message && reject_garbled(bytes, why)) return;
  HFT_SESSION_LOG(LogLevel::kWarn, "Garbled input ignored (" << why << ", " << bytes.size() << " bytes)");
  if (logon) {
    log(LogLevel::kError, "Logon message is not valid");
    do_disconnect(DisconnectReason::kInvalidLogon);
  }
}

void Session::handle_message(std::string_view bytes, bool queued, std::string_view refusal) noexcept {
  MessageView& msg = *view_;
  const codec::ParseStatus ps = msg.parse(bytes);
  // More fields than MaxFieldsPerMessage: a well-framed message that is
  // rejected below (its header is among the fields kept), never dropped, or
  // the peer's resend would be dropped again and the session stall. Anything
  // else parse() refuses, a tag that is not a number included, is garbled:
  // ignored without consuming its MsgSeqNum, as QuickFIX does.
  const bool too_many_fields = ps == codec::ParseStatus::kTooManyFields || !refusal.empty();
  if (ps != codec::ParseStatus::kOk && !too_many_fields) {
    on_garbled(bytes, codec::to_string(ps), true);
    return;
  }
  const std::string_view type = msg.msg_type();
  bool stop = type.empty();
  if (stop) on_garbled(bytes, "no MsgType", true);

  // QuickFIX checks 49 and 56 are present before anything else.
  if (!stop && (!msg.has(tag::kSenderCompID) || !msg.has(tag::kTargetCompID))) {
    generate_reject(msg, static_cast<int>(RejectReason::kRequiredTagMissing),
                    msg.has(tag::kSenderCompID) ? tag::kTargetCompID : tag::kSenderCompID);
    stop = true;
  }
  if (!stop && msg.get(tag::kBeginString) != header_.begin_string()) {
    stop = true;
    if (type == "5") {
      next_logout(msg);
    } else {
      HFT_SESSION_LOG(LogLevel::kError, "Incorrect BeginString " << msg.get(tag::kBeginString));
      generate_logout("Incorrect BeginString");
      incr_target();
      if (!received_logon_) do_disconnect(DisconnectReason::kIncorrectBeginString);
    }
  }
  if (!stop && msg.get(tag::kMsgSeqNum).empty()) {
    // A Reject must carry RefSeqNum (45), which such a message cannot give:
    // the session rules log out instead.
    stop = true;
    log(LogLevel::kError, "Received message without MsgSeqNum");
    generate_logout("Received message without MsgSeqNum");
    do_disconnect(DisconnectReason::kMissingMsgSeqNum);
  }
  if (!stop && too_many_fields) {
    stop = true;
    char text[96];
    Line t(text, sizeof(text));
    if (refusal.empty()) {
      t << "Message has more than " << msg.max_fields() << " fields (MaxFieldsPerMessage)";
      refusal = t.view();
    }
    generate_reject(msg, static_cast<int>(RejectReason::kOther), 0, refusal);
  }
  if (!stop && type == "A" && version_ == codec::FixVersion::kFixT11) {
    const std::string_view v = msg.get(tag::kDefaultApplVerID);
    target_appl_ver_id_len_ = std::min(v.size(), sizeof(target_appl_ver_id_));
    if (!v.empty()) std::memcpy(target_appl_ver_id_, v.data(), target_appl_ver_id_len_);
  }
  if (!stop) {
    const bool admin = is_admin_type(type);
    if (admin || validate_app_) {
      const codec::ValidationResult r = validate(msg, admin);
      if (!r.ok()) {
        stop = true;
        if (r.failure == codec::ValidationFailure::kGarbled) {
          on_garbled(bytes, r.text, true);
        } else {
          const int ref = r.reason == RejectReason::kInvalidMsgType ? 0 : r.ref_tag;
          generate_reject(msg, static_cast<int>(r.reason), ref);
        }
      }
    } else {
      // Not checked against a dictionary: the header fields the session reads.
      std::int64_t ts = 0;
      if (!msg.has(tag::kSendingTime)) {
        generate_reject(msg, static_cast<int>(RejectReason::kRequiredTagMissing), tag::kSendingTime);
        stop = true;
      } else if (!msg.get_timestamp(tag::kSendingTime, ts)) {
        generate_reject(msg, static_cast<int>(RejectReason::kIncorrectDataFormat), tag::kSendingTime);
        stop = true;
      }
    }
  }
  // A MsgSeqNum the dictionary's SEQNUM format lets through but that is no
  // sequence number ("-1", beyond kMaxSeqNum): read as a number it would be
  // "too low" and end the session.
  std::uint64_t seq = 0;
  if (!stop && !read_seq_num(msg, tag::kMsgSeqNum, seq)) {
    generate_reject(msg, static_cast<int>(RejectReason::kIncorrectDataFormat), tag::kMsgSeqNum);
    stop = true;
  }
  if (!stop && connected_) dispatch(msg, type);
  if (store_failure_pending_) [[unlikely]]
    end_for_store();

  if (!queued && connected_) process_queue();
  if (!queued && pending_logout_) {
    pending_logout_ = false;
    if (connected_ && is_logged_on() && !sent_logout_) generate_logout({logout_reason_, logout_reason_len_});
  }
}

void Session::dispatch(const MessageView& msg, std::string_view type) noexcept {
  if (type.size() == 1) {
    switch (type[0]) {
      case 'A': next_logon(msg); return;
      case '0': next_heartbeat(msg); return;
      case '1': next_test_request(msg); return;
      case '2': next_resend_request(msg); return;
      case '3': next_reject(msg); return;
      case '4': next_sequence_reset(msg); return;
      case '5': next_logout(msg); return;
      default: break;
    }
  }
  next_app(msg, type);
}

// ---------------------------------------------------------------------------
// Checks common to every message (QuickFIX's verify)

bool Session::valid_logon_state(std::string_view type) const noexcept {
  const bool logon = type == "A";
  // An acceptor's first message must be a Logon (QuickFIX lets a
  // SequenceReset or Reject through before the Logon; we do not).
  if (!settings_.initiator && !received_logon_ && !logon) return false;
  if ((logon && sent_reset_) || received_reset_) return true;
  if ((logon && !received_logon_) || (!logon && received_logon_)) return true;
  if (type == "5" && sent_logon_) return true;
  if (type != "5" && sent_logout_) return true;
  if (type == "4" || type == "3") return true;
  return false;
}

bool Session::is_good_time(const MessageView& msg) const noexcept {
  if (!settings_.check_latency) return true;
  std::int64_t sending = 0;
  if (!msg.get_timestamp(tag::kSendingTime, sending)) return false;
  // Whole seconds, as QuickFIX compares UtcTimeStamps.
  const std::int64_t diff = floor_seconds(now_.utc_ns) - floor_seconds(sending);
  return (diff < 0 ? -diff : diff) <= settings_.max_latency;
}

bool Session::is_correct_comp_id(const MessageView& msg) const noexcept {
  if (!settings_.check_comp_id) return true;
  return msg.get(tag::kTargetCompID) == settings_.sender_comp_id &&
         msg.get(tag::kSenderCompID) == settings_.target_comp_id;
}

bool Session::verify(const MessageView& msg, bool check_too_high, bool check_too_low, bool app) noexcept {
  const std::string_view type = msg.msg_type();
  if (!valid_logon_state(type)) {
    HFT_SESSION_LOG(LogLevel::kError, "Logon state is not valid for message (MsgType=" << type << ")");
    do_disconnect(type == "A" ? DisconnectReason::kInvalidLogon : DisconnectReason::kNotLoggedOn);
    return false;
  }
  if (!is_good_time(msg)) {
    log(LogLevel::kError, "SendingTime accuracy problem");
    if (generate_reject(msg, static_cast<int>(RejectReason::kSendingTimeAccuracyProblem), 0)) {
      generate_logout({});
    }
    return false;
  }
  if (!is_correct_comp_id(msg)) {
    log(LogLevel::kError, "CompID problem");
    if (generate_reject(msg, static_cast<int>(RejectReason::kCompIdProblem), 0)) generate_logout({});
    return false;
  }
  std::uint64_t seq = 0;
  (void)msg.get_uint(tag::kMsgSeqNum, seq);
  const std::uint64_t expected = store_.next_target_seq();
  if (check_too_high && seq > expected) {
    do_target_too_high(msg, seq);
    return false;
  }
  if (check_too_low && seq < expected) {
    do_target_too_low(msg, seq);
    return false;
  }
  // IncomingThrottleLimit counts application messages as they come in
  // sequence: not those held behind a gap (they came earlier, at the peer's
  // pace), nor PossDup resends while we wait for the ones we asked for.
  const bool throttled = app && in_throttle_.window != nullptr && seq == expected && !from_gap_queue_ &&
                         !(resend_requested() && flag_set(msg, tag::kPossDupFlag));
  if ((check_too_high || check_too_low) && resend_requested()) check_resend_satisfied(seq);
  last_received_mono_ = now_.mono_ns;
  test_requests_ = 0;
  if (throttled && !admit_incoming(msg)) [[unlikely]]
    return false;
  // The inbound journal holds the accepted stream, in sequence: a message
  // ahead of a gap (a Logon, a ResendRequest) is journaled when the gap is
  // filled (process_queue), one behind it not at all. A SequenceReset-Reset
  // is journaled where it comes, as it moves the sequence itself.
  if (seq == expected || msg.msg_type() == "4") {
    const std::string_view text = msg.text();
    if (const store::StoreStatus st = store_.store_inbound(seq, now_.utc_ns, {text.data(), text.size()});
        st != store::StoreStatus::kOk) [[unlikely]] {
      // Not journaled, so not accepted: the application never sees it and
      // the peer resends it after the next logon.
      store_failed(st, false);
      return false;
    }
  }
  return true;
}

bool Session::admit_incoming(const MessageView& msg) noexcept {
  Window& w = *in_throttle_.window;
  if (!w.full(now_.mono_ns)) [[likely]] {
    w.record(now_.mono_ns);
    return true;
  }
  ++counters_.incoming_throttled;
  const std::string_view seq_text = msg.get(tag::kMsgSeqNum);
  const IncomingThrottleAction action = settings_.incoming_throttle_action;
  if (action == IncomingThrottleAction::kDisconnect) {
    // Not accepted (its number stays expected): after the next logon it is
    // asked for again and, resent, processed.
    HFT_SESSION_LOG(LogLevel::kError, "Incoming throttle: more than "
                                          << w.limit() << " application messages in "
                                          << settings_.incoming_throttle_interval_ms
                                          << " ms (IncomingThrottleLimit); "
                                          << "message " << seq_text << " not accepted, disconnecting");
    do_disconnect(DisconnectReason::kThrottled);
    return false;
  }
  const bool logout = action == IncomingThrottleAction::kLogout && !sent_logout_;
  if (throttle_event(in_throttle_, settings_.incoming_throttle_interval_ms)) {
    HFT_SESSION_LOG(LogLevel::kWarn,
                    "Incoming throttle: more than "
                        << w.limit() << " application messages in " << settings_.incoming_throttle_interval_ms
                        << " ms (IncomingThrottleLimit); "
                        << "message " << seq_text << " rejected" << (logout ? ", logging out" : "") << "; "
                        << in_throttle_.unreported << " more rejected since the last report");
    in_throttle_.unreported = 0;
  }
  // A Reject like any other (its number consumed, so no gap follows), without
  // a log line per message.
  (void)generate_reject(msg, static_cast<int>(RejectReason::kOther), 0, kThrottleText, true);
  if (logout && connected_) generate_logout(kThrottleText);
  return false;
}

bool Session::throttle_event(Throttle& t, std::uint32_t interval_ms) noexcept {
  const std::int64_t now = now_.mono_ns;
  if (t.reported && now - t.reported_ns < std::int64_t{interval_ms} * 1'000'000) {
    ++t.unreported;
    return false;
  }
  t.reported = true;
  t.reported_ns = now;
  return true;
}

void Session::check_resend_satisfied(std::uint64_t seq) noexcept {
  if (resend_target_end_ > resend_end_ && seq >= resend_end_ && seq < resend_target_end_) {
    // Chunked ResendRequest: this chunk is in, ask for the next.
    generate_resend_request(seq + 1, resend_target_end_);
    return;
  }
  if (seq >= resend_target_end_) {
    HFT_SESSION_LOG(LogLevel::kInfo, "ResendRequest for messages FROM: " << resend_begin_ << " TO: "
                                                                        << resend_target_end_
                                                                        << " has been satisfied.");
    resend_begin_ = resend_end_ = resend_target_end_ = 0;
  }
}

void Session::do_target_too_high(const MessageView& msg, std::uint64_t seq) noexcept {
  const std::uint64_t expected = store_.next_target_seq();
  HFT_SESSION_LOG(LogLevel::kWarn, "MsgSeqNum too high, expecting " << expected << " but received " << seq);
  if (queue_->push(seq, msg.text())) {
    ++counters_.messages_queued;
  } else {
    ++counters_.queue_overflows;
    HFT_SESSION_LOG(LogLevel::kWarn, "Queue full: message " << seq << " not held, it will be requested again");
  }
  if (resend_requested() && !settings_.send_redundant_resend_requests && seq >= resend_begin_) {
    HFT_SESSION_LOG(LogLevel::kInfo, "Already sent ResendRequest FROM: " << resend_begin_ << " TO: "
                                                                        << resend_target_end_
                                                                        << ".  Not sending another.");
    return;
  }
  generate_resend_request(expected, seq - 1);
}

void Session::do_target_too_low(const MessageView& msg, std::uint64_t seq) noexcept {
  const std::uint64_t expected = store_.next_target_seq();
  if (!flag_set(msg, tag::kPossDupFlag)) {
    char text[96];
    Line t(text, sizeof(text));
    t << "MsgSeqNum too low, expecting " << expected << " but received " << seq;
    log(LogLevel::kError, t.view());
    generate_logout(t.view());
    do_disconnect(DisconnectReason::kSeqNumTooLow);
    return;
  }
  // A possible duplicate of something already received: ignore it, after
  // checking OrigSendingTime (QuickFIX's doPossDup).
  if (msg.msg_type() != "4") {
    std::int64_t orig = 0, sending = 0;
    if (!msg.has(tag::kOrigSendingTime)) {
      generate_reject(msg, static_cast<int>(RejectReason::kRequiredTagMissing), tag::kOrigSendingTime);
      return;
    }
    if (msg.get_timestamp(tag::kOrigSendingTime, orig) && msg.get_timestamp(tag::kSendingTime, sending) &&
        orig > sending) {
      if (generate_reject(msg, static_cast<int>(RejectReason::kSendingTimeAccuracyProblem), 0)) {
        generate_logout({});
      }
      return;
    }
  }
  HFT_SESSION_LOG(LogLevel::kDebug, "Duplicate message " << seq << " ignored");
}

void Session::add_last_processed(codec::MessageWriter& w) const noexcept {
  if (settings_.enable_last_msg_seq_num_processed) [[unlikely]]
    w.add_uint(tag::kLastMsgSeqNumProcessed, store_.next_target_seq() - 1);
}

bool Session::read_seq_num(const MessageView& msg, int tag, std::uint64_t& out) noexcept {
  return msg.get_uint(tag, out) && out <= kMaxSeqNum;
}

void Session::incr_target() noexcept { store_.set_next_target_seq(store_.next_target_seq() + 1); }

namespace {

// Tags QuickFIX files under the header whatever the session's dictionary says
// (its Message::isHeaderField): the header fields of every FIX version.
constexpr int kAnyVersionHeaderTags[] = {8,   9,   34,  35,  43,  49,  50,  52,  56,  57,   90,   91,
                                         97,  115, 116, 122, 128, 129, 142, 143, 144, 145,  212,  213,
                                         347, 369, 370, 627, 628, 629, 630, 1128, 1129, 1156};

bool is_any_version_header_tag(int tag) noexcept {
  for (const int t : kAnyVersionHeaderTags) {
    if (t == tag) return true;
  }
  return false;
}

// Rejects QuickFIX finds while it visits the fields one by one (after the
// field order, MsgType and required-field checks).
bool is_per_field_reason(RejectReason r) noexcept {
  switch (r) {
    case RejectReason::kInvalidTagNumber:
    case RejectReason::kTagNotDefinedForMessageType:
    case RejectReason::kTagSpecifiedWithoutValue:
    case RejectReason::kValueIncorrect:
    case RejectReason::kIncorrectDataFormat:
    case RejectReason::kTagAppearsMoreThanOnce:
    case RejectReason::kIncorrectNumInGroupCount:
    case RejectReason::kRepeatingGroupFieldsOutOfOrder:
      return true;
    default:
      return false;
  }
}

// QuickFIX visits the header as 8, 9, 35, then by tag.
unsigned header_order(int tag) noexcept {
  return tag == 8 ? 0u : tag == 9 ? 1u : tag == 35 ? 2u : static_cast<unsigned>(tag) + 3u;
}

}  // namespace

codec::ValidationResult Session::validate(const MessageView& msg, bool admin) const noexcept {
  const codec::Validator& validator = admin && admin_validator_ ? *admin_validator_ : *validator_;
  codec::ValidationResult r = validator.validate(msg);
  if (r.ok() || r.failure != codec::ValidationFailure::kReject || !is_per_field_reason(r.reason)) return r;
  // A header tag of another FIX version that this version does not define
  // (FIX 4.0 has no OnBehalfOfLocationID, 144) is still a header field to
  // QuickFIX, so its fault comes before any body fault and among the header
  // faults in header order; the validator files such a tag under the body.
  const codec::Dictionary& dict = admin && transport_dictionary_ ? *transport_dictionary_ : *dictionary_;
  const codec::ValidationOptions& vo = settings_.validation;
  int best_tag = 0;
  RejectReason best = RejectReason::kNone;
  for (std::size_t i = 0; i < msg.size(); ++i) {
    const int tag = msg.field(i).tag;
    if (!is_any_version_header_tag(tag) || dict.header().member(tag) != nullptr) continue;
    RejectReason reason = RejectReason::kNone;
    if (msg.value_at(i).empty() && vo.check_fields_have_values) {
      reason = RejectReason::kTagSpecifiedWithoutValue;
    } else if (dict.field(tag) == nullptr) {
      reason = RejectReason::kInvalidTagNumber;
    }
    if (reason != RejectReason::kNone && (best_tag == 0 || header_order(tag) < header_order(best_tag))) {
      best_tag = tag;
      best = reason;
    }
  }
  if (best_tag == 0) return r;
  const bool ref_in_header = r.ref_tag > 0 && dict.header().member(r.ref_tag) != nullptr;
  if (ref_in_header && header_order(r.ref_tag) < header_order(best_tag)) return r;
  r.reason = best;
  r.ref_tag = best_tag;
  r.text = codec::reject_reason_text(best);
  return r;
}

void Session::process_queue() noexcept {
  while (connected_ && queue_->size() != 0) {
    const std::uint64_t expected = store_.next_target_seq();
    queue_->drop_below(expected);
    std::string_view bytes;
    if (!queue_->take(expected, bytes)) break;
    HFT_SESSION_LOG(LogLevel::kDebug, "Processing QUEUED message: " << expected);
    const std::string_view type = detail::peek_msg_type(bytes);
    if (type == "A" || type == "2") {
      // Acted on when it arrived; journaled now that it is in sequence.
      if (const store::StoreStatus st =
              store_.store_inbound(expected, now_.utc_ns, {bytes.data(), bytes.size()});
          st != store::StoreStatus::kOk) {
        store_failed(st, false);
        return;
      }
      incr_target();
      continue;
    }
    from_gap_queue_ = true;
    handle_message(bytes, true);
    from_gap_queue_ = false;
  }
}

bool Session::apply_decision(const MessageView& msg, const Decision& d) noexcept {
  if (store_failure_pending_) [[unlikely]] {
    // The application's answer to this message could not be recorded: the
    // message is not accepted, the peer resends it after the next logon.
    end_for_store();
    return false;
  }
  switch (d.kind) {
    case Decision::Kind::kAccept:
    case Decision::Kind::kDoNotSend:
      return true;
    case Decision::Kind::kReject:
      generate_reject(msg, d.reason, d.ref_tag, d.text);
      return false;
    case Decision::Kind::kBusinessReject:
      if (version_ >= codec::FixVersion::kFix42) {
        generate_business_reject(msg, d.reason, d.ref_tag, d.text);
      } else {
        const auto reason = static_cast<BusinessRejectReason>(d.reason);
        generate_reject_text(msg, !d.text.empty() ? d.text
                                  : reason == BusinessRejectReason::kUnsupportedMessageType
                                      ? std::string_view("Unsupported message type")
                                      : business_reject_text(reason));
      }
      return false;
    case Decision::Kind::kRejectLogon:
      HFT_SESSION_LOG(LogLevel::kError, "Logon rejected: " << d.text);
      generate_logout(d.text);
      do_disconnect(DisconnectReason::kLogonRejected);
      return false;
    case Decision::Kind::kLogout: {
      // Accepted; the Logout follows once the message has been handled.
      const std::size_t n = std::min(d.text.size(), sizeof(logout_reason_));
      if (n != 0) std::memcpy(logout_reason_, d.text.data(), n);
      logout_reason_len_ = n;
      pending_logout_ = true;
      return true;
    }
    case Decision::Kind::kDisconnect:
      do_disconnect(DisconnectReason::kApplication);
      return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Per message type

void Session::next_logon(const MessageView& msg) noexcept {
  if (!enabled_) {
    log(LogLevel::kError, "Session is not enabled for logon");
    do_disconnect(DisconnectReason::kLogonRejected);
    return;
  }
  if (!settings_.schedule.is_open(now_.utc_ns)) {
    log(LogLevel::kError, "Received logon outside of valid logon time");
    do_disconnect(DisconnectReason::kOutsideSchedule);
    return;
  }
  const bool reset_flag = flag_set(msg, tag::kResetSeqNumFlag);
  if (received_logon_ && !reset_flag) {
    // A second Logon on a live session, not a sequence reset.
    log(LogLevel::kError, "Logon state is not valid for message (second Logon)");
    do_disconnect(DisconnectReason::kNotLoggedOn);
    return;
  }
  std::int64_t hbi = 0;
  const bool has_hbi = msg.get_int(tag::kHeartBtInt, hbi);
  std::uint64_t seq = 0;
  (void)msg.get_uint(tag::kMsgSeqNum, seq);
  // Who the peer is is settled before its Logon may change anything: a peer
  // that only knows the CompIDs must not reset the session's numbers (141=Y)
  // or take its sequence while the real counterparty is away. A second Logon
  // on this connection comes from the peer that passed this already.
  if (!received_logon_) {
    LogonRequest req;
    req.username = msg.get(tag::kUsername);
    req.password = msg.get(tag::kPassword);
    req.new_password = msg.get(tag::kNewPassword);
    req.heart_bt_int = hbi;
    req.reset_seq_num = reset_flag;
    req.msg_seq_num = seq;
    req.message = &msg;
    if (!settings_.initiator && !credentials_match(msg)) {
      refuse_logon("Invalid credentials");
      return;
    }
    const Decision d = app_.on_logon_request(*this, req);
    if (d.kind != Decision::Kind::kAccept) {
      refuse_logon(d.text.empty() ? std::string_view("Logon refused") : d.text);
      return;
    }
  }
  received_reset_ = reset_flag;
  if (received_reset_) {
    log(LogLevel::kInfo, "Logon contains ResetSeqNumFlag=Y, resetting sequence numbers to 1");
    if (!sent_reset_) reset_store();
  }
  if (settings_.initiator && !sent_logon_ && !received_reset_) {
    log(LogLevel::kError, "Received logon response before sending request");
    do_disconnect(DisconnectReason::kInvalidLogon);
    return;
  }
  if (!settings_.initiator && settings_.reset_on_logon && !received_reset_) reset_store();

  if (!verify(msg, false, true)) {
    // verify answered (Reject/Logout) or disconnected; a Logon that failed it
    // never leaves the connection half open.
    if (connected_ && !received_logon_) do_disconnect(DisconnectReason::kInvalidLogon);
    return;
  }
  // Refused while the store is full (either journal): the Logon is not
  // accepted, the peer tries again later.
  if (const store::StoreStatus st = store_.check_room(settings_.max_message_size);
      st != store::StoreStatus::kOk) {
    store_failed(st, false);
    return;
  }

  if (!has_hbi || hbi < 0 || hbi > 86400) {
    // Said in a Logout, so that the peer learns why rather than seeing the
    // connection drop.
    char text[96];
    Line t(text, sizeof(text));
    if (has_hbi) {
      t << "HeartBtInt (108) " << hbi << " is out of range (0 to 86400 seconds)";
    } else {
      t << "HeartBtInt (108) missing or not a number";
    }
    log(LogLevel::kError, t.view());
    generate_logout(t.view());
    do_disconnect(DisconnectReason::kInvalidLogon);
    return;
  }

  Decision d = app_.from_admin(*this, msg);
  if (d.kind == Decision::Kind::kReject) d = Decision::reject_logon(d.text);
  if (!apply_decision(msg, d)) {
    if (connected_) do_disconnect(DisconnectReason::kLogonRejected);
    return;
  }

  // NextExpectedMsgSeqNum (789, FIX 4.4+): what the peer expects from us.
  std::uint64_t peer_expects = 0;
  const bool has_789 =
      version_ >= codec::FixVersion::kFix44 && msg.get_uint(tag::kNextExpectedMsgSeqNum, peer_expects);
  const std::uint64_t next_sender_at_logon = store_.next_sender_seq();
  if (has_789 && peer_expects > next_sender_at_logon) {
    char text[128];
    Line t(text, sizeof(text));
    t << "NextExpectedMsgSeqNum too high, expecting " << next_sender_at_logon << " but received "
      << peer_expects;
    log(LogLevel::kError, t.view());
    generate_logout(t.view());
    do_disconnect(DisconnectReason::kInvalidLogon);
    return;
  }

  received_logon_ = true;
  if (!settings_.initiator || (received_reset_ && !sent_reset_)) {
    if (!settings_.initiator) heart_bt_int_ = static_cast<std::int32_t>(hbi);
    log(LogLevel::kInfo, "Received logon request");
    generate_logon_reply(msg);
    log(LogLevel::kInfo, "Responding to logon request");
  } else {
    log(LogLevel::kInfo, "Received logon response");
  }
  sent_reset_ = false;
  received_reset_ = false;

  if (seq > store_.next_target_seq() && !reset_flag) {
    do_target_too_high(msg, seq);
  } else {
    incr_target();
  }
  if (has_789 && peer_expects != 0 && peer_expects < next_sender_at_logon) {
    HFT_SESSION_LOG(LogLevel::kInfo, "NextExpectedMsgSeqNum " << peer_expects << ": resending to "
                                                              << next_sender_at_logon - 1);
    start_replay(peer_expects, next_sender_at_logon - 1);
  }
  if (is_logged_on()) {
    ++counters_.logons;
    app_.on_logon(*this);
  }
}

bool Session::logon_credentials_match(const SessionSettings& settings, const MessageView& msg) noexcept {
  // Compared in constant time: how long a refusal takes says nothing of how
  // much of a guess was right.
  auto same = [](std::string_view a, std::string_view b) noexcept {
    unsigned diff = a.size() == b.size() ? 0u : 1u;
    const std::size_t n = std::max(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
      const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
      const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
      diff |= static_cast<unsigned>(x ^ y);
    }
    return diff == 0;
  };
  const bool ok_user = settings.username.empty() || same(msg.get(tag::kUsername), settings.username);
  // Before FIX.4.3 there is no Password field: RawData (96) carries it.
  codec::FixVersion version{};
  (void)codec::parse_begin_string(settings.begin_string, version);
  const int password_tag = version >= codec::FixVersion::kFix43 ? tag::kPassword : tag::kRawData;
  const bool ok_password = settings.password.empty() || same(msg.get(password_tag), settings.password);
  return ok_user && ok_password;
}

void Session::next_heartbeat(const MessageView& msg) noexcept {
  if (!verify(msg, true, true)) return;
  if (!apply_decision(msg, app_.from_admin(*this, msg))) return;
  incr_target();
}

void Session::next_test_request(const MessageView& msg) noexcept {
  if (!verify(msg, true, true)) return;
  if (!apply_decision(msg, app_.from_admin(*this, msg))) return;
  // Echoed as received, an empty TestReqID (ValidateFieldsHaveValues=N)
  // included, as QuickFIX does.
  const int id = msg.find(tag::kTestReqID);
  generate_heartbeat(id >= 0 ? msg.value_at(static_cast<std::size_t>(id)) : std::string_view{}, id >= 0);
  incr_target();
}

void Session::next_logout(const MessageView& msg) noexcept {
  if (!verify(msg, false, false)) return;
  const Decision d = app_.from_admin(*this, msg);
  if (d.kind == Decision::Kind::kDisconnect) {
    do_disconnect(DisconnectReason::kApplication);
    return;
  }
  if (!sent_logout_) {
    log(LogLevel::kInfo, "Received logout request");
    generate_logout({});
    log(LogLevel::kInfo, "Sending logout response");
  } else {
    log(LogLevel::kInfo, "Received logout response");
  }
  incr_target();
  if (settings_.reset_on_logout) reset_store();
  do_disconnect(DisconnectReason::kLogoutComplete);
}

void Session::next_reject(const MessageView& msg) noexcept {
  // QuickFIX does not check a Reject for a gap; we do, so that a Reject
  // ahead of a gap is queued like any other message.
  if (!verify(msg, true, true)) return;
  if (!apply_decision(msg, app_.from_admin(*this, msg))) return;
  incr_target();
}

void Session::next_sequence_reset(const MessageView& msg) noexcept {
  const bool gap_fill = flag_set(msg, tag::kGapFillFlag);
  if (!verify(msg, gap_fill, gap_fill)) return;
  if (!apply_decision(msg, app_.from_admin(*this, msg))) return;
  std::uint64_t new_seq = 0;
  if (!read_seq_num(msg, tag::kNewSeqNo, new_seq)) {
    // Not a number, or beyond kMaxSeqNum: nothing changes (QuickFIX's
    // answer to a NewSeqNo its integer type cannot hold).
    generate_reject(msg, static_cast<int>(msg.has(tag::kNewSeqNo) ? RejectReason::kIncorrectDataFormat
                                                                    : RejectReason::kRequiredTagMissing),
                    tag::kNewSeqNo);
    return;
  }
  const std::uint64_t expected = store_.next_target_seq();
  HFT_SESSION_LOG(LogLevel::kInfo, "Received SequenceReset FROM: " << expected << " TO: " << new_seq);
  if (new_seq > expected) {
    store_.set_next_target_seq(new_seq);
  } else if (new_seq < expected) {
    // QuickFIX's Reject: reason 5 with its standard text, no RefTagID.
    generate_reject(msg, static_cast<int>(RejectReason::kValueIncorrect), 0);
  }
}

void Session::next_resend_request(const MessageView& msg) noexcept {
  if (!verify(msg, false, false)) return;
  if (!apply_decision(msg, app_.from_admin(*this, msg))) return;
  ++counters_.resend_requests_received;
  std::uint64_t begin = 0, end = 0;
  for (const int t : {tag::kBeginSeqNo, tag::kEndSeqNo}) {
    if (!read_seq_num(msg, t, t == tag::kBeginSeqNo ? begin : end)) {
      // Not answered with a replay; the message itself is in sequence.
      generate_reject(msg, static_cast<int>(msg.has(t) ? RejectReason::kIncorrectDataFormat
                                                       : RejectReason::kRequiredTagMissing),
                      t);
      return;
    }
  }
  HFT_SESSION_LOG(LogLevel::kInfo, "Received ResendRequest FROM: " << begin << " TO: " << end);
  const std::uint64_t next_sender = store_.next_sender_seq();
  if ((version_ >= codec::FixVersion::kFix42 && end == 0) ||
      (version_ <= codec::FixVersion::kFix42 && end == 999999) || end >= next_sender) {
    end = next_sender - 1;
  }
  // Messages the outgoing throttle holds have never been sent: they follow
  // as themselves, in sequence, not as PossDup resends (twice).
  if (hold_from_ != 0 && end >= hold_from_) end = hold_from_ - 1;
  const std::uint64_t t_replay = core::trace::begin();
  start_replay(begin, end);
  core::trace::end(core::TraceKind::kResendServed, t_replay, begin, end);
  if (!connected_) return;

  std::uint64_t seq = 0;
  (void)msg.get_uint(tag::kMsgSeqNum, seq);
  const std::uint64_t expected = store_.next_target_seq();
  if (seq == expected) {
    incr_target();
  } else if (seq > expected) {
    // Answered already; hold it so the gap before it is requested and it is
    // counted (not answered again) when the gap is filled.
    do_target_too_high(msg, seq);
  }
}

void Session::next_app(const MessageView& msg, std::string_view /*type*/) noexcept {
  if (!verify(msg, true, true, true)) return;
  InboundInfo info;
  (void)msg.get_uint(tag::kMsgSeqNum, info.seq);
  info.poss_dup = flag_set(msg, tag::kPossDupFlag);
  if (!apply_decision(msg, app_.from_app(*this, msg, info))) return;
  incr_target();
}

// ---------------------------------------------------------------------------
// Output

struct Session::Build {
  codec::MessageWriter w{std::span<char>{}};
  const char* room = nullptr;
  std::uint64_t seq = 0;
  std::string_view type;
};

bool Session::begin_admin(Build& b, std::string_view msg_type, const codec::HeaderExtras& extras,
                          bool reserve) noexcept {
  if (!connected_) return false;
  if (app_msg_.open_) {
    // An application message was left open across session work: it would be
    // overwritten in the store and its MsgSeqNum taken. Close it.
    app_msg_.open_ = false;
    app_msg_.status_ = SendStatus::kBusy;
  }
  const std::span<char> room =
      reserve ? store_.claim_reserve(std::min(settings_.max_message_size, store::kReserveMessageSize))
              : store_.claim(settings_.max_message_size);
  if (room.empty()) {
    // A Heartbeat or TestRequest while the journal service is behind waits
    // for the next timer (nothing was sent, no number taken); anything else
    // cannot wait and ends the session. (A received message is read only
    // when the store has room for it and an answer: on_bytes.)
    if (store_.last_status() == store::StoreStatus::kNoSpare && (msg_type == "0" || msg_type == "1"))
      return false;
    store_failed(store_.last_status(), false);
    return false;
  }
  b.w = codec::MessageWriter(room);
  b.room = room.data();
  b.seq = store_.next_sender_seq();
  b.type = msg_type;
  b.w.start(header_, msg_type, b.seq, now_.utc_ns, precision_, formatter_, extras);
  add_last_processed(b.w);
  return b.w.status() == codec::EncodeStatus::kOk;
}

bool Session::finish_admin(Build& b) noexcept {
  app_.to_admin(*this, b.type, b.w);
  const codec::MessageWriter::Result r = b.w.finish();
  if (!r.ok()) {
    HFT_SESSION_LOG(LogLevel::kError, "Could not encode MsgType " << b.type << " (does not fit MaxMessageSize)");
    return false;
  }
  const store::StoreStatus st =
      store_.commit(b.seq, now_.utc_ns, static_cast<std::size_t>(r.message.data() - b.room), r.message.size(),
                    kAdminFlag);
  if (st != store::StoreStatus::kOk) {
    store_failed(st, false);
    return false;
  }
  // Behind messages the outgoing throttle holds: journaled now, sent in its
  // turn (release_held), so that the peer sees no gap.
  if (hold_from_ != 0) [[unlikely]]
    return true;
  send_bytes({r.message.data(), r.message.size()});
  return true;
}

void Session::send_bytes(std::span<const char> bytes) noexcept {
  last_sent_mono_ = now_.mono_ns;
  ++counters_.messages_sent;
  output_.send(bytes);
}

// Held messages are read back from the store, where they were journaled when
// they were sent: the store is the queue, so nothing is copied and nothing
// held is lost with the connection.
class Session::HeldCollector final : public store::ReplayVisitor {
 public:
  explicit HeldCollector(Session& s) noexcept : s_(s) {}
  bool on_message(const store::StoredMessage& m) noexcept override {
    Session& s = s_;
    if (!s.connected_) return false;
    if (m.seq < s.hold_from_) return true;
    if (m.seq > s.hold_from_) s.fill_held(m.seq);  // not in the store any more
    if (!s.connected_) return false;
    const bool app = (m.flags & kAdminFlag) == 0;
    if (app && s.out_throttle_.window->full(s.now_.mono_ns)) {
      blocked = true;
      return false;
    }
    if (app) {
      s.out_throttle_.window->record(s.now_.mono_ns);
      --s.held_app_;
    }
    s.hold_from_ = m.seq + 1;
    s.send_bytes(m.bytes);
    return s.connected_;
  }
  bool blocked = false;

 private:
  Session& s_;
};

void Session::fill_held(std::uint64_t up_to) noexcept {
  // Only if the store lost them (a MemoryStore smaller than the queue, a
  // sequence number moved by set_next_sender_seq): said, and gap-filled so
  // that the peer does not wait for them.
  HFT_SESSION_LOG(LogLevel::kError, "Outgoing throttle: held messages "
                                        << hold_from_ << " to " << up_to - 1
                                        << " are not in the store; gap-filled");
  generate_sequence_reset(hold_from_, up_to);
  hold_from_ = up_to;
}

void Session::release_held() noexcept {
  // Not inside another store replay (a resend's to_app sending, a to_admin
  // of the gap fill below): the store replays one at a time.
  if (hold_from_ == 0 || store_replay_running_ || !connected_) return;
  // The first held message is an application message (holding starts with
  // one, and a pass stops at one): while the window is full nothing moves.
  if (out_throttle_.window->full(now_.mono_ns)) return;
  store_replay_running_ = true;
  const std::uint64_t last = store_.next_sender_seq() - 1;
  HeldCollector collector(*this);
  while (connected_ && hold_from_ != 0 && hold_from_ <= last && !collector.blocked) {
    const store::ReplayResult r = store_.replay(hold_from_, last, settings_.max_resend_batch, collector);
    if (r.status == store::ReplayStatus::kLimit) continue;
    if (r.status == store::ReplayStatus::kIoError) [[unlikely]] {
      // The journal cannot be read back: the peer asks for these after the
      // next logon, when a replay tries again.
      HFT_SESSION_LOG(LogLevel::kError,
                      "Outgoing throttle: held message " << r.next_seq << " cannot be read from the store");
      store_failed(store::StoreStatus::kIoError, in_input_);
      break;
    }
    if (r.status == store::ReplayStatus::kComplete && connected_ && hold_from_ <= last) fill_held(last + 1);
    break;
  }
  // (A message numbered meanwhile, by a send from to_admin, is held still.)
  if (hold_from_ != 0 && hold_from_ >= store_.next_sender_seq()) {
    hold_from_ = 0;
    held_app_ = 0;
  }
  store_replay_running_ = false;
}

bool Session::should_send_reset() const noexcept {
  return version_ >= codec::FixVersion::kFix41 &&
         (settings_.reset_on_logon || settings_.reset_on_logout || settings_.reset_on_disconnect) &&
         store_.next_sender_seq() == 1 && store_.next_target_seq() == 1;
}

void Session::generate_logon() noexcept {
  if (settings_.reset_on_logon) reset_store();
  // No logon while either journal is full: the session could not record
  // what it would receive or send.
  if (const store::StoreStatus st = store_.check_room(settings_.max_message_size);
      st != store::StoreStatus::kOk) {
    store_failed(st, false);
    return;
  }
  const bool reset = should_send_reset();
  Build b;
  if (!begin_admin(b, "A", {})) return;
  b.w.add_int(tag::kEncryptMethod, 0);
  b.w.add_int(tag::kHeartBtInt, heart_bt_int_);
  if (reset) b.w.add_char(tag::kResetSeqNumFlag, 'Y');
  if (settings_.send_next_expected_msg_seq_num && version_ >= codec::FixVersion::kFix44) {
    b.w.add_uint(tag::kNextExpectedMsgSeqNum, store_.next_target_seq());
  }
  if (appl_ver_id_len_ != 0) b.w.add(tag::kDefaultApplVerID, {appl_ver_id_, appl_ver_id_len_});
  add_credentials(b.w);
  sent_reset_ = reset;
  last_received_mono_ = now_.mono_ns;
  test_requests_ = 0;
  sent_logon_ = true;
  if (finish_admin(b)) log(LogLevel::kInfo, "Initiated logon request");
}

void Session::add_credentials(codec::MessageWriter& w) noexcept {
  if (version_ >= codec::FixVersion::kFix43) {
    if (!settings_.username.empty()) w.add(tag::kUsername, settings_.username);
    if (!settings_.password.empty()) w.add(tag::kPassword, settings_.password);
  } else if (!settings_.password.empty()) {
    w.add_uint(tag::kRawDataLength, settings_.password.size());
    w.add(tag::kRawData, settings_.password);
  }
}

void Session::generate_logon_reply(const MessageView& logon) noexcept {
  Build b;
  if (!begin_admin(b, "A", {})) return;
  b.w.add_int(tag::kEncryptMethod, 0);
  b.w.add_int(tag::kHeartBtInt, heart_bt_int_);
  if (received_reset_) b.w.add_char(tag::kResetSeqNumFlag, 'Y');
  if (version_ >= codec::FixVersion::kFix44 &&
      (settings_.send_next_expected_msg_seq_num || logon.has(tag::kNextExpectedMsgSeqNum))) {
    std::uint64_t seq = 0;
    (void)logon.get_uint(tag::kMsgSeqNum, seq);
    const std::uint64_t expected = store_.next_target_seq();
    b.w.add_uint(tag::kNextExpectedMsgSeqNum, seq > expected ? expected : expected + 1);
  }
  if (appl_ver_id_len_ != 0) b.w.add(tag::kDefaultApplVerID, {appl_ver_id_, appl_ver_id_len_});
  if (finish_admin(b)) sent_logon_ = true;
}

void Session::generate_heartbeat(std::string_view test_req_id, bool echo_id) noexcept {
  Build b;
  if (!begin_admin(b, "0", {})) return;
  if (!test_req_id.empty()) {
    b.w.add(tag::kTestReqID, test_req_id);
  } else if (echo_id) {
    b.w.add_raw("112=\x01");  // add() refuses an empty value
  }
  finish_admin(b);
}

bool Session::generate_test_request(std::string_view id) noexcept {
  Build b;
  if (!begin_admin(b, "1", {})) return false;
  b.w.add(tag::kTestReqID, id);
  return finish_admin(b);
}

void Session::generate_resend_request(std::uint64_t begin, std::uint64_t gap_end) noexcept {
  const std::uint64_t chunk = settings_.resend_request_chunk_size;
  std::uint64_t last = gap_end;
  if (chunk != 0 && gap_end - begin + 1 > chunk) last = begin + chunk - 1;
  Build b;
  if (!begin_admin(b, "2", {})) return;
  b.w.add_uint(tag::kBeginSeqNo, begin);
  if (chunk != 0) {
    b.w.add_uint(tag::kEndSeqNo, last);
  } else {
    b.w.add_uint(tag::kEndSeqNo, version_ >= codec::FixVersion::kFix42 ? 0 : 999999);
  }
  if (!finish_admin(b)) return;
  ++counters_.resend_requests_sent;
  core::trace::emit_point(core::TraceKind::kResendRequested, begin, last);
  HFT_SESSION_LOG(LogLevel::kInfo, "Sent ResendRequest FROM: " << begin << " TO: " << last);
  resend_begin_ = begin;
  resend_end_ = last;
  resend_target_end_ = gap_end;
}

void Session::generate_sequence_reset(std::uint64_t seq, std::uint64_t new_seq) noexcept {
  char orig[32];
  const std::size_t n = formatter_.format(orig, now_.utc_ns, precision_);
  codec::HeaderExtras extras;
  extras.poss_dup = true;
  extras.orig_sending_time = {orig, n};
  // Its own buffer: a resend may be waiting in tx_ to follow it.
  codec::MessageWriter w(std::span<char>(gap_fill_.data(), gap_fill_.size()));
  w.start(header_, "4", seq, now_.utc_ns, precision_, formatter_, extras);
  add_last_processed(w);
  w.add_uint(tag::kNewSeqNo, new_seq);
  w.add_char(tag::kGapFillFlag, 'Y');
  app_.to_admin(*this, "4", w);
  const codec::MessageWriter::Result r = w.finish();
  if (!r.ok()) return;
  ++counters_.gap_fills_sent;
  send_bytes({r.message.data(), r.message.size()});
  HFT_SESSION_LOG(LogLevel::kInfo, "Sent SequenceReset TO: " << new_seq);
}

void Session::generate_logout(std::string_view text) noexcept {
  Build b;
  if (!begin_admin(b, "5", {})) return;
  if (!text.empty()) b.w.add(tag::kText, text);
  if (finish_admin(b)) sent_logout_ = true;
  logout_reason_len_ = 0;
}

void Session::refuse_logon(std::string_view text) noexcept {
  HFT_SESSION_LOG(LogLevel::kError, "Logon refused before it was accepted: " << text);
  // The peer has not been accepted as the counterparty: the Logout takes the
  // next MsgSeqNum but is not journaled, so the session's sequence numbers
  // and journal stay as the real counterparty left them.
  Build b;
  if (begin_admin(b, "5", {})) {
    b.w.add(tag::kText, text);
    app_.to_admin(*this, b.type, b.w);
    const codec::MessageWriter::Result r = b.w.finish();
    if (r.ok()) send_bytes({r.message.data(), r.message.size()});
  }
  do_disconnect(DisconnectReason::kUnauthenticated);
}

std::size_t Session::reverse_route(const MessageView& msg, char* out, std::size_t cap) const noexcept {
  // QuickFIX's Message::reverseRoute, in ascending order of the tags written.
  struct Pair {
    int from, to;
    bool fix41;
  };
  static constexpr Pair kPairs[] = {
      {128, 115, false}, {129, 116, false}, {145, 144, true},
      {115, 128, false}, {116, 129, false}, {144, 145, true},
  };
  Line line(out, cap);
  for (const Pair& p : kPairs) {
    if (p.fix41 && version_ < codec::FixVersion::kFix41) continue;
    const std::string_view v = msg.get(p.from);
    if (!v.empty()) line << p.to << '=' << v << codec::kSoh;
  }
  return line.size() < cap ? line.size() : 0;
}

bool Session::generate_reject(const MessageView& msg, int reason, int ref_tag, std::string_view text,
                              bool quiet) noexcept {
  const std::string_view type = msg.msg_type();
  const std::string_view seq_text = msg.get(tag::kMsgSeqNum);
  std::uint64_t seq = 0;
  if (type != "A" && type != "4" && msg.get_uint(tag::kMsgSeqNum, seq) && seq == store_.next_target_seq()) {
    incr_target();
  }
  const auto rr = static_cast<RejectReason>(reason);
  if (text.empty()) text = codec::reject_reason_text(rr);
  if (!received_logon_) {
    HFT_SESSION_LOG(LogLevel::kError, "Tried to send a reject while not logged on: " << text);
    do_disconnect(type == "A" ? DisconnectReason::kInvalidLogon : DisconnectReason::kNotLoggedOn);
    return false;
  }
  // A RefTagID that could not be read as a number is echoed as received.
  char ref_text[24];
  std::size_t ref_len = codec::format_int(ref_text, ref_tag);
  if (rr == RejectReason::kInvalidTagNumber && ref_tag <= 0) {
    for (std::size_t i = 0; i < msg.size(); ++i) {
      if (msg.field(i).tag <= 0) {
        const std::string_view t = msg.tag_text(i);
        if (!t.empty() && t.size() < sizeof(ref_text)) {
          std::memcpy(ref_text, t.data(), t.size());
          ref_len = t.size();
        }
        break;
      }
    }
  }
  const bool has_ref = ref_tag != 0 || rr == RejectReason::kInvalidTagNumber;

  char route[512];
  codec::HeaderExtras extras;
  extras.more = {route, reverse_route(msg, route, sizeof(route))};
  Build b;
  if (!begin_admin(b, "3", extras)) return false;
  if (!seq_text.empty()) b.w.add(tag::kRefSeqNum, seq_text);
  if (version_ >= codec::FixVersion::kFix42) {
    b.w.add(tag::kText, text);
    if (has_ref) b.w.add(tag::kRefTagID, {ref_text, ref_len});
    if (!type.empty()) b.w.add(tag::kRefMsgType, type);
    if ((version_ == codec::FixVersion::kFix42 && reason <= 11) || version_ > codec::FixVersion::kFix42) {
      b.w.add_int(tag::kSessionRejectReason, reason);
    }
  } else {
    char t[256];
    Line line(t, sizeof(t));
    line << text;
    if (has_ref) line << " (" << std::string_view(ref_text, ref_len) << ')';
    b.w.add(tag::kText, line.view());
  }
  if (!finish_admin(b)) return false;
  ++counters_.rejects_sent;
  if (quiet) return true;
  HFT_SESSION_LOG(LogLevel::kWarn, "Message " << seq_text << " Rejected: " << text
                                              << (has_ref ? ":" : "") << std::string_view(ref_text, has_ref ? ref_len : 0));
  return true;
}

bool Session::reject_garbled(std::string_view bytes, std::string_view why) noexcept {
  // QuickFIX/J's RejectGarbledMessage: a Reject with Text only. A message
  // out of sequence is left to the gap logic (its number is not ours to
  // consume), as is one whose MsgSeqNum cannot be read.
  if (!received_logon_ || bytes.substr(0, 5) != "8=FIX") return false;
  const std::string_view seq_text = detail::peek_field(bytes, "34");
  std::uint64_t seq = 0;
  if (!codec::parse_uint(seq_text, seq) || seq != store_.next_target_seq()) return false;
  const std::string_view type = detail::peek_msg_type(bytes);
  HFT_SESSION_LOG(LogLevel::kWarn, "Garbled message " << seq << " rejected (" << why << ")");
  incr_target();
  Build b;
  if (!begin_admin(b, "3", {})) return true;
  b.w.add(tag::kRefSeqNum, seq_text);
  b.w.add(tag::kText, "Message failed basic validity check");
  if (version_ >= codec::FixVersion::kFix42 && !type.empty()) b.w.add(tag::kRefMsgType, type);
  if (finish_admin(b)) ++counters_.rejects_sent;
  return true;
}

void Session::generate_reject_text(const MessageView& msg, std::string_view text) noexcept {
  const std::string_view type = msg.msg_type();
  const std::string_view seq_text = msg.get(tag::kMsgSeqNum);
  if (type != "A" && type != "4") incr_target();
  char route[512];
  codec::HeaderExtras extras;
  extras.more = {route, reverse_route(msg, route, sizeof(route))};
  Build b;
  if (!begin_admin(b, "3", extras)) return;
  if (!seq_text.empty()) b.w.add(tag::kRefSeqNum, seq_text);
  b.w.add(tag::kText, text);
  if (version_ >= codec::FixVersion::kFix42 && !type.empty()) b.w.add(tag::kRefMsgType, type);
  if (finish_admin(b)) ++counters_.rejects_sent;
  HFT_SESSION_LOG(LogLevel::kWarn, "Message " << seq_text << " Rejected: " << text);
}

void Session::generate_business_reject(const MessageView& msg, int reason, int ref_tag,
                                       std::string_view text) noexcept {
  const std::string_view type = msg.msg_type();
  const std::string_view seq_text = msg.get(tag::kMsgSeqNum);
  incr_target();
  if (text.empty()) text = business_reject_text(static_cast<BusinessRejectReason>(reason));
  Build b;
  if (!begin_admin(b, "j", {})) return;
  if (!seq_text.empty()) b.w.add(tag::kRefSeqNum, seq_text);
  if (ref_tag != 0) {
    char t[256];
    Line line(t, sizeof(t));
    line << text << " (" << ref_tag << ')';
    b.w.add(tag::kText, line.view());
  } else {
    b.w.add(tag::kText, text);
  }
  if (!type.empty()) b.w.add(tag::kRefMsgType, type);
  b.w.add_int(tag::kBusinessRejectReason, reason);
  if (appl_ver_id_len_ != 0) b.w.add(tag::kDefaultApplVerID, {appl_ver_id_, appl_ver_id_len_});
  if (finish_admin(b)) ++counters_.business_rejects_sent;
  HFT_SESSION_LOG(LogLevel::kWarn, "Message " << seq_text << " Rejected: " << text);
}

// ---------------------------------------------------------------------------
// Replay for a ResendRequest, in batches of MaxResendBatch

class Session::ReplayCollector final : public store::ReplayVisitor {
 public:
  explicit ReplayCollector(Session& s) noexcept : s_(s) {}
  bool on_message(const store::StoredMessage& m) noexcept override {
    if (!s_.connected_) return false;
    s_.resend_stored(m.seq, m.bytes, (m.flags & kAdminFlag) != 0);
    return s_.connected_;
  }

 private:
  Session& s_;
};

void Session::start_replay(std::uint64_t begin, std::uint64_t end) noexcept {
  if (begin == 0) begin = 1;
  if (end < begin) {
    HFT_SESSION_LOG(LogLevel::kInfo, "ResendRequest FROM: " << begin << " TO: " << end << ": nothing to resend");
    return;
  }
  if (replay_.active) {
    HFT_SESSION_LOG(LogLevel::kWarn, "ResendRequest replaces a replay in progress at " << replay_.next);
  }
  replay_ = ReplayState{true, begin, begin, end, begin, 0, 0};
  continue_replay();
}

void Session::continue_replay() noexcept {
  if (!replay_.active) return;
  if (!connected_) {
    replay_.active = false;
    return;
  }
  ReplayCollector collector(*this);
  // to_app may send (begin_app): no replay of held messages inside this one.
  const bool outer = store_replay_running_;
  store_replay_running_ = true;
  const store::ReplayResult res =
      store_.replay(replay_.next, replay_.end, settings_.max_resend_batch, collector);
  store_replay_running_ = outer;
  if (!connected_) return;
  replay_.next = std::max(replay_.next, res.next_seq);
  if (res.status == store::ReplayStatus::kLimit && replay_.next <= replay_.end) return;  // more next time
  if (res.status == store::ReplayStatus::kIoError) {
    HFT_SESSION_LOG(LogLevel::kError, "Message store replay failed at " << res.next_seq
                                                                        << ": gap-filling the rest");
  }

  // Whatever was not stored or was an admin message at the end is one gap fill.
  const std::uint64_t next_sender = store_.next_sender_seq();
  const std::uint64_t tail_begin = replay_.gap_begin != 0 ? replay_.gap_begin
                                   : replay_.last_seq != 0 ? replay_.last_seq + 1
                                                           : replay_.request_begin;
  if (replay_.gap_begin != 0 || replay_.end > replay_.last_seq) {
    const std::uint64_t fill_to = std::max(replay_.last_seq + 1, std::min(replay_.end + 1, next_sender));
    if (fill_to > tail_begin) generate_sequence_reset(tail_begin, fill_to);
  }
  replay_.active = false;
}

void Session::resend_stored(std::uint64_t seq, std::span<const char> stored, bool admin) noexcept {
  ReplayState& r = replay_;
  if (r.current != seq && r.gap_begin == 0) r.gap_begin = r.current;
  r.current = seq + 1;
  r.last_seq = seq;
  r.next = seq + 1;

  if (admin) {
    if (r.gap_begin == 0) r.gap_begin = seq;
    return;
  }
  MessageView& m = *replay_view_;
  const std::string_view bytes(stored.data(), stored.size());
  const bool parsed = m.parse(bytes) == codec::ParseStatus::kOk;
  const std::string_view type = parsed ? m.msg_type() : std::string_view("0");
  if (is_admin_type(type)) {
    if (r.gap_begin == 0) r.gap_begin = seq;
    return;
  }

  // Rebuild with PossDupFlag=Y, OrigSendingTime = the original SendingTime,
  // a new SendingTime, the original header extras and body.
  char more[1024];
  Line extra(more, sizeof(more));
  const codec::FieldSet& header = dictionary_->header();
  codec::HeaderExtras extras;
  extras.poss_dup = true;
  extras.orig_sending_time = m.get(tag::kSendingTime);
  extras.poss_resend = flag_set(m, tag::kPossResend);
  codec::MessageWriter w(std::span<char>(tx_.data(), tx_.size()));
  // First pass: header fields the template does not produce.
  std::size_t body_from = 3;
  for (std::size_t i = 3; i < m.size(); ++i) {
    const int t = m.field(i).tag;
    if (t == tag::kCheckSum) break;
    if (header.member(t) == nullptr) {
      body_from = i;
      break;
    }
    body_from = i + 1;
    switch (t) {
      case tag::kMsgSeqNum: case tag::kPossDupFlag: case tag::kSenderCompID: case tag::kSendingTime:
      case tag::kTargetCompID: case tag::kPossResend: case tag::kOrigSendingTime: case tag::kSenderSubID:
      case tag::kTargetSubID: case 142: case 143:
        continue;
      default:
        extra << t << '=' << m.value_at(i) << codec::kSoh;
    }
  }
  extras.more = extra.view();
  w.start(header_, type, seq, now_.utc_ns, precision_, formatter_, extras);
  // Then the body, verbatim: from the start of field body_from to 10=.
  if (body_from < m.size()) {
    const codec::Field& first = m.field(body_from);
    const std::size_t begin = first.value_offset - m.tag_text(body_from).size() - 1;
    const int ck = m.find(tag::kCheckSum);
    const std::size_t end = ck > 0 ? m.field(static_cast<std::size_t>(ck)).value_offset - 3 : bytes.size();
    if (end > begin) w.add_raw(bytes.substr(begin, end - begin));
  }
  const codec::MessageWriter::Result res = w.finish();
  if (!res.ok()) {
    if (r.gap_begin == 0) r.gap_begin = seq;
    return;
  }
  const Decision d = app_.to_app(*this, {res.message.data(), res.message.size()}, true);
  if (d.kind == Decision::Kind::kDoNotSend) {
    if (r.gap_begin == 0) r.gap_begin = seq;
    return;
  }
  if (r.gap_begin != 0) generate_sequence_reset(r.gap_begin, seq);
  if (!connected_) return;
  ++counters_.messages_resent;
  send_bytes({res.message.data(), res.message.size()});
  HFT_SESSION_LOG(LogLevel::kDebug, "Resending Message: " << seq);
  r.gap_begin = 0;
}

// ---------------------------------------------------------------------------
// Application messages

OutgoingMessage& Session::begin_app(std::string_view msg_type, Instant now, const SendOptions& options) noexcept {
  if (app_msg_.open_) {
    busy_msg_.status_ = SendStatus::kBusy;
    busy_msg_.open_ = false;
    return busy_msg_;
  }
  OutgoingMessage& m = app_msg_;
  m.open_ = false;
  m.writer_ = codec::MessageWriter(std::span<char>{});
  if (!is_logged_on() || !connected_) {
    m.status_ = SendStatus::kNotLoggedOn;
    return m;
  }
  if (now.mono_ns >= now_.mono_ns) now_ = now;
  if (out_throttle_.window != nullptr) [[unlikely]] {
    // Decided before anything is claimed: a refused send uses no number.
    release_held();
    if (!is_logged_on() || !connected_) {
      m.status_ = SendStatus::kNotLoggedOn;
      return m;
    }
    if (hold_from_ != 0 || out_throttle_.window->full(now_.mono_ns)) {
      const bool queue = settings_.outgoing_throttle_action == OutgoingThrottleAction::kQueue;
      if (!queue || held_app_ >= settings_.outgoing_throttle_queue_size) {
        ++counters_.sends_throttled;
        if (throttle_event(out_throttle_, settings_.outgoing_throttle_interval_ms)) {
          if (queue) {
            HFT_SESSION_LOG(LogLevel::kWarn, "Outgoing throttle: queue full ("
                                                 << held_app_
                                                 << " messages held, OutgoingThrottleQueueSize); "
                                                 << "send refused (throttled); " << out_throttle_.unreported
                                                 << " more throttle events since the last report");
          } else {
            HFT_SESSION_LOG(
                LogLevel::kWarn,
                "Outgoing throttle: " << out_throttle_.window->limit() << " application messages in "
                                      << settings_.outgoing_throttle_interval_ms
                                      << " ms (OutgoingThrottleLimit); send refused (throttled); "
                                      << out_throttle_.unreported << " more refused since the last report");
          }
          out_throttle_.unreported = 0;
        }
        m.status_ = SendStatus::kThrottled;
        return m;
      }
    }
  }
  const std::span<char> room = store_.claim(settings_.max_message_size);
  if (room.empty()) [[unlikely]] {
    const store::StoreStatus st = store_.last_status();
    if (st == store::StoreStatus::kNoSpare && !in_input_) {
      // The journal service is behind: a send of the application's own
      // (not an answer to a received message, which the session could not
      // then accept) waits for it; the session goes on.
      m.status_ = SendStatus::kStoreBusy;
      return m;
    }
    m.status_ = send_status(st);
    store_failed(st, in_input_);
    return m;
  }
  codec::HeaderExtras extras;
  extras.poss_resend = options.poss_resend;
  extras.more = options.extra_header;
  m.writer_ = codec::MessageWriter(room);
  m.room_ = room.data();
  m.seq_ = store_.next_sender_seq();
  m.utc_ns_ = now.utc_ns;
  m.writer_.start(header_, msg_type, m.seq_, now.utc_ns, precision_, formatter_, extras);
  add_last_processed(m.writer_);
  if (m.writer_.status() != codec::EncodeStatus::kOk) {
    m.status_ = SendStatus::kEncodeError;
    return m;
  }
  m.status_ = SendStatus::kOk;
  m.open_ = true;
  return m;
}

SendStatus Session::send(OutgoingMessage& m) noexcept {
  if (!m.open_) {
    const SendStatus s = m.status_ == SendStatus::kOk ? SendStatus::kNotStarted : m.status_;
    m.status_ = SendStatus::kNotStarted;
    return s;
  }
  m.open_ = false;
  m.status_ = SendStatus::kNotStarted;
  const codec::MessageWriter::Result r = m.writer_.finish();
  if (!r.ok()) return SendStatus::kEncodeError;
  if (!is_logged_on() || !connected_) return SendStatus::kNotLoggedOn;
  const Decision d = app_.to_app(*this, {r.message.data(), r.message.size()}, false);
  if (d.kind == Decision::Kind::kDoNotSend) return SendStatus::kDoNotSend;
  const store::StoreStatus st = store_.commit(
      m.seq_, m.utc_ns_, static_cast<std::size_t>(r.message.data() - m.room_), r.message.size(), 0);
  if (st != store::StoreStatus::kOk) [[unlikely]] {
    // Not recorded: not sent, and the store did not advance the sequence.
    store_failed(st, in_input_);
    return send_status(st);
  }
  if (out_throttle_.window != nullptr) [[unlikely]] {
    Window& w = *out_throttle_.window;
    const bool hold = settings_.outgoing_throttle_action == OutgoingThrottleAction::kQueue &&
                      (hold_from_ != 0 || w.full(now_.mono_ns));
    if (hold) {
      // Journaled with its number; release_held sends it in its turn.
      if (hold_from_ == 0) hold_from_ = m.seq_;
      ++held_app_;
      ++counters_.sends_throttle_queued;
      counters_.throttle_queue_max = std::max<std::uint64_t>(counters_.throttle_queue_max, held_app_);
      if (throttle_event(out_throttle_, settings_.outgoing_throttle_interval_ms)) {
        HFT_SESSION_LOG(LogLevel::kWarn,
                        "Outgoing throttle: " << w.limit() << " application messages in "
                                              << settings_.outgoing_throttle_interval_ms
                                              << " ms (OutgoingThrottleLimit); holding messages from "
                                              << hold_from_ << " (" << held_app_ << " held); "
                                              << out_throttle_.unreported
                                              << " more throttle events since the last report");
        out_throttle_.unreported = 0;
      }
      return SendStatus::kOk;
    }
    w.record(now_.mono_ns);
  }
  send_bytes({r.message.data(), r.message.size()});
  return SendStatus::kOk;
}

void Session::abandon(OutgoingMessage& m) noexcept {
  m.open_ = false;
  m.status_ = SendStatus::kNotStarted;
}

// ---------------------------------------------------------------------------
// Timers and control

void Session::on_timer(Instant now) noexcept {
  if (in_input_) return;
  now_ = now;
  in_input_ = true;
  check_schedule();
  [&] {
    if (!connected_) return;
    const bool open = settings_.schedule.is_open(now.utc_ns);
    if (!enabled_ || !open) {
      if (is_logged_on()) {
        if (!sent_logout_) {
          log(LogLevel::kInfo, "Initiated logout request");
          generate_logout({logout_reason_, logout_reason_len_});
        }
      } else if (!received_logon_ && !sent_logon_) {
        return;
      }
    }
    const std::int64_t mono = now.mono_ns;
    if (!received_logon_) {
      if (settings_.initiator) {
        if (!sent_logon_ && enabled_ && open) {
          generate_logon();
        } else if (sent_logon_ && mono - last_received_mono_ >= settings_.logon_timeout * kNsPerSecond) {
          log(LogLevel::kError, "Timed out waiting for logon response");
          do_disconnect(DisconnectReason::kLogonTimeout);
        }
      } else if (mono - connected_mono_ >= settings_.logon_timeout * kNsPerSecond) {
        log(LogLevel::kError, "Timed out waiting for logon request");
        do_disconnect(DisconnectReason::kLogonTimeout);
      }
      return;
    }
    // A Logout held behind throttled messages has not gone out yet: its
    // timeout starts when it does.
    if (sent_logout_ && hold_from_ == 0 &&
        mono - last_sent_mono_ >= settings_.logout_timeout * kNsPerSecond) {
      log(LogLevel::kError, "Timed out waiting for logout response");
      do_disconnect(DisconnectReason::kLogoutTimeout);
      return;
    }
    if (heart_bt_int_ == 0) return;
    const std::int64_t hbi = static_cast<std::int64_t>(heart_bt_int_) * kNsPerSecond;
    const std::int64_t since_sent = mono - last_sent_mono_;
    // A message waiting for the store (input paused) came from the peer.
    if (input_paused_) last_received_mono_ = mono;
    const std::int64_t since_received = mono - last_received_mono_;
    if (since_sent < hbi && since_received < hbi) return;
    if (since_received * 5 >= hbi * 12) {  // 2.4 intervals
      log(LogLevel::kError, "Timed out waiting for heartbeat");
      do_disconnect(DisconnectReason::kHeartbeatTimeout);
    } else if (since_received * 5 >= static_cast<std::int64_t>(test_requests_ + 1) * 6 * hbi) {  // 1.2 (n+1)
      if (generate_test_request("TEST")) {
        ++test_requests_;
        log(LogLevel::kInfo, "Sent test request TEST");
      }
    } else if (since_sent >= hbi && test_requests_ == 0 && hold_from_ == 0) {
      // (While messages are held the next of them goes out within the
      // throttle's window, shorter than the interval; a Heartbeat would only
      // wait behind them.)
      generate_heartbeat({}, false);
    }
  }();
  release_held();
  continue_replay();
  if (store_failure_pending_) end_for_store();
  in_input_ = false;
}

void Session::check_schedule() noexcept {
  const Schedule& sch = settings_.schedule;
  if (sch.is_always_open()) return;
  const std::int64_t t = now_.utc_ns;
  if (!sch.is_open(t)) {
    if (connected_) {
      if (is_logged_on() && !sent_logout_) generate_logout({});
      log(LogLevel::kInfo, "Session schedule closed");
      do_disconnect(DisconnectReason::kOutsideSchedule);
    }
    if (!outside_schedule_reset_) {
      reset_store();
      outside_schedule_reset_ = true;
    }
    return;
  }
  outside_schedule_reset_ = false;
  if (!sch.same_period(t, store_.creation_time())) {
    if (connected_) {
      if (is_logged_on() && !sent_logout_) generate_logout({});
      log(LogLevel::kInfo, "New session period");
      do_disconnect(DisconnectReason::kOutsideSchedule);
    }
    reset_store();
  }
}

void Session::reset_store() noexcept {
  const store::StoreStatus st = store_.reset(now_.utc_ns);
  if (st != store::StoreStatus::kOk) {
    HFT_SESSION_LOG(LogLevel::kError, "Message store reset failed: " << store::to_string(st));
  }
  queue_->clear();
  resend_begin_ = resend_end_ = resend_target_end_ = 0;
  replay_.active = false;
  hold_from_ = 0;  // held messages belonged to the old sequence
  held_app_ = 0;
  log(LogLevel::kInfo, "Sequence numbers reset to 1");
}

void Session::do_disconnect(DisconnectReason reason) noexcept {
  const bool was_connected = connected_;
  connected_ = false;
  input_paused_ = false;  // what waited goes with the connection
  if (was_connected) {
    ++counters_.disconnects;
    HFT_SESSION_LOG(LogLevel::kInfo, "Disconnecting: " << to_string(reason));
    output_.disconnect(reason);
  }
  if (received_logon_ || sent_logon_) {
    received_logon_ = false;
    sent_logon_ = false;
    app_.on_logout(*this);
  }
  sent_logout_ = false;
  received_reset_ = false;
  sent_reset_ = false;
  test_requests_ = 0;
  logout_reason_len_ = 0;
  pending_logout_ = false;
  queue_->clear();
  resend_begin_ = resend_end_ = resend_target_end_ = 0;
  replay_.active = false;
  if (hold_from_ != 0) {
    // Journaled with their numbers: the peer asks for them after the next
    // logon (ResendRequest) and gets them as PossDup resends.
    HFT_SESSION_LOG(LogLevel::kInfo, "Outgoing throttle: " << held_app_ << " held messages from "
                                                           << hold_from_
                                                           << " not sent; resent after the next logon");
    hold_from_ = 0;
    held_app_ = 0;
  }
  rx_len_ = 0;
  oversize_ = OversizeState{};
  app_msg_.open_ = false;
  heart_bt_int_ = settings_.heart_bt_int;
  // A peer refused at its Logon was never the counterparty: its leaving
  // resets nothing either.
  if (settings_.reset_on_disconnect && reason != DisconnectReason::kUnauthenticated) reset_store();
}

void Session::store_failed(store::StoreStatus status, bool defer) noexcept {
  if (!connected_ || store_failure_pending_ || ending_for_store_) return;  // the first failure is reported
  store_failure_ = status;
  if (defer) {
    store_failure_pending_ = true;
    return;
  }
  end_for_store();
}

void Session::end_for_store() noexcept {
  store_failure_pending_ = false;
  if (!connected_ || ending_for_store_) return;
  ending_for_store_ = true;
  if (log_enabled(LogLevel::kError)) {
    char what[320];
    const std::size_t n = store_.describe_failure(what);
    HFT_SESSION_LOG(LogLevel::kError,
                    "Message store failure: " << std::string_view(what, n)
                                              << "; logging out, the counterparty resends "
                                                 "what was not recorded after the next logon");
  }
  // The Logout is recorded like any message (from the room the store keeps
  // back for it), so the peer and we agree on its MsgSeqNum. If even that
  // fails, no Logout: a Logout not stored would take a number the store
  // hands out again.
  if (!sent_logout_ && (sent_logon_ || received_logon_ || !settings_.initiator)) {
    char text[96];
    Line t(text, sizeof(text));
    t << "Message store failure: " << store::to_string(store_failure_);
    Build b;
    if (begin_admin(b, "5", {}, true)) {
      b.w.add(tag::kText, t.view());
      if (finish_admin(b)) sent_logout_ = true;
    }
  }
  do_disconnect(DisconnectReason::kStoreError);
  ending_for_store_ = false;
}

void Session::logout(std::string_view text, Instant now) noexcept {
  now_ = now;
  enabled_ = false;
  const std::size_t n = std::min(text.size(), sizeof(logout_reason_));
  if (n != 0) std::memcpy(logout_reason_, text.data(), n);
  logout_reason_len_ = n;
  if (!connected_) return;
  if (is_logged_on()) {
    if (!sent_logout_) {
      log(LogLevel::kInfo, "Initiated logout request");
      generate_logout({logout_reason_, n});
    }
  } else {
    do_disconnect(DisconnectReason::kApplication);
  }
}

void Session::disconnect(Instant now) noexcept {
  now_ = now;
  do_disconnect(DisconnectReason::kApplication);
}

void Session::reset(Instant now) noexcept {
  now_ = now;
  if (connected_) {
    if (is_logged_on() && !sent_logout_) generate_logout({});
    do_disconnect(DisconnectReason::kApplication);
  }
  reset_store();
}

void Session::set_next_sender_seq(std::uint64_t seq) noexcept { store_.set_next_sender_seq(seq); }
void Session::set_next_target_seq(std::uint64_t seq) noexcept { store_.set_next_target_seq(seq); }

SendStatus Session::send_sequence_reset(std::uint64_t new_seq, bool gap_fill, Instant now) noexcept {
  if (!is_logged_on() || sent_logout_) return SendStatus::kNotLoggedOn;
  if (new_seq <= store_.next_sender_seq() || new_seq > kMaxSeqNum) return SendStatus::kEncodeError;
  now_ = now;
  Build b;
  if (!begin_admin(b, "4", {})) return SendStatus::kStoreError;
  b.w.add_uint(tag::kNewSeqNo, new_seq);
  if (gap_fill) b.w.add_char(tag::kGapFillFlag, 'Y');
  if (!finish_admin(b)) return SendStatus::kStoreError;
  store_.set_next_sender_seq(new_seq);
  HFT_SESSION_LOG(LogLevel::kInfo, "Sent SequenceReset (operator) TO: " << new_seq);
  return SendStatus::kOk;
}

SessionState Session::state() const noexcept {
  if (!connected_) return SessionState::kDisconnected;
  if (sent_logout_) return SessionState::kLogoutSent;
  if (is_logged_on()) return SessionState::kLoggedOn;
  if (sent_logon_) return SessionState::kLogonSent;
  return SessionState::kConnected;
}

}  // namespace hft::session
