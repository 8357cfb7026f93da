// The engine: wiring of configuration -> sessions + stores + transports.
//
//   Config (INI) ──► Engine ──┬─ Reactor (one thread: every socket, timers)
//                             ├─ JournalService (segment pre-creation, flush)
//                             ├─ per [SESSION]: Session + store + Connector
//                             │  (initiator) or a route on a Listener (acceptor)
//                             └─ admin endpoint (HttpAcceptPort, docs/admin.md):
//                                threads of its own; poll() answers its requests
//
// Acceptors: one listener per SocketAcceptPort; a new connection stays
// unbound until its first complete message, whose BeginString and CompIDs
// name the session (several sessions per port). Unknown sessions and second
// connections for a session that is already connected are logged and closed.
//
// Threading: everything runs on the thread that calls poll()/run() (the
// application's callbacks too, and sends made from them). Sending from that
// thread between polls is the lowest-latency way (no hand-off); a thread
// that is not the engine's must not touch a Session.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/engine/config.hpp"
#include "hft/engine/log.hpp"
#include "hft/engine/send_ring.hpp"
#include "hft/session/application.hpp"
#include "hft/session/session.hpp"

namespace hft::transport {
class Listener;
class Reactor;
}
namespace hft::session {
struct RouteKey;
}
namespace hft::store {
struct JournalStats;
class JournalService;
class SharedJournal;
class SharedStore;
}  // namespace hft::store

namespace hft::engine {

struct SessionSetup;
class DictionaryCache;
class EventLog;
namespace admin {
class Mailbox;
class Server;
}  // namespace admin

/// Counters of the whole engine (monotonic).
struct EngineStats {
  std::uint64_t connections_accepted = 0;
  std::uint64_t unknown_session_refused = 0;     ///< first message named no configured session
  std::uint64_t duplicate_refused = 0;           ///< session already had a connection
  std::uint64_t garbled_first_message = 0;       ///< closed before any session was found
  std::uint64_t send_overflows = 0;              ///< socket send buffer full: connection closed
  std::uint64_t outside_logon_time_refused = 0;  ///< acceptor connection outside LogonTime..LogoutTime
  /// Connections not yet identified (no complete first message naming a
  /// configured session), and how they ended:
  std::uint64_t pre_logon_timeouts = 0;           ///< no session named within [DEFAULT] LogonTimeout
  std::uint64_t pre_logon_bytes_exceeded = 0;     ///< sent more than MaxPreLogonBytes first
  std::uint64_t pending_per_address_refused = 0;  ///< MaxPendingConnectionsPerAddress reached for its address
  std::uint64_t pending_evicted = 0;              ///< closed to make room: MaxPendingConnections reached
  std::uint64_t no_slot_refused = 0;              ///< closed at accept: every connection slot in use
  std::uint64_t max_connections_refused = 0;      ///< named a session while MaxConnections were bound
  /// A new connection took over a session whose previous connection was
  /// only delivering the session's last words (after our Logout, or a
  /// disconnect the session decided).
  std::uint64_t connections_taken_over = 0;
  /// Sessions created at a Logon from an AcceptorTemplate.
  std::uint64_t template_sessions_created = 0;
  /// First messages matching an AcceptorTemplate that were not a Logon with
  /// its Username/Password: closed, nothing created.
  std::uint64_t template_refused = 0;
  /// Connections refused because their session is disabled (disable_session).
  std::uint64_t disabled_refused = 0;
  /// Accepted connections whose TLS handshake failed or timed out (SocketUseSSL=Y).
  std::uint64_t tls_handshake_failures = 0;
  /// Times a session's next received message waited for room in its
  /// journal (the journal service behind): its connection was not read
  /// until the service caught up, instead of the session ending.
  std::uint64_t input_pauses = 0;
};

class Engine {
 public:
  /// Builds every session of `config`: dictionaries loaded, stores opened
  /// (FileStorePath: journals; none: in memory), listeners bound, connectors
  /// created. `app` and `log` must outlive the engine. Errors name the
  /// file, line and key at fault.
  ///
  /// Events go to `log` and, if [DEFAULT] sets LogFile, to that file, and
  /// with FileLogPath to one file per session (docs/logging.md); with none of
  /// them, to standard error. The engine's own files and standard error are
  /// written by a writer thread (AsyncLogger), never on the engine thread.
  /// LogLevel is the least severe event kept (it filters `log` only when set
  /// explicitly); LogRateLimit bounds each session's WARN lines.
  ///
  /// A start that fails leaves nothing half-created: the store directories
  /// it created for sessions that had none are removed again (stores that
  /// existed before are only opened, never removed).
  [[nodiscard]] static Expected<std::unique_ptr<Engine>> create(const Config& config,
                                                                session::Application& app,
                                                                session::Logger* log = nullptr);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// One pass of the event loop: what the send rings hold (send_queued()),
  /// then sockets and timers (poll_sockets()). Returns the work done.
  int poll() noexcept {
    const int queued = send_queued();
    return queued + poll_sockets();
  }
  /// poll() without the send rings: sockets and timers only. For a loop
  /// that calls send_queued() itself, at its own points.
  int poll_sockets() noexcept;
  /// Pins the calling thread to EngineThreadCore (if set; a failure is
  /// logged), loops poll() with the configured idle strategy until stop() is
  /// asked (from any thread); then logs out every session (waiting up to its
  /// LogoutTimeout) and returns.
  void run();
  /// Asks run() to finish. Any thread.
  void request_stop() noexcept { stop_.store(true, std::memory_order_release); }
  /// Logs out every logged-on session and keeps polling until all are
  /// disconnected or `timeout_ns` passed; connections still open then are
  /// closed gracefully (their queued bytes, the Logout included, are still
  /// delivered for up to SocketCloseTimeoutMs), then aborted. Engine thread only.
  void logout_all(std::int64_t timeout_ns);

  /// The current time in the session's two domains.
  [[nodiscard]] static session::Instant now() noexcept;

  [[nodiscard]] std::size_t session_count() const noexcept;
  [[nodiscard]] session::Session& session(std::size_t index) noexcept;
  /// The session with `id` (qualifier included), or nullptr.
  [[nodiscard]] session::Session* find(const session::SessionID& id) noexcept;

  // ---- sending from other threads (docs/engine.md) ----

  /// A ring for one producer thread (include/hft/engine/send_ring.hpp),
  /// owned by the engine, drained by poll(). Call before run() or on the
  /// engine thread. Allocates capacity x max_body bytes, faulted in now.
  SendRing& add_send_ring(const SendRingOptions& options = {});
  /// Sends what the rings hold now, as poll() does before it reads the
  /// sockets; for a loop that wants queued sends first or timed on their own
  /// (the lab's cross-thread tx variant). Returns the messages taken.
  int send_queued() noexcept { return rings_.empty() ? 0 : drain_rings(); }
  /// The handle a producer names `id` by in SendRing::send, or none.
  [[nodiscard]] std::optional<SessionHandle> handle_of(const session::SessionID& id) noexcept;

  // ---- sessions at run time (engine thread: between polls or from a
  // callback; not the message path: they allocate and touch files) ----

  /// Adds the session `section` describes (a [SESSION] of a Config, e.g.
  /// parsed from text or built by the program), as create() would: its store
  /// opened (or created), an initiator connecting, an acceptor reachable on
  /// its SocketAcceptPort (a new listener if no session uses it yet). Error
  /// (naming the key) if it fails or the session exists already; nothing is
  /// left behind then.
  [[nodiscard]] Expected<session::Session*> add_session(const Section& section);
  /// Removes a session: its connection is closed at once (no Logout: call
  /// disable_session() first for one), and at the next poll() once that is
  /// done, the session and its store are closed. The store's files stay on
  /// disk (hft-journal reads them; adding the session again resumes it).
  /// False if there is no such session. Any Session& to it is dangling after
  /// the next poll().
  bool remove_session(const session::SessionID& id) noexcept;
  /// Logs the session out (with `text` as the Logout's Text; a connection
  /// that has not logged on is closed) and keeps it out: an initiator stops
  /// connecting, an acceptor refuses its connections, until enable_session().
  bool disable_session(const session::SessionID& id, std::string_view text = {}) noexcept;
  /// Allows a disabled session to log on again.
  bool enable_session(const session::SessionID& id) noexcept;
  [[nodiscard]] const EngineStats& stats() const noexcept { return stats_; }
  /// Heap bytes of the connection slots' receive and send buffers
  /// (transport::Reactor::buffer_bytes): bounded by the slot count, not by
  /// traffic. Readable from any thread while the engine runs.
  [[nodiscard]] std::uint64_t connection_buffer_bytes() const noexcept;
  /// Counters of each shared journal (JournalLayout=shared), one per
  /// FileStorePath: its segments, spares and service work, which no
  /// session's store_stats() counts. Empty with per-session journals.
  [[nodiscard]] std::vector<store::JournalStats> shared_journal_stats() const;
  /// The thread that prepares, writes out and retires the journals'
  /// segments for every persistent session (null until one opened a
  /// journal): its counters, and for tests that hold it back (stop(), then
  /// start() again) to see the sessions wait for it.
  [[nodiscard]] store::JournalService* journal_service() noexcept { return journal_service_.get(); }
  /// Port a listener is bound to (useful with SocketAcceptPort=0), or 0.
  [[nodiscard]] int listen_port(std::size_t listener_index = 0) const noexcept;
  /// Port the admin endpoint (HttpAcceptPort, docs/admin.md) is bound to, or
  /// 0 when it is off. Its requests are answered from poll(): an engine that
  /// is not polled answers them 503 after 2 s.
  [[nodiscard]] int admin_port() const noexcept;

 private:
  struct Slot;
  class Handler;
  struct Template {
    Section section;
    transport::Listener* listener = nullptr;
    session::SessionSettings settings;  // checked at start; its Username/Password
  };
  Engine();
  /// One session's slot: store, session, connector or listener. Store
  /// directories it created are added to new_stores (the caller removes
  /// them if it fails).
  Expected<Slot*> open_session(const Section& section, std::vector<std::string>& new_stores);
  /// open_session() at run time: what it created is removed if it fails.
  Expected<Slot*> open_session_now(const Section& section);
  /// The session's store in the shared journal of its FileStorePath
  /// (JournalLayout=shared), opening that journal with the first session.
  Expected<std::unique_ptr<store::SharedStore>> open_shared_store(const Section& section,
                                                                  const SessionSetup& setup,
                                                                  std::vector<std::string>& new_stores,
                                                                  std::int64_t now_ns);
  Expected<transport::Listener*> listener_for(const Section& section);
  // The TLS context of a session with SocketUseSSL=Y (null: plain TCP).
  Expected<std::shared_ptr<const transport::TlsContext>> tls_context_for(const Section& section);
  /// A session for an unknown first message (`message`, framed) that an
  /// AcceptorTemplate on `listener` matches and whose credentials it
  /// accepts, or nullptr (`refused` says whether a template matched).
  Slot* from_template(const session::RouteKey& key, std::string_view message, const transport::Listener* listener,
                      bool& refused) noexcept;
  Slot* slot_of(const session::SessionID& id) noexcept;
  /// Destroys removed sessions whose connection has closed.
  void reap() noexcept;
  /// Sends what other threads queued (SendRing); returns the messages taken.
  int drain_rings() noexcept;
  /// create() without the clean-up: `new_stores` lists the session store
  /// directories this start created (removed again if it fails).
  static Expected<std::unique_ptr<Engine>> build(const Config& config, session::Application& app,
                                                 session::Logger* log, std::vector<std::string>& new_stores);
  void apply_logon_window(Slot& slot, const session::Instant& now) noexcept;
  /// Starts the admin endpoint when [DEFAULT] sets HttpAcceptPort.
  Expected<void> start_admin(const Config& config);
  /// Answers the admin endpoint's pending request (engine thread, poll()).
  void serve_admin() noexcept;
  /// serve_admin()'s commands on one session: executed, logged with who asked.
  void admin_command(Slot& slot) noexcept;

  // First member: destroyed last, after the sessions and the reactor that log.
  std::unique_ptr<EventLog> log_owner_;
  std::unique_ptr<transport::Reactor> reactor_;
  std::unique_ptr<store::JournalService> journal_service_;
  // FileStorePath -> its shared journal (JournalLayout=shared): destroyed
  // after the sessions' stores, before the service.
  std::map<std::string, std::unique_ptr<store::SharedJournal>> shared_journals_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::unique_ptr<Handler> handler_;
  std::vector<std::unique_ptr<Template>> templates_;
  std::unique_ptr<DictionaryCache> dictionaries_;
  std::unique_ptr<codec::MessageView> template_view_;  // a template Logon's credentials, made at first use
  std::map<std::pair<std::string, std::uint16_t>, transport::Listener*> listeners_;
  std::vector<std::shared_ptr<const transport::TlsContext>> tls_contexts_;
  int journal_cpu_ = -1;
  std::string journal_cpu_where_ = "JournalThreadCore";
  bool reap_pending_ = false;
  int listen_backlog_ = 128;  // 2 x configured sessions, at least 128
  std::vector<std::unique_ptr<SendRing>> rings_;
  std::vector<Slot*> by_handle_;  // SessionHandle::value - 1 -> slot (nullptr once removed)
  std::vector<int> ports_;
  session::Logger* log_ = nullptr;
  session::Application* app_ = nullptr;
  int cpu_ = -1;
  std::int64_t close_timeout_ns_ = 2'000'000'000;
  EngineStats stats_{};
  core::IdleKind idle_ = core::IdleKind::kBusySpin;
  std::atomic<bool> stop_{false};
  std::unique_ptr<admin::Mailbox> admin_mailbox_;
  // Last member: destroyed first (its threads use the mailbox and the log).
  std::unique_ptr<admin::Server> admin_server_;
};

}  // namespace hft::engine
