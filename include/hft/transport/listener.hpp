// The acceptor side: one listening port (SO_REUSEADDR), many connections.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hft/transport/connection.hpp"
#include "hft/transport/socket.hpp"

namespace hft::transport {

class ConnectionHandler;
class TlsContext;

/// Connections a listener accepts in one reactor pass at most (a connection
/// storm cannot starve established sessions). A handler that closes accepted
/// connections needs this many spare slots for the ones it has closed but
/// the reactor has not recycled yet.
inline constexpr int kMaxAcceptsPerPass = 16;

struct ListenerOptions {
  /// Local address to bind: "0.0.0.0" (all IPv4), "::" (all IPv6), or one address.
  std::string host = "0.0.0.0";
  /// 0 binds a free ephemeral port (read it back with Listener::port()).
  std::uint16_t port = 0;
  int backlog = 128;
  /// Applied to each accepted socket (buffer sizes also to the listening
  /// socket, so the TCP window is negotiated with them).
  SocketOptions socket;
  ConnectionBuffers buffers;
  /// TLS server context (tls.hpp); null: plain TCP.
  std::shared_ptr<const TlsContext> tls;
};

/// Created by Reactor::add_listener(); lives as long as the reactor.
class Listener {
 public:
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  ~Listener();

  /// The bound port (the ephemeral one if options().port was 0).
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] const ListenerOptions& options() const noexcept { return options_; }
  /// True until close().
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  /// Stops listening. Connections already accepted stay open.
  void close() noexcept;

  /// Connections accepted so far (with TLS: handshakes completed).
  [[nodiscard]] std::uint64_t accepted() const noexcept { return accepted_; }
  /// TLS handshakes that failed or timed out (the connection was closed).
  [[nodiscard]] std::uint64_t handshake_failures() const noexcept { return handshake_failures_; }
  /// Connections refused because every reactor slot was in use (closed at once).
  [[nodiscard]] std::uint64_t rejected() const noexcept { return rejected_; }

  /// A pointer the owner may attach.
  [[nodiscard]] void* context() const noexcept { return context_; }
  void set_context(void* context) noexcept { context_ = context; }

 private:
  friend class Reactor;
  Listener(Reactor& reactor, int fd, std::uint16_t port, ListenerOptions options,
           ConnectionHandler& handler) noexcept;
  int on_readable() noexcept;
  void established(Connection& connection) noexcept;
  void handshake_failed(Connection& connection) noexcept;

  Reactor* reactor_;
  int fd_;
  std::uint16_t port_;
  ListenerOptions options_;
  ConnectionHandler* handler_;
  void* context_ = nullptr;
  std::uint64_t accepted_ = 0;
  std::uint64_t rejected_ = 0;
  std::uint64_t handshake_failures_ = 0;
};

}  // namespace hft::transport
