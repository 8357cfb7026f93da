#include "hft/engine/engine.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "hft/codec/parser.hpp"
#include "hft/core/clock.hpp"
#include "hft/core/idle.hpp"
#include "hft/engine/session_config.hpp"
#include "hft/store/journal_service.hpp"
#include "hft/store/message_store.hpp"
#include "hft/transport/connection.hpp"
#include "hft/transport/connector.hpp"
#include "hft/transport/listener.hpp"
#include "hft/transport/reactor.hpp"

namespace hft::engine {

// One configured session with its store, its output and (while connected)
// its connection.
struct Engine::Slot final : session::Output {
  Engine* engine = nullptr;
  std::unique_ptr<store::MessageStore> store;
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
      connection->close();
    }
  }
  void disconnect(session::DisconnectReason) noexcept override {
    if (connection != nullptr) connection->close();
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
    for (auto& slot : engine_.slots_) slot->session->on_timer(now);
  }

 private:
  void bind(Slot& slot, transport::Connection& c) noexcept {
    slot.connection = &c;
    c.set_context(&slot);
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
      c.close();
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
                                                 session::Logger* log) {
  std::unique_ptr<Engine> engine(new Engine());
  engine->log_ = log;
  engine->handler_ = std::make_unique<Handler>(*engine);

  auto reactor_opts = reactor_options(config);
  if (!reactor_opts) return reactor_opts.error();
  engine->idle_ = reactor_opts->idle;
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
      auto opened = store::JournalStore::open(jc, engine->journal_service_.get(), now.utc_ns);
      if (!opened) return Error{section.where("FileStorePath") + ": FileStorePath: " + opened.error().message};
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

void Engine::run() {
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
  core::IdleStrategy idle(core::IdleKind::kBackoff);
  while (now().mono_ns - start.mono_ns < timeout_ns) {
    const bool any = std::any_of(slots_.begin(), slots_.end(), [](const auto& s) { return s->connection != nullptr; });
    if (!any) break;
    idle.idle(poll());
  }
  for (auto& slot : slots_) {
    if (slot->connection != nullptr) slot->connection->close();
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
