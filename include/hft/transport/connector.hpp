// The initiator side: connects to a list of endpoints (primary first, then
// failovers) with non-blocking connects completed by the reactor.
//
// Policy. A round tries the endpoints in order, starting with the primary;
// a failed attempt (refused, unreachable, or no answer within the connect
// timeout) moves at once to the next endpoint. After the last one fails,
// the next round starts one reconnect interval later. When an established
// connection closes, the next round also starts one reconnect interval
// later, from the primary again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "hft/transport/connection.hpp"
#include "hft/transport/socket.hpp"

namespace hft::transport {

class ConnectionHandler;
class TlsContext;

struct ConnectorOptions {
  /// Primary endpoint first, then failovers. At least one.
  std::vector<Endpoint> endpoints;
  /// Wait between rounds of attempts and after a disconnect.
  std::int64_t reconnect_interval_ns = 30'000'000'000;
  /// An attempt with no answer after this long fails with ETIMEDOUT.
  std::int64_t connect_timeout_ns = 5'000'000'000;
  SocketOptions socket;
  ConnectionBuffers buffers;
  /// TLS client context (tls.hpp); null: plain TCP.
  std::shared_ptr<const TlsContext> tls;
  /// false: the connector waits for enable() before its first attempt.
  bool enabled = true;
};

/// Created by Reactor::add_connector(); lives as long as the reactor.
class Connector {
 public:
  enum class State : std::uint8_t {
    kDisabled,    ///< not connecting (disable() or never enabled)
    kWaiting,     ///< waiting for the next attempt (see next_attempt_ns())
    kConnecting,   ///< a non-blocking connect is in flight
    kHandshaking,  ///< TLS: connected, handshake in progress
    kConnected,    ///< connection() is open
  };

  Connector(const Connector&) = delete;
  Connector& operator=(const Connector&) = delete;
  ~Connector();

  /// Starts connecting (the first attempt is made on the next do_work()).
  /// No effect unless disabled.
  void enable() noexcept;
  /// Stops making attempts and aborts one in flight. An established
  /// connection stays open (close it with Connection::close()); after it
  /// closes, no reconnect follows.
  void disable() noexcept;

  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] bool enabled() const noexcept { return enabled_; }
  /// The open connection in kConnected, else nullptr.
  [[nodiscard]] Connection* connection() const noexcept { return connection_; }
  /// Index in options().endpoints of the current (or last) attempt.
  [[nodiscard]] std::size_t endpoint_index() const noexcept { return index_; }
  [[nodiscard]] const Endpoint& endpoint() const noexcept { return options_.endpoints[index_]; }
  [[nodiscard]] const ConnectorOptions& options() const noexcept { return options_; }
  /// CLOCK_MONOTONIC time of the next attempt (kWaiting).
  [[nodiscard]] std::int64_t next_attempt_ns() const noexcept { return next_attempt_ns_; }

  /// Why the last TLS handshake failed (empty if it did not).
  [[nodiscard]] std::string_view last_tls_error() const noexcept { return {tls_error_, tls_error_length_}; }

  [[nodiscard]] std::uint64_t attempts() const noexcept { return attempts_; }
  [[nodiscard]] std::uint64_t failures() const noexcept { return failures_; }

  /// A pointer the owner may attach (e.g. its session).
  [[nodiscard]] void* context() const noexcept { return context_; }
  void set_context(void* context) noexcept { context_ = context; }

 private:
  friend class Reactor;
  Connector(Reactor& reactor, std::uint32_t index, ConnectorOptions options,
            std::vector<SocketAddress> addresses, ConnectionHandler& handler);

  // Reactor-side steps; each returns 1 if it did something.
  int service(std::int64_t now_ns) noexcept;      // due attempt or timeout
  int on_writable(std::int64_t now_ns) noexcept;  // connect completion
  void on_connection_closed(std::int64_t now_ns) noexcept;
  void established(Connection& connection) noexcept;  // TCP (and TLS) done
  void handshake_failed(Connection& connection, std::int64_t now_ns) noexcept;
  void start_attempt(std::int64_t now_ns) noexcept;
  void fail_attempt(int error, std::int64_t now_ns) noexcept;
  void abort_socket() noexcept;
  [[nodiscard]] std::int64_t deadline_ns() const noexcept;

  Reactor* reactor_;
  std::uint32_t index_in_reactor_;
  ConnectorOptions options_;
  std::vector<SocketAddress> addresses_;
  ConnectionHandler* handler_;
  void* context_ = nullptr;

  State state_ = State::kDisabled;
  bool enabled_ = false;
  std::size_t index_ = 0;
  int fd_ = -1;  // socket of the attempt in flight
  OptionError option_error_{};
  std::int64_t next_attempt_ns_ = 0;
  std::int64_t attempt_deadline_ns_ = 0;
  Connection* connection_ = nullptr;
  std::uint64_t attempts_ = 0;
  std::uint64_t failures_ = 0;
  std::uint8_t tls_error_length_ = 0;
  char tls_error_[200] = {};
};

}  // namespace hft::transport
