#include "runner.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "fix_text.hpp"

namespace hft::conformance {
namespace {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

int remaining_ms(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// One driver-side TCP connection with its unread bytes.
class Connection {
 public:
  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { close_now(); }

  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }

  // Retries a refused connect until the deadline: the acceptor may still be starting.
  bool open(const std::string& host, std::uint16_t port, Deadline deadline, std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* addrs = nullptr;
    const std::string service = std::to_string(port);
    const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &addrs);
    if (rc != 0) {
      error = "cannot resolve " + host + ": " + gai_strerror(rc);
      return false;
    }
    for (;;) {
      std::string last_error;
      for (addrinfo* a = addrs; a != nullptr; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
          last_error = errno_text("socket");
          continue;
        }
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          const int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          fd_ = fd;
          inbox_.clear();
          peer_closed_ = false;
          freeaddrinfo(addrs);
          return true;
        }
        last_error = errno_text("connect");
        ::close(fd);
      }
      if (remaining_ms(deadline) == 0) {
        error = "cannot connect to " + host + ":" + service + " (" + last_error + ")";
        freeaddrinfo(addrs);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  bool send_all(std::string_view bytes, std::string& error) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        error = errno_text("send");
        return false;
      }
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  enum class ReadStatus { kMessage, kClosed, kTimeout, kGarbled, kError };

  ReadStatus read_message(Deadline deadline, std::string& message, std::string& error) {
    for (;;) {
      const FrameResult frame = frame_message(inbox_);
      if (frame.status == FrameStatus::kComplete) {
        message = inbox_.substr(0, frame.length);
        inbox_.erase(0, frame.length);
        return ReadStatus::kMessage;
      }
      if (frame.status == FrameStatus::kGarbled) {
        error = frame.error;
        message = inbox_;
        inbox_.clear();
        return ReadStatus::kGarbled;
      }
      if (peer_closed_) {
        message = inbox_;
        return ReadStatus::kClosed;
      }
      const FillStatus st = fill(deadline, error);
      if (st == FillStatus::kTimeout) {
        message = inbox_;
        return ReadStatus::kTimeout;
      }
      if (st == FillStatus::kError) return ReadStatus::kError;
    }
  }

  enum class CloseStatus { kClosed, kData, kTimeout };

  // Waits for the peer to close. Bytes already buffered or arriving first are data, not a close.
  CloseStatus wait_closed(Deadline deadline, std::string& data) {
    std::string error;
    for (;;) {
      if (!inbox_.empty()) {
        data = inbox_;
        return CloseStatus::kData;
      }
      if (peer_closed_) return CloseStatus::kClosed;
      const FillStatus st = fill(deadline, error);
      if (st == FillStatus::kTimeout) return CloseStatus::kTimeout;
      // A reset is the peer closing too.
      if (st == FillStatus::kError) return CloseStatus::kClosed;
    }
  }

  // Half-closes, discards what the peer still sends until it closes too (or
  // the wait ends), then releases the socket.
  void close_gracefully(int wait_ms) {
    if (fd_ < 0) return;
    if (!peer_closed_) {
      ::shutdown(fd_, SHUT_WR);
      const Deadline deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
      std::string error;
      while (!peer_closed_) {
        inbox_.clear();
        if (fill(deadline, error) != FillStatus::kData) break;
      }
    }
    close_now();
  }

  // Takes a socket accepted from the engine under test.
  void adopt(int fd) noexcept {
    close_now();
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fd_ = fd;
  }

  // Forgets the socket without closing it: the caller keeps the descriptor
  // open (see eDISCONNECT in run_script).
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    inbox_.clear();
    peer_closed_ = false;
    return fd;
  }

  void close_now() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    inbox_.clear();
    peer_closed_ = false;
  }

  int heartbeat_seconds = 0;    // HeartBtInt of the last Logon sent on this connection
  std::string last_expected;    // MsgType of the last E line matched on this connection

 private:
  enum class FillStatus { kData, kTimeout, kError };

  FillStatus fill(Deadline deadline, std::string& error) {
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, remaining_ms(deadline));
      if (ready < 0) {
        if (errno == EINTR) continue;
        error = errno_text("poll");
        return FillStatus::kError;
      }
      if (ready == 0) return FillStatus::kTimeout;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        inbox_.append(buf, static_cast<std::size_t>(n));
        return FillStatus::kData;
      }
      if (n == 0) {
        peer_closed_ = true;
        return FillStatus::kData;
      }
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET) {
        peer_closed_ = true;
        return FillStatus::kData;
      }
      error = errno_text("recv");
      return FillStatus::kError;
    }
  }

  int fd_ = -1;
  std::string inbox_;
  bool peer_closed_ = false;
};

int g_accepted = 0;

// Accepts one connection on `listen_fd` before the deadline; -1 on timeout.
int accept_one(int listen_fd, Deadline deadline, std::string& error) {
  for (;;) {
    pollfd p{listen_fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, remaining_ms(deadline));
    if (ready < 0) {
      if (errno == EINTR) continue;
      error = errno_text("poll");
      return -1;
    }
    if (ready == 0) {
      error = "no connection from the engine under test";
      return -1;
    }
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      // A connection the engine gave up before this script began (it sat in
      // the listen backlog while the previous script ran, and the engine
      // closed it) is not this script's: take the next one.
      char byte = 0;
      pollfd q{fd, POLLIN, 0};
      if (::poll(&q, 1, 0) == 1 && ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
        ::close(fd);
        continue;
      }
      return fd;
    }
    if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
    error = errno_text("accept");
    return -1;
  }
}

// Expectations the acceptor meets only when a heartbeat timer fires.
bool is_timer_driven(std::string_view expected) {
  const FieldLookup type = find_field(expected, "35");
  if (!type.found) return false;
  if (type.value == "1") return true;
  return type.value == "0" && !find_field(expected, "112").found;
}

std::string connection_label(const Command& cmd) {
  return "connection " + std::to_string(cmd.connection);
}

}  // namespace

int connections_accepted() noexcept { return g_accepted; }

int listen_on(const std::string& host, std::uint16_t port, std::uint16_t& bound, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* addrs = nullptr;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &addrs);
  if (rc != 0) {
    error = "cannot resolve " + host + ": " + gai_strerror(rc);
    return -1;
  }
  const int fd = ::socket(addrs->ai_family, addrs->ai_socktype | SOCK_CLOEXEC, addrs->ai_protocol);
  const int one = 1;
  if (fd < 0 || ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::bind(fd, addrs->ai_addr, addrs->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
    error = errno_text(("listen on " + host + ":" + service).c_str());
    if (fd >= 0) ::close(fd);
    freeaddrinfo(addrs);
    return -1;
  }
  freeaddrinfo(addrs);
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length);
  bound = ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  return fd;
}

ScriptResult run_script(const Script& script, const RunnerOptions& options) {
  const auto started = Clock::now();
  ScriptResult result;
  const FieldPatterns fallback = options.patterns == nullptr ? FieldPatterns::defaults() : FieldPatterns{};
  const FieldPatterns& patterns = options.patterns == nullptr ? fallback : *options.patterns;
  std::map<int, Connection> connections;
  // Sockets the acceptor closed at eDISCONNECT, kept open until the script ends.
  std::vector<int> lingering;

  auto fail = [&](const Command& cmd, std::string reason) {
    result.passed = false;
    result.line = cmd.line;
    result.reason = std::move(reason);
  };
  auto trace = [&](const Command& cmd, std::string_view what, std::string_view bytes) {
    if (options.trace == nullptr) return;
    *options.trace << "    " << cmd.line << " [" << cmd.connection << "] " << what << ' ' << show(bytes) << '\n';
  };
  auto timeout_for = [&](const Connection& conn, bool timer_driven) {
    if (!timer_driven) return options.timeout_ms;
    if (options.heartbeat_timeout_ms > 0) return options.heartbeat_timeout_ms;
    const int derived = conn.heartbeat_seconds * 2500 + 2000;
    return derived > options.timeout_ms ? derived : options.timeout_ms;
  };

  if (!script.error.empty()) {
    result.line = script.error_line;
    result.reason = script.error;
  } else {
    result.passed = true;
    for (const Command& cmd : script.commands) {
      Connection& conn = connections[cmd.connection];
      const auto now_wall = std::chrono::system_clock::now();
      switch (cmd.kind) {
        case CommandKind::kConnect: {
          trace(cmd, "connect", "");
          if (conn.is_open()) {
            fail(cmd, connection_label(cmd) + " is already open");
            break;
          }
          if (options.listen_fd >= 0) {
            fail(cmd, "iCONNECT in an initiator-side run (--listen): the engine under test connects, use eCONNECT");
            break;
          }
          std::string error;
          if (!conn.open(options.host, options.port,
                         Clock::now() + std::chrono::milliseconds(options.timeout_ms), error)) {
            fail(cmd, error);
            result.unreachable = true;
          }
          conn.heartbeat_seconds = 0;
          conn.last_expected.clear();
          break;
        }
        case CommandKind::kDisconnect:
          trace(cmd, "disconnect", "");
          if (!conn.is_open()) {
            fail(cmd, connection_label(cmd) + " is not open");
            break;
          }
          conn.close_gracefully(options.close_wait_ms);
          break;
        case CommandKind::kExpectConnect: {
          trace(cmd, "expect connect", "");
          if (options.listen_fd < 0) {
            fail(cmd, "eCONNECT needs an initiator-side run (--listen): this run connects to an acceptor");
            break;
          }
          if (conn.is_open()) {
            fail(cmd, connection_label(cmd) + " is already open");
            break;
          }
          const int wait = g_accepted == 0 ? options.first_connect_ms : options.timeout_ms + options.reconnect_ms;
          std::string error;
          const int fd = accept_one(options.listen_fd, Clock::now() + std::chrono::milliseconds(wait), error);
          if (fd < 0) {
            fail(cmd, error + " within " + std::to_string(wait) + " ms");
            result.unreachable = g_accepted == 0;
            break;
          }
          ++g_accepted;
          conn.adopt(fd);
          conn.heartbeat_seconds = 0;
          conn.last_expected.clear();
          break;
        }
        case CommandKind::kExpectDisconnect: {
          if (!conn.is_open()) {
            fail(cmd, connection_label(cmd) + " is not open");
            break;
          }
          const int wait = timeout_for(conn, conn.last_expected == "1");
          std::string data;
          const auto status = conn.wait_closed(Clock::now() + std::chrono::milliseconds(wait), data);
          if (status == Connection::CloseStatus::kClosed) {
            trace(cmd, "closed by acceptor", "");
            // QuickFIX's Runner.rb only checks for end of file here and never
            // closes the socket: the next iCONNECT opens a new one while the
            // old one is still open. So does this runner, so that an acceptor
            // that holds a session until the old socket closes fails here as
            // it does under the reference runner.
            lingering.push_back(conn.release());
          } else if (status == Connection::CloseStatus::kData) {
            trace(cmd, "<-", data);
            fail(cmd, "expected the acceptor to disconnect, but it sent data");
            result.received = show(data);
          } else {
            fail(cmd, "expected the acceptor to disconnect within " + std::to_string(wait) + " ms");
          }
          break;
        }
        case CommandKind::kSend: {
          const std::string message = complete_message(substitute_time(cmd.body, now_wall));
          trace(cmd, "->", message);
          if (!conn.is_open()) {
            fail(cmd, connection_label(cmd) + " is not open (was it closed by the acceptor?)");
            result.expected = show(message);
            break;
          }
          if (find_field(message, "35").value == "A") {
            const FieldLookup hb = find_field(message, "108");
            int seconds = 0;
            if (hb.found) std::from_chars(hb.value.data(), hb.value.data() + hb.value.size(), seconds);
            conn.heartbeat_seconds = seconds;
          }
          std::string error;
          if (!conn.send_all(message, error)) fail(cmd, error);
          break;
        }
        case CommandKind::kExpect: {
          const std::string expected = complete_message(substitute_time(cmd.body, now_wall));
          result.expected = show(expected);
          if (!conn.is_open()) {
            fail(cmd, connection_label(cmd) + " is not open");
            break;
          }
          const int wait = timeout_for(conn, is_timer_driven(expected));
          std::string received;
          std::string error;
          const auto status =
              conn.read_message(Clock::now() + std::chrono::milliseconds(wait), received, error);
          result.received = show(received);
          switch (status) {
            case Connection::ReadStatus::kMessage: {
              trace(cmd, "<-", received);
              const std::string bad_sum = verify_checksum(received);
              if (!bad_sum.empty()) {
                fail(cmd, "received message has a wrong CheckSum: " + bad_sum);
                break;
              }
              if (const auto diff = compare_messages(expected, received, patterns)) {
                fail(cmd, diff->description);
                break;
              }
              conn.last_expected = std::string(find_field(expected, "35").value);
              if (conn.last_expected == "A" && conn.heartbeat_seconds == 0) {
                // Initiator-side: the engine's Logon states the interval.
                const FieldLookup hb = find_field(received, "108");
                int seconds = 0;
                if (hb.found) std::from_chars(hb.value.data(), hb.value.data() + hb.value.size(), seconds);
                conn.heartbeat_seconds = seconds;
              }
              break;
            }
            case Connection::ReadStatus::kClosed:
              fail(cmd, "acceptor closed the connection instead of sending the expected message");
              break;
            case Connection::ReadStatus::kTimeout:
              fail(cmd, "no complete message within " + std::to_string(wait) + " ms");
              break;
            case Connection::ReadStatus::kGarbled:
              fail(cmd, "received bytes are not a well-framed FIX message: " + error);
              break;
            case Connection::ReadStatus::kError:
              fail(cmd, error);
              break;
          }
          break;
        }
      }
      if (!result.passed) break;
      result.expected.clear();
      result.received.clear();
    }
  }
  for (auto& [id, conn] : connections) conn.close_gracefully(options.close_wait_ms);
  for (const int fd : lingering) ::close(fd);
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return result;
}

}  // namespace hft::conformance
