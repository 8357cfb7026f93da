#include "hft/engine/engine.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include "engine/admin.hpp"
#include "hft/codec/parser.hpp"
#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "hft/core/idle.hpp"
#include "hft/core/trace.hpp"
#include "hft/engine/async_logger.hpp"
#include "hft/engine/event_log.hpp"
#include "hft/engine/log.hpp"
#include "hft/engine/session_config.hpp"
#include "hft/store/journal_service.hpp"
#include "hft/store/message_store.hpp"
#include "hft/store/shared_journal.hpp"
#include "hft/transport/connection.hpp"
#include "hft/transport/connector.hpp"
#include "hft/transport/listener.hpp"
#include "hft/transport/reactor.hpp"

namespace hft::engine {

namespace {

/// The "session" of engine-wide log lines (no session to name).
const session::SessionID kEngineId{"", "engine", "", ""};

// LogLevel as a minimum session::LogLevel (as int): trace and debug are the
// session's debug level; off is above every level.
int min_log_level(std::string_view name) noexcept {
  if (name == "trace" || name == "debug") return static_cast<int>(session::LogLevel::kDebug);
  if (name == "warn") return static_cast<int>(session::LogLevel::kWarn);
  if (name == "error") return static_cast<int>(session::LogLevel::kError);
  if (name == "off") return static_cast<int>(session::LogLevel::kError) + 1;
  return static_cast<int>(session::LogLevel::kInfo);
}

// min_log_level()'s value as LogLevel's name (trace reads as debug).
const char* log_level_name(int level) noexcept {
  switch (level) {
    case 0: return "debug";
    case 1: return "info";
    case 2: return "warn";
    case 3: return "error";
    default: return "off";
  }
}

session::SessionID logger_id(const SessionId& id) {
  return session::SessionID{id.begin_string, id.sender_comp_id, id.target_comp_id, id.qualifier};
}

// The engine's event log: LogLevel filters; LogFile, FileLogPath (or standard
// error when the application gives no logger and neither is set) are written
// by an AsyncLogger, off the engine thread; the application's logger, if any,
// receives the lines too.
Expected<std::unique_ptr<EventLog>> make_logger(const Config& config, session::Logger* user) {
  const Section& d = config.defaults();
  auto level_name = d.get_string("LogLevel");
  if (!level_name) return level_name.error();
  const int min_level = min_log_level(*level_name);
  auto ring_size = d.get_int("LogRingSize");
  if (!ring_size) return ring_size.error();
  auto rate_limit = d.get_int("LogRateLimit");
  if (!rate_limit) return rate_limit.error();

  AsyncLoggerOptions own;
  own.level = static_cast<session::LogLevel>(std::min(min_level, 3));
  own.ring_size = static_cast<std::size_t>(*ring_size);
  bool directories = false;
  if (d.has("FileLogPath")) {
    auto dir = d.get_string("FileLogPath");
    if (!dir) return dir.error();
    own.directory = *dir;
    directories = true;
  }
  std::vector<session::SessionID> ids;
  for (const Section& section : config.sessions()) {
    if (section.is_template()) continue;  // its sessions log as named ones
    AsyncLoggerOptions::Session s{.id = logger_id(section.session_id()), .directory = {}};
    if (section.has("FileLogPath")) {
      auto dir = section.get_string("FileLogPath");
      if (!dir) return dir.error();
      s.directory = *dir;
      directories = true;
    }
    ids.push_back(s.id);
    own.sessions.push_back(std::move(s));
  }
  if (d.has("LogFile")) {
    auto path = d.get_string("LogFile");
    if (!path) return path.error();
    own.file = *path;
  }
  own.to_stderr = user == nullptr && own.file.empty() && !directories;
  std::unique_ptr<AsyncLogger> async;
  if (own.to_stderr || !own.file.empty() || directories) {
    // The message names the path at fault: LogFile's, or one FileLogPath's.
    const std::string file = own.file;
    auto created = AsyncLogger::create(std::move(own));
    if (!created) {
      const std::string& why = created.error().message;
      if (!file.empty() && why.rfind(file, 0) == 0) return Error{d.where("LogFile") + ": LogFile: " + why};
      const Section* where = &d;
      for (const Section& section : config.sessions()) {
        auto dir = section.get_string("FileLogPath");
        if (section.has("FileLogPath") && dir && why.rfind(*dir, 0) == 0) {
          where = &section;
          break;
        }
      }
      return Error{where->where("FileLogPath") + ": FileLogPath: " + why};
    }
    async = std::move(*created);
  }
  EventLogOptions options;
  options.min_level = min_level;
  // A logger of the application's own is filtered only when LogLevel is set.
  options.user_min_level = d.has("LogLevel") ? min_level : 0;
  if (user != nullptr && !d.has("LogLevel")) options.min_level = 0;
  options.rate_limit = static_cast<std::uint32_t>(*rate_limit);
  return std::make_unique<EventLog>(user, std::move(async), std::move(ids), options);
}

bool directory_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A session store directory this start created: what JournalStore::open
// puts in a new store (its sequence-number file, the journals' directories
// and any segment a journal created), nothing else; a directory that holds
// more is left. A shared journal's directory this start created: its
// segments.
void remove_new_store(const std::string& dir) {
  for (const char* journal : {"/outbound", "/inbound", ""}) {
    const std::string jdir = dir + journal;
    if (DIR* d = ::opendir(jdir.c_str())) {
      std::vector<std::string> names;
      while (dirent* e = ::readdir(d)) {
        const std::string_view name = e->d_name;
        if (name.size() == 12 && name.substr(8) == ".seg") names.emplace_back(name);
      }
      ::closedir(d);
      for (const std::string& name : names) ::unlink((jdir + "/" + name).c_str());
    }
    if (*journal != 0) ::rmdir(jdir.c_str());
  }
  ::unlink((dir + "/seqnums.dat").c_str());
  ::rmdir(dir.c_str());
}

}  // namespace

// One configured session with its store, its output and (while connected)
// its connection.
struct Engine::Slot final : session::Output {
  Engine* engine = nullptr;
  std::unique_ptr<store::MessageStore> store;
  store::JournalStore* journal = nullptr;  // the store, when persistent with its own journals
  store::SharedStore* shared = nullptr;    // the store, when persistent in a shared journal (JournalLayout)
  int spare_errno[2] = {0, 0};             // outbound, inbound: last reported spare failure
  std::unique_ptr<session::Session> session;
  transport::Connection* connection = nullptr;
  transport::Connector* connector = nullptr;
  transport::Listener* listener = nullptr;  // acceptor sessions: the listener they are reached on
  std::uint32_t handle = 0;  // SessionHandle::value
  bool removing = false;  // remove_session(): destroyed by reap() once its connection is gone
  bool disabled = false;  // disable_session(): no logon until enable_session()
  bool input_held = false;  // its session waits for the store: its connection is not read

  void send(std::span<const char> bytes) noexcept override {
    if (connection == nullptr) return;
    const auto r = connection->send(bytes);
    if (r.status == transport::SendStatus::kOverflow) {
      // The peer does not read and the outbound buffer is full: the session
      // cannot go on without losing bytes, so the connection is closed and
      // the messages are resent after the next logon.
      ++engine->stats_.send_overflows;
      if (engine->log_ != nullptr && engine->log_->enabled(session::LogLevel::kError)) {
        engine->log_->log(session::LogLevel::kError, session->id(),
                          "outbound buffer full (peer not reading): closing the connection; "
                          "unsent messages are resent after the next logon");
      }
      // Abortive: what is queued is incomplete anyway and the peer is not
      // reading, so waiting for a drain would only delay the reconnect.
      connection->abort();
    }
  }
  // Graceful: the session's last words (Logout, Reject) are queued behind
  // everything else and must reach the peer before the socket closes. (A
  // store failure was logged by the session, with the store's own words.)
  void disconnect(session::DisconnectReason) noexcept override {
    if (connection != nullptr) connection->close();
  }

  // LogonTime..LogoutTime (LogonDay/LogoutDay), when configured: outside it
  // an initiator does not connect, an acceptor refuses the connection and a
  // logged-on session logs out.
  std::optional<session::Schedule> logon_window;
  bool outside_window = false;  // the engine has closed the session for the window

  [[nodiscard]] bool logon_allowed(std::int64_t utc_ns) const noexcept {
    return !logon_window || logon_window->is_open(utc_ns);
  }

  // The journal service could not prepare the next segment (a full disk):
  // said once when it starts and once when it is over, from the timer, not
  // per message. The service keeps retrying on its own.
  void report_spares() noexcept {
    if (journal == nullptr && shared == nullptr) return;
    store::Journal* journals[2] = {nullptr, nullptr};
    if (journal != nullptr) {
      journals[0] = &journal->outbound();
      journals[1] = journal->inbound();
    } else {
      journals[0] = &shared->shared().journal();  // said for each of its sessions, once per change
    }
    for (int i = 0; i < 2; ++i) {
      if (journals[i] == nullptr) continue;
      const int err = journals[i]->spare_errno();
      if (err == spare_errno[i]) continue;
      spare_errno[i] = err;
      const session::LogLevel level = err != 0 ? session::LogLevel::kError : session::LogLevel::kInfo;
      if (engine->log_ == nullptr || !engine->log_->enabled(level)) continue;
      char line[512];
      const std::string& dir = journals[i]->config().directory;
      const int n =
          err != 0
              ? std::snprintf(line, sizeof line, "journal %s: cannot prepare the next segment: %s; retrying",
                              dir.c_str(), std::strerror(err))
              : std::snprintf(line, sizeof line, "journal %s: next segment prepared again", dir.c_str());
      engine->log_->log(
          level, session->id(),
          std::string_view(line, n > 0 ? std::min(static_cast<std::size_t>(n), sizeof line - 1) : 0));
    }
  }
};

// Why a connection was refused or closed before it was bound to a session.
enum class Refusal : std::uint8_t {
  kUnknownSession,
  kDuplicate,
  kOutsideLogonTime,
  kGarbledFirst,
  kLogonTimeout,
  kPreLogonBytes,
  kPerAddress,
  kEvicted,
  kNoSlot,
  kMaxConnections,
  kDisabled,
  kTemplateRefused,
  kTlsHandshake,
  kCount,
};

const char* refusal_text(Refusal r) noexcept {
  switch (r) {
    case Refusal::kUnknownSession:
      return "refusing connection for unknown session";
    case Refusal::kDuplicate:
      return "refusing second connection for session";
    case Refusal::kOutsideLogonTime:
      return "refusing connection outside LogonTime..LogoutTime for session";
    case Refusal::kGarbledFirst:
      return "closing connection: first message names no session";
    case Refusal::kLogonTimeout:
      return "closing connection: no session named within LogonTimeout";
    case Refusal::kPreLogonBytes:
      return "closing connection: MaxPreLogonBytes sent before naming a session";
    case Refusal::kPerAddress:
      return "refusing connection: MaxPendingConnectionsPerAddress reached for its address";
    case Refusal::kEvicted:
      return "closing the oldest connection not naming a session yet: MaxPendingConnections reached";
    case Refusal::kNoSlot:
      return "refusing connections at accept: every connection slot in use";
    case Refusal::kMaxConnections:
      return "refusing connection: MaxConnections sessions connected, for session";
    case Refusal::kDisabled:
      return "refusing connection for disabled session";
    case Refusal::kTemplateRefused:
      return "refusing connection: not a Logon with the AcceptorTemplate's Username/Password, for session";
    case Refusal::kTlsHandshake:
      return "closing connection: TLS handshake failed:";
    case Refusal::kCount:
      break;
  }
  return "?";
}

// Refusals are logged at most once per interval and reason: the first one
// at once, with its peer; those that follow within the interval are counted
// and summed up in one line when it ends. A flood of connections then costs
// a counter each, not a formatted line each.
class RefusalLog {
 public:
  static constexpr std::int64_t kIntervalNs = 1'000'000'000;

  explicit RefusalLog(session::Logger* log) noexcept : log_(log) {}

  void record(Refusal reason, std::string_view peer, std::string_view detail, std::int64_t now_ns,
              std::uint64_t count = 1) noexcept {
    Entry& e = entries_[static_cast<std::size_t>(reason)];
    if (e.held == 0 && now_ns - e.last_line_ns >= kIntervalNs) {
      e.last_line_ns = now_ns;
      char line[384];
      int n = 0;
      if (count > 1) {
        n = std::snprintf(line, sizeof line, "%s (%llu)", refusal_text(reason),
                          static_cast<unsigned long long>(count));
      } else {
        n = std::snprintf(line, sizeof line, "%s%s%.*s%s%.*s", refusal_text(reason),
                          detail.empty() ? "" : " ", static_cast<int>(detail.size()), detail.data(),
                          peer.empty() ? "" : " from ", static_cast<int>(peer.size()), peer.data());
      }
      write(line, n);
      return;
    }
    if (e.held == 0) copy(e.first, e.first_length, peer);
    copy(e.last, e.last_length, peer);
    copy(e.detail, e.detail_length, detail);
    e.held += count;
  }

  // Writes the summaries of the intervals that have ended (all with `force`).
  void flush(std::int64_t now_ns, bool force = false) noexcept {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      Entry& e = entries_[i];
      if (e.held == 0 || (!force && now_ns - e.last_line_ns < kIntervalNs)) continue;
      char line[512];
      const int n = std::snprintf(
          line, sizeof line, "%s: %llu more since the last report (first from %.*s, last from %.*s%s%.*s)",
          refusal_text(static_cast<Refusal>(i)), static_cast<unsigned long long>(e.held),
          static_cast<int>(e.first_length), e.first, static_cast<int>(e.last_length), e.last,
          e.detail_length != 0 ? ", last for " : "", static_cast<int>(e.detail_length), e.detail);
      write(line, n);
      e.held = 0;
      e.last_line_ns = now_ns;
    }
  }

 private:
  struct Entry {
    std::uint64_t held = 0;  // refusals since the last line
    std::int64_t last_line_ns = INT64_MIN / 2;
    char first[64] = {};
    char last[64] = {};
    char detail[128] = {};
    std::uint8_t first_length = 0, last_length = 0, detail_length = 0;
  };

  template <std::size_t N>
  static void copy(char (&to)[N], std::uint8_t& length, std::string_view from) noexcept {
    length = static_cast<std::uint8_t>(std::min(from.size(), N));
    if (length != 0) std::memcpy(to, from.data(), length);
  }

  void write(const char* line, int n) noexcept {
    if (log_ == nullptr || !log_->enabled(session::LogLevel::kWarn)) return;
    log_->log(session::LogLevel::kWarn, kEngineId,
              std::string_view(line, n > 0 ? static_cast<std::size_t>(n) : 0));
  }

  session::Logger* log_;
  std::array<Entry, static_cast<std::size_t>(Refusal::kCount)> entries_{};
};

// The source address of "ip:port" / "[ip6]:port".
std::string_view address_of(std::string_view peer) noexcept {
  const std::size_t colon = peer.rfind(':');
  return colon == std::string_view::npos ? peer : peer.substr(0, colon);
}

// Routes reactor events to sessions.
class Engine::Handler final : public transport::ConnectionHandler, public transport::TickHandler {
 public:
  struct Limits {
    std::size_t max_connections = 64;
    std::size_t max_pending = 64;
    std::size_t max_pending_per_address = 16;
    std::size_t max_pre_logon_bytes = 8192;
    std::int64_t pre_logon_timeout_ns = 10'000'000'000;
  };

  Handler(Engine& engine, const Limits& limits) : engine_(engine), limits_(limits), refusals_(engine.log_) {
    pending_.reserve(limits.max_pending);
  }

  void on_connected(transport::Connection& c) noexcept override {
    auto* slot = static_cast<Slot*>(c.connector()->context());
    if (slot == nullptr) {  // a removed session's connector
      c.abort();
      return;
    }
    bind(*slot, c);
  }

  // Not on the message path: once per attempt, at most every
  // ReconnectInterval per endpoint.
  void on_connect_failed(transport::Connector& connector, const transport::Endpoint& endpoint,
                         int error) noexcept override {
    auto* slot = static_cast<Slot*>(connector.context());
    if (slot == nullptr) return;
    char where[320];
    std::snprintf(where, sizeof where, "%s:%u", endpoint.host.c_str(), static_cast<unsigned>(endpoint.port));
    if (engine_.log_ != nullptr && engine_.log_->enabled(session::LogLevel::kWarn)) {
      char text[640];
      const std::string_view tls = connector.last_tls_error();
      if (!tls.empty()) {
        std::snprintf(text, sizeof text, "TLS connection to %s failed: %.*s", where, static_cast<int>(tls.size()),
                      tls.data());
      } else {
        std::snprintf(text, sizeof text, "Connection to %s failed: %s", where, std::strerror(error));
      }
      engine_.log_->log(session::LogLevel::kWarn, slot->session->id(), text);
    }
    if (engine_.app_ != nullptr) engine_.app_->on_connect_failed(*slot->session, where, error);
  }

  // A TLS port's connection that never completed its handshake.
  void on_handshake_failed(transport::Connection& c) noexcept override {
    ++engine_.stats_.tls_handshake_failures;
    refusals_.record(Refusal::kTlsHandshake, c.peer(), c.tls_error(), core::monotonic_ns());
  }

  // An accepted connection is unbound until its first message names a
  // session; until then it holds one of MaxPendingConnections.
  void on_accepted(transport::Connection& c) noexcept override {
    ++engine_.stats_.connections_accepted;
    c.set_context(nullptr);
    const std::int64_t now_ns = core::monotonic_ns();
    const std::string_view address = address_of(c.peer());
    std::size_t same_address = 0;
    for (const Pending& p : pending_) same_address += p.address() == address ? 1 : 0;
    if (same_address >= limits_.max_pending_per_address) {
      ++engine_.stats_.pending_per_address_refused;
      refusals_.record(Refusal::kPerAddress, c.peer(), {}, now_ns);
      c.abort();
      return;
    }
    if (pending_.size() >= limits_.max_pending) evict_oldest(now_ns);
    Pending p;
    p.connection = &c;
    p.accepted_ns = now_ns;
    p.address_length = static_cast<std::uint8_t>(std::min(address.size(), sizeof p.address_text));
    if (p.address_length != 0) std::memcpy(p.address_text, address.data(), p.address_length);
    pending_.push_back(p);  // capacity max_pending: never reallocates
  }

  void on_data(transport::Connection& c) noexcept override {
    auto* slot = static_cast<Slot*>(c.context());
    if (slot == nullptr) {
      slot = route(c);
      if (slot == nullptr) {
        if (c.is_open() && c.received().size() > limits_.max_pre_logon_bytes) {
          ++engine_.stats_.pre_logon_bytes_exceeded;
          refusals_.record(Refusal::kPreLogonBytes, c.peer(), {}, core::monotonic_ns());
          c.abort();
        }
        return;
      }
    }
    deliver(*slot, c);
  }

  /// Sessions whose input waits for their store (the journal service is
  /// behind): their connections are not read meanwhile.
  [[nodiscard]] bool input_held() const noexcept { return held_ != 0; }

  /// Offers each held session what its connection kept, and reads the
  /// connection again once the session takes it.
  int resume_held() noexcept {
    int work = 0;
    for (const auto& owned : engine_.slots_) {
      Slot& slot = *owned;
      if (!slot.input_held) continue;
      if (slot.connection == nullptr || !slot.connection->is_open()) {
        release(slot);
        continue;
      }
      deliver(slot, *slot.connection);
      if (!slot.input_held) ++work;
      if (held_ == 0) break;
    }
    return work;
  }

  void on_closed(transport::Connection& c, transport::CloseReason reason, int error) noexcept override {
    forget_pending(c);
    auto* slot = static_cast<Slot*>(c.context());
    if (slot == nullptr || slot->connection != &c) return;
    release(*slot);
    if (error != 0 && engine_.log_ != nullptr && engine_.log_->enabled(session::LogLevel::kWarn)) {
      // A socket error the session cannot see: say which.
      const std::string_view why = transport::to_string(reason);
      char text[448];
      const std::string_view tls = c.tls_error();
      std::snprintf(text, sizeof text, "Connection closed: %.*s: %s%.*s", static_cast<int>(why.size()), why.data(),
                    tls.empty() ? std::strerror(error) : "TLS: ", static_cast<int>(tls.size()), tls.data());
      engine_.log_->log(session::LogLevel::kWarn, slot->session->id(), text);
    }
    slot->connection = nullptr;
    --bound_;
    c.set_context(nullptr);
    slot->session->on_disconnected(Engine::now());
  }

  void on_tick(std::int64_t) noexcept override {
    const auto now = Engine::now();
    // A round of every session's timers starts (unless one is still under
    // way: it goes on). Its first slice now, the others at the next polls.
    if (!timers_pending()) timer_next_ = 0;
    serve_timers();
    // A connection that has named no session within LogonTimeout is closed:
    // a session applies its own LogonTimeout once it is named.
    for (const Pending& p : pending_) {
      if (p.connection->is_open() && now.mono_ns - p.accepted_ns >= limits_.pre_logon_timeout_ns) {
        ++engine_.stats_.pre_logon_timeouts;
        refusals_.record(Refusal::kLogonTimeout, p.connection->peer(), {}, now.mono_ns);
        p.connection->abort();  // leaves pending_ in on_closed
      }
    }
    // The reactor closes a connection it has no slot for before we see it.
    const std::uint64_t rejected = engine_.reactor_->stats().accept_rejected;
    if (rejected != reactor_rejected_) {
      const std::uint64_t n = rejected - reactor_rejected_;
      reactor_rejected_ = rejected;
      engine_.stats_.no_slot_refused += n;
      refusals_.record(Refusal::kNoSlot, {}, {}, now.mono_ns, n);
    }
    refusals_.flush(now.mono_ns);
    engine_.log_owner_->flush_suppressed(now.mono_ns);
  }

  void flush_log() noexcept { refusals_.flush(core::monotonic_ns(), true); }

  /// A timer round has sessions left.
  [[nodiscard]] bool timers_pending() const noexcept { return timer_next_ < engine_.slots_.size(); }

  /// The next kTimerSlice sessions of the round: logon windows, spares
  /// reported, Session::on_timer (heartbeats, test requests, timeouts).
  /// A round over 1,000 sessions in one go held the engine thread for
  /// ~240 us (p50) every TimerIntervalMs; a slice of 64 holds it ~15 us, and
  /// a round over 1,000 takes 16 polls.
  void serve_timers() noexcept {
    const std::uint64_t t_trace = core::trace::begin();
    const auto now = Engine::now();
    const std::size_t first = timer_next_;
    // By index: a callback may add a session (slots_ grows).
    for (std::size_t n = 0; n < kTimerSlice && timer_next_ < engine_.slots_.size(); ++n) {
      Slot& slot = *engine_.slots_[timer_next_++];
      if (slot.removing) continue;
      if (slot.logon_window) engine_.apply_logon_window(slot, now);
      slot.report_spares();
      slot.session->on_timer(now);
    }
    core::trace::end(core::TraceKind::kTimers, t_trace, timer_next_ - first, first);
  }

 private:
  /// The connection's bytes to its session; what the session cannot take
  /// yet stays in the connection, which stops reading until it can.
  void deliver(Slot& slot, transport::Connection& c) noexcept {
    const auto data = c.received();
    c.consume(slot.session->on_bytes(data, Engine::now()));
    const bool paused = slot.session->input_paused() && c.is_open();
    if (paused == slot.input_held) return;
    if (paused) {
      slot.input_held = true;
      ++held_;
      ++engine_.stats_.input_pauses;
      c.pause_reading(true);
    } else {
      release(slot);
    }
  }

  void release(Slot& slot) noexcept {
    if (!slot.input_held) return;
    slot.input_held = false;
    --held_;
    if (slot.connection != nullptr) slot.connection->pause_reading(false);
  }

  struct Pending {
    transport::Connection* connection = nullptr;
    std::int64_t accepted_ns = 0;
    char address_text[48] = {};
    std::uint8_t address_length = 0;
    [[nodiscard]] std::string_view address() const noexcept { return {address_text, address_length}; }
  };

  void forget_pending(const transport::Connection& c) noexcept {
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      if (pending_[i].connection == &c) {
        pending_[i] = pending_.back();
        pending_.pop_back();
        return;
      }
    }
  }

  // Makes room for one more: a connection already refused and draining goes
  // first, else the one that has waited longest.
  void evict_oldest(std::int64_t now_ns) noexcept {
    std::size_t victim = 0;
    for (std::size_t i = 1; i < pending_.size(); ++i) {
      const bool draining = !pending_[i].connection->is_open();
      const bool victim_draining = !pending_[victim].connection->is_open();
      if (draining != victim_draining ? draining : pending_[i].accepted_ns < pending_[victim].accepted_ns) {
        victim = i;
      }
    }
    transport::Connection& c = *pending_[victim].connection;
    pending_[victim] = pending_.back();
    pending_.pop_back();
    ++engine_.stats_.pending_evicted;
    refusals_.record(Refusal::kEvicted, c.peer(), {}, now_ns);
    c.abort();
  }

  void bind(Slot& slot, transport::Connection& c) noexcept {
    forget_pending(c);
    ++bound_;
    slot.connection = &c;
    c.set_context(&slot);
    // SocketBusyPoll (CAP_NET_ADMIN) and friends: the connection works
    // without them, but the user asked for them, so the refusal is logged.
    if (const transport::OptionError e = c.option_error();
        e && engine_.log_ != nullptr && engine_.log_->enabled(session::LogLevel::kWarn)) {
      char line[160];
      const int n =
          std::snprintf(line, sizeof line, "socket option %s refused: %s", e.option, std::strerror(e.error));
      engine_.log_->log(session::LogLevel::kWarn, slot.session->id(),
                        std::string_view(line, n > 0 ? static_cast<std::size_t>(n) : 0));
    }
    if (c.is_tls() && engine_.log_ != nullptr && engine_.log_->enabled(session::LogLevel::kInfo)) {
      const std::string_view protocol = c.tls_protocol();
      const std::string_view cipher = c.tls_cipher();
      const std::string_view peer = c.peer();
      char line[192];
      const int n = std::snprintf(line, sizeof line, "TLS %.*s %.*s with %.*s", static_cast<int>(protocol.size()),
                                  protocol.data(), static_cast<int>(cipher.size()), cipher.data(),
                                  static_cast<int>(peer.size()), peer.data());
      engine_.log_->log(session::LogLevel::kInfo, slot.session->id(),
                        std::string_view(line, n > 0 ? static_cast<std::size_t>(n) : 0));
    }
    slot.session->on_connected(Engine::now());
  }

  // Finds the session an acceptor connection's first message names. Returns
  // nullptr while the message is incomplete, or after closing the connection.
  Slot* route(transport::Connection& c) noexcept {
    const std::string_view data = c.received_view();
    const auto framed = codec::frame(data);
    if (framed.status == codec::FrameStatus::kNeedMore) return nullptr;
    const std::int64_t now_ns = core::monotonic_ns();
    // A garbled first message may still name its session (a Logon with a wrong
    // BodyLength): it goes to that session, which answers per the protocol.
    session::RouteKey key;
    if (!session::peek_route(data.substr(0, framed.size), key)) {
      ++engine_.stats_.garbled_first_message;
      refusals_.record(Refusal::kGarbledFirst, c.peer(), {}, now_ns);
      c.abort();
      return nullptr;
    }
    Slot* found = nullptr;
    for (auto& slot : engine_.slots_) {
      if (!slot->removing && !slot->session->settings().initiator && slot->listener == c.listener() &&
          key.matches(slot->session->id())) {
        found = slot.get();
        break;
      }
    }
    // Not configured: an AcceptorTemplate may create it, when it could be
    // connected (the same MaxConnections check as below, first).
    bool template_refused = false;
    if (found == nullptr && bound_ < limits_.max_connections)
      found = engine_.from_template(key, data.substr(0, framed.size), c.listener(), template_refused);
    char detail[160];
    const int n = std::snprintf(detail, sizeof detail, "%.*s:%.*s->%.*s",
                                static_cast<int>(key.begin_string.size()), key.begin_string.data(),
                                static_cast<int>(key.sender_comp_id.size()), key.sender_comp_id.data(),
                                static_cast<int>(key.target_comp_id.size()), key.target_comp_id.data());
    const std::string_view session_text(detail, n > 0 ? std::min<std::size_t>(n, sizeof detail - 1) : 0);
    if (found == nullptr && template_refused) {
      ++engine_.stats_.template_refused;
      refusals_.record(Refusal::kTemplateRefused, c.peer(), session_text, now_ns);
      c.close();
      return nullptr;
    }
    if (found == nullptr) {
      ++engine_.stats_.unknown_session_refused;
      refusals_.record(Refusal::kUnknownSession, c.peer(), session_text, now_ns);
      c.close();
      return nullptr;
    }
    if (found->connection != nullptr) {
      // The previous connection is only delivering the session's last words
      // (its Logout, or what it sent before a disconnect it decided): the
      // counterparty may already be back on a new one, and waiting for the
      // old socket's close would lock it out for up to SocketCloseTimeoutMs.
      // The old connection finishes its drain unbound.
      if (!found->session->is_connected() && !found->connection->is_open()) {
        ++engine_.stats_.connections_taken_over;
        found->connection->set_context(nullptr);
        found->connection = nullptr;
        --bound_;
      } else {
        ++engine_.stats_.duplicate_refused;
        refusals_.record(Refusal::kDuplicate, c.peer(), session_text, now_ns);
        c.close();
        return nullptr;
      }
    }
    if (found->disabled) {
      ++engine_.stats_.disabled_refused;
      refusals_.record(Refusal::kDisabled, c.peer(), session_text, now_ns);
      c.close();
      return nullptr;
    }
    if (bound_ >= limits_.max_connections) {
      ++engine_.stats_.max_connections_refused;
      refusals_.record(Refusal::kMaxConnections, c.peer(), session_text, now_ns);
      c.close();
      return nullptr;
    }
    if (!found->logon_allowed(Engine::now().utc_ns)) {
      ++engine_.stats_.outside_logon_time_refused;
      refusals_.record(Refusal::kOutsideLogonTime, c.peer(), session_text, now_ns);
      c.close();
      return nullptr;
    }
    bind(*found, c);
    return found;
  }

  Engine& engine_;
  Limits limits_;
  RefusalLog refusals_;
  std::vector<Pending> pending_;
  std::size_t bound_ = 0;  // connections bound to a session (initiators' included)
  std::uint64_t reactor_rejected_ = 0;
  static constexpr std::size_t kTimerSlice = 64;
  std::size_t timer_next_ = SIZE_MAX;  // the next session of a timer round (>= slots_.size(): none under way)
  std::size_t held_ = 0;               // slots with input_held
};

Engine::Engine() = default;

Engine::~Engine() {
  admin_server_.reset();  // its threads wait on the mailbox: stopped before anything they use
  if (handler_) handler_->flush_log();
  if (log_owner_) log_owner_->flush_suppressed(INT64_MAX);
  // The reactor closes its connections on destruction and reports them to the
  // handler and the sessions: it goes first, while they still exist.
  reactor_.reset();
  slots_.clear();
  if (journal_service_) journal_service_->stop();
}

session::Instant Engine::now() noexcept { return session::Instant{core::realtime_ns(), core::monotonic_ns()}; }

Expected<std::unique_ptr<Engine>> Engine::create(const Config& config, session::Application& app,
                                                 session::Logger* user_log) {
  std::vector<std::string> new_stores;
  auto engine = build(config, app, user_log, new_stores);
  if (!engine) {
    // The half-built engine (and so every store it opened) is closed by now:
    // remove what this start created, newest first.
    for (auto it = new_stores.rbegin(); it != new_stores.rend(); ++it) remove_new_store(*it);
    return engine.error();
  }
  return engine;
}

Expected<std::unique_ptr<Engine>> Engine::build(const Config& config, session::Application& app,
                                                session::Logger* user_log, std::vector<std::string>& new_stores) {
  std::unique_ptr<Engine> engine(new Engine());
  auto logger = make_logger(config, user_log);
  if (!logger) return logger.error();
  engine->log_owner_ = std::move(*logger);
  engine->log_ = engine->log_owner_.get();
  engine->app_ = &app;
  auto reactor_opts = reactor_options(config);
  if (!reactor_opts) return reactor_opts.error();
  Handler::Limits limits;
  {
    const Section& d = config.defaults();
    auto pending = d.get_int("MaxPendingConnections");
    if (!pending) return pending.error();
    auto per_address = d.get_int("MaxPendingConnectionsPerAddress");
    if (!per_address) return per_address.error();
    auto pre_logon_bytes = d.get_size("MaxPreLogonBytes");
    if (!pre_logon_bytes) return pre_logon_bytes.error();
    auto logon_timeout = d.get_duration("LogonTimeout");
    if (!logon_timeout) return logon_timeout.error();
    limits.max_pending = static_cast<std::size_t>(*pending);
    limits.max_pending_per_address = static_cast<std::size_t>(*per_address);
    limits.max_pre_logon_bytes = static_cast<std::size_t>(*pre_logon_bytes);
    limits.pre_logon_timeout_ns = logon_timeout->count();
  }
  // Slots: MaxConnections for sessions and as many for the connections they
  // replaced that are still draining (a session taken over on reconnect),
  // MaxPendingConnections for connections not identified yet, and room for
  // those closed in the current pass but not recycled yet, so that a full
  // pending table never makes the reactor drop a new connection before the
  // engine can make room for it.
  limits.max_connections = reactor_opts->max_connections;
  reactor_opts->max_connections =
      2 * limits.max_connections + limits.max_pending + transport::kMaxAcceptsPerPass;
  engine->handler_ = std::make_unique<Handler>(*engine, limits);
  engine->idle_ = reactor_opts->idle;
  engine->cpu_ = reactor_opts->cpu;
  engine->close_timeout_ns_ = reactor_opts->close_timeout_ns;
  auto reactor = transport::Reactor::create(*reactor_opts);
  if (!reactor) return Error{config.file() + ": " + reactor.error().message};
  engine->reactor_ = std::move(*reactor);

  engine->dictionaries_ = std::make_unique<DictionaryCache>();
  engine->listen_backlog_ =
      static_cast<int>(std::clamp<std::size_t>(2 * config.sessions().size() + limits.max_pending, 128, 65535));
  if (config.defaults().has("JournalThreadCore")) {
    auto core = config.defaults().get_int("JournalThreadCore");
    if (!core) return core.error();
    engine->journal_cpu_ = static_cast<int>(*core);
    engine->journal_cpu_where_ = config.defaults().where("JournalThreadCore");
  }
  for (const Section& section : config.sessions()) {
    if (section.is_template()) {
      // Checked now (dictionaries, every key), built when a Logon matches it.
      auto setup = session_setup(section, *engine->dictionaries_);
      if (!setup) return setup.error();
      auto listener = engine->listener_for(section);
      if (!listener) return listener.error();
      engine->templates_.push_back(
          std::make_unique<Template>(Template{section, *listener, std::move(setup->settings)}));
      continue;
    }
    if (auto opened = engine->open_session(section, new_stores); !opened) return opened.error();
  }

  std::int64_t tick_ns = 100'000'000;
  if (config.defaults().has("TimerIntervalMs")) {
    auto tick = config.defaults().get_duration("TimerIntervalMs");
    if (!tick) return tick.error();
    tick_ns = std::max<std::int64_t>(tick->count(), 1'000'000);
  }
  engine->reactor_->set_tick_handler(engine->handler_.get(), tick_ns);
  if (auto admin = engine->start_admin(config); !admin) return admin.error();
  return engine;
}

Expected<std::shared_ptr<const transport::TlsContext>> Engine::tls_context_for(const Section& section) {
  auto tls = tls_options(section);
  if (!tls) return tls.error();
  if (!*tls) return std::shared_ptr<const transport::TlsContext>{};
  // Sessions with the same settings share one context (files loaded once).
  for (const auto& context : tls_contexts_) {
    if (context->options() == **tls) return context;
  }
  auto context = transport::TlsContext::create(**tls);
  if (!context) return tls_context_error(section, context.error());
  if (log_ != nullptr && log_->enabled(session::LogLevel::kWarn) && (*tls)->role == transport::TlsRole::kClient &&
      !(*context)->verifies_peer()) {
    log_->log(session::LogLevel::kWarn, kEngineId,
              section.where("CertificateVerifyLevel") +
                  ": CertificateVerifyLevel=0: the server's certificate is not verified");
  }
  tls_contexts_.push_back(*context);
  return std::shared_ptr<const transport::TlsContext>(*context);
}

Expected<transport::Listener*> Engine::listener_for(const Section& section) {
  auto opts = listener_options(section);
  if (!opts) return opts.error();
  auto tls = tls_context_for(section);
  if (!tls) return tls.error();
  opts->tls = *tls;
  // Room in the accept queue for every session to reconnect at once (a
  // venue restart): with the default 128, the SYNs of the others are
  // dropped and retried after 1, 3, 7 s. The kernel caps it at somaxconn.
  opts->backlog = std::max(opts->backlog, listen_backlog_);
  // Sessions with the same SocketAcceptHost and SocketAcceptPort share one
  // listener (port 0 included: one free port for all of them).
  const auto where = std::make_pair(opts->host, opts->port);
  auto it = listeners_.find(where);
  if (it != listeners_.end()) {
    // One port speaks TLS or not, with one certificate: sessions sharing it must agree.
    const auto& existing = it->second->options().tls;
    auto comparable = [](const std::shared_ptr<const transport::TlsContext>& c) {
      std::optional<transport::TlsOptions> o;
      if (c) {
        o = c->options();
        o->handshake_timeout_ns = 0;  // LogonTimeout may differ per session
      }
      return o;
    };
    if (comparable(existing) != comparable(opts->tls)) {
      return Error{section.where("SocketUseSSL") + ": port " + std::to_string(opts->port) +
                   " is shared with sessions whose TLS settings differ (SocketUseSSL and the certificate keys must "
                   "be the same for every session on one SocketAcceptPort)"};
    }
  }
  if (it == listeners_.end()) {
    auto listener = reactor_->add_listener(*opts, *handler_);
    if (!listener) return Error{section.where("SocketAcceptPort") + ": SocketAcceptPort: " + listener.error().message};
    it = listeners_.emplace(where, *listener).first;
    ports_.push_back((*listener)->port());
  }
  return it->second;
}

Expected<Engine::Slot*> Engine::open_session_now(const Section& section) {
  std::vector<std::string> made;
  auto opened = open_session(section, made);
  if (!opened) {
    for (auto it = made.rbegin(); it != made.rend(); ++it) {
      // A shared journal this session opened stays open for the others.
      bool open_journal = false;
      for (const auto& [root, journal] : shared_journals_)
        open_journal = open_journal || journal->journal().config().directory == *it;
      if (!open_journal) remove_new_store(*it);
    }
  }
  return opened;
}

namespace {

// The settings a shared journal takes from its first session, which every
// other session of its FileStorePath must repeat (none of them can differ
// per session in one journal).
std::string journal_settings_differ(const store::JournalConfig& a, const store::JournalConfig& b) {
  if (a.segment_size != b.segment_size) return "JournalSegmentSize";
  if (a.initial_segment_size != b.initial_segment_size) return "JournalInitialSegmentSize";
  if (a.preallocate != b.preallocate) return "JournalPrealloc";
  if (a.evict_finished != b.evict_finished) return "JournalEvictFinished";
  if (a.evict_written != b.evict_written) return "JournalEvictWritten";
  if (a.large_folios != b.large_folios) return "JournalLargeFolios";
  if (a.write_behind != b.write_behind) return "JournalWriteBehind";
  if (a.durability != b.durability) return "JournalDurability";
  if (a.fsync_interval_ns != b.fsync_interval_ns) return "JournalFsyncIntervalMs";
  return {};  // JournalRetainSegments: refused with the shared layout (session_setup)
}

}  // namespace

Expected<std::unique_ptr<store::SharedStore>> Engine::open_shared_store(const Section& section,
                                                                        const SessionSetup& setup,
                                                                        std::vector<std::string>& new_stores,
                                                                        std::int64_t now_ns) {
  const std::string& root = setup.store.root;
  auto it = shared_journals_.find(root);
  if (it == shared_journals_.end()) {
    store::SharedJournalConfig c;
    c.journal = setup.store.journal;
    c.journal.directory = root + "/shared-journal";
    const bool existed = directory_exists(c.journal.directory);
    auto opened = store::SharedJournal::open(c, journal_service_.get());
    if (!existed && directory_exists(c.journal.directory)) new_stores.push_back(c.journal.directory);
    if (!opened) return Error{section.where("FileStorePath") + ": FileStorePath: " + opened.error().message};
    // What the open repaired, and records its scan could not read: said
    // once, at WARN, before any session starts.
    if (log_ != nullptr && log_->enabled(session::LogLevel::kWarn)) {
      const session::SessionID id = setup.settings.id();
      for (const std::string& line : (*opened)->recovery().repairs)
        log_->log(session::LogLevel::kWarn, id, "shared journal repaired: " + line);
      for (const std::string& line : (*opened)->recovery().notes)
        log_->log(session::LogLevel::kWarn, id, "shared journal: " + line);
      for (const std::string& line : (*opened)->warnings()) log_->log(session::LogLevel::kWarn, id, line);
    }
    it = shared_journals_.emplace(root, std::move(*opened)).first;
  } else if (const std::string key =
                 journal_settings_differ(it->second->journal().config(), setup.store.journal);
             !key.empty()) {
    return Error{section.where(key) + ": " + key + ": differs from the other sessions of FileStorePath " +
                 root + ", which share one journal (JournalLayout=shared)"};
  }
  store::SharedJournal::StoreConfig sc;
  sc.directory = setup.store.directory;
  sc.name = setup.store.directory.substr(setup.store.directory.rfind('/') + 1);
  sc.session_identity = store::session_identity(setup.settings.id().to_string());
  sc.journal_inbound = true;
  // As for JournalStore: a new sequence-number file is not fsync'd.
  sc.sync_new_files = false;
  const bool existed = directory_exists(sc.directory);
  auto opened = it->second->open_store(sc, now_ns);
  if (!existed && (opened || directory_exists(sc.directory))) new_stores.push_back(sc.directory);
  if (!opened) return Error{section.where("FileStorePath") + ": FileStorePath: " + opened.error().message};
  if (log_ != nullptr && log_->enabled(session::LogLevel::kWarn)) {
    for (const std::string& line : (*opened)->recovery().warnings)
      log_->log(session::LogLevel::kWarn, setup.settings.id(), line);
  }
  return opened;
}

std::vector<store::JournalStats> Engine::shared_journal_stats() const {
  std::vector<store::JournalStats> out;
  for (const auto& [root, journal] : shared_journals_) out.push_back(journal->journal().stats());
  return out;
}

Expected<Engine::Slot*> Engine::open_session(const Section& section, std::vector<std::string>& new_stores) {
  auto setup = session_setup(section, *dictionaries_);
  if (!setup) return setup.error();
  if (find(setup->settings.id()) != nullptr)
    return Error{section.where("") + ": session " + setup->settings.id().to_string() + " exists already"};
  auto slot = std::make_unique<Slot>();
  slot->engine = this;
  slot->logon_window = setup->logon_window;

  const auto now = Engine::now();
  std::unique_ptr<store::MessageStore> message_store;
  if (setup->store.persistent) {
    if (!journal_service_) {
      store::JournalServiceConfig service;
      service.cpu = journal_cpu_;
      journal_service_ = std::make_unique<store::JournalService>(service);
      if (auto started = journal_service_->start(); !started) {
        journal_service_.reset();
        return Error{journal_cpu_where_ + ": " + started.error().message};
      }
    }
    if (setup->store.shared) {
      auto opened = open_shared_store(section, *setup, new_stores, now.utc_ns);
      if (!opened) return opened.error();
      slot->shared = opened->get();
      message_store = std::move(*opened);
    } else {
      store::JournalStoreConfig jc;
      jc.directory = setup->store.directory;
      jc.journal = setup->store.journal;
      // A new store's sequence-number file is not fsync'd (1-2 ms each: a
      // second for 1,000 sessions): if a power loss leaves it empty, open
      // treats it as missing (docs/journal.md).
      jc.sync_new_files = false;
      const session::SessionID id = setup->settings.id();
      jc.session_identity = store::session_identity(id.to_string());
      const bool existed = directory_exists(jc.directory);
      auto opened = store::JournalStore::open(jc, journal_service_.get(), now.utc_ns);
      if (!existed && (opened || directory_exists(jc.directory))) new_stores.push_back(jc.directory);
      if (!opened)
        return Error{section.where("FileStorePath") + ": FileStorePath: " + opened.error().message};
      // Whatever open() repaired or recovered is said once, at WARN, before
      // the session starts (docs/journal.md, "Recovery").
      if (log_ != nullptr && log_->enabled(session::LogLevel::kWarn)) {
        for (const std::string& line : (*opened)->recovery().warnings)
          log_->log(session::LogLevel::kWarn, id, line);
      }
      slot->journal = opened->get();
      message_store = std::move(*opened);
    }
  } else {
    // Without FileStorePath the last 1024 messages are kept in memory for
    // resends, packed in a ring of 1 MiB (allocated once, written as used:
    // 1024 slots of MaxMessageSize, 64 MiB by default, kept a page per
    // message resident, 4 MiB a session), fewer of them when they average
    // more than 1 KiB; and as many more as OutgoingThrottleAction=queue may
    // hold, with room for each at MaxMessageSize (it sends held messages
    // from the store, so none may be dropped).
    store::MemoryStoreConfig mc;
    mc.capacity = 1024;
    mc.max_message_size = setup->settings.max_message_size;
    mc.bytes = mc.capacity * std::size_t{1024};
    if (setup->settings.outgoing_throttle_limit != 0 &&
        setup->settings.outgoing_throttle_action == session::OutgoingThrottleAction::kQueue) {
      const std::size_t held = setup->settings.outgoing_throttle_queue_size;
      mc.capacity += held;
      mc.bytes += store::MemoryStore::bytes_for(held, mc.max_message_size);
    }
    message_store = std::make_unique<store::MemoryStore>(mc, now.utc_ns);
  }
  slot->store = std::move(message_store);

  const bool initiator = setup->settings.initiator;
  auto created = session::Session::create(std::move(setup->settings), *slot->store, *app_, *slot, log_, now);
  if (!created) return Error{section.where("") + ": " + created.error().message};
  slot->session = std::move(*created);
  log_owner_->add_session(slot->session->id());
  log_owner_->bind(slot->session->id());

  if (initiator) {
    auto opts = connector_options(section);
    if (!opts) return opts.error();
    auto tls = tls_context_for(section);
    if (!tls) return tls.error();
    opts->tls = *tls;
    auto connector = reactor_->add_connector(*opts, *handler_);
    if (!connector)
      return Error{section.where("SocketConnectHost") + ": SocketConnectHost: " + connector.error().message};
    slot->connector = *connector;
    slot->connector->set_context(slot.get());
    // Outside LogonTime..LogoutTime the first attempt must not happen.
    if (!slot->logon_allowed(now.utc_ns)) {
      slot->connector->disable();
      slot->outside_window = true;
    }
  } else {
    auto listener = listener_for(section);
    if (!listener) return listener.error();
    slot->listener = *listener;
  }
  slot->handle = static_cast<std::uint32_t>(by_handle_.size() + 1);
  by_handle_.push_back(slot.get());
  slots_.push_back(std::move(slot));
  return slots_.back().get();
}

SendRing& Engine::add_send_ring(const SendRingOptions& options) {
  rings_.push_back(std::make_unique<SendRing>(options));
  return *rings_.back();
}

std::optional<SessionHandle> Engine::handle_of(const session::SessionID& id) noexcept {
  const Slot* slot = slot_of(id);
  if (slot == nullptr) return std::nullopt;
  return SessionHandle{slot->handle};
}

int Engine::drain_rings() noexcept {
  int work = 0;
  session::Instant t{};
  for (auto& ring : rings_) {
    for (std::size_t i = 0; i < ring->options_.drain_batch; ++i) {
      const SendRing::Entry* e = ring->peek();
      if (e == nullptr) break;
      if (work == 0) t = now();  // one clock read per poll for SendingTime
      ++work;
      Slot* slot = e->session - 1u < by_handle_.size() ? by_handle_[e->session - 1u] : nullptr;
      if (slot == nullptr || slot->removing) {
        SendRing::bump(ring->unknown_);
        ring->release();
        continue;
      }
      const std::string_view body = ring->body(*e);
      const session::SendStatus st = slot->session->send_app(
          std::string_view(e->type, e->type_length), t, [&](session::OutgoingMessage& m) { m.add_raw(body); });
      if (st == session::SendStatus::kStoreBusy) [[unlikely]] {
        // No journal segment ready yet: the message stays first in its ring
        // (order kept; producers meet a full ring) until the service has one.
        SendRing::bump(ring->store_waits_);
        --work;
        break;
      }
      if (st == session::SendStatus::kOk) {
        SendRing::bump(ring->sent_);
      } else {
        SendRing::bump(ring->failed_);
        if (e->tag != 0 && app_ != nullptr) app_->on_queued_send_failed(*slot->session, e->tag, st);
      }
      ring->release();
    }
  }
  return work;
}

Engine::Slot* Engine::from_template(const session::RouteKey& key, std::string_view message,
                                    const transport::Listener* listener, bool& refused) noexcept {
  refused = false;
  if (templates_.empty()) return nullptr;
  SessionId id;
  id.begin_string = key.begin_string;
  id.sender_comp_id = key.sender_comp_id;
  id.target_comp_id = key.target_comp_id;
  for (const auto& t : templates_) {
    if (t->listener != listener || !t->section.matches(id)) continue;
    // Not the message path: a first Logon of a session not seen before
    // (allocation and file creation, about 0.1-0.3 ms on this thread).
    try {
      // Nothing is created for a first message that is not a Logon with the
      // template's credentials: a peer that only guesses CompIDs cannot
      // make the engine create stores.
      if (!template_view_) template_view_ = std::make_unique<codec::MessageView>(t->settings.max_fields_per_message);
      if (key.msg_type != "A" || template_view_->parse(message) != codec::ParseStatus::kOk ||
          !session::Session::logon_credentials_match(t->settings, *template_view_)) {
        refused = true;
        return nullptr;
      }
      auto opened = open_session_now(t->section.instantiate(id));
      if (opened) {
        ++stats_.template_sessions_created;
        if (log_ != nullptr && log_->enabled(session::LogLevel::kInfo))
          log_->log(session::LogLevel::kInfo, (*opened)->session->id(),
                    "session created from the AcceptorTemplate at " + t->section.where(""));
        return *opened;
      }
      if (log_ != nullptr && log_->enabled(session::LogLevel::kError)) {
        log_->log(session::LogLevel::kError, kEngineId,
                  "cannot create session " + id.to_string() + " from the AcceptorTemplate at " +
                      t->section.where("") + ": " + opened.error().message);
      }
    } catch (const std::exception&) {
      // Out of memory: refused like an unknown session.
    }
    return nullptr;
  }
  return nullptr;
}

Expected<session::Session*> Engine::add_session(const Section& section) {
  if (section.kind() != Section::Kind::kSession || section.is_template())
    return Error{section.where("") + ": add_session needs a [SESSION] that is not an AcceptorTemplate"};
  auto opened = open_session_now(section);
  if (!opened) return opened.error();
  return (*opened)->session.get();
}

Engine::Slot* Engine::slot_of(const session::SessionID& id) noexcept {
  for (auto& slot : slots_) {
    if (!slot->removing && slot->session->id() == id) return slot.get();
  }
  return nullptr;
}

bool Engine::remove_session(const session::SessionID& id) noexcept {
  Slot* slot = slot_of(id);
  if (slot == nullptr) return false;
  slot->removing = true;
  if (slot->connector != nullptr) {
    slot->connector->disable();
    slot->connector->set_context(nullptr);  // the reactor keeps it, inert
  }
  if (slot->connection != nullptr) slot->connection->abort();
  reap_pending_ = true;
  return true;
}

bool Engine::disable_session(const session::SessionID& id, std::string_view text) noexcept {
  Slot* slot = slot_of(id);
  if (slot == nullptr) return false;
  slot->disabled = true;
  if (slot->connector != nullptr) slot->connector->disable();
  const auto t = now();
  if (slot->session->is_logged_on()) slot->session->logout(text, t);
  else if (slot->connection != nullptr) slot->connection->close();
  return true;
}

bool Engine::enable_session(const session::SessionID& id) noexcept {
  Slot* slot = slot_of(id);
  if (slot == nullptr) return false;
  slot->disabled = false;
  slot->session->enable();
  if (slot->connector != nullptr && !slot->outside_window) slot->connector->enable();
  return true;
}

void Engine::reap() noexcept {
  reap_pending_ = false;
  for (std::size_t i = 0; i < slots_.size();) {
    Slot& slot = *slots_[i];
    if (!slot.removing) {
      ++i;
      continue;
    }
    if (slot.connection != nullptr) {  // its abort is reported by the reactor first
      reap_pending_ = true;
      ++i;
      continue;
    }
    (void)slot.store->flush();
    by_handle_[slot.handle - 1] = nullptr;
    if (log_ != nullptr && log_->enabled(session::LogLevel::kInfo))
      log_->log(session::LogLevel::kInfo, slot.session->id(), "session removed; its store stays on disk");
    slots_.erase(slots_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

int Engine::poll_sockets() noexcept {
  if (reap_pending_) [[unlikely]]
    reap();
  // The admin endpoint's request, if one waits: one acquire load otherwise.
  if (admin_mailbox_ != nullptr && admin_mailbox_->pending()) [[unlikely]]
    serve_admin();
  int work = reactor_->do_work();
  if (handler_->input_held()) [[unlikely]]
    work += handler_->resume_held();
  if (handler_->timers_pending()) [[unlikely]] {
    handler_->serve_timers();
    ++work;
  }
  return work;
}

void Engine::apply_logon_window(Slot& slot, const session::Instant& now) noexcept {
  const bool allowed = slot.logon_allowed(now.utc_ns);
  if (allowed && slot.outside_window) {
    slot.outside_window = false;
    slot.session->enable();
    if (slot.connector != nullptr) slot.connector->enable();
    if (log_ != nullptr && log_->enabled(session::LogLevel::kInfo)) {
      log_->log(session::LogLevel::kInfo, slot.session->id(), "LogonTime reached: logons allowed");
    }
  } else if (!allowed && !slot.outside_window) {
    slot.outside_window = true;
    if (log_ != nullptr && log_->enabled(session::LogLevel::kInfo)) {
      log_->log(session::LogLevel::kInfo, slot.session->id(), "LogoutTime reached: logging out");
    }
    if (slot.connector != nullptr) slot.connector->disable();
    if (slot.session->is_logged_on()) {
      slot.session->logout("", now);
    } else if (slot.connection != nullptr) {
      slot.connection->close();
    }
  }
}

void Engine::run() {
  // EngineThreadCore: the thread that runs the loop is the engine thread.
  if (!core::pin_current_thread(cpu_) && log_ != nullptr && log_->enabled(session::LogLevel::kError)) {
    log_->log(session::LogLevel::kError, kEngineId,
              "EngineThreadCore: cannot pin the engine thread to CPU " + std::to_string(cpu_));
  }
  core::IdleStrategy idle(idle_);
  while (!stop_.load(std::memory_order_acquire)) idle.idle(poll());
  std::int64_t timeout_ns = 0;
  for (auto& slot : slots_) {
    timeout_ns = std::max<std::int64_t>(timeout_ns, std::int64_t{slot->session->settings().logout_timeout} * 1'000'000'000);
  }
  logout_all(timeout_ns + 500'000'000);
}

void Engine::logout_all(std::int64_t timeout_ns) {
  const auto start = now();
  for (std::size_t i = 0; i < slots_.size(); ++i) {  // by index: a callback may add a session
    Slot& slot = *slots_[i];
    if (slot.connector != nullptr) slot.connector->disable();
    if (slot.session->is_logged_on()) slot.session->logout("", start);
    else if (slot.connection != nullptr) slot.connection->close();
  }
  auto any_connected = [&] {
    return std::any_of(slots_.begin(), slots_.end(), [](const auto& s) { return s->connection != nullptr; });
  };
  core::IdleStrategy idle(core::IdleKind::kBackoff);
  while (now().mono_ns - start.mono_ns < timeout_ns && any_connected()) idle.idle(poll());
  // Sessions still connected: closed gracefully too, so that what they
  // queued (their Logout) still goes out; the reactor ends each drain by
  // SocketCloseTimeoutMs at the latest.
  for (auto& slot : slots_) {
    if (slot->connection != nullptr) slot->connection->close();
  }
  const auto closing = now();
  while (now().mono_ns - closing.mono_ns < close_timeout_ns_ + 100'000'000 && any_connected())
    idle.idle(poll());
  for (auto& slot : slots_) {
    if (slot->connection != nullptr) slot->connection->abort();
  }
  poll();
  for (auto& slot : slots_) (void)slot->store->flush();
}

std::size_t Engine::session_count() const noexcept { return slots_.size(); }
session::Session& Engine::session(std::size_t index) noexcept { return *slots_[index]->session; }

session::Session* Engine::find(const session::SessionID& id) noexcept {
  Slot* slot = slot_of(id);
  return slot != nullptr ? slot->session.get() : nullptr;
}

std::uint64_t Engine::connection_buffer_bytes() const noexcept { return reactor_->buffer_bytes(); }

int Engine::admin_port() const noexcept { return admin_server_ ? admin_server_->port() : 0; }

Expected<void> Engine::start_admin(const Config& config) {
  const Section& d = config.defaults();
  if (!d.has("HttpAcceptPort")) {
    for (const char* key : {"HttpAcceptAddress", "HttpAdminTokenFile", "HttpAdminAuditFile"}) {
      if (d.has(key))
        return Error{d.where(key) + ": " + key + ": needs HttpAcceptPort (without it there is no admin endpoint)"};
    }
    return {};
  }
  admin::ServerOptions options;
  auto port = d.get_int("HttpAcceptPort");
  if (!port) return port.error();
  options.port = static_cast<int>(*port);
  auto address = d.get_string("HttpAcceptAddress");
  if (!address) return address.error();
  options.address = *address;
  if (d.has("HttpAdminTokenFile")) {
    auto path = d.get_string("HttpAdminTokenFile");
    if (!path) return path.error();
    auto token = admin::read_token_file(*path, d.where("HttpAdminTokenFile") + ": HttpAdminTokenFile");
    if (!token) return token.error();
    options.token = std::move(*token);
  }
  if (d.has("HttpAdminAuditFile")) {
    auto path = d.get_string("HttpAdminAuditFile");
    if (!path) return path.error();
    options.audit_file = *path;
  }
  admin_mailbox_ = std::make_unique<admin::Mailbox>();
  auto server = admin::Server::start(options, *admin_mailbox_, log_owner_->async());
  if (!server) {
    const std::string& why = server.error().message;
    const char* key = why.rfind(options.audit_file, 0) == 0 && !options.audit_file.empty() ? "HttpAdminAuditFile"
                                                                                           : "HttpAcceptPort";
    return Error{d.where(key) + ": " + key + ": " + why};
  }
  admin_server_ = std::move(*server);
  if (log_ != nullptr && log_->enabled(session::LogLevel::kInfo)) {
    log_->log(session::LogLevel::kInfo, kEngineId,
              "admin endpoint on http://" + options.address + ":" + std::to_string(admin_server_->port()) +
                  (options.token.empty() ? " (read only: no HttpAdminTokenFile)" : ""));
  }
  return {};
}

// Engine thread, from poll(), only when a request waits. Copies into the
// server's preallocated buffers and calls the Session/Engine API: nothing
// allocates, locks or blocks (docs/admin.md, "Cost on the engine thread").
void Engine::serve_admin() noexcept {
  admin::Mailbox& box = *admin_mailbox_;
  if (!box.take()) return;  // withdrawn by the server (timed out) meanwhile
  const admin::Request& rq = box.request;
  admin::Reply& rp = box.reply;
  rp.status = 200;
  rp.message[0] = '\0';
  rp.session[0] = '\0';
  rp.filled = 0;
  rp.total = 0;
  auto snapshot = [](const Slot& slot, std::uint32_t index, admin::SessionSnapshot& out) noexcept {
    const session::Session& s = *slot.session;
    out.index = index;
    admin::format_session_id(s.id(), out.id, sizeof out.id);
    const std::size_t n = std::min(s.id().begin_string.size(), sizeof out.begin_string - 1);
    std::memcpy(out.begin_string, s.id().begin_string.data(), n);
    out.begin_string[n] = '\0';
    out.initiator = slot.connector != nullptr;
    out.state = s.state();
    out.logged_on = s.is_logged_on();
    out.enabled = !slot.disabled;
    out.in_logon_window = !slot.outside_window;
    out.next_sender_seq = s.next_sender_seq();
    out.next_target_seq = s.next_target_seq();
    out.heart_bt_int = s.heart_bt_int();
    out.counters = s.counters();
    out.outbound = {};
    out.inbound = {};
    if (slot.shared != nullptr) {
      // The session's own records and bytes; the segments are the shared journal's.
      const store::JournalStats own = slot.shared->stats().outbound;
      const store::JournalStats js = slot.shared->shared().journal().stats();
      out.outbound = admin::JournalSnapshot{.present = true,
                                            .appends = own.appends,
                                            .bytes = own.bytes,
                                            .rotations = js.rotations,
                                            .spare_misses = js.spare_misses,
                                            .active_segment = js.active_segment,
                                            .spare_errno = js.spare_errno};
    }
    if (slot.journal != nullptr) {
      store::Journal* journals[2] = {&slot.journal->outbound(), slot.journal->inbound()};
      admin::JournalSnapshot* into[2] = {&out.outbound, &out.inbound};
      for (int i = 0; i < 2; ++i) {
        if (journals[i] == nullptr) continue;
        const store::JournalStats js = journals[i]->stats();
        *into[i] = admin::JournalSnapshot{.present = true, .appends = js.appends, .bytes = js.bytes,
                                          .rotations = js.rotations, .spare_misses = js.spare_misses,
                                          .active_segment = js.active_segment, .spare_errno = js.spare_errno};
      }
    }
  };
  // The session a command names: by its index among the live sessions or by its ID.
  auto target = [&]() noexcept -> std::pair<Slot*, std::uint32_t> {
    std::uint32_t index = 0;
    for (auto& slot : slots_) {
      if (slot->removing) continue;
      if (rq.by_index ? index == rq.index : slot->session->id() == rq.target) return {slot.get(), index};
      ++index;
    }
    return {nullptr, 0};
  };
  switch (rq.command) {
    case admin::Command::kSessions: {
      if (rq.all_sessions) {
        std::uint32_t index = 0;
        for (auto& slot : slots_) {
          if (slot->removing) continue;
          if (rp.filled < rp.sessions.size()) snapshot(*slot, index, rp.sessions[rp.filled++]);
          ++index;
        }
        rp.total = index;
      } else if (const auto found = target(); found.first != nullptr) {
        rp.total = 1;
        if (!rp.sessions.empty()) snapshot(*found.first, found.second, rp.sessions[rp.filled++]);
      } else {
        rp.status = 404;
      }
      break;
    }
    case admin::Command::kEngine: {
      admin::EngineSnapshot& e = rp.engine;
      e = admin::EngineSnapshot{};
      e.stats = stats_;
      for (auto& slot : slots_) {
        if (slot->removing) continue;
        ++e.sessions;
        e.connected += slot->session->is_connected() ? 1 : 0;
        e.logged_on += slot->session->is_logged_on() ? 1 : 0;
      }
      e.connection_buffer_bytes = reactor_->buffer_bytes();
      e.log_lines_suppressed = log_owner_->stats().suppressed;
      std::snprintf(e.log_level, sizeof e.log_level, "%s", log_level_name(log_owner_->min_level()));
      break;
    }
    case admin::Command::kLogLevel: {
      char line[320];
      std::snprintf(line, sizeof line, "admin log-level %s by %s (was %s)", rq.text.c_str(), rq.who.c_str(),
                    log_level_name(log_owner_->min_level()));
      // Logged before the change, so that a change to `off` is recorded too.
      log_owner_->log(session::LogLevel::kInfo, kEngineId, line);
      log_owner_->set_min_level(min_log_level(rq.text));
      std::snprintf(rp.message, sizeof rp.message, "log level %s", log_level_name(log_owner_->min_level()));
      break;
    }
    case admin::Command::kAddSession: {
      // Not the message path: opening a store and a listener allocate and
      // touch files (as Engine::add_session always does).
      auto added = add_session(*rq.section);
      if (!added) {
        rp.status = 400;
        std::snprintf(rp.message, sizeof rp.message, "%s", added.error().message.c_str());
      } else {
        admin::format_session_id((*added)->id(), rp.session, sizeof rp.session);
        std::snprintf(rp.message, sizeof rp.message, "session added");
      }
      if (log_ != nullptr && log_->enabled(session::LogLevel::kInfo)) {
        char line[768];
        std::snprintf(line, sizeof line, "admin add-session by %s: %d %s %s", rq.who.c_str(), rp.status,
                      rp.session, rp.message);
        log_->log(session::LogLevel::kInfo, added ? (*added)->id() : kEngineId, line);
      }
      break;
    }
    default: {
      const auto found = target();
      if (found.first == nullptr) {
        rp.status = 404;
        std::snprintf(rp.message, sizeof rp.message, "no such session");
        break;
      }
      admin_command(*found.first);
      break;
    }
  }
  box.done();
}

void Engine::admin_command(Slot& slot) noexcept {
  const admin::Request& rq = admin_mailbox_->request;
  admin::Reply& rp = admin_mailbox_->reply;
  session::Session& s = *slot.session;
  const session::Instant t = now();
  admin::format_session_id(s.id(), rp.session, sizeof rp.session);
  const char* name = "?";
  auto refuse = [&](int status, const char* why) noexcept {
    rp.status = status;
    std::snprintf(rp.message, sizeof rp.message, "%s", why);
  };
  switch (rq.command) {
    case admin::Command::kLogout:
      name = "logout";
      if (!s.is_connected()) {
        refuse(409, "not connected");
        break;
      }
      // A Logout, not a ban: the session may log on again (disable is that).
      s.logout(rq.text, t);
      if (!slot.disabled) s.enable();
      std::snprintf(rp.message, sizeof rp.message, "%s", s.is_connected() ? "logout sent" : "disconnected");
      break;
    case admin::Command::kDisconnect:
      name = "disconnect";
      if (!s.is_connected()) {
        refuse(409, "not connected");
        break;
      }
      s.disconnect(t);
      std::snprintf(rp.message, sizeof rp.message, "disconnected");
      break;
    case admin::Command::kEnable:
      name = "enable";
      (void)enable_session(s.id());
      std::snprintf(rp.message, sizeof rp.message, "enabled");
      break;
    case admin::Command::kDisable:
      name = "disable";
      (void)disable_session(s.id(), rq.text);
      std::snprintf(rp.message, sizeof rp.message, "disabled");
      break;
    case admin::Command::kReset:
      name = "reset";
      s.reset(t);
      std::snprintf(rp.message, sizeof rp.message, "sequence numbers reset: next sender %llu, next target %llu",
                    static_cast<unsigned long long>(s.next_sender_seq()),
                    static_cast<unsigned long long>(s.next_target_seq()));
      break;
    case admin::Command::kSetSeqNum:
      name = "set-seqnum";
      if (rq.a != 0) s.set_next_sender_seq(rq.a);
      if (rq.b != 0) s.set_next_target_seq(rq.b);
      std::snprintf(rp.message, sizeof rp.message, "next sender %llu, next target %llu",
                    static_cast<unsigned long long>(s.next_sender_seq()),
                    static_cast<unsigned long long>(s.next_target_seq()));
      break;
    case admin::Command::kSequenceReset: {
      name = "sequence-reset";
      const std::uint64_t before = s.next_sender_seq();
      switch (s.send_sequence_reset(rq.a, rq.flag, t)) {
        case session::SendStatus::kOk:
          std::snprintf(rp.message, sizeof rp.message, "SequenceReset %llu sent%s; next sender %llu",
                        static_cast<unsigned long long>(before), rq.flag ? " (gap fill)" : "",
                        static_cast<unsigned long long>(s.next_sender_seq()));
          break;
        case session::SendStatus::kNotLoggedOn: refuse(409, "not logged on"); break;
        case session::SendStatus::kEncodeError:
          rp.status = 400;
          std::snprintf(rp.message, sizeof rp.message,
                        "new_seq_no: %llu is not above the next sender sequence number %llu",
                        static_cast<unsigned long long>(rq.a), static_cast<unsigned long long>(before));
          break;
        default: refuse(500, "the store could not record the SequenceReset: the session ends"); break;
      }
      break;
    }
    case admin::Command::kRemoveSession:
      name = "remove";
      // Its connection closes now (no Logout: disable first for one); the
      // session and its store close at the next poll; the files stay.
      (void)remove_session(s.id());
      std::snprintf(rp.message, sizeof rp.message, "removed; its store stays on disk");
      break;
    default: refuse(400, "not a session command"); break;
  }
  if (log_ != nullptr && log_->enabled(session::LogLevel::kInfo)) {
    char line[480];
    std::snprintf(line, sizeof line, "admin %s by %s: %d %s", name, rq.who.c_str(), rp.status, rp.message);
    log_->log(session::LogLevel::kInfo, s.id(), line);
  }
}

int Engine::listen_port(std::size_t listener_index) const noexcept {
  return listener_index < ports_.size() ? ports_[listener_index] : 0;
}

}  // namespace hft::engine
