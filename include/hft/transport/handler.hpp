// Callbacks from a Reactor. All of them run on the reactor's thread, from
// inside Reactor::do_work(), one at a time; none is ever called from inside
// a call the handler makes (close() and send() never call back).
#pragma once

#include <cstdint>

#include "hft/transport/connection.hpp"

namespace hft::transport {

class Connector;
class Listener;
struct Endpoint;

/// Receives the events of connections, connectors and listeners.
class ConnectionHandler {
 public:
  virtual ~ConnectionHandler() = default;

  /// New bytes arrived: `connection.received()` holds every byte not
  /// consumed yet. Consume what was used with `connection.consume(n)`; keep
  /// a partial message unconsumed and it is still there next time. If the
  /// buffer is full and nothing is consumed, the connection is closed with
  /// CloseReason::kReceiveBufferFull.
  virtual void on_data(Connection& connection) noexcept = 0;

  /// A connector's connection is established (connection.connector() names
  /// it, Connector::endpoint_index() the endpoint used).
  virtual void on_connected(Connection& connection) noexcept { (void)connection; }

  /// A listener accepted `connection` (connection.listener() names it).
  virtual void on_accepted(Connection& connection) noexcept { (void)connection; }

  /// A connect attempt to `endpoint` failed with errno `error` (ETIMEDOUT
  /// when the connect timeout passed). The connector moves on to its next
  /// endpoint, or waits its reconnect interval after the last one.
  virtual void on_connect_failed(Connector& connector, const Endpoint& endpoint, int error) noexcept {
    (void)connector, (void)endpoint, (void)error;
  }

  /// A listener's TLS handshake with `connection.peer()` failed or timed
  /// out; `connection.tls_error()` says why. The connection was never
  /// delivered (no on_accepted) and is recycled after this call. A
  /// connector's failed handshake comes as on_connect_failed(EPROTO, or
  /// ETIMEDOUT for its timeout) with Connector::last_tls_error().
  virtual void on_handshake_failed(Connection& connection) noexcept { (void)connection; }

  /// The outbound buffer of `connection` has been flushed completely after
  /// a send() returned kQueued or kOverflow: sending can resume.
  virtual void on_drained(Connection& connection) noexcept { (void)connection; }

  /// `connection` is closed; `error` is the errno for CloseReason::kError,
  /// else 0. The socket is already closed; unconsumed received bytes are
  /// still readable in this call. The Connection is recycled afterwards.
  virtual void on_closed(Connection& connection, CloseReason reason, int error) noexcept {
    (void)connection, (void)reason, (void)error;
  }
};

/// The periodic timer hook (e.g. the sessions' heartbeat and timeout checks).
class TickHandler {
 public:
  virtual ~TickHandler() = default;
  /// Called every tick interval with CLOCK_MONOTONIC nanoseconds.
  virtual void on_tick(std::int64_t now_ns) noexcept = 0;
};

}  // namespace hft::transport
