#include "hft/session/settings.hpp"

#include <cctype>
#include <utility>

#include "hft/codec/types.hpp"

namespace hft::session {

std::string_view appl_ver_id_code(std::string_view s) noexcept {
  if (s.empty()) return {};
  bool digits = true;
  for (char c : s) digits = digits && std::isdigit(static_cast<unsigned char>(c)) != 0;
  if (digits) return s.size() <= 3 ? s : std::string_view{};
  struct Entry {
    std::string_view dotted, plain, code;
  };
  static constexpr Entry kTable[] = {
      {"FIX.2.7", "FIX27", "0"},       {"FIX.3.0", "FIX30", "1"},
      {"FIX.4.0", "FIX40", "2"},       {"FIX.4.1", "FIX41", "3"},
      {"FIX.4.2", "FIX42", "4"},       {"FIX.4.3", "FIX43", "5"},
      {"FIX.4.4", "FIX44", "6"},       {"FIX.5.0", "FIX50", "7"},
      {"FIX.5.0SP1", "FIX50SP1", "8"}, {"FIX.5.0SP2", "FIX50SP2", "9"},
  };
  for (const auto& e : kTable) {
    if (s == e.dotted || s == e.plain) return e.code;
  }
  return {};
}

namespace {
bool has_bad_char(std::string_view s) {
  for (char c : s) {
    if (c == codec::kSoh || c == '=' ) return true;
  }
  return false;
}
}  // namespace

Expected<void> SessionSettings::check() const {
  codec::FixVersion v{};
  if (!codec::parse_begin_string(begin_string, v)) {
    return Error{"BeginString: '" + begin_string + "' is not FIX.4.0..FIX.4.4 or FIXT.1.1"};
  }
  if (sender_comp_id.empty() || has_bad_char(sender_comp_id)) {
    return Error{"SenderCompID: '" + sender_comp_id + "' is empty or holds SOH/'='"};
  }
  if (target_comp_id.empty() || has_bad_char(target_comp_id)) {
    return Error{"TargetCompID: '" + target_comp_id + "' is empty or holds SOH/'='"};
  }
  for (const auto* s : {&sender_sub_id, &sender_location_id, &target_sub_id, &target_location_id}) {
    if (has_bad_char(*s)) return Error{"Sender/Target Sub/LocationID: '" + *s + "' holds SOH/'='"};
  }
  // '=' is allowed in a value; only SOH would end the field.
  if (username.find(codec::kSoh) != std::string::npos) return Error{"Username: holds SOH"};
  if (password.find(codec::kSoh) != std::string::npos) return Error{"Password: holds SOH"};
  if (!username.empty() && v < codec::FixVersion::kFix43) {
    return Error{"Username: " + begin_string +
                 " has no Username field (553); before FIX.4.3 only Password is used (as RawData, 96)"};
  }
  if (heart_bt_int < 0) return Error{"HeartBtInt: " + std::to_string(heart_bt_int) + " is negative"};
  if (initiator && heart_bt_int == 0) return Error{"HeartBtInt: an initiator needs a positive interval"};
  if (logon_timeout <= 0) return Error{"LogonTimeout: must be positive"};
  if (logout_timeout <= 0) return Error{"LogoutTimeout: must be positive"};
  if (max_latency <= 0) return Error{"MaxLatency: must be positive"};
  if (max_resend_batch == 0) return Error{"MaxResendBatch: must be at least 1"};
  if (max_message_size < 512) return Error{"MaxMessageSize: at least 512 bytes"};
  if (max_fields_per_message < 1 || max_fields_per_message > codec::MessageView::kMaxFieldsLimit) {
    return Error{"MaxFieldsPerMessage: " + std::to_string(max_fields_per_message) + " is not in 1.." +
                 std::to_string(codec::MessageView::kMaxFieldsLimit)};
  }
  if (queue_capacity_messages == 0 || queue_capacity_bytes < max_message_size) {
    return Error{"QueueCapacity: must hold at least one message of MaxMessageSize"};
  }
  if (outgoing_throttle_limit > kMaxThrottleLimit) {
    return Error{"OutgoingThrottleLimit: " + std::to_string(outgoing_throttle_limit) + " is not in 0.." +
                 std::to_string(kMaxThrottleLimit)};
  }
  if (incoming_throttle_limit > kMaxThrottleLimit) {
    return Error{"IncomingThrottleLimit: " + std::to_string(incoming_throttle_limit) + " is not in 0.." +
                 std::to_string(kMaxThrottleLimit)};
  }
  for (const auto& [key, ms] :
       {std::pair<const char*, std::uint32_t>{"OutgoingThrottleIntervalMs", outgoing_throttle_interval_ms},
        {"IncomingThrottleIntervalMs", incoming_throttle_interval_ms}}) {
    if (ms < 1 || ms > kMaxThrottleIntervalMs) {
      return Error{std::string(key) + ": " + std::to_string(ms) + " is not in 1.." +
                   std::to_string(kMaxThrottleIntervalMs) + " ms"};
    }
  }
  if (outgoing_throttle_queue_size < 1 || outgoing_throttle_queue_size > kMaxThrottleLimit) {
    return Error{"OutgoingThrottleQueueSize: " + std::to_string(outgoing_throttle_queue_size) +
                 " is not in 1.." + std::to_string(kMaxThrottleLimit)};
  }
  // Held messages hold back the Heartbeats behind them: a window as long as
  // the heartbeat interval would let the counterparty time the session out.
  if (outgoing_throttle_limit != 0 && outgoing_throttle_action == OutgoingThrottleAction::kQueue &&
      initiator && heart_bt_int > 0 &&
      std::int64_t{outgoing_throttle_interval_ms} >= std::int64_t{heart_bt_int} * 1000) {
    return Error{"OutgoingThrottleIntervalMs: " + std::to_string(outgoing_throttle_interval_ms) +
                 " ms with OutgoingThrottleAction=queue must be shorter than HeartBtInt (" +
                 std::to_string(heart_bt_int) + " s): held messages delay the Heartbeats behind them"};
  }
  if (v == codec::FixVersion::kFixT11) {
    if (appl_ver_id_code(default_appl_ver_id).empty()) {
      return Error{"DefaultApplVerID: '" + default_appl_ver_id +
                   "' is not an ApplVerID (FIX.5.0SP2, 9, ...); FIXT.1.1 needs one"};
    }
  } else if (app_dictionary) {
    return Error{"AppDataDictionary: only for FIXT.1.1 (use DataDictionary)"};
  }
  if (dictionary && !dictionary->begin_string().empty() && dictionary->begin_string() != begin_string) {
    return Error{"DataDictionary: its BeginString " + dictionary->begin_string() +
                 " does not match the session's " + begin_string};
  }
  return {};
}

}  // namespace hft::session
