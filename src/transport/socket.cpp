#include "hft/transport/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace hft::transport {

std::string Endpoint::to_string() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

OptionError apply_socket_options(int fd, const SocketOptions& options) noexcept {
  OptionError first{};
  auto set = [&](int level, int name, int value, const char* label) {
    if (::setsockopt(fd, level, name, &value, sizeof(value)) != 0 && first.option == nullptr) {
      first = {label, errno};
    }
  };
  // Buffer sizes first: on a connecting socket they must precede connect()
  // for the window scale to reflect them.
  if (options.send_buffer_size > 0) set(SOL_SOCKET, SO_SNDBUF, options.send_buffer_size, "SO_SNDBUF");
  if (options.receive_buffer_size > 0) set(SOL_SOCKET, SO_RCVBUF, options.receive_buffer_size, "SO_RCVBUF");
  set(IPPROTO_TCP, TCP_NODELAY, options.tcp_nodelay ? 1 : 0, "TCP_NODELAY");
  if (options.tcp_quickack) set(IPPROTO_TCP, TCP_QUICKACK, 1, "TCP_QUICKACK");
  if (options.busy_poll_us > 0) set(SOL_SOCKET, SO_BUSY_POLL, options.busy_poll_us, "SO_BUSY_POLL");
  return first;
}

bool rearm_quickack(int fd) noexcept {
  const int one = 1;
  return ::setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one)) == 0;
}

bool set_nonblocking(int fd) noexcept {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0) return false;
  return ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

std::string SocketAddress::to_string() const {
  char text[INET6_ADDRSTRLEN] = {};
  std::uint16_t port = 0;
  if (family == AF_INET) {
    sockaddr_in a;
    std::memcpy(&a, storage, sizeof(a));
    ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof(text));
    port = ntohs(a.sin_port);
    return std::string(text) + ":" + std::to_string(port);
  }
  if (family == AF_INET6) {
    sockaddr_in6 a;
    std::memcpy(&a, storage, sizeof(a));
    ::inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof(text));
    port = ntohs(a.sin6_port);
    return "[" + std::string(text) + "]:" + std::to_string(port);
  }
  return "?";
}

Expected<SocketAddress> resolve(const Endpoint& endpoint) {
  if (endpoint.host.empty()) return Error{"endpoint " + endpoint.to_string() + ": empty host"};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* list = nullptr;
  const std::string port = std::to_string(endpoint.port);
  const int rc = ::getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &list);
  if (rc != 0 || list == nullptr) {
    return Error{"endpoint " + endpoint.to_string() + ": cannot resolve host: " + ::gai_strerror(rc)};
  }
  // Prefer IPv4 when a name has both, since venues' allow-lists are mostly IPv4.
  const addrinfo* pick = list;
  for (const addrinfo* p = list; p != nullptr; p = p->ai_next) {
    if (p->ai_family == AF_INET) {
      pick = p;
      break;
    }
  }
  SocketAddress out;
  static_assert(sizeof(out.storage) >= sizeof(sockaddr_storage));
  std::memcpy(out.storage, pick->ai_addr, pick->ai_addrlen);
  out.length = static_cast<std::uint32_t>(pick->ai_addrlen);
  out.family = pick->ai_family;
  ::freeaddrinfo(list);
  return out;
}

Expected<Endpoint> parse_endpoint(const std::string& text) {
  std::string host;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Error{"endpoint \"" + text + "\": expected [v6-address]:port"};
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) return Error{"endpoint \"" + text + "\": expected host:port"};
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  unsigned port = 0;
  const auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (host.empty() || port_text.empty() || ec != std::errc() || ptr != port_text.data() + port_text.size() ||
      port == 0 || port > 65535) {
    return Error{"endpoint \"" + text + "\": expected host:port with a port in 1..65535"};
  }
  return Endpoint{host, static_cast<std::uint16_t>(port)};
}

}  // namespace hft::transport
