#include "hft/engine/engine.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include "hft/codec/parser.hpp"
#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "hft/core/idle.hpp"
#include "hft/engine/log.hpp"
#include "hft/engine/session_config.hpp"
#include "hft/store/journal_service.hpp"
#include "hft/store/message_store.hpp"
#include "hft/transport/connection.hpp"
#include "hft/transport/connector.hpp"
#include "hft/transport/listener.hpp"
#include "hft/transport/reactor.hpp"

namespace hft::engine {

namespace {

// The engine's event log: LogLevel filters, LogFile (or standard error when
// the application gives no logger) receives, and the application's logger,
// if any, receives too.
class EngineLogger final : public session::Logger {
 public:
  EngineLogger(session::Logger* user, std::unique_ptr<StreamLogger> own, int min_level) noexcept
      : user_(user), own_(std::move(own)), min_level_(min_level) {}

  [[nodiscard]] bool enabled(session::LogLevel level) const noexcept override {
    if (static_cast<int>(level) < min_level_) return false;
    return (user_ != nullptr && user_->enabled(level)) || (own_ != nullptr && own_->enabled(level));
  }
  void log(session::LogLevel level, const session::SessionID& session,
           std::string_view text) noexcept override {
    if (static_cast<int>(level) < min_level_) return;
    if (user_ != nullptr && user_->enabled(level)) user_->log(level, session, text);
    if (own_ != nullptr && own_->enabled(level)) own_->log(level, session, text);
  }

 private:
  session::Logger* user_;
  std::unique_ptr<StreamLogger> own_;
  int min_level_;  // session::LogLevel as int; above kError: off
};

// LogLevel as a minimum session::LogLevel (as int): trace and debug are the
// session's debug level; off is above every level.
int min_log_level(std::string_view name) noexcept {
  if (name == "trace" || name == "debug") return static_cast<int>(session::LogLevel::kDebug);
  if (name == "warn") return static_cast<int>(session::LogLevel::kWarn);
  if (name == "error") return static_cast<int>(session::LogLevel::kError);
  if (name == "off") return static_cast<int>(session::LogLevel::kError) + 1;
  return static_cast<int>(session::LogLevel::kInfo);
}

Expected<std::unique_ptr<session::Logger>> make_logger(const Config& config, session::Logger* user) {
  const Section& d = config.defaults();
  auto level_name = d.get_string("LogLevel");
  if (!level_name) return level_name.error();
  const int min_level = min_log_level(*level_name);
  // A logger of the application's own is filtered only when LogLevel is set.
  const int user_min = d.has("LogLevel") ? min_level : 0;
  const auto stream_level = static_cast<session::LogLevel>(std::min(min_level, 3));
  std::unique_ptr<StreamLogger> own;
  if (d.has("LogFile")) {
    auto path = d.get_string("LogFile");
    if (!path) return path.error();
    auto opened = StreamLogger::open(*path, stream_level);
    if (!opened) return Error{d.where("LogFile") + ": LogFile: " + opened.error().message};
    own = std::move(*opened);
  } else if (user == nullptr) {
    own = std::make_unique<StreamLogger>(stream_level);
  }
  return std::unique_ptr<session::Logger>(
      std::make_unique<EngineLogger>(user, std::move(own), user != nullptr ? user_min : min_level));
}

}  // namespace

// One configured session with its store, its output and (while connected)
// its connection.
struct Engine::Slot final : session::Output {
  Engine* engine = nullptr;
  std::unique_ptr<store::MessageStore> store;
  store::JournalStore* journal = nullptr;  // the store, when persistent
  int spare_errno[2] = {0, 0};             // outbound, inbound: last reported spare failure
  std::unique_ptr<session::Session> session;
  transport::Connection* connection = nullptr;
  transport::Connector* connector = nullptr;
  std::uint16_t accept_port = 0;  // acceptor sessions: the port they are reached on

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
    if (journal == nullptr) return;
    store::Journal* journals[2] = {&journal->outbound(), journal->inbound()};
    for (int i = 0; i < 2; ++i) {
      if (journals[i] == nullptr) continue;
      const int err = journals[i]->stats().spare_errno;
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

// Routes reactor events to sessions.
class Engine::Handler final : public transport::ConnectionHandler, public transport::TickHandler {
 public:
  explicit Handler(Engine& engine) noexcept : engine_(engine) {}

  void on_connected(transport::Connection& c) noexcept override {
    auto* slot = static_cast<Slot*>(c.connector()->context());
    bind(*slot, c);
  }

  void on_accepted(transport::Connection& c) noexcept override {
    ++engine_.stats_.connections_accepted;
    c.set_context(nullptr);  // unbound until its first message names a session
  }

  void on_data(transport::Connection& c) noexcept override {
    auto* slot = static_cast<Slot*>(c.context());
    if (slot == nullptr) {
      slot = route(c);
      if (slot == nullptr) return;
    }
    const auto data = c.received();
    c.consume(data.size());
    slot->session->on_bytes(data, Engine::now());
  }

  void on_closed(transport::Connection& c, transport::CloseReason, int) noexcept override {
    auto* slot = static_cast<Slot*>(c.context());
    if (slot == nullptr || slot->connection != &c) return;
    slot->connection = nullptr;
    c.set_context(nullptr);
    slot->session->on_disconnected(Engine::now());
  }

  void on_tick(std::int64_t) noexcept override {
    const auto now = Engine::now();
    for (auto& slot : engine_.slots_) {
      if (slot->logon_window) engine_.apply_logon_window(*slot, now);
      slot->report_spares();
      slot->session->on_timer(now);
    }
  }

 private:
  void bind(Slot& slot, transport::Connection& c) noexcept {
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
    slot.session->on_connected(Engine::now());
  }

  // Finds the session an acceptor connection's first message names. Returns
  // nullptr while the message is incomplete, or after closing the connection.
  Slot* route(transport::Connection& c) noexcept {
    const std::string_view data = c.received_view();
    const auto framed = codec::frame(data);
    if (framed.status == codec::FrameStatus::kNeedMore) return nullptr;
    // A garbled first message may still name its session (a Logon with a wrong
    // BodyLength): it goes to that session, which answers per the protocol.
    session::RouteKey key;
    if (!session::peek_route(data.substr(0, framed.size), key)) {
      ++engine_.stats_.garbled_first_message;
      log(session::LogLevel::kWarn, "closing connection: first message names no session");
      c.abort();
      return nullptr;
    }
    const std::uint16_t port = c.listener() != nullptr ? c.listener()->port() : 0;
    Slot* found = nullptr;
    for (auto& slot : engine_.slots_) {
      if (!slot->session->settings().initiator && slot->accept_port == port &&
          key.matches(slot->session->id())) {
        found = slot.get();
        break;
      }
    }
    if (found == nullptr) {
      ++engine_.stats_.unknown_session_refused;
      log_route("refusing connection for unknown session", key);
      c.close();
      return nullptr;
    }
    if (found->connection != nullptr) {
      ++engine_.stats_.duplicate_refused;
      log_route("refusing second connection for session", key);
      c.close();
      return nullptr;
    }
    if (!found->logon_allowed(Engine::now().utc_ns)) {
      ++engine_.stats_.outside_logon_time_refused;
      log_route("refusing connection outside LogonTime..LogoutTime for session", key);
      c.close();
      return nullptr;
    }
    bind(*found, c);
    return found;
  }

  void log_route(const char* what, const session::RouteKey& key) noexcept {
    char line[256];
    const int n = std::snprintf(line, sizeof line, "%s %.*s:%.*s->%.*s", what,
                                static_cast<int>(key.begin_string.size()), key.begin_string.data(),
                                static_cast<int>(key.sender_comp_id.size()), key.sender_comp_id.data(),
                                static_cast<int>(key.target_comp_id.size()), key.target_comp_id.data());
    log(session::LogLevel::kWarn, std::string_view(line, n > 0 ? static_cast<std::size_t>(n) : 0));
  }

  void log(session::LogLevel level, std::string_view text) noexcept {
    if (engine_.log_ != nullptr && engine_.log_->enabled(level)) {
      static const session::SessionID kEngine{"", "engine", "", ""};
      engine_.log_->log(level, kEngine, text);
    }
  }

  Engine& engine_;
};

Engine::Engine() = default;

Engine::~Engine() {
  // The reactor closes its connections on destruction and reports them to the
  // handler and the sessions: it goes first, while they still exist.
  reactor_.reset();
  slots_.clear();
  if (journal_service_) journal_service_->stop();
}

session::Instant Engine::now() noexcept { return session::Instant{core::realtime_ns(), core::monotonic_ns()}; }

Expected<std::unique_ptr<Engine>> Engine::create(const Config& config, session::Application& app,
                                                 session::Logger* user_log) {
  std::unique_ptr<Engine> engine(new Engine());
  auto logger = make_logger(config, user_log);
  if (!logger) return logger.error();
  engine->log_owner_ = std::move(*logger);
  engine->log_ = engine->log_owner_.get();
  session::Logger* log = engine->log_;
  engine->handler_ = std::make_unique<Handler>(*engine);

  auto reactor_opts = reactor_options(config);
  if (!reactor_opts) return reactor_opts.error();
  engine->idle_ = reactor_opts->idle;
  engine->cpu_ = reactor_opts->cpu;
  engine->close_timeout_ns_ = reactor_opts->close_timeout_ns;
  auto reactor = transport::Reactor::create(*reactor_opts);
  if (!reactor) return Error{config.file() + ": " + reactor.error().message};
  engine->reactor_ = std::move(*reactor);

  DictionaryCache dictionaries;
  std::map<std::uint16_t, transport::Listener*> listeners;
  for (const Section& section : config.sessions()) {
    auto setup = session_setup(section, dictionaries);
    if (!setup) return setup.error();
    auto slot = std::make_unique<Slot>();
    slot->engine = engine.get();
    slot->logon_window = setup->logon_window;

    const auto now = Engine::now();
    std::unique_ptr<store::MessageStore> message_store;
    if (setup->store.persistent) {
      if (!engine->journal_service_) {
        store::JournalServiceConfig service;
        if (config.defaults().has("JournalThreadCore")) {
          auto core = config.defaults().get_int("JournalThreadCore");
          if (!core) return core.error();
          service.cpu = static_cast<int>(*core);
        }
        engine->journal_service_ = std::make_unique<store::JournalService>(service);
        if (auto started = engine->journal_service_->start(); !started) {
          return Error{config.defaults().where("JournalThreadCore") + ": " + started.error().message};
        }
      }
      store::JournalStoreConfig jc;
      jc.directory = setup->store.directory;
      jc.journal = setup->store.journal;
      const session::SessionID id = setup->settings.id();
      jc.session_identity = store::session_identity(id.to_string());
      auto opened = store::JournalStore::open(jc, engine->journal_service_.get(), now.utc_ns);
      if (!opened) return Error{section.where("FileStorePath") + ": FileStorePath: " + opened.error().message};
      // Whatever open() repaired or recovered is said once, at WARN, before
      // the session starts (docs/journal.md, "Recovery").
      if (log != nullptr && log->enabled(session::LogLevel::kWarn)) {
        for (const std::string& line : (*opened)->recovery().warnings)
          log->log(session::LogLevel::kWarn, id, line);
      }
      slot->journal = opened->get();
      message_store = std::move(*opened);
    } else {
      // Without FileStorePath the last 1024 messages are kept in memory for
      // resends (preallocated: 1024 x MaxMessageSize, never grown).
      store::MemoryStoreConfig mc;
      mc.capacity = 1024;
      mc.max_message_size = setup->settings.max_message_size;
      message_store = std::make_unique<store::MemoryStore>(mc, now.utc_ns);
    }
    slot->store = std::move(message_store);

    const bool initiator = setup->settings.initiator;
    auto created = session::Session::create(std::move(setup->settings), *slot->store, app, *slot, log, now);
    if (!created) return Error{section.where("") + ": " + created.error().message};
    slot->session = std::move(*created);

    if (initiator) {
      auto opts = connector_options(section);
      if (!opts) return opts.error();
      auto connector = engine->reactor_->add_connector(*opts, *engine->handler_);
      if (!connector) return Error{section.where("SocketConnectHost") + ": " + connector.error().message};
      slot->connector = *connector;
      slot->connector->set_context(slot.get());
      // Outside LogonTime..LogoutTime the first attempt must not happen.
      if (!slot->logon_allowed(now.utc_ns)) {
        slot->connector->disable();
        slot->outside_window = true;
      }
    } else {
      auto opts = listener_options(section);
      if (!opts) return opts.error();
      // Sessions with the same SocketAcceptPort share one listener (port 0
      // included: one free port for all of them).
      auto it = listeners.find(opts->port);
      if (it == listeners.end()) {
        auto listener = engine->reactor_->add_listener(*opts, *engine->handler_);
        if (!listener) return Error{section.where("SocketAcceptPort") + ": " + listener.error().message};
        it = listeners.emplace(opts->port, *listener).first;
        engine->ports_.push_back((*listener)->port());
      }
      slot->accept_port = it->second->port();
    }
    engine->slots_.push_back(std::move(slot));
  }

  std::int64_t tick_ns = 100'000'000;
  if (config.defaults().has("TimerIntervalMs")) {
    auto tick = config.defaults().get_duration("TimerIntervalMs");
    if (!tick) return tick.error();
    tick_ns = std::max<std::int64_t>(tick->count(), 1'000'000);
  }
  engine->reactor_->set_tick_handler(engine->handler_.get(), tick_ns);
  return engine;
}

int Engine::poll() noexcept { return reactor_->do_work(); }

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
    static const session::SessionID kEngine{"", "engine", "", ""};
    log_->log(session::LogLevel::kError, kEngine,
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
  for (auto& slot : slots_) {
    if (slot->connector != nullptr) slot->connector->disable();
    if (slot->session->is_logged_on()) slot->session->logout("", start);
    else if (slot->connection != nullptr) slot->connection->close();
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
  for (auto& slot : slots_) {
    if (slot->session->id() == id) return slot->session.get();
  }
  return nullptr;
}

int Engine::listen_port(std::size_t listener_index) const noexcept {
  return listener_index < ports_.size() ? ports_[listener_index] : 0;
}

}  // namespace hft::engine
