// The event loop: one thread polls all its sockets, either
//
//  - kBusy: a non-blocking recv() on every open connection each pass (the
//    lowest latency; one syscall per connection per pass), with listeners,
//    connects in flight and timers checked every service interval; or
//  - kEpoll: epoll_wait() with a timeout (0 = never block), level-triggered.
//
// The reactor is an agent: do_work() does one pass and returns how much it
// did; run() loops do_work() with a core::IdleStrategy until stop(). In
// epoll mode with a timeout the wait already idles, so pair it with
// busy-spin (the IdleStrategy only acts when a pass found nothing).
//
// Nothing on the data path allocates: connection slots, event arrays and
// close lists are sized at construction (max_connections); a connection's
// buffers are allocated when it is set up, then reused.
//
// Threading: everything except stop()/request_stop() must be called on the
// thread that runs do_work() (or before it starts).
//
// Lifetime: handlers passed to add_connector()/add_listener() and the tick
// handler must outlive the reactor (its destructor delivers on_closed).
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/core/idle.hpp"
#include "hft/transport/connection.hpp"
#include "hft/transport/connector.hpp"
#include "hft/transport/handler.hpp"
#include "hft/transport/listener.hpp"
#include "hft/transport/tls.hpp"

namespace hft::transport {

enum class PollMode : std::uint8_t {
  kBusy,   ///< non-blocking recv on each socket in a loop
  kEpoll,  ///< epoll_wait with a timeout
};

/// "busy" / "epoll"; empty optional if unknown.
[[nodiscard]] std::optional<PollMode> parse_poll_mode(std::string_view name) noexcept;
[[nodiscard]] std::string_view to_string(PollMode mode) noexcept;

struct ReactorOptions {
  PollMode poll_mode = PollMode::kEpoll;
  /// kEpoll: longest wait in epoll_wait, in ms (0: never block). Shortened
  /// when a timer is due sooner.
  int epoll_timeout_ms = 1;
  /// kBusy: how often listeners, connects in flight and timers are checked.
  std::int64_t service_interval_ns = 100'000;
  /// Connections open at once (accepted + connected). Fixed at start.
  std::size_t max_connections = 64;
  /// Events taken per epoll_wait.
  std::size_t max_events = 64;
  /// CPU for the run() thread; negative: not pinned.
  int cpu = -1;
  /// What run() does after a pass with no work.
  core::IdleKind idle = core::IdleKind::kBusySpin;
  /// Connection::close(): longest time to deliver the queued bytes before
  /// the socket is closed anyway (CloseReason::kDrainTimeout). 0: close()
  /// drops them at once, like abort().
  std::int64_t close_timeout_ns = 2'000'000'000;
  /// Thread name for start() (15 characters kept).
  std::string thread_name = "hft-reactor";
};

/// Counters of a reactor (monotonic).
struct ReactorStats {
  std::uint64_t accepted = 0;         ///< connections accepted
  std::uint64_t accept_rejected = 0;  ///< accepted but closed: no free slot
  std::uint64_t connect_attempts = 0;
  std::uint64_t connect_failures = 0;
  std::uint64_t connected = 0;
  std::uint64_t closed = 0;               ///< on_closed() delivered
  std::uint64_t receive_buffer_full = 0;  ///< closes with kReceiveBufferFull
  std::uint64_t drain_timeouts = 0;       ///< graceful closes that hit their deadline (kDrainTimeout)
  std::uint64_t tls_handshakes = 0;          ///< TLS handshakes completed
  std::uint64_t tls_handshake_failures = 0;  ///< TLS handshakes failed or timed out
  std::uint64_t ticks = 0;
};

class Reactor {
 public:
  /// Creates the epoll instance and the connection slots. Error if the
  /// kernel refuses (epoll_create1/eventfd) or the options are invalid.
  [[nodiscard]] static Expected<std::unique_ptr<Reactor>> create(const ReactorOptions& options);

  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;
  /// Stops and joins a start()ed thread, closes every socket; open
  /// connections get on_closed(kShutdown).
  ~Reactor();

  /// Adds an initiator. Endpoints are resolved here (DNS may block): the
  /// error names the endpoint that does not resolve. If options.enabled, the
  /// first attempt is made on the next do_work().
  [[nodiscard]] Expected<Connector*> add_connector(ConnectorOptions options, ConnectionHandler& handler);

  /// Adds an acceptor: binds and listens now. The error names host:port and
  /// the reason (e.g. "Address already in use").
  [[nodiscard]] Expected<Listener*> add_listener(ListenerOptions options, ConnectionHandler& handler);

  /// Calls handler.on_tick(now) every `interval_ns` (>= 1 ms recommended).
  /// nullptr removes the hook.
  void set_tick_handler(TickHandler* handler, std::int64_t interval_ns) noexcept;

  /// One pass: reads, writes, accepts, connects, timers, closes. Returns
  /// the number of things done (0: idle). Never throws; allocates nothing
  /// unless a connection is set up for the first time in its slot.
  int do_work() noexcept;

  /// Loops do_work() on the calling thread with the configured idle
  /// strategy until stop() or request_stop(). Pins the thread first if
  /// options.cpu >= 0; returns false at once if that fails.
  bool run() noexcept;

  /// Runs run() on a new thread. Error if already started or pinning failed
  /// (the thread has then exited).
  [[nodiscard]] Expected<void> start();

  /// Asks the loop to stop (any thread; wakes an epoll wait).
  void request_stop() noexcept;
  /// request_stop(), then joins the start()ed thread (not from that thread).
  void stop() noexcept;
  [[nodiscard]] bool stop_requested() const noexcept { return stop_.load(std::memory_order_relaxed); }

  [[nodiscard]] const ReactorOptions& options() const noexcept { return options_; }
  [[nodiscard]] const ReactorStats& stats() const noexcept { return stats_; }
  /// Bytes of receive and send buffers the connection slots hold. A slot
  /// allocates its buffers the first time it is used (or when a listener or
  /// connector needs other sizes) and keeps them, so this grows with the
  /// slots ever used, at most max_connections x (receive + send size), never
  /// with traffic. Readable from any thread.
  [[nodiscard]] std::uint64_t buffer_bytes() const noexcept { return buffer_bytes_.load(std::memory_order_relaxed); }
  /// Connections open now (draining ones included).
  [[nodiscard]] std::size_t open_connections() const noexcept { return open_.size(); }
  /// Connections between close() and the end of their drain.
  [[nodiscard]] std::size_t draining_connections() const noexcept { return draining_.size(); }
  /// The connection in `slot` if it is open and its generation matches.
  [[nodiscard]] Connection* find(std::uint32_t slot, std::uint32_t generation) const noexcept;

 private:
  friend class Connection;
  friend class Connector;
  friend class Listener;

  explicit Reactor(const ReactorOptions& options);

  enum class Kind : std::uint8_t { kConnection = 1, kListener = 2, kConnector = 3, kWakeup = 4 };
  static std::uint64_t tag(Kind kind, std::uint32_t index) noexcept {
    return (static_cast<std::uint64_t>(kind) << 32) | index;
  }

  // Takes a free slot for an established socket; nullptr if none is free.
  // With `tls`, the connection starts its handshake (kHandshaking) and the
  // caller delivers nothing: step_handshake() does once it completes.
  Connection* adopt(int fd, const ConnectionBuffers& buffers, const SocketOptions& socket,
                    OptionError option_error, ConnectionHandler* handler, Connector* connector,
                    Listener* listener, const TlsContext* tls, std::int64_t now_ns) noexcept;
  // One handshake step of `c`; on completion on_connected/on_accepted, on
  // failure the close path without on_closed. Returns work done.
  int step_handshake(Connection& c, std::int64_t now_ns) noexcept;
  int service_handshakes(std::int64_t now_ns) noexcept;
  void forget_handshake(std::uint32_t slot) noexcept;
  void schedule_pending_read(Connection& connection) noexcept;
  int service_pending_reads() noexcept;
  void schedule_close(Connection& connection) noexcept;
  void schedule_drain(Connection& connection) noexcept;
  int service_drains(std::int64_t now_ns) noexcept;
  void timer_changed(std::int64_t deadline_ns) noexcept;
  bool epoll_add(int fd, std::uint32_t events, std::uint64_t data) noexcept;
  bool epoll_mod(int fd, std::uint32_t events, std::uint64_t data) noexcept;
  void epoll_del(int fd) noexcept;

  int dispatch(int events, std::int64_t now_ns) noexcept;
  int service_timers(std::int64_t now_ns) noexcept;
  int deliver_closes(std::int64_t now_ns) noexcept;
  [[nodiscard]] int epoll_timeout(std::int64_t now_ns) const noexcept;

  ReactorOptions options_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::vector<std::unique_ptr<Connection>> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::uint32_t> open_;
  std::vector<std::uint32_t> closing_;
  std::vector<std::uint32_t> draining_;
  std::vector<std::uint32_t> handshaking_;    // TLS handshakes in progress
  std::vector<std::uint32_t> pending_reads_;  // TLS input held inside OpenSSL
  std::vector<std::unique_ptr<Connector>> connectors_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::vector<epoll_event> events_;

  TickHandler* tick_handler_ = nullptr;
  std::int64_t tick_interval_ns_ = 0;
  std::int64_t next_tick_ns_ = 0;
  std::int64_t next_timer_ns_ = 0;    // earliest deadline of ticks and connectors
  std::int64_t next_service_ns_ = 0;  // busy mode: next listener/connect poll

  ReactorStats stats_{};
  std::atomic<std::uint64_t> buffer_bytes_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace hft::transport
