// Helpers for engine tests that play a counterparty over loopback with raw
// sockets: engines from INI text, FIX.4.4 messages, connections from a chosen
// source address.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "hft/core/clock.hpp"
#include "hft/engine/engine.hpp"
#include "support/fix_text.hpp"

namespace hft::test {

inline std::unique_ptr<engine::Engine> make_engine(const std::string& text, session::Application& app,
                                                   session::Logger* log = nullptr) {
  auto config = engine::Config::parse(text, "test.cfg");
  EXPECT_TRUE(config.ok()) << (config.ok() ? "" : config.error().message);
  if (!config) return nullptr;
  auto created = engine::Engine::create(*config, app, log);
  EXPECT_TRUE(created.ok()) << (created.ok() ? "" : created.error().message);
  return created ? std::move(*created) : nullptr;
}

/// The error Engine::create (or the parser) gives for `text`; empty if the engine starts.
inline std::string start_error(const std::string& text, const std::string& file_name = "test.cfg") {
  auto config = engine::Config::parse(text, file_name);
  if (!config) return config.error().message;
  struct : session::Application {
  } app;
  auto created = engine::Engine::create(*config, app);
  return created ? std::string() : created.error().message;
}

inline std::string utc_text(std::int64_t s, const char* format) {
  const auto t = static_cast<std::time_t>(s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[32];
  std::strftime(out, sizeof out, format, &tm);
  return out;
}

/// A FIX.4.4 message from `sender` to `target`, SendingTime now, with
/// BodyLength and CheckSum; `fields` are SOH-terminated.
inline std::string raw_fix(const std::string& type, int seq, const std::string& fields,
                           const std::string& sender = "CLIENT", const std::string& target = "VENUE") {
  const std::string body = "35=" + type + "\x01" + "34=" + std::to_string(seq) + "\x01" + "49=" + sender +
                           "\x01" + "52=" + utc_text(std::time(nullptr), "%Y%m%d-%H:%M:%S") + "\x01" +
                           "56=" + target + "\x01" + fields;
  return with_trailer("FIX.4.4", body);
}

/// A TCP connection to 127.0.0.1:port from `source` (any address of 127/8);
/// -1 if it fails. `receive_buffer` > 0 sets SO_RCVBUF first.
inline int connect_from(const char* source, int port, int receive_buffer = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (receive_buffer > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &local.sin_addr);
  sockaddr_in remote{};
  remote.sin_family = AF_INET;
  remote.sin_port = htons(static_cast<std::uint16_t>(port));
  remote.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof remote) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// Sends all of `bytes`, stopping early if the engine has closed the connection.
inline void send_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

/// True if `received` holds the whole field "tag=value".
inline bool has_field(const std::string& received, const std::string& field) {
  return received.find("\x01" + field + "\x01") != std::string::npos;
}

// Reads from `fd` until `done(received, ended)` or the limit; `step` runs
// between reads (polls an engine on this thread, or nothing).
template <typename Step, typename Done>
bool read_until(int fd, std::string& received, bool& ended, Step step, Done done,
                std::int64_t limit_ns = 5'000'000'000) {
  const auto start = hft::core::monotonic_ns();
  char buf[4096];
  while (!done()) {
    if (hft::core::monotonic_ns() - start > limit_ns) return false;
    step();
    if (ended) continue;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 1) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) received.append(buf, static_cast<std::size_t>(n));
    if (n == 0 || (n < 0 && errno == ECONNRESET)) ended = true;
  }
  return true;
}

/// Keeps every event line (the engine thread writes, the test reads).
class Lines final : public hft::session::Logger {
 public:
  [[nodiscard]] bool enabled(hft::session::LogLevel) const noexcept override { return true; }
  void log(hft::session::LogLevel, const hft::session::SessionID&, std::string_view text) noexcept override {
    const std::lock_guard<std::mutex> lock(mutex_);
    lines_.emplace_back(text);
  }
  std::vector<std::string> containing(std::string_view what) {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    for (const auto& l : lines_) {
      if (l.find(what) != std::string::npos) out.push_back(l);
    }
    return out;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

}  // namespace hft::test
