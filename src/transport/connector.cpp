#include "hft/transport/connector.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "hft/core/trace.hpp"
#include "hft/transport/handler.hpp"
#include "hft/transport/reactor.hpp"

namespace hft::transport {

Connector::Connector(Reactor& reactor, std::uint32_t index, ConnectorOptions options,
                     std::vector<SocketAddress> addresses, ConnectionHandler& handler)
    : reactor_(&reactor),
      index_in_reactor_(index),
      options_(std::move(options)),
      addresses_(std::move(addresses)),
      handler_(&handler) {}

Connector::~Connector() {
  abort_socket();
}

void Connector::enable() noexcept {
  if (enabled_) return;
  enabled_ = true;
  if (state_ == State::kDisabled) {
    state_ = State::kWaiting;
    index_ = 0;
    next_attempt_ns_ = 0;  // due on the next pass
    reactor_->timer_changed(0);
  }
}

void Connector::disable() noexcept {
  enabled_ = false;
  if (state_ == State::kConnecting) abort_socket();
  // A handshake in flight ends in established() or handshake_failed().
  if (state_ != State::kConnected && state_ != State::kHandshaking) state_ = State::kDisabled;
}

void Connector::abort_socket() noexcept {
  if (fd_ < 0) return;
  reactor_->epoll_del(fd_);
  ::close(fd_);
  fd_ = -1;
}

std::int64_t Connector::deadline_ns() const noexcept {
  switch (state_) {
    case State::kWaiting:
      return next_attempt_ns_;
    case State::kConnecting:
      return attempt_deadline_ns_;
    default:
      return INT64_MAX;
  }
}

int Connector::service(std::int64_t now_ns) noexcept {
  if (state_ == State::kWaiting && now_ns >= next_attempt_ns_) {
    start_attempt(now_ns);
    return 1;
  }
  if (state_ == State::kConnecting && now_ns >= attempt_deadline_ns_) {
    abort_socket();
    fail_attempt(ETIMEDOUT, now_ns);
    return 1;
  }
  return 0;
}

void Connector::start_attempt(std::int64_t now_ns) noexcept {
  ++attempts_;
  ++reactor_->stats_.connect_attempts;
  core::trace::emit_point(core::TraceKind::kReconnect, attempts_);
  const SocketAddress& address = addresses_[index_];
  const int fd = ::socket(address.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    fail_attempt(errno, now_ns);
    return;
  }
  option_error_ = apply_socket_options(fd, options_.socket);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(address.storage), address.length) == 0) {
    fd_ = fd;
    state_ = State::kConnecting;
    (void)on_writable(now_ns);
    return;
  }
  if (errno != EINPROGRESS) {
    const int error = errno;
    ::close(fd);
    fail_attempt(error, now_ns);
    return;
  }
  fd_ = fd;
  state_ = State::kConnecting;
  attempt_deadline_ns_ = now_ns + options_.connect_timeout_ns;
  if (!reactor_->epoll_add(fd, EPOLLOUT, Reactor::tag(Reactor::Kind::kConnector, index_in_reactor_))) {
    const int error = errno;
    abort_socket();
    fail_attempt(error, now_ns);
    return;
  }
  reactor_->timer_changed(attempt_deadline_ns_);
}

int Connector::on_writable(std::int64_t now_ns) noexcept {
  if (state_ != State::kConnecting || fd_ < 0) return 0;
  int error = 0;
  socklen_t length = sizeof(error);
  if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
  if (error == EINPROGRESS || error == EALREADY) return 0;
  if (error != 0) {
    abort_socket();
    fail_attempt(error, now_ns);
    return 1;
  }
  // SO_ERROR is also 0 while the handshake is still in flight: only a peer
  // address proves the connection is established.
  sockaddr_storage peer{};
  socklen_t peer_length = sizeof(peer);
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&peer), &peer_length) != 0) return 0;
  const int fd = fd_;
  reactor_->epoll_del(fd);
  fd_ = -1;
  tls_error_length_ = 0;
  // With TLS the handshake follows (kHandshaking); established() or
  // handshake_failed() comes from the reactor when it is over.
  state_ = State::kHandshaking;
  Connection* connection = reactor_->adopt(fd, options_.buffers, options_.socket, option_error_, handler_, this,
                                           nullptr, options_.tls.get(), now_ns);
  if (connection == nullptr) {
    ::close(fd);
    fail_attempt(EMFILE, now_ns);
    return 1;
  }
  if (connection->state() == Connection::State::kOpen) established(*connection);
  return 1;
}

void Connector::established(Connection& connection) noexcept {
  state_ = State::kConnected;
  connection_ = &connection;
  ++reactor_->stats_.connected;
  handler_->on_connected(connection);
}

void Connector::handshake_failed(Connection& connection, std::int64_t now_ns) noexcept {
  const std::string_view reason = connection.tls_error();
  tls_error_length_ = static_cast<std::uint8_t>(std::min(reason.size(), sizeof tls_error_));
  std::memcpy(tls_error_, reason.data(), tls_error_length_);
  fail_attempt(connection.handshake_timed_out_ ? ETIMEDOUT : EPROTO, now_ns);
}

void Connector::fail_attempt(int error, std::int64_t now_ns) noexcept {
  ++failures_;
  ++reactor_->stats_.connect_failures;
  const std::size_t failed = index_;
  if (index_ + 1 < addresses_.size()) {
    ++index_;
    next_attempt_ns_ = now_ns;  // the next endpoint at once
  } else {
    index_ = 0;
    next_attempt_ns_ = now_ns + options_.reconnect_interval_ns;
  }
  state_ = enabled_ ? State::kWaiting : State::kDisabled;
  reactor_->timer_changed(next_attempt_ns_);
  handler_->on_connect_failed(*this, options_.endpoints[failed], error);
}

void Connector::on_connection_closed(std::int64_t now_ns) noexcept {
  connection_ = nullptr;
  index_ = 0;
  next_attempt_ns_ = now_ns + options_.reconnect_interval_ns;
  state_ = enabled_ ? State::kWaiting : State::kDisabled;
  reactor_->timer_changed(next_attempt_ns_);
}

}  // namespace hft::transport
