// The admin and metrics endpoint's HTTP side (docs/admin.md). Everything
// here runs on the server's threads (cpp-httplib's listener and workers):
// it parses, authenticates, formats JSON and Prometheus text and writes the
// audit file; what it shows and changes it asks the engine thread for
// through the Mailbox (admin.hpp), one request at a time.
#include "engine/admin.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "hft/core/clock.hpp"
#include "hft/engine/async_logger.hpp"

namespace hft::engine::admin {

namespace {

using nlohmann::json;

// Counters shown in JSON and in /metrics from one table each.
struct SessionCounter {
  const char* name;
  std::uint64_t session::SessionCounters::*field;
  const char* help;
};
constexpr SessionCounter kSessionCounters[] = {
    {"messages_received", &session::SessionCounters::messages_received, "Framed messages received (valid or not)."},
    {"messages_sent", &session::SessionCounters::messages_sent, "Messages sent, resends and gap fills included."},
    {"garbled", &session::SessionCounters::garbled, "Framing or parse failures (ignored)."},
    {"rejects_sent", &session::SessionCounters::rejects_sent, "Session-level Rejects (35=3) sent."},
    {"business_rejects_sent", &session::SessionCounters::business_rejects_sent,
     "BusinessMessageRejects (35=j) sent."},
    {"resend_requests_sent", &session::SessionCounters::resend_requests_sent,
     "ResendRequests sent (gaps detected in what the counterparty sent)."},
    {"resend_requests_received", &session::SessionCounters::resend_requests_received, "ResendRequests received."},
    {"messages_resent", &session::SessionCounters::messages_resent, "Messages resent for ResendRequests."},
    {"gap_fills_sent", &session::SessionCounters::gap_fills_sent, "SequenceReset-GapFills sent in resends."},
    {"messages_queued", &session::SessionCounters::messages_queued, "Messages held while a gap was filled."},
    {"queue_overflows", &session::SessionCounters::queue_overflows,
     "Messages not held (queue full): re-requested later."},
    {"logons", &session::SessionCounters::logons, "Logons completed."},
    {"disconnects", &session::SessionCounters::disconnects, "Connections ended."},
};

struct EngineCounter {
  const char* name;
  std::uint64_t EngineStats::*field;
  const char* help;
};
constexpr EngineCounter kEngineCounters[] = {
    {"connections_accepted", &EngineStats::connections_accepted, "Connections accepted by the listeners."},
    {"unknown_session_refused", &EngineStats::unknown_session_refused,
     "Connections whose first message named no configured session."},
    {"duplicate_refused", &EngineStats::duplicate_refused, "Connections for a session that was connected already."},
    {"garbled_first_message", &EngineStats::garbled_first_message,
     "Connections closed before any session was found (garbled first message)."},
    {"send_overflows", &EngineStats::send_overflows, "Connections closed because the send buffer was full."},
    {"outside_logon_time_refused", &EngineStats::outside_logon_time_refused,
     "Acceptor connections outside LogonTime..LogoutTime."},
    {"pre_logon_timeouts", &EngineStats::pre_logon_timeouts, "Connections that named no session within LogonTimeout."},
    {"tls_handshake_failures", &EngineStats::tls_handshake_failures,
     "Accepted connections whose TLS handshake failed or timed out."},
    {"pre_logon_bytes_exceeded", &EngineStats::pre_logon_bytes_exceeded,
     "Connections that sent more than MaxPreLogonBytes before naming a session."},
    {"pending_per_address_refused", &EngineStats::pending_per_address_refused,
     "Connections refused: MaxPendingConnectionsPerAddress reached."},
    {"pending_evicted", &EngineStats::pending_evicted, "Pending connections closed to make room."},
    {"no_slot_refused", &EngineStats::no_slot_refused, "Connections closed at accept: every slot in use."},
    {"max_connections_refused", &EngineStats::max_connections_refused,
     "Connections that named a session while MaxConnections were bound."},
    {"connections_taken_over", &EngineStats::connections_taken_over,
     "Sessions taken over by a new connection while the old one drained."},
    {"template_sessions_created", &EngineStats::template_sessions_created,
     "Sessions created from an AcceptorTemplate."},
    {"template_refused", &EngineStats::template_refused,
     "First messages matching an AcceptorTemplate that were refused."},
    {"disabled_refused", &EngineStats::disabled_refused, "Connections refused because their session is disabled."},
    {"input_pauses", &EngineStats::input_pauses,
     "Times a session's input waited for its journal (the journal service behind); its connection was not "
     "read meanwhile."},
};

std::string_view state_name(session::SessionState s) noexcept {
  switch (s) {
    case session::SessionState::kDisconnected: return "disconnected";
    case session::SessionState::kConnected: return "connected";
    case session::SessionState::kLogonSent: return "logon_sent";
    case session::SessionState::kLoggedOn: return "logged_on";
    case session::SessionState::kLogoutSent: return "logout_sent";
  }
  return "unknown";
}

json journal_json(const JournalSnapshot& j) {
  if (!j.present) return nullptr;
  return json{{"appends", j.appends},
              {"bytes", j.bytes},
              {"rotations", j.rotations},
              {"spare_misses", j.spare_misses},
              {"active_segment", j.active_segment},
              {"spare_ready", j.spare_errno == 0},
              {"spare_error", j.spare_errno == 0 ? std::string() : std::string(std::strerror(j.spare_errno))}};
}

json session_json(const SessionSnapshot& s) {
  json counters = json::object();
  for (const SessionCounter& c : kSessionCounters) counters[c.name] = s.counters.*c.field;
  return json{{"index", s.index},
              {"id", s.id},
              {"begin_string", s.begin_string},
              {"connection_type", s.initiator ? "initiator" : "acceptor"},
              {"state", state_name(s.state)},
              {"logged_on", s.logged_on},
              {"enabled", s.enabled},
              {"in_logon_window", s.in_logon_window},
              {"next_sender_seq", s.next_sender_seq},
              {"next_target_seq", s.next_target_seq},
              {"heart_bt_int", s.heart_bt_int},
              {"counters", std::move(counters)},
              {"journal", {{"outbound", journal_json(s.outbound)}, {"inbound", journal_json(s.inbound)}}}};
}

json engine_json(const EngineSnapshot& e) {
  json stats = json::object();
  for (const EngineCounter& c : kEngineCounters) stats[c.name] = e.stats.*c.field;
  return json{{"sessions", e.sessions},
              {"connected", e.connected},
              {"logged_on", e.logged_on},
              {"connection_buffer_bytes", e.connection_buffer_bytes},
              {"log_level", e.log_level},
              {"log_lines_suppressed", e.log_lines_suppressed},
              {"stats", std::move(stats)}};
}

// Prometheus text format 0.0.4: label values escape \, " and newline.
void append_label(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void sample(std::string& out, std::string_view name, std::string_view session, std::string_view direction,
            std::uint64_t value) {
  out.append(name);
  if (!session.empty()) {
    out.append("{session=\"");
    append_label(out, session);
    out.append("\"");
    if (!direction.empty()) out.append(",direction=\"").append(direction).append("\"");
    out.append("}");
  }
  out.append(" ").append(std::to_string(value)).append("\n");
}

std::string metrics_text(const std::vector<SessionSnapshot>& sessions, std::size_t n, const EngineSnapshot& e) {
  std::string out;
  out.reserve(4096 + n * 2048);
  for (const SessionCounter& c : kSessionCounters) {
    const std::string name = std::string("hft_session_") + c.name + "_total";
    family(out, name, "counter", c.help);
    for (std::size_t i = 0; i < n; ++i) sample(out, name, sessions[i].id, {}, sessions[i].counters.*c.field);
  }
  struct Gauge {
    const char* name;
    const char* help;
    std::uint64_t (*get)(const SessionSnapshot&);
  };
  static constexpr Gauge kGauges[] = {
      {"hft_session_state",
       "Session state: 0 disconnected, 1 connected, 2 logon sent, 3 logged on, 4 logout sent.",
       [](const SessionSnapshot& s) -> std::uint64_t { return static_cast<std::uint64_t>(s.state); }},
      {"hft_session_logged_on", "1 while the session is logged on.",
       [](const SessionSnapshot& s) -> std::uint64_t { return s.logged_on ? 1 : 0; }},
      {"hft_session_enabled", "0 while the session is disabled (disable command, Engine::disable_session).",
       [](const SessionSnapshot& s) -> std::uint64_t { return s.enabled ? 1 : 0; }},
      {"hft_session_next_sender_seq_num", "MsgSeqNum of the next message the session sends.",
       [](const SessionSnapshot& s) -> std::uint64_t { return s.next_sender_seq; }},
      {"hft_session_next_target_seq_num", "MsgSeqNum the session expects next from the counterparty.",
       [](const SessionSnapshot& s) -> std::uint64_t { return s.next_target_seq; }},
  };
  for (const Gauge& g : kGauges) {
    family(out, g.name, "gauge", g.help);
    for (std::size_t i = 0; i < n; ++i) sample(out, g.name, sessions[i].id, {}, g.get(sessions[i]));
  }
  struct JournalMetric {
    const char* name;
    const char* type;
    const char* help;
    std::uint64_t (*get)(const JournalSnapshot&);
  };
  static constexpr JournalMetric kJournal[] = {
      {"hft_session_journal_records_total", "counter", "Records committed to the session's journal.",
       [](const JournalSnapshot& j) -> std::uint64_t { return j.appends; }},
      {"hft_session_journal_bytes_total", "counter", "Payload bytes committed to the session's journal.",
       [](const JournalSnapshot& j) -> std::uint64_t { return j.bytes; }},
      {"hft_session_journal_rotations_total", "counter", "Journal segment switches.",
       [](const JournalSnapshot& j) -> std::uint64_t { return j.rotations; }},
      {"hft_session_journal_spare_misses_total", "counter", "Rotations that found no prepared segment.",
       [](const JournalSnapshot& j) -> std::uint64_t { return j.spare_misses; }},
      {"hft_session_journal_active_segment", "gauge", "Number of the segment being written.",
       [](const JournalSnapshot& j) -> std::uint64_t { return j.active_segment; }},
      {"hft_session_journal_spare_ready", "gauge",
       "0 while the journal service cannot prepare the next segment (a full disk).",
       [](const JournalSnapshot& j) -> std::uint64_t { return j.spare_errno == 0 ? 1 : 0; }},
  };
  for (const JournalMetric& m : kJournal) {
    family(out, m.name, m.type, m.help);
    for (std::size_t i = 0; i < n; ++i) {
      if (sessions[i].outbound.present) sample(out, m.name, sessions[i].id, "outbound", m.get(sessions[i].outbound));
      if (sessions[i].inbound.present) sample(out, m.name, sessions[i].id, "inbound", m.get(sessions[i].inbound));
    }
  }
  for (const EngineCounter& c : kEngineCounters) {
    const std::string name = std::string("hft_engine_") + c.name + "_total";
    family(out, name, "counter", c.help);
    sample(out, name, {}, {}, e.stats.*c.field);
  }
  family(out, "hft_engine_sessions", "gauge", "Sessions of the engine.");
  sample(out, "hft_engine_sessions", {}, {}, e.sessions);
  family(out, "hft_engine_sessions_connected", "gauge", "Sessions with a connection.");
  sample(out, "hft_engine_sessions_connected", {}, {}, e.connected);
  family(out, "hft_engine_sessions_logged_on", "gauge", "Sessions logged on.");
  sample(out, "hft_engine_sessions_logged_on", {}, {}, e.logged_on);
  family(out, "hft_engine_connection_buffer_bytes", "gauge", "Heap bytes of the connections' buffers.");
  sample(out, "hft_engine_connection_buffer_bytes", {}, {}, e.connection_buffer_bytes);
  family(out, "hft_engine_log_lines_suppressed_total", "counter", "WARN lines held back by LogRateLimit.");
  sample(out, "hft_engine_log_lines_suppressed_total", {}, {}, e.log_lines_suppressed);
  return out;
}

bool equal_constant_time(std::string_view a, std::string_view b) noexcept {
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  return diff == 0;
}

std::string utc_now_text() {
  const std::int64_t ns = core::realtime_ns();
  const std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[80];  // room for any int the fields could hold (-Wformat-truncation at -O3)
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>((ns / 1'000'000) % 1000));
  return buf;
}

constexpr std::string_view kLogLevels[] = {"trace", "debug", "info", "warn", "error", "off"};

}  // namespace

Expected<std::string> read_token_file(const std::string& path, const std::string& where) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{where + ": " + path + ": cannot open: " + std::strerror(errno)};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{where + ": " + path + ": not a regular file"};
  }
  if ((st.st_mode & S_IROTH) != 0) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    return Error{where + ": " + path + ": readable by others (mode " + mode + "): chmod o-rwx it"};
  }
  std::string text;
  char buf[512];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > 4096) break;
  }
  ::close(fd);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '\t'))
    text.pop_back();
  if (text.empty()) return Error{where + ": " + path + ": empty (it must hold the token)"};
  if (text.find_first_of("\r\n") != std::string::npos || text.size() > 4096)
    return Error{where + ": " + path + ": the token must be one line of at most 4096 characters"};
  return text;
}

Expected<session::SessionID> parse_session_id(std::string_view text) {
  const auto bad = [&] {
    return Error{"session \"" + std::string(text) +
                 "\": expected BeginString:SenderCompID->TargetCompID[:SessionQualifier] or an index"};
  };
  const std::size_t colon = text.find(':');
  const std::size_t arrow = text.find("->");
  if (colon == std::string_view::npos || arrow == std::string_view::npos || arrow < colon) return bad();
  session::SessionID id;
  id.begin_string = std::string(text.substr(0, colon));
  id.sender_comp_id = std::string(text.substr(colon + 1, arrow - colon - 1));
  const std::string_view rest = text.substr(arrow + 2);
  const std::size_t q = rest.find(':');
  id.target_comp_id = std::string(rest.substr(0, q));
  if (q != std::string_view::npos) id.qualifier = std::string(rest.substr(q + 1));
  if (id.begin_string.empty() || id.sender_comp_id.empty() || id.target_comp_id.empty()) return bad();
  return id;
}

void format_session_id(const session::SessionID& id, char* out, std::size_t cap) noexcept {
  std::size_t at = 0;
  auto put = [&](std::string_view part) noexcept {
    const std::size_t n = std::min(part.size(), cap - 1 - at);
    std::memcpy(out + at, part.data(), n);
    at += n;
  };
  put(id.begin_string);
  put(":");
  put(id.sender_comp_id);
  put("->");
  put(id.target_comp_id);
  if (!id.qualifier.empty()) {
    put(":");
    put(id.qualifier);
  }
  out[at] = '\0';
}

bool Mailbox::call(std::int64_t timeout_ns) noexcept {
  state_.store(kPending, std::memory_order_release);
  const std::int64_t deadline = core::monotonic_ns() + timeout_ns;
  for (;;) {
    std::uint32_t s = state_.load(std::memory_order_acquire);
    if (s == kDone) {
      state_.store(kFree, std::memory_order_relaxed);
      return true;
    }
    if (s == kPending && core::monotonic_ns() > deadline) {
      // Withdrawn unless the engine thread takes it this instant; once
      // taken it is finished within that poll(), so wait for it then.
      if (state_.compare_exchange_strong(s, kFree, std::memory_order_acq_rel)) return false;
      continue;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

struct Server::Impl {
  ServerOptions options;
  Mailbox* box = nullptr;
  AsyncLogger* log = nullptr;
  int audit_fd = -1;
  int port = 0;
  httplib::Server http;
  std::thread thread;
  std::mutex mutex;  // one request in the mailbox at a time (server threads only)
  std::size_t room = 64;  // session snapshots to preallocate

  ~Impl() {
    if (thread.joinable()) {
      http.stop();
      thread.join();
    }
    if (audit_fd >= 0) ::close(audit_fd);
  }

  static void reply_json(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(body.dump(2) + "\n", "application/json");
  }
  static void reply_error(httplib::Response& res, int status, const std::string& why) {
    reply_json(res, status, json{{"error", why}});
  }

  static std::string who(const httplib::Request& req) {
    std::string w = req.remote_addr + ":" + std::to_string(req.remote_port);
    if (req.has_header("X-Admin-User")) w += " (" + req.get_header_value("X-Admin-User").substr(0, 64) + ")";
    return w;
  }

  // Under `mutex`. False: the engine thread did not answer (reply 503 sent).
  bool ask(httplib::Response& res) {
    if (box->call(options.engine_timeout_ns)) return true;
    reply_error(res, 503, "the engine thread did not answer within " +
                              std::to_string(options.engine_timeout_ns / 1'000'000) +
                              " ms (is it polling?); nothing was done");
    return false;
  }

  // Snapshots of every session (or of the one `request` names), with room
  // for all of them: the engine thread fills what the server preallocated.
  bool snapshot(httplib::Response& res) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      box->reply.sessions.resize(room);
      if (!ask(res)) return false;
      if (box->reply.total <= box->reply.filled) return true;
      room = box->reply.total + 64;
    }
    return true;
  }

  // Resolves "{id}" (an index or BeginString:Sender->Target[:qualifier]).
  bool name_session(const std::string& text, Request& rq, httplib::Response& res) {
    if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() < 10) {
      rq.by_index = true;
      rq.index = static_cast<std::size_t>(std::stoul(text));
      return true;
    }
    auto id = parse_session_id(text);
    if (!id) {
      reply_error(res, 400, id.error().message);
      return false;
    }
    rq.by_index = false;
    rq.target = std::move(*id);
    return true;
  }

  void audit(const httplib::Request& req, std::string_view command, std::string_view session, const json& args,
             int status, std::string_view result) {
    if (audit_fd < 0) return;
    nlohmann::ordered_json line{{"time", utc_now_text()},
              {"remote", req.remote_addr + ":" + std::to_string(req.remote_port)},
              {"user", req.has_header("X-Admin-User") ? req.get_header_value("X-Admin-User") : ""},
              {"command", command},
              {"session", session},
              {"args", args},
              {"status", status},
              {"result", result}};
    const std::string text = line.dump() + "\n";
    if (::write(audit_fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) && log != nullptr)
      log->log(session::LogLevel::kError, "admin: HttpAdminAuditFile: write failed: " +
                                              std::string(std::strerror(errno)));
  }

  // Authentication of a state-changing command: false (reply sent, audited,
  // logged) if it is refused.
  bool authorised(const httplib::Request& req, httplib::Response& res, std::string_view command,
                  std::string_view session) {
    int status = 0;
    std::string why;
    if (options.token.empty()) {
      status = 403;
      why = "state-changing commands are off: the engine has no HttpAdminTokenFile";
    } else {
      const std::string header = req.get_header_value("Authorization");
      constexpr std::string_view kBearer = "Bearer ";
      if (header.empty()) {
        status = 401;
        why = "authentication required: Authorization: Bearer <token of HttpAdminTokenFile>";
      } else if (header.rfind(kBearer, 0) != 0 ||
                 !equal_constant_time(std::string_view(header).substr(kBearer.size()), options.token)) {
        status = 401;
        why = "bad token";
      }
    }
    if (status == 0) return true;
    if (status == 401) res.set_header("WWW-Authenticate", "Bearer");
    reply_error(res, status, why);
    audit(req, command, session, json::object(), status, why);
    if (log != nullptr && log->enabled(session::LogLevel::kWarn)) {
      log->log(session::LogLevel::kWarn, "admin: refused " + std::string(command) + " " + std::string(session) +
                                             " from " + who(req) + ": " + why);
    }
    return false;
  }

  // A state-changing command: authenticated, arguments checked, handed to the
  // engine thread, answered and audited.
  void command(const httplib::Request& req, httplib::Response& res, Command cmd, std::string_view name,
               const std::string& session_text) {
    if (!authorised(req, res, name, session_text)) return;
    json args = json::object();
    if (!req.body.empty()) {
      args = json::parse(req.body, nullptr, false);
      if (args.is_discarded() || !args.is_object()) {
        reply_error(res, 400, "body: expected a JSON object");
        audit(req, name, session_text, json::object(), 400, "body: expected a JSON object");
        return;
      }
    }
    Request rq;
    rq.command = cmd;
    rq.who = who(req);
    std::string bad;
    auto seq_arg = [&](const char* key, bool required, std::uint64_t& out) {
      if (!args.contains(key)) {
        if (required && bad.empty()) bad = std::string(key) + ": missing";
        return;
      }
      const json& v = args[key];
      const bool in_range = v.is_number_unsigned() && v.get<std::uint64_t>() >= 1 &&
                            v.get<std::uint64_t>() <= session::kMaxSeqNum;
      if (!in_range) {
        if (bad.empty())
          bad = std::string(key) + ": bad value " + v.dump() + ": expected a sequence number in 1..9223372036854775807";
        return;
      }
      out = v.get<std::uint64_t>();
    };
    auto text_arg = [&](const char* key) {
      if (!args.contains(key)) return;
      if (!args[key].is_string()) {
        if (bad.empty()) bad = std::string(key) + ": bad value " + args[key].dump() + ": expected a string";
        return;
      }
      rq.text = args[key].get<std::string>();
      if (rq.text.size() > 120 && bad.empty()) bad = std::string(key) + ": longer than 120 characters";
    };
    switch (cmd) {
      case Command::kLogout:
      case Command::kDisable: text_arg("text"); break;
      case Command::kSetSeqNum:
        seq_arg("next_sender", false, rq.a);
        seq_arg("next_target", false, rq.b);
        if (bad.empty() && rq.a == 0 && rq.b == 0) bad = "next_sender, next_target: give one of them or both";
        break;
      case Command::kSequenceReset:
        seq_arg("new_seq_no", true, rq.a);
        rq.flag = true;
        if (args.contains("gap_fill")) {
          if (!args["gap_fill"].is_boolean()) bad = "gap_fill: bad value " + args["gap_fill"].dump() + ": expected true or false";
          else rq.flag = args["gap_fill"].get<bool>();
        }
        break;
      case Command::kLogLevel: {
        text_arg("level");
        bool known = false;
        for (std::string_view l : kLogLevels) known = known || rq.text == l;
        if (bad.empty() && !known)
          bad = "level: bad value \"" + rq.text + "\": expected trace, debug, info, warn, error or off";
        break;
      }
      case Command::kAddSession: {
        // A config text of one [SESSION] (a [DEFAULT] of its own if it
        // wants one), as Engine::add_session takes it; parsed and checked
        // here, off the engine thread.
        if (!args.contains("config") || !args["config"].is_string()) {
          bad = "config: missing (the text of a [SESSION], as in a config file)";
          break;
        }
        auto parsed = Config::parse(args["config"].get<std::string>(), "<admin add-session>");
        if (!parsed) {
          bad = "config: " + parsed.error().message;
        } else if (parsed->sessions().size() != 1) {
          bad = "config: expected exactly one [SESSION], found " + std::to_string(parsed->sessions().size());
        } else {
          rq.section = parsed->sessions().front();
        }
        break;
      }
      default: break;
    }
    const bool names_a_session = cmd != Command::kLogLevel && cmd != Command::kAddSession;
    if (bad.empty() && names_a_session && !name_session(session_text, rq, res)) {
      audit(req, name, session_text, args, 400, "bad session name");
      return;
    }
    if (!bad.empty()) {
      reply_error(res, 400, bad);
      audit(req, name, session_text, args, 400, bad);
      return;
    }
    std::lock_guard<std::mutex> lock(mutex);
    box->request = std::move(rq);
    if (!ask(res)) {
      audit(req, name, session_text, args, 503, "engine did not answer; nothing done");
      return;
    }
    const Reply& rp = box->reply;
    json body{{"result", rp.message}};
    if (rp.status != 200) body = json{{"error", rp.message}};
    else if (rp.session[0] != '\0') body["session"] = rp.session;
    reply_json(res, rp.status, body);
    // The session by the name the engine knows it, however the path named it.
    audit(req, name, rp.session[0] != '\0' ? std::string_view(rp.session) : std::string_view(session_text), args,
          rp.status, rp.message);
  }

  void routes() {
    http.Get("/sessions", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mutex);
      box->request = Request{};
      if (!snapshot(res)) return;
      json list = json::array();
      for (std::size_t i = 0; i < box->reply.filled; ++i) list.push_back(session_json(box->reply.sessions[i]));
      reply_json(res, 200, json{{"sessions", std::move(list)}});
    });
    http.Get(R"(/sessions/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      Request rq;
      rq.all_sessions = false;
      if (!name_session(req.matches[1], rq, res)) return;
      std::lock_guard<std::mutex> lock(mutex);
      box->request = std::move(rq);
      if (!snapshot(res)) return;
      if (box->reply.filled == 0) return reply_error(res, 404, "no such session: " + std::string(req.matches[1]));
      reply_json(res, 200, session_json(box->reply.sessions[0]));
    });
    http.Get("/engine", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mutex);
      box->request = Request{};
      box->request.command = Command::kEngine;
      if (!ask(res)) return;
      reply_json(res, 200, engine_json(box->reply.engine));
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mutex);
      // EngineStats first: a kSessions request leaves reply.engine alone.
      box->request = Request{};
      box->request.command = Command::kEngine;
      if (!ask(res)) return;
      box->request = Request{};
      if (!snapshot(res)) return;
      res.set_content(metrics_text(box->reply.sessions, box->reply.filled, box->reply.engine),
                      "text/plain; version=0.0.4; charset=utf-8");
    });
    struct Named {
      const char* name;
      Command command;
    };
    static constexpr Named kCommands[] = {
        {"logout", Command::kLogout},       {"disconnect", Command::kDisconnect},
        {"enable", Command::kEnable},       {"disable", Command::kDisable},
        {"reset", Command::kReset},         {"seqnum", Command::kSetSeqNum},
        {"sequence-reset", Command::kSequenceReset}, {"remove", Command::kRemoveSession},
    };
    http.Post(R"(/sessions/([^/]+)/([a-z-]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string what = req.matches[2];
      for (const Named& c : kCommands) {
        if (what == c.name) return command(req, res, c.command, c.name, req.matches[1]);
      }
      reply_error(res, 404, "no command \"" + what +
                                "\": logout, disconnect, enable, disable, reset, seqnum, sequence-reset or remove");
    });
    http.Post("/sessions", [this](const httplib::Request& req, httplib::Response& res) {
      command(req, res, Command::kAddSession, "add-session", "");
    });
    http.Post("/log-level", [this](const httplib::Request& req, httplib::Response& res) {
      command(req, res, Command::kLogLevel, "log-level", "");
    });
    http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty()) reply_error(res, res.status, res.status == 404 ? "no such endpoint" : "error");
    });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
      reply_error(res, 500, "internal error");
    });
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;
int Server::port() const noexcept { return impl_->port; }

Expected<std::unique_ptr<Server>> Server::start(const ServerOptions& options, Mailbox& mailbox, AsyncLogger* log) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->box = &mailbox;
  impl->log = log;
  if (!options.audit_file.empty()) {
    impl->audit_fd = ::open(options.audit_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (impl->audit_fd < 0) return Error{options.audit_file + ": cannot open: " + std::strerror(errno)};
  }
  // A few workers: one request is served at a time anyway (the mailbox), the
  // others only keep a slow or idle keep-alive client from holding the rest.
  impl->http.new_task_queue = [] { return new httplib::ThreadPool(4); };
  impl->http.set_keep_alive_timeout(2);
  impl->http.set_read_timeout(5, 0);
  impl->http.set_write_timeout(5, 0);
  impl->http.set_payload_max_length(64 * 1024);
  // A reply is written in pieces (headers, then body): with Nagle's
  // algorithm the body waited for the client's delayed ACK of the headers,
  // ~40 ms per request on a keep-alive connection (a Prometheus scraper's,
  // hft-bench --admin-scrape's). Accepted sockets inherit it from the listener.
  impl->http.set_tcp_nodelay(true);
  impl->routes();
  // httplib's default is SO_REUSEPORT, which lets a second engine bind the
  // same port and take half the requests: SO_REUSEADDR only (a restart can
  // rebind at once, a port in use is an error).
  impl->http.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  int port = options.port;
  if (port == 0) {
    port = impl->http.bind_to_any_port(options.address);
  } else if (!impl->http.bind_to_port(options.address, port)) {
    port = -1;
  }
  if (port <= 0) {
    return Error{"cannot listen on " + options.address + ":" + std::to_string(options.port) +
                 " (port in use, or not an address of this host)"};
  }
  impl->port = port;
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->http.listen_after_bind(); });
  // httplib's stop() before its accept loop has started is lost (the loop
  // then never ends): wait for it, so that destroying the engine right
  // after create() still stops the server.
  while (!impl->http.is_running()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

}  // namespace hft::engine::admin
