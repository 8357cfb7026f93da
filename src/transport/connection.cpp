#include "hft/transport/connection.hpp"

#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <climits>
#include <cstdio>

#include "hft/core/clock.hpp"
#include "hft/core/trace.hpp"
#include "hft/transport/handler.hpp"
#include "hft/transport/reactor.hpp"
#include "hft/transport/tls.hpp"
#include "tls_support.hpp"

namespace hft::transport {

std::string_view to_string(CloseReason reason) noexcept {
  switch (reason) {
    case CloseReason::kLocal:
      return "local close";
    case CloseReason::kPeerClosed:
      return "peer closed";
    case CloseReason::kError:
      return "socket error";
    case CloseReason::kReceiveBufferFull:
      return "receive buffer full";
    case CloseReason::kShutdown:
      return "reactor shutdown";
    case CloseReason::kDrainTimeout:
      return "close timed out with bytes unsent";
    case CloseReason::kAborted:
      return "aborted";
  }
  return "?";
}

std::string_view to_string(SendStatus status) noexcept {
  switch (status) {
    case SendStatus::kSent:
      return "sent";
    case SendStatus::kQueued:
      return "queued";
    case SendStatus::kOverflow:
      return "outbound buffer overflow";
    case SendStatus::kNotOpen:
      return "connection not open";
    case SendStatus::kError:
      return "socket error";
  }
  return "?";
}

Connection::Connection(Reactor& reactor, std::uint32_t slot) noexcept : reactor_(&reactor), slot_(slot) {}

Connection::~Connection() {
  free_tls();
  if (fd_ >= 0) ::close(fd_);
}

void Connection::free_tls() noexcept {
  if (ssl_ == nullptr) return;
  SSL_free(ssl_);
  ssl_ = nullptr;
  ERR_clear_error();
}

std::string_view Connection::tls_protocol() const noexcept {
  return ssl_ != nullptr ? std::string_view(SSL_get_version(ssl_)) : std::string_view();
}

std::string_view Connection::tls_cipher() const noexcept {
  const SSL_CIPHER* cipher = ssl_ != nullptr ? SSL_get_current_cipher(ssl_) : nullptr;
  return cipher != nullptr ? std::string_view(SSL_CIPHER_get_name(cipher)) : std::string_view();
}

bool Connection::start_tls(const TlsContext& context, std::int64_t now_ns) noexcept {
  ssl_ = context.new_session(fd_);
  if (ssl_ == nullptr) return false;
  tls_ = &context;
  state_ = State::kHandshaking;
  handshake_deadline_ns_ = now_ns + context.options().handshake_timeout_ns;
  return true;
}

int Connection::handshake_step(std::int64_t now_ns) noexcept {
  if (state_ != State::kHandshaking) return state_ == State::kOpen ? 1 : -1;
  ERR_clear_error();
  const int result = SSL_do_handshake(ssl_);
  if (result == 1) {
    state_ = State::kOpen;
    if (reactor_->options_.poll_mode == PollMode::kEpoll && writable_watched_) {
      writable_watched_ = false;
      reactor_->epoll_mod(fd_, EPOLLIN, Reactor::tag(Reactor::Kind::kConnection, slot_));
    }
    // The peer's first message may have come with its last handshake flight.
    read_pending_ = SSL_has_pending(ssl_) != 0;
    return 1;
  }
  const int error = SSL_get_error(ssl_, result);
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
    const bool want_write = error == SSL_ERROR_WANT_WRITE;
    if (reactor_->options_.poll_mode == PollMode::kEpoll && writable_watched_ != want_write) {
      writable_watched_ = want_write;
      reactor_->epoll_mod(fd_, want_write ? (EPOLLIN | EPOLLOUT) : EPOLLIN,
                          Reactor::tag(Reactor::Kind::kConnection, slot_));
    }
    if (now_ns < handshake_deadline_ns_) return 0;
    ERR_clear_error();
    handshake_timed_out_ = true;
    const int n = std::snprintf(tls_error_, sizeof tls_error_, "no TLS handshake within %lld ms",
                                static_cast<long long>(tls_->options().handshake_timeout_ns / 1'000'000));
    tls_error_length_ = static_cast<std::uint8_t>(n < 0 ? 0 : std::min<int>(n, sizeof tls_error_ - 1));
    return -1;
  }
  tls_error_length_ = static_cast<std::uint8_t>(
      tls_handshake_error(ssl_, result, tls_->verifies_peer(), tls_error_, sizeof tls_error_));
  return -1;
}

long Connection::write_some(const char* data, std::size_t length) noexcept {
  if (ssl_ == nullptr) return ::send(fd_, data, length, MSG_NOSIGNAL | MSG_DONTWAIT);
  ERR_clear_error();
  const int n = SSL_write(ssl_, data, static_cast<int>(std::min<std::size_t>(length, INT_MAX)));
  if (n > 0) return n;
  const int saved_errno = errno;
  switch (SSL_get_error(ssl_, n)) {
    case SSL_ERROR_WANT_WRITE:
    case SSL_ERROR_WANT_READ:
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_ZERO_RETURN:
      errno = EPIPE;
      return -1;
    case SSL_ERROR_SYSCALL:
      ERR_clear_error();
      errno = saved_errno != 0 ? saved_errno : EPIPE;
      return -1;
    default:
      tls_error_length_ = static_cast<std::uint8_t>(tls_error_text(tls_error_, sizeof tls_error_));
      errno = EPROTO;
      return -1;
  }
}

long Connection::read_some(char* data, std::size_t capacity) noexcept {
  if (ssl_ == nullptr) return ::recv(fd_, data, capacity, MSG_DONTWAIT);
  ERR_clear_error();
  const int n = SSL_read(ssl_, data, static_cast<int>(std::min<std::size_t>(capacity, INT_MAX)));
  if (n > 0) {
    read_pending_ = SSL_has_pending(ssl_) != 0;
    return n;
  }
  read_pending_ = false;
  const int saved_errno = errno;
  switch (SSL_get_error(ssl_, n)) {
    case SSL_ERROR_WANT_READ:
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_WANT_WRITE:  // a TLS 1.3 KeyUpdate answer waits for room
      watch_writable(true);
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_ZERO_RETURN:  // close_notify, or EOF (SSL_OP_IGNORE_UNEXPECTED_EOF)
      return 0;
    case SSL_ERROR_SYSCALL:
      ERR_clear_error();
      if (saved_errno == 0) return 0;
      errno = saved_errno;
      return -1;
    default:
      tls_error_length_ = static_cast<std::uint8_t>(tls_error_text(tls_error_, sizeof tls_error_));
      errno = EPROTO;
      return -1;
  }
}

void Connection::open(int fd, const ConnectionBuffers& buffers, bool quickack, OptionError option_error) {
  // Buffers are kept across reuse of the slot; a different size (another
  // connector or listener) replaces them. Touching the first kPretouch
  // bytes now keeps page faults off the first messages: a buffer is used
  // from its start again whenever it drains, so only a backlog reaches
  // further (those pages fault once, then stay). Touching all of them made
  // every connection of an engine with 1,000 sessions hold 5 MiB; 64 KiB
  // of each, 125 MiB for 1,000 connections that each hold one message at a
  // time. Four pages hold a burst of 65 orders of the lab's 240 bytes.
  constexpr std::size_t kPretouch = 16 * 1024;
  const std::size_t receive_size = buffers.receive_size > 0 ? buffers.receive_size : 1;
  if (recv_capacity_ != receive_size) {
    recv_buf_.reset(new char[receive_size]);
    std::memset(recv_buf_.get(), 0, std::min(receive_size, kPretouch));
    reactor_->buffer_bytes_.fetch_add(receive_size - recv_capacity_, std::memory_order_relaxed);
    recv_capacity_ = receive_size;
  }
  if (send_capacity_ != buffers.send_size) {
    send_buf_.reset(buffers.send_size > 0 ? new char[buffers.send_size] : nullptr);
    if (buffers.send_size > 0) std::memset(send_buf_.get(), 0, std::min(buffers.send_size, kPretouch));
    reactor_->buffer_bytes_.fetch_add(buffers.send_size - send_capacity_, std::memory_order_relaxed);
    send_capacity_ = buffers.send_size;
  }
  recv_begin_ = recv_end_ = 0;
  send_begin_ = send_end_ = 0;
  fd_ = fd;
  ++generation_;
  state_ = State::kOpen;
  quickack_ = quickack;
  writable_watched_ = false;
  shut_down_ = false;
  corked_ = false;
  drain_deadline_ns_ = 0;
  close_reason_ = CloseReason::kLocal;
  close_error_ = 0;
  context_ = nullptr;
  bytes_received_ = bytes_sent_ = send_overflows_ = 0;
  option_error_ = option_error;
  tls_ = nullptr;
  tls_shutdown_sent_ = false;
  read_pending_ = false;
  handshake_failed_ = false;
  handshake_timed_out_ = false;
  tls_error_length_ = 0;

  sockaddr_storage peer{};
  socklen_t length = sizeof(peer);
  peer_length_ = 0;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) == 0) {
    SocketAddress address;
    std::memcpy(address.storage, &peer, length);
    address.length = length;
    address.family = peer.ss_family;
    const std::string text = address.to_string();
    peer_length_ = static_cast<std::uint8_t>(std::min(text.size(), sizeof(peer_)));
    std::memcpy(peer_, text.data(), peer_length_);
  }
}

void Connection::reset() noexcept {
  free_tls();
  state_ = State::kFree;
  fd_ = -1;
  connector_ = nullptr;
  listener_ = nullptr;
  handler_ = nullptr;
  context_ = nullptr;
  recv_begin_ = recv_end_ = 0;
  send_begin_ = send_end_ = 0;
  read_paused_ = false;
}

void Connection::close() noexcept {
  close(reactor_->options_.close_timeout_ns);
}

void Connection::close(std::int64_t timeout_ns) noexcept {
  if (state_ == State::kHandshaking) {  // nothing was accepted to deliver
    abort();
    return;
  }
  if (state_ != State::kOpen) return;
  if (timeout_ns <= 0) {
    if (corked_ && send_end_ != send_begin_) (void)flush();  // best effort: they were accepted
    if (state_ != State::kOpen) return;
    mark_closing(CloseReason::kLocal, 0);
    return;
  }
  state_ = State::kDraining;
  shut_down_ = false;
  drain_deadline_ns_ = core::monotonic_ns() + timeout_ns;
  // Reads stop now: in epoll mode only writability is of interest until the
  // outbound buffer is empty (drain() re-arms input to discard it later).
  if (reactor_->options_.poll_mode == PollMode::kEpoll) {
    writable_watched_ = send_end_ != send_begin_;
    reactor_->epoll_mod(fd_, writable_watched_ ? EPOLLOUT : 0u,
                        Reactor::tag(Reactor::Kind::kConnection, slot_));
  }
  reactor_->schedule_drain(*this);
}

void Connection::abort() noexcept {
  if (state_ == State::kDraining) state_ = State::kOpen;  // mark_closing acts on open connections
  mark_closing(CloseReason::kAborted, 0);
}

void Connection::mark_closing(CloseReason reason, int error) noexcept {
  if (state_ == State::kHandshaking) handshake_failed_ = true;  // no callback was delivered: none follows
  if (state_ != State::kOpen && state_ != State::kDraining && state_ != State::kHandshaking) return;
  finish_close(reason, error);
}

void Connection::finish_close(CloseReason reason, int error) noexcept {
  if (reactor_->options_.poll_mode == PollMode::kEpoll) reactor_->epoll_del(fd_);
  free_tls();
  ::close(fd_);
  fd_ = -1;
  state_ = State::kClosing;
  close_reason_ = reason;
  close_error_ = error;
  send_begin_ = send_end_ = 0;
  reactor_->schedule_close(*this);
}

int Connection::drain(std::int64_t now_ns) noexcept {
  if (state_ != State::kDraining) return 0;
  int work = 0;
  if (send_end_ != send_begin_) {
    work += flush();
    if (state_ != State::kDraining) return 1;  // the socket failed
  }
  if (send_end_ == send_begin_ && !shut_down_) {
    if (ssl_ != nullptr && !tls_shutdown_sent_) {
      // close_notify first: the peer can tell our close from a cut link.
      ERR_clear_error();
      const int result = SSL_shutdown(ssl_);
      if (result < 0 && SSL_get_error(ssl_, result) == SSL_ERROR_WANT_WRITE && now_ns < drain_deadline_ns_) {
        return work;  // the socket is full: again on the next pass
      }
      ERR_clear_error();
      tls_shutdown_sent_ = true;
    }
    // FIN goes after the queued bytes; the kernel keeps delivering them.
    if (::shutdown(fd_, SHUT_WR) != 0) {
      finish_close(CloseReason::kError, errno);
      return 1;
    }
    shut_down_ = true;
    if (reactor_->options_.poll_mode == PollMode::kEpoll) {
      writable_watched_ = false;
      reactor_->epoll_mod(fd_, EPOLLIN, Reactor::tag(Reactor::Kind::kConnection, slot_));
    }
    work = 1;
  }
  if (shut_down_) {
    // Discard input (unread input would turn close() into an RST).
    // A scratch buffer, so that unconsumed bytes stay readable in on_closed().
    char scratch[16384];
    for (;;) {
      const ssize_t n = ::recv(fd_, scratch, sizeof scratch, MSG_DONTWAIT);
      if (n > 0) {
        bytes_received_ += static_cast<std::uint64_t>(n);
        work = 1;
        continue;
      }
      if (n == 0) {  // the peer closed too: nothing more to wait for
        finish_close(CloseReason::kLocal, 0);
        return 1;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      finish_close(CloseReason::kError, errno);
      return 1;
    }
    int unacknowledged = 0;
    if (::ioctl(fd_, SIOCOUTQ, &unacknowledged) != 0 || unacknowledged == 0) {
      finish_close(CloseReason::kLocal, 0);
      return 1;
    }
  }
  if (now_ns >= drain_deadline_ns_) {
    ++reactor_->stats_.drain_timeouts;
    finish_close(CloseReason::kDrainTimeout, 0);
    return 1;
  }
  return work;
}

void Connection::watch_writable(bool on) noexcept {
  if (writable_watched_ == on || reactor_->options_.poll_mode != PollMode::kEpoll) return;
  writable_watched_ = on;
  reactor_->epoll_mod(fd_, interest(), Reactor::tag(Reactor::Kind::kConnection, slot_));
}

std::uint32_t Connection::interest() const noexcept {
  return (read_paused_ ? 0u : static_cast<std::uint32_t>(EPOLLIN)) | (writable_watched_ ? EPOLLOUT : 0u);
}

void Connection::pause_reading(bool paused) noexcept {
  if (read_paused_ == paused) return;
  read_paused_ = paused;
  if (state_ != State::kOpen) return;  // closing: drain() decides what it watches
  if (reactor_->options_.poll_mode == PollMode::kEpoll) {
    // Level-triggered: without EPOLLIN the loop does not spin on bytes it
    // leaves in the socket; with it again, they are reported at once.
    reactor_->epoll_mod(fd_, interest(), Reactor::tag(Reactor::Kind::kConnection, slot_));
  }
  if (!paused && read_pending_) reactor_->schedule_pending_read(*this);
}

SendResult Connection::send(std::span<const char> data) noexcept {
  SendResult result;
  if (state_ != State::kOpen) {
    result.status = SendStatus::kNotOpen;
    return result;
  }
  if (corked_) {
    // Answer to a received batch: append, written when on_data() returns.
    const std::size_t pending = send_end_ - send_begin_;
    if (send_capacity_ - send_end_ < data.size() && send_begin_ > 0) {
      std::memmove(send_buf_.get(), send_buf_.get() + send_begin_, pending);
      send_end_ = pending;
      send_begin_ = 0;
    }
    if (send_capacity_ - send_end_ >= data.size()) {
      std::memcpy(send_buf_.get() + send_end_, data.data(), data.size());
      send_end_ += data.size();
      result.status = SendStatus::kQueued;
      result.queued = static_cast<std::uint32_t>(data.size());
      return result;
    }
    // No room: the normal path writes what is queued first.
  }
  // Bytes queued earlier go first; only an empty queue lets new bytes
  // go straight to the socket.
  if (send_end_ != send_begin_) {
    (void)flush();
    if (state_ != State::kOpen) {
      result.status = SendStatus::kError;
      result.error = close_error_;
      return result;
    }
  }
  std::size_t written = 0;
  if (send_end_ == send_begin_) {
    while (written < data.size()) {
      const long n = write_some(data.data() + written, data.size() - written);
      if (n > 0) {
        written += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      const int error = n < 0 ? errno : EPIPE;
      bytes_sent_ += written;
      mark_closing(CloseReason::kError, error);
      result.status = SendStatus::kError;
      result.sent = static_cast<std::uint32_t>(written);
      result.error = error;
      return result;
    }
    bytes_sent_ += written;
    result.sent = static_cast<std::uint32_t>(written);
    if (written == data.size()) return result;
    // The rest is queued: the trace says whether the kernel took some.
    if (written != 0) {
      core::trace::emit_point(core::TraceKind::kPartialSend, written, data.size());
    } else {
      core::trace::emit_point(core::TraceKind::kSendBlocked, data.size());
    }
  }

  // Queue the remainder, compacting the outbound buffer if the tail is short.
  const std::size_t rest = data.size() - written;
  if (send_capacity_ - send_end_ < rest && send_begin_ > 0) {
    std::memmove(send_buf_.get(), send_buf_.get() + send_begin_, send_end_ - send_begin_);
    send_end_ -= send_begin_;
    send_begin_ = 0;
  }
  const std::size_t room = send_capacity_ - send_end_;
  const std::size_t take = rest < room ? rest : room;
  if (take > 0) {
    std::memcpy(send_buf_.get() + send_end_, data.data() + written, take);
    send_end_ += take;
  }
  result.queued = static_cast<std::uint32_t>(take);
  if (send_end_ != send_begin_) watch_writable(true);
  if (take == rest) {
    result.status = SendStatus::kQueued;
  } else {
    result.status = SendStatus::kOverflow;
    ++send_overflows_;
  }
  return result;
}

int Connection::flush() noexcept {
  int work = 0;
  while (send_begin_ < send_end_) {
    const long n = write_some(send_buf_.get() + send_begin_, send_end_ - send_begin_);
    if (n > 0) {
      send_begin_ += static_cast<std::size_t>(n);
      bytes_sent_ += static_cast<std::uint64_t>(n);
      work = 1;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return work;
    mark_closing(CloseReason::kError, n < 0 ? errno : EPIPE);
    return 1;
  }
  send_begin_ = send_end_ = 0;
  watch_writable(false);
  return work;
}

int Connection::read_once() noexcept {
  if (read_paused_) return 0;
  if (recv_end_ == recv_capacity_) {
    if (recv_begin_ == 0) {
      ++reactor_->stats_.receive_buffer_full;
      mark_closing(CloseReason::kReceiveBufferFull, 0);
      return 1;
    }
  }
  // Compact when less than a quarter of the buffer is free at the tail: the
  // unconsumed part is normally one partial message, so the move is short.
  if (recv_begin_ > 0 && recv_capacity_ - recv_end_ < recv_capacity_ / 4 + 1) {
    std::memmove(recv_buf_.get(), recv_buf_.get() + recv_begin_, recv_end_ - recv_begin_);
    recv_end_ -= recv_begin_;
    recv_begin_ = 0;
  }
  const long n = read_some(recv_buf_.get() + recv_end_, recv_capacity_ - recv_end_);
  if (n > 0) {
    recv_end_ += static_cast<std::size_t>(n);
    bytes_received_ += static_cast<std::uint64_t>(n);
    // TLS: SSL_read returns one record at a time; take what OpenSSL holds
    // already (epoll cannot see it) while the tail has room.
    while (read_pending_ && recv_end_ < recv_capacity_) {
      const long more = read_some(recv_buf_.get() + recv_end_, recv_capacity_ - recv_end_);
      if (more <= 0) break;
      recv_end_ += static_cast<std::size_t>(more);
      bytes_received_ += static_cast<std::uint64_t>(more);
    }
    if (quickack_) (void)rearm_quickack(fd_);
    corked_ = true;
    handler_->on_data(*this);
    corked_ = false;
    if (state_ == State::kOpen && send_end_ != send_begin_) {
      (void)flush();
      if (state_ == State::kOpen) {
        if (send_end_ != send_begin_) {
          watch_writable(true);
        } else {
          handler_->on_drained(*this);
        }
      }
    }
    // Full with nothing consumed: the consumer is waiting for bytes that
    // can never fit.
    if (state_ == State::kOpen && !read_paused_ && recv_begin_ == 0 && recv_end_ == recv_capacity_) {
      ++reactor_->stats_.receive_buffer_full;
      mark_closing(CloseReason::kReceiveBufferFull, 0);
    }
    if (state_ == State::kOpen && read_pending_ && !read_paused_) reactor_->schedule_pending_read(*this);
    return 1;
  }
  if (n == 0) {
    mark_closing(CloseReason::kPeerClosed, 0);
    return 1;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
  mark_closing(CloseReason::kError, errno);
  return 1;
}

}  // namespace hft::transport
