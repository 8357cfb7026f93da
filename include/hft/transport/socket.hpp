// TCP socket options and endpoints. Start-up code: resolving names and
// applying options happen when a connection is made, never per message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hft/core/expected.hpp"

namespace hft::transport {

/// A host and a TCP port. `host` is a name or a numeric IPv4/IPv6 address.
struct Endpoint {
  std::string host;
  std::uint16_t port = 0;

  /// "host:port" ("[v6]:port" for an IPv6 literal).
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

/// Kernel socket options, applied to every connected and accepted socket.
struct SocketOptions {
  /// TCP_NODELAY: send small writes at once instead of coalescing them (Nagle).
  bool tcp_nodelay = true;
  /// TCP_QUICKACK: acknowledge at once instead of delaying ACKs. The kernel
  /// clears it again on its own, so it is re-armed after every read (one
  /// setsockopt per read while enabled).
  bool tcp_quickack = false;
  /// SO_BUSY_POLL in microseconds: the kernel spins on the device queue for
  /// up to this long in a blocking read/poll. 0 leaves it off. Raising it
  /// above net.core.busy_read needs CAP_NET_ADMIN.
  int busy_poll_us = 0;
  /// SO_SNDBUF in bytes (the kernel doubles it); 0 keeps the system default.
  int send_buffer_size = 0;
  /// SO_RCVBUF in bytes (the kernel doubles it); 0 keeps the system default.
  int receive_buffer_size = 0;
};

/// The first option that could not be set, if any.
struct OptionError {
  const char* option = nullptr;  ///< static name such as "SO_BUSY_POLL"; nullptr: none failed
  int error = 0;                 ///< errno of the failed setsockopt

  [[nodiscard]] explicit operator bool() const noexcept { return option != nullptr; }
};

/// Applies `options` to a TCP socket. Every option is tried even if an
/// earlier one fails; the first failure is returned (e.g. SO_BUSY_POLL
/// without CAP_NET_ADMIN gives {"SO_BUSY_POLL", EPERM}).
OptionError apply_socket_options(int fd, const SocketOptions& options) noexcept;

/// Re-arms TCP_QUICKACK on `fd`. Returns false if setsockopt failed.
bool rearm_quickack(int fd) noexcept;

/// Sets O_NONBLOCK on `fd`. Returns false on failure (errno set).
bool set_nonblocking(int fd) noexcept;

/// A resolved socket address (large enough for IPv4 and IPv6).
struct SocketAddress {
  alignas(8) unsigned char storage[128] = {};  ///< a sockaddr_storage
  std::uint32_t length = 0;                    ///< socklen_t of the address
  int family = 0;                              ///< AF_INET or AF_INET6

  /// "a.b.c.d:port" or "[v6]:port".
  [[nodiscard]] std::string to_string() const;
};

/// Resolves `endpoint` (getaddrinfo; may block on DNS for a name, so call it
/// at start-up). Error names the endpoint and the resolver's message.
[[nodiscard]] Expected<SocketAddress> resolve(const Endpoint& endpoint);

/// Parses "host:port" or "[v6]:port". Error names the text.
[[nodiscard]] Expected<Endpoint> parse_endpoint(const std::string& text);

}  // namespace hft::transport
