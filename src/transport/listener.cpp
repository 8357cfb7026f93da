#include "hft/transport/listener.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "hft/core/clock.hpp"
#include "hft/transport/handler.hpp"
#include "hft/transport/reactor.hpp"

namespace hft::transport {

Listener::Listener(Reactor& reactor, int fd, std::uint16_t port, ListenerOptions options,
                   ConnectionHandler& handler) noexcept
    : reactor_(&reactor), fd_(fd), port_(port), options_(std::move(options)), handler_(&handler) {}

Listener::~Listener() {
  if (fd_ >= 0) ::close(fd_);
}

void Listener::close() noexcept {
  if (fd_ < 0) return;
  reactor_->epoll_del(fd_);
  ::close(fd_);
  fd_ = -1;
}

int Listener::on_readable() noexcept {
  int work = 0;
  for (int i = 0; i < kMaxAcceptsPerPass && fd_ >= 0; ++i) {
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      // EAGAIN: queue empty. Other errors (ECONNABORTED, EMFILE, ...) concern
      // one pending connection or are transient: retry on the next pass.
      break;
    }
    ++work;
    const OptionError option_error = apply_socket_options(fd, options_.socket);
    Connection* connection = reactor_->adopt(fd, options_.buffers, options_.socket, option_error, handler_, nullptr,
                                             this, options_.tls.get(), core::monotonic_ns());
    if (connection == nullptr) {
      ::close(fd);
      ++rejected_;
      ++reactor_->stats_.accept_rejected;
      continue;
    }
    if (connection->state() == Connection::State::kOpen) established(*connection);
  }
  return work;
}

void Listener::established(Connection& connection) noexcept {
  ++accepted_;
  ++reactor_->stats_.accepted;
  handler_->on_accepted(connection);
}

void Listener::handshake_failed(Connection& connection) noexcept {
  ++handshake_failures_;
  handler_->on_handshake_failed(connection);
}

}  // namespace hft::transport
