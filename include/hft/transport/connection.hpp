// One TCP connection owned by a Reactor: a non-blocking socket, a
// preallocated receive buffer and a small preallocated outbound buffer.
//
//   receive buffer (capacity fixed at connect/accept, never grows)
//   [ consumed | received(), not yet consumed | free tail ]
//   0          begin                           end          capacity
//
// The reactor reads into the free tail and calls the handler's on_data();
// the consumer calls consume(n) for the prefix it has used. When the free
// tail runs short, the unconsumed bytes (normally a partial message) are
// moved to the front. A buffer that is full with nothing consumed cannot
// make progress: the reactor closes the connection with
// CloseReason::kReceiveBufferFull instead of growing it.
//
//   outbound buffer: bytes send() could not hand to the kernel, in order;
//   flushed by the reactor when the socket is writable again.
//
// Closing. close() is graceful: a Logout or Reject sent just before it must
// reach the peer even when the peer reads slowly, so the connection drains
// first and closes after:
//
//   kOpen --close()--> kDraining: no more reads or sends; the outbound
//        |             buffer keeps being flushed; once it is empty:
//        |             shutdown(SHUT_WR), then input is discarded until the
//        |             kernel's send queue is acknowledged (SIOCOUTQ == 0)
//        |             or the peer closes --> kClosing (reason kLocal)
//        |             deadline passed first --> kClosing (kDrainTimeout)
//        +--abort() / socket error / peer closed --> kClosing at once
//
// Input is discarded, not left unread, because close() on a socket with
// unread input sends an RST, which can destroy bytes still in flight.
//
// TLS. A connector or listener with a TlsContext (tls.hpp) makes
// connections that start in kHandshaking: the reactor drives the handshake
// and delivers on_connected()/on_accepted() only when it is done. After it,
// the same buffers and rules apply; send() and reads go through OpenSSL
// (one record per send() call; a record the kernel did not take whole stays
// in the outbound buffer and is retried with the same bytes). A graceful
// close sends close_notify before SHUT_WR.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "hft/transport/socket.hpp"

struct ssl_st;

namespace hft::transport {

class Reactor;
class Connector;
class Listener;
class ConnectionHandler;
class TlsContext;

/// Outcome of Connection::send(). Negative values are failures.
enum class SendStatus : std::int8_t {
  kSent = 0,       ///< every byte was written to the socket
  kQueued = 1,     ///< the socket would block: `sent` bytes were written and the
                   ///< remaining `queued` bytes went to the outbound buffer; all
                   ///< were accepted and will be flushed in order
  kOverflow = -1,  ///< the socket would block and the outbound buffer is full:
                   ///< only `sent + queued` bytes were accepted; the caller must
                   ///< resend the rest (or treat the peer as too slow)
  kNotOpen = -2,   ///< the connection is not open (closed or closing): nothing sent
  kError = -3,     ///< the socket failed (`error` holds errno); the connection
                   ///< is being closed with CloseReason::kError
};

/// Result of Connection::send().
struct SendResult {
  SendStatus status = SendStatus::kSent;
  std::uint32_t sent = 0;    ///< bytes written to the socket by this call
  std::uint32_t queued = 0;  ///< bytes copied to the outbound buffer by this call
  int error = 0;             ///< errno for kError

  [[nodiscard]] bool ok() const noexcept { return static_cast<int>(status) >= 0; }
  /// Bytes of the caller's span now owned by the connection.
  [[nodiscard]] std::size_t accepted() const noexcept { return std::size_t{sent} + queued; }
};

/// Why a connection was closed.
enum class CloseReason : std::uint8_t {
  kLocal,              ///< Connection::close() was called
  kPeerClosed,         ///< the peer closed (recv returned 0)
  kError,              ///< a socket error (errno in on_closed's `error`)
  kReceiveBufferFull,  ///< the receive buffer was full with nothing consumed
  kShutdown,           ///< the reactor was destroyed with the connection open
  kDrainTimeout,       ///< close() could not deliver every queued byte before its
                       ///< deadline (a peer that does not read); the rest was dropped
  kAborted,            ///< Connection::abort() was called: queued bytes dropped
};

/// A short static name for `reason`.
[[nodiscard]] std::string_view to_string(CloseReason reason) noexcept;

/// A static name for `status`.
[[nodiscard]] std::string_view to_string(SendStatus status) noexcept;

/// Sizes of a connection's user-space buffers (allocated and pre-faulted
/// when the connection is set up, then fixed).
struct ConnectionBuffers {
  std::size_t receive_size = 1 << 20;  ///< receive buffer, bytes (>= 1)
  std::size_t send_size = 64 << 10;    ///< outbound buffer for unsent bytes; 0: none (a send
                                       ///< the kernel cannot take whole is then kOverflow)
};

/// A TCP connection. Created and owned by a Reactor; valid from the
/// on_connected()/on_accepted() callback until on_closed() returns. Use it
/// only on the reactor's thread.
class Connection {
 public:
  enum class State : std::uint8_t {
    kFree,         ///< slot not in use
    kHandshaking,  ///< TLS: connected, handshake in progress (no callback yet)
    kOpen,         ///< connected: reads and sends work
    kDraining,  ///< close() was called: queued bytes are being flushed; no reads, no sends
    kClosing,   ///< closed, on_closed() not delivered yet
  };

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  /// Writes `data` to the socket, as much as the kernel takes, and copies
  /// the rest to the outbound buffer. Bytes queued earlier are written
  /// first, so order is kept. Never blocks, allocates or throws.
  /// Called from inside ConnectionHandler::on_data(), the bytes are queued
  /// (kQueued) and written together with the other answers to the same
  /// receive when on_data() returns: one syscall per received batch.
  /// Returns kSent, kQueued, kOverflow, kNotOpen or kError (see SendStatus).
  [[nodiscard]] SendResult send(std::span<const char> data) noexcept;
  /// The same for text (overloads so that strings and literals are not
  /// ambiguous, and a literal never sends its terminating NUL).
  [[nodiscard]] SendResult send(std::string_view data) noexcept {
    return send(std::span<const char>(data.data(), data.size()));
  }
  [[nodiscard]] SendResult send(const std::string& data) noexcept {
    return send(std::span<const char>(data.data(), data.size()));
  }
  [[nodiscard]] SendResult send(const char* text) noexcept { return send(std::string_view(text)); }

  /// The received bytes not consumed yet.
  [[nodiscard]] std::span<const char> received() const noexcept {
    return {recv_buf_.get() + recv_begin_, recv_end_ - recv_begin_};
  }
  /// The same bytes as a string_view, for the FIX framer.
  [[nodiscard]] std::string_view received_view() const noexcept {
    return {recv_buf_.get() + recv_begin_, recv_end_ - recv_begin_};
  }
  /// Marks the first `n` received bytes as used (clamped to received().size()).
  void consume(std::size_t n) noexcept {
    const std::size_t avail = recv_end_ - recv_begin_;
    recv_begin_ += n < avail ? n : avail;
    if (recv_begin_ == recv_end_) recv_begin_ = recv_end_ = 0;
  }

  /// Stops reading the socket (true) until resumed (false), for a consumer
  /// that cannot take more yet: received() keeps what was read, the
  /// kernel's receive buffer fills and TCP flow control holds the peer.
  /// Sending goes on. Resuming reads what arrived meanwhile.
  void pause_reading(bool paused) noexcept;
  [[nodiscard]] bool reading_paused() const noexcept { return read_paused_; }

  /// Graceful close: stops reading and sending, keeps flushing the bytes
  /// already accepted by send(), then shuts the socket down for writing and
  /// closes it once the peer has acknowledged them (see the diagram above).
  /// Gives up after ReactorOptions::close_timeout_ns. on_closed(kLocal), or
  /// kDrainTimeout if the deadline passed, follows from the reactor's loop
  /// (never from inside this call). No effect unless the connection is open.
  void close() noexcept;
  /// The same with its own deadline, in ns from now (<= 0: abort()).
  void close(std::int64_t timeout_ns) noexcept;
  /// Abortive close: the socket is closed now and unsent outbound bytes are
  /// dropped (garbled input, a peer too slow to keep, errors).
  /// on_closed(kAborted) follows from the reactor's loop. No effect unless
  /// the connection is open or draining.
  void abort() noexcept;

  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] bool is_open() const noexcept { return state_ == State::kOpen; }
  /// True between close() and the end of the drain.
  [[nodiscard]] bool is_draining() const noexcept { return state_ == State::kDraining; }
  /// The socket descriptor, or -1 once closed.
  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// Slot number in the reactor (stable while the connection lives; reused after).
  [[nodiscard]] std::uint32_t slot() const noexcept { return slot_; }
  /// Incremented each time the slot is reused: (slot, generation) names one
  /// connection for its whole life.
  [[nodiscard]] std::uint32_t generation() const noexcept { return generation_; }

  /// The connector that made this connection, or nullptr if accepted.
  [[nodiscard]] Connector* connector() const noexcept { return connector_; }
  /// The listener that accepted this connection, or nullptr if connected.
  [[nodiscard]] Listener* listener() const noexcept { return listener_; }
  /// The peer's address as "ip:port".
  [[nodiscard]] std::string_view peer() const noexcept { return {peer_, peer_length_}; }

  /// The handler that receives this connection's events.
  [[nodiscard]] ConnectionHandler* handler() const noexcept { return handler_; }
  /// Routes this connection's further events to `handler` (e.g. to a
  /// session once an acceptor has identified it). Must not be null.
  void set_handler(ConnectionHandler* handler) noexcept { handler_ = handler; }

  /// A pointer the owner may attach (e.g. its session). Reset to null on reuse.
  [[nodiscard]] void* context() const noexcept { return context_; }
  void set_context(void* context) noexcept { context_ = context; }

  /// Bytes waiting in the outbound buffer.
  [[nodiscard]] std::size_t pending_send_bytes() const noexcept { return send_end_ - send_begin_; }
  [[nodiscard]] std::size_t receive_capacity() const noexcept { return recv_capacity_; }
  [[nodiscard]] std::size_t send_capacity() const noexcept { return send_capacity_; }

  [[nodiscard]] std::uint64_t bytes_received() const noexcept { return bytes_received_; }
  [[nodiscard]] std::uint64_t bytes_sent() const noexcept { return bytes_sent_; }
  /// send() calls that returned kOverflow.
  [[nodiscard]] std::uint64_t send_overflows() const noexcept { return send_overflows_; }
  /// The first socket option that could not be applied, if any.
  [[nodiscard]] OptionError option_error() const noexcept { return option_error_; }

  /// True for a TLS connection.
  [[nodiscard]] bool is_tls() const noexcept { return ssl_ != nullptr; }
  /// OpenSSL's reason when TLS failed (the handshake, or a record that did
  /// not decrypt: the connection then closes with kError and EPROTO); empty
  /// otherwise. Readable in on_closed() and Listener/Connector failure calls.
  [[nodiscard]] std::string_view tls_error() const noexcept { return {tls_error_, tls_error_length_}; }
  /// The negotiated protocol and cipher, static texts ("TLSv1.3",
  /// "TLS_AES_256_GCM_SHA384"); empty for plain TCP.
  [[nodiscard]] std::string_view tls_protocol() const noexcept;
  [[nodiscard]] std::string_view tls_cipher() const noexcept;

 private:
  friend class Reactor;
  friend class Connector;
  Connection(Reactor& reactor, std::uint32_t slot) noexcept;

  // Reactor-side operations.
  void open(int fd, const ConnectionBuffers& buffers, bool quickack, OptionError option_error);
  // TLS set-up: the session state on the socket and the handshake deadline.
  [[nodiscard]] bool start_tls(const TlsContext& context, std::int64_t now_ns) noexcept;
  // One handshake step: 1 done, 0 in progress, -1 failed (tls_error() says why).
  [[nodiscard]] int handshake_step(std::int64_t now_ns) noexcept;
  // The socket calls of both kinds: a plain send()/recv(), or SSL_write/
  // SSL_read. Return bytes, or -1 with errno (EAGAIN: try later; EPROTO: a
  // TLS error, see tls_error()); read_some returns 0 at end of stream.
  [[nodiscard]] long write_some(const char* data, std::size_t length) noexcept;
  [[nodiscard]] long read_some(char* data, std::size_t capacity) noexcept;
  void free_tls() noexcept;
  void mark_closing(CloseReason reason, int error) noexcept;
  [[nodiscard]] int read_once() noexcept;
  [[nodiscard]] int flush() noexcept;
  void reset() noexcept;
  void watch_writable(bool on) noexcept;
  /// The epoll events an open connection waits for: EPOLLIN unless reading
  /// is paused, EPOLLOUT while writability is watched.
  [[nodiscard]] std::uint32_t interest() const noexcept;
  // One step of a graceful close; returns work done. Moves the connection to
  // kClosing when the drain is over or `now_ns` is past its deadline.
  [[nodiscard]] int drain(std::int64_t now_ns) noexcept;
  void finish_close(CloseReason reason, int error) noexcept;

  Reactor* reactor_;
  std::unique_ptr<char[]> recv_buf_;
  std::size_t recv_capacity_ = 0;
  std::size_t recv_begin_ = 0;
  std::size_t recv_end_ = 0;
  std::unique_ptr<char[]> send_buf_;
  std::size_t send_capacity_ = 0;
  std::size_t send_begin_ = 0;
  std::size_t send_end_ = 0;

  int fd_ = -1;
  std::uint32_t slot_;
  std::uint32_t generation_ = 0;
  State state_ = State::kFree;
  bool quickack_ = false;
  bool writable_watched_ = false;
  bool read_paused_ = false;  // pause_reading()
  bool shut_down_ = false;  // draining: SHUT_WR done, waiting for the acknowledgement
  // Inside on_data(): sends are appended to the outbound buffer and written
  // with one send() when the callback returns (answers to a batch of
  // received messages leave in one syscall, not one each).
  bool corked_ = false;
  std::int64_t drain_deadline_ns_ = 0;
  CloseReason close_reason_ = CloseReason::kLocal;
  int close_error_ = 0;

  Connector* connector_ = nullptr;
  Listener* listener_ = nullptr;
  ConnectionHandler* handler_ = nullptr;
  void* context_ = nullptr;

  std::uint64_t bytes_received_ = 0;
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t send_overflows_ = 0;
  OptionError option_error_{};

  char peer_[64] = {};
  std::uint8_t peer_length_ = 0;

  ssl_st* ssl_ = nullptr;
  const TlsContext* tls_ = nullptr;
  std::int64_t handshake_deadline_ns_ = 0;
  bool tls_shutdown_sent_ = false;  // close_notify written (graceful close)
  bool read_pending_ = false;       // OpenSSL holds input epoll cannot see: read again
  bool handshake_failed_ = false;   // recycled without on_closed (see tls.hpp)
  bool handshake_timed_out_ = false;
  std::uint8_t tls_error_length_ = 0;
  char tls_error_[200] = {};
};

}  // namespace hft::transport
