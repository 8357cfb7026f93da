#include "hft/engine/session_config.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace hft::engine {
namespace {

// Getters of Section return Expected<T>; this unwraps into `out` or returns the error.
#define HFT_GET(out, expr)           \
  do {                               \
    auto hft_v_ = (expr);            \
    if (!hft_v_) return hft_v_.error(); \
    (out) = *hft_v_;                 \
  } while (0)

template <typename T>
Expected<void> get_optional_bool(const Section& s, std::string_view key, T& out) {
  auto v = s.get_bool(key);
  if (!v) return v.error();
  out = *v;
  return {};
}

Expected<session::TimeZone> read_zone_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot read the time zone file"};
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return session::TimeZone::parse(bytes.str(), path);
}

// QuickFIX's TimeRange::isInRange for times of day: inside start..end,
// across midnight when end < start; start == end is the whole day.
bool time_in_daily_range(std::int32_t t, std::int32_t start, std::int32_t end) noexcept {
  if (start == end) return true;
  if (start < end) return t >= start && t <= end;
  return t >= start || t <= end;
}

}  // namespace

Expected<session::TimeZone> local_time_zone() {
  const char* tz = std::getenv("TZ");
  if (tz != nullptr && *tz != '\0') {
    std::string_view name(tz);
    if (name.front() == ':') name.remove_prefix(1);
    if (!name.empty() && name.front() == '/') return read_zone_file(std::string(name));
    auto zone = session::TimeZone::load(name);
    if (zone) return zone;
    auto rule = session::TimeZone::from_posix(name);
    if (rule) return rule;
    return Error{"TZ=" + std::string(tz) + ": " + zone.error().message};
  }
  struct stat st {};
  if (::stat("/etc/localtime", &st) == 0) return read_zone_file("/etc/localtime");
  return session::TimeZone{};
}

Expected<std::shared_ptr<const codec::Dictionary>> DictionaryCache::get(const std::string& path,
                                                                        const std::string& where) {
  auto it = loaded_.find(path);
  if (it != loaded_.end()) return it->second;
  auto loaded = codec::Dictionary::load_file(path);
  if (!loaded) return Error{where + ": " + loaded.error().message};
  loaded_.emplace(path, *loaded);
  return *loaded;
}

std::shared_ptr<const codec::Dictionary> DictionaryCache::combined(
    const std::shared_ptr<const codec::Dictionary>& transport, const std::shared_ptr<const codec::Dictionary>& app) {
  const auto key = std::make_pair(transport.get(), app.get());
  auto it = combined_.find(key);
  if (it == combined_.end())
    it = combined_.emplace(key, Combined{transport, app, codec::Dictionary::combine(*transport, *app)}).first;
  return it->second.combined;
}

std::string session_directory_name(const session::SessionID& id) {
  std::string name = id.begin_string + "-" + id.sender_comp_id + "-" + id.target_comp_id;
  if (!id.qualifier.empty()) name += "-" + id.qualifier;
  std::replace_if(name.begin(), name.end(), [](char c) { return c == '/' || c == '\\' || c == ':'; }, '_');
  return name;
}

Expected<SessionSetup> session_setup(const Section& s, DictionaryCache& dictionaries) {
  SessionSetup out;
  session::SessionSettings& st = out.settings;
  const SessionId& id = s.session_id();
  st.begin_string = id.begin_string;
  st.sender_comp_id = id.sender_comp_id;
  st.sender_sub_id = id.sender_sub_id;
  st.sender_location_id = id.sender_location_id;
  st.target_comp_id = id.target_comp_id;
  st.target_sub_id = id.target_sub_id;
  st.target_location_id = id.target_location_id;
  st.session_qualifier = id.qualifier;
  st.initiator = s.connection_type() == ConnectionType::kInitiator;

  std::int64_t i = 0;
  if (s.has("HeartBtInt")) {
    HFT_GET(i, s.get_int("HeartBtInt"));
    st.heart_bt_int = static_cast<std::int32_t>(i);
  }
  if (s.has("Username")) HFT_GET(st.username, s.get_string("Username"));
  if (s.has("Password")) HFT_GET(st.password, s.get_string("Password"));
  std::chrono::nanoseconds d{};
  HFT_GET(d, s.get_duration("LogonTimeout"));
  st.logon_timeout = static_cast<std::int32_t>(std::chrono::duration_cast<std::chrono::seconds>(d).count());
  HFT_GET(d, s.get_duration("LogoutTimeout"));
  st.logout_timeout = static_cast<std::int32_t>(std::chrono::duration_cast<std::chrono::seconds>(d).count());
  HFT_GET(st.reset_on_logon, s.get_bool("ResetOnLogon"));
  HFT_GET(st.reset_on_logout, s.get_bool("ResetOnLogout"));
  HFT_GET(st.reset_on_disconnect, s.get_bool("ResetOnDisconnect"));
  // SendResetSeqNumFlag: the initiator resets to 1 and sends 141=Y on each
  // Logon it sends, which is what the session does with ResetOnLogon; an
  // acceptor already echoes a peer's 141=Y, so asking it to send one is a
  // configuration slip.
  bool send_reset = false;
  HFT_GET(send_reset, s.get_bool("SendResetSeqNumFlag"));
  if (send_reset) {
    if (!st.initiator) {
      return Error{
          s.where("SendResetSeqNumFlag") +
          ": SendResetSeqNumFlag: initiator only (an acceptor answers a 141=Y Logon with 141=Y by itself)"};
    }
    st.reset_on_logon = true;
  }
  HFT_GET(st.send_next_expected_msg_seq_num, s.get_bool("SendNextExpectedMsgSeqNum"));
  HFT_GET(st.send_redundant_resend_requests, s.get_bool("SendRedundantResendRequests"));
  HFT_GET(i, s.get_int("ResendRequestChunkSize"));
  st.resend_request_chunk_size = static_cast<std::uint64_t>(i);
  HFT_GET(i, s.get_int("MaxResendBatch"));
  st.max_resend_batch = static_cast<std::uint32_t>(i);
  HFT_GET(st.check_comp_id, s.get_bool("CheckCompID"));
  HFT_GET(st.check_latency, s.get_bool("CheckLatency"));
  HFT_GET(d, s.get_duration("MaxLatency"));
  st.max_latency = static_cast<std::int32_t>(std::chrono::duration_cast<std::chrono::seconds>(d).count());
  HFT_GET(st.validate_length_and_checksum, s.get_bool("ValidateLengthAndChecksum"));
  HFT_GET(st.validate_checksum, s.get_bool("ValidateChecksum"));
  HFT_GET(st.reject_garbled_message, s.get_bool("RejectGarbledMessage"));
  HFT_GET(st.enable_last_msg_seq_num_processed, s.get_bool("EnableLastMsgSeqNumProcessed"));
  HFT_GET(st.validation.check_fields_out_of_order, s.get_bool("ValidateFieldsOutOfOrder"));
  HFT_GET(st.validation.check_fields_have_values, s.get_bool("ValidateFieldsHaveValues"));
  HFT_GET(st.validation.check_user_defined_fields, s.get_bool("ValidateUserDefinedFields"));
  HFT_GET(st.validation.allow_unknown_message_fields, s.get_bool("AllowUnknownMsgFields"));
  std::uint64_t size = 0;
  HFT_GET(size, s.get_size("MaxMessageSize"));
  st.max_message_size = size;
  HFT_GET(i, s.get_int("MaxFieldsPerMessage"));
  st.max_fields_per_message = static_cast<std::size_t>(i);

  // Throttling (docs/session.md, "Throttling").
  std::string action;
  HFT_GET(i, s.get_int("OutgoingThrottleLimit"));
  st.outgoing_throttle_limit = static_cast<std::uint32_t>(i);
  HFT_GET(d, s.get_duration("OutgoingThrottleIntervalMs"));
  st.outgoing_throttle_interval_ms =
      static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  HFT_GET(action, s.get_string("OutgoingThrottleAction"));
  st.outgoing_throttle_action =
      action == "queue" ? session::OutgoingThrottleAction::kQueue : session::OutgoingThrottleAction::kReject;
  HFT_GET(i, s.get_int("OutgoingThrottleQueueSize"));
  st.outgoing_throttle_queue_size = static_cast<std::uint32_t>(i);
  HFT_GET(i, s.get_int("IncomingThrottleLimit"));
  st.incoming_throttle_limit = static_cast<std::uint32_t>(i);
  HFT_GET(d, s.get_duration("IncomingThrottleIntervalMs"));
  st.incoming_throttle_interval_ms =
      static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  HFT_GET(action, s.get_string("IncomingThrottleAction"));
  st.incoming_throttle_action = action == "logout"       ? session::IncomingThrottleAction::kLogout
                                : action == "disconnect" ? session::IncomingThrottleAction::kDisconnect
                                                         : session::IncomingThrottleAction::kReject;

  if (s.has("TimestampPrecision")) {
    std::string v;
    HFT_GET(v, s.get_string("TimestampPrecision"));
    st.timestamp_precision = v == "0" || v == "SECONDS" ? codec::TimePrecision::kSeconds
                             : v == "6" || v == "MICROS" ? codec::TimePrecision::kMicros
                             : v == "9" || v == "NANOS"  ? codec::TimePrecision::kNanos
                                                         : codec::TimePrecision::kMillis;
  } else if (s.has("MillisecondsInTimeStamp")) {
    bool millis = true;
    HFT_GET(millis, s.get_bool("MillisecondsInTimeStamp"));
    if (!millis) st.timestamp_precision = codec::TimePrecision::kSeconds;
  }

  // Dictionaries: FIX.4.x uses DataDictionary; FIXT.1.1 uses TransportDataDictionary
  // plus AppDataDictionary (the config reader requires them as QuickFIX does).
  bool use_dictionary = true;
  HFT_GET(use_dictionary, s.get_bool("UseDataDictionary"));
  const bool fixt = st.begin_string == "FIXT.1.1";
  if (fixt && s.has("DefaultApplVerID")) HFT_GET(st.default_appl_ver_id, s.get_string("DefaultApplVerID"));
  if (use_dictionary) {
    const char* transport_key = fixt ? "TransportDataDictionary" : "DataDictionary";
    if (s.has(transport_key)) {
      std::string path;
      HFT_GET(path, s.get_string(transport_key));
      HFT_GET(st.dictionary, dictionaries.get(path, s.where(transport_key) + ": " + transport_key));
    }
    if (fixt) {
      // One application dictionary per session (the session validates one
      // application version): AppDataDictionary, or the
      // AppDataDictionary.<version> of DefaultApplVerID.
      const std::string_view default_code = session::appl_ver_id_code(st.default_appl_ver_id);
      std::string chosen_key = s.has("AppDataDictionary") ? "AppDataDictionary" : "";
      for (const Setting& v : s.settings()) {
        if (v.key.rfind("AppDataDictionary.", 0) != 0) continue;
        const std::string version = v.key.substr(std::string_view("AppDataDictionary.").size());
        const std::string_view code = session::appl_ver_id_code(version);
        const std::string where = s.file() + ":" + std::to_string(v.line) + ": " + v.key + ": ";
        if (code.empty()) return Error{where + "unknown application version \"" + version + "\""};
        if (code != default_code) {
          return Error{where + "libhft validates one application version per session, DefaultApplVerID (" +
                       st.default_appl_ver_id + "): a dictionary for " + version + " cannot be used"};
        }
        if (!chosen_key.empty() && chosen_key != v.key) {
          return Error{where + "the application dictionary is already given by " + chosen_key};
        }
        chosen_key = v.key;
      }
      if (!chosen_key.empty()) {
        std::string path;
        HFT_GET(path, s.get_string(chosen_key));
        HFT_GET(st.app_dictionary, dictionaries.get(path, s.where(chosen_key) + ": " + chosen_key));
      }
    }
  }
  if (st.app_dictionary && st.begin_string == "FIXT.1.1") {
    const auto transport = st.dictionary ? st.dictionary : codec::Dictionary::builtin(codec::FixVersion::kFixT11);
    if (transport) st.combined_dictionary = dictionaries.combined(transport, st.app_dictionary);
  }

  // Schedule.
  bool non_stop = false;
  HFT_GET(non_stop, s.get_bool("NonStopSession"));
  bool local_time = false;
  HFT_GET(local_time, s.get_bool("UseLocalTime"));
  session::TimeZone zone;
  if (local_time) {
    auto local = local_time_zone();
    if (!local) return Error{s.where("UseLocalTime") + ": UseLocalTime: " + local.error().message};
    zone = *local;
  } else if (s.has("TimeZone")) {
    std::string zone_name;
    HFT_GET(zone_name, s.get_string("TimeZone"));
    auto loaded = session::TimeZone::load(zone_name);
    if (!loaded) return Error{s.where("TimeZone") + ": TimeZone: " + loaded.error().message};
    zone = *loaded;
  }
  std::string start_time, end_time, start_day, end_day;
  const bool scheduled = !non_stop && (s.has("StartTime") || s.has("EndTime"));
  const bool weekly = s.has("StartDay") || s.has("EndDay");
  if (scheduled) {
    if (!s.has("StartTime") || !s.has("EndTime")) {
      const char* missing = s.has("StartTime") ? "EndTime" : "StartTime";
      return Error{s.where(missing) + ": " + missing + ": required with " +
                   (s.has("StartTime") ? "StartTime" : "EndTime") + " (or set NonStopSession=Y)"};
    }
    HFT_GET(start_time, s.get_string("StartTime"));
    HFT_GET(end_time, s.get_string("EndTime"));
    if (weekly) {
      if (!s.has("StartDay") || !s.has("EndDay")) {
        return Error{s.where(s.has("StartDay") ? "EndDay" : "StartDay") + ": StartDay and EndDay go together"};
      }
      HFT_GET(start_day, s.get_string("StartDay"));
      HFT_GET(end_day, s.get_string("EndDay"));
      auto sched = session::Schedule::weekly(start_day, start_time, end_day, end_time, zone);
      if (!sched) return Error{s.where("StartDay") + ": schedule: " + sched.error().message};
      st.schedule = *sched;
    } else {
      auto sched = session::Schedule::daily(start_time, end_time, zone);
      if (!sched) return Error{s.where("StartTime") + ": schedule: " + sched.error().message};
      st.schedule = *sched;
    }
  }

  // Logon window (QuickFIX's LogonTime/LogoutTime/LogonDay/LogoutDay):
  // defaults are the session's StartTime/EndTime/StartDay/EndDay.
  if (s.has("LogonTime") || s.has("LogoutTime") || s.has("LogonDay") || s.has("LogoutDay")) {
    std::string logon_time = start_time, logout_time = end_time, logon_day = start_day, logout_day = end_day;
    if (s.has("LogonTime")) HFT_GET(logon_time, s.get_string("LogonTime"));
    if (s.has("LogoutTime")) HFT_GET(logout_time, s.get_string("LogoutTime"));
    if (s.has("LogonDay")) HFT_GET(logon_day, s.get_string("LogonDay"));
    if (s.has("LogoutDay")) HFT_GET(logout_day, s.get_string("LogoutDay"));
    for (const auto& [key, value] :
         {std::pair<const char*, std::string*>{"LogonTime", &logon_time}, {"LogoutTime", &logout_time}}) {
      if (value->empty()) {
        return Error{s.where(key) + ": " + key + ": required with " +
                     (std::string(key) == "LogonTime" ? "LogoutTime" : "LogonTime") +
                     " when the session has no StartTime/EndTime (NonStopSession=Y)"};
      }
    }
    if (logon_day.empty() != logout_day.empty()) {
      const char* missing = logon_day.empty() ? "LogonDay" : "LogoutDay";
      return Error{s.where(logon_day.empty() ? "LogoutDay" : "LogonDay") + ": " + missing +
                   ": LogonDay and LogoutDay go together (or come from StartDay/EndDay)"};
    }
    if (scheduled && !weekly) {
      // QuickFIX: "LogonTime must be between StartTime and EndTime".
      std::int32_t start = 0, end = 0, t = 0;
      (void)session::parse_time_of_day(start_time, start);
      (void)session::parse_time_of_day(end_time, end);
      for (const auto& [key, value] :
           {std::pair<const char*, std::string*>{"LogonTime", &logon_time}, {"LogoutTime", &logout_time}}) {
        (void)session::parse_time_of_day(*value, t);
        if (!time_in_daily_range(t, start, end)) {
          return Error{s.where(key) + ": " + key + ": " + *value + " is not between StartTime (" +
                       start_time + ") and EndTime (" + end_time + ")"};
        }
      }
    }
    if (logon_day.empty()) {
      auto window = session::Schedule::daily(logon_time, logout_time, zone);
      if (!window) return Error{s.where("LogonTime") + ": LogonTime: " + window.error().message};
      out.logon_window = *window;
    } else {
      auto window = session::Schedule::weekly(logon_day, logon_time, logout_day, logout_time, zone);
      if (!window) return Error{s.where("LogonDay") + ": LogonDay: " + window.error().message};
      out.logon_window = *window;
    }
  }

  if (auto ok = st.check(); !ok) return Error{s.where("") + ": " + ok.error().message};

  // Store.
  bool persist = true;
  HFT_GET(persist, s.get_bool("PersistMessages"));
  if (persist && s.has("FileStorePath")) {
    std::string root;
    HFT_GET(root, s.get_string("FileStorePath"));
    out.store.persistent = true;
    out.store.root = root;
    out.store.directory = root + "/" + session_directory_name(st.id());
    std::string layout;
    HFT_GET(layout, s.get_string("JournalLayout"));
    out.store.shared = layout == "shared";
    HFT_GET(size, s.get_size("JournalSegmentSize"));
    out.store.journal.segment_size = size;
    std::uint64_t initial = 0;
    HFT_GET(initial, s.get_size("JournalInitialSegmentSize"));
    if (initial % 4096 != 0 || initial > size)
      return Error{s.where("JournalInitialSegmentSize") + ": JournalInitialSegmentSize: " + std::to_string(initial) +
                   " must be a multiple of 4096 and at most JournalSegmentSize (" + std::to_string(size) + ")"};
    out.store.journal.initial_segment_size = initial;
    // Growing segments (the default): nothing on disk for a session until it
    // journals its first message, and no spare for a journal that is not
    // filling. Full-size segments from the start (initial = segment size,
    // the single-session latency setting) are created, pre-faulted and
    // spared at open, before trading, as they always were: deferring them
    // moved a 64 MiB pre-fault and zero-fill into the first minutes of
    // trading, onto the service thread that shares the session's core.
    const bool growing = initial < size;
    out.store.journal.defer_first_segment = growing;
    out.store.journal.prepare_spare_at = growing ? 0.25 : 0.0;
    // A growing journal is one of many: re-touch 64 KiB ahead of its writer
    // (and twice what it wrote in the last round), not 4 MiB, a window sized
    // for one busy session, every 100 ms for each of thousands of journals.
    // Nor is a spare zero-filled and pre-faulted whole: 64 KiB at its start,
    // then the re-warm's window ahead of the writer (JournalConfig::prepare_ahead).
    // A shared journal too: preparing whole 64 MiB spares, its service (a
    // fifth of the venue's core) fell behind a 1,000-session load and 24 of
    // 34 rotations created the segment on the writer (load lane, max rate:
    // 593,288 msgs/s; filled ahead in pieces, 0 of 33 and 887,679).
    if (growing) {
      out.store.journal.rewarm_window = std::size_t{64} << 10;
      out.store.journal.prepare_ahead = std::size_t{64} << 10;
    }
    if (out.store.shared) out.store.journal.defer_first_segment = false;
    bool prealloc = true;
    HFT_GET(prealloc, s.get_bool("JournalPrealloc"));
    out.store.journal.preallocate = prealloc;
    bool evict = true;
    HFT_GET(evict, s.get_bool("JournalEvictFinished"));
    out.store.journal.evict_finished = evict;
    bool evict_written = growing && !out.store.shared;
    if (s.has("JournalEvictWritten")) HFT_GET(evict_written, s.get_bool("JournalEvictWritten"));
    out.store.journal.evict_written = evict_written;
    std::string durability;
    HFT_GET(durability, s.get_string("JournalDurability"));
    auto parsed = store::parse_durability(durability);
    if (!parsed) return Error{s.where("JournalDurability") + ": JournalDurability: unknown policy " + durability};
    out.store.journal.durability = *parsed;
    // Write-behind buffers (JournalConfig::write_behind): by default for
    // the one journal of a shared layout, where the page cache's cost per
    // page journaled was 42% of the venue's CPU (docs/journal.md).
    const bool syncing = *parsed == store::Durability::kFsync || *parsed == store::Durability::kSync;
    bool write_behind = out.store.shared && !syncing;
    if (s.has("JournalWriteBehind")) {
      HFT_GET(write_behind, s.get_bool("JournalWriteBehind"));
      if (write_behind && syncing)
        return Error{s.where("JournalWriteBehind") +
                     ": JournalWriteBehind=Y needs JournalDurability none or os (it is " + durability + ")"};
    }
    out.store.journal.write_behind = write_behind;
    // Large page-cache folios (JournalConfig::large_folios): off unless
    // set. They cut the CPU per journal page but cache small segments whole
    // and up to 2 MiB ahead of each writer; on a host that takes back the
    // memory a guest frees (the lab's VM), the 1,000-session load run fell
    // to about half its rate with them (docs/journal.md).
    bool large_folios = false;
    HFT_GET(large_folios, s.get_bool("JournalLargeFolios"));
    out.store.journal.large_folios = large_folios;
    HFT_GET(d, s.get_duration("JournalFsyncIntervalMs"));
    out.store.journal.fsync_interval_ns = d.count();
    HFT_GET(i, s.get_int("JournalRetainSegments"));
    out.store.journal.retain_segments = static_cast<std::size_t>(i);
    if (out.store.shared && i != 0)
      return Error{s.where("JournalRetainSegments") +
                   ": JournalRetainSegments: not supported with JournalLayout=shared (the records naming the "
                   "sessions' streams and epochs would go with the oldest segments); set it to 0"};
  }
  return out;
}

}  // namespace hft::engine
