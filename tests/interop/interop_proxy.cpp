// interop-proxy: a loopback TCP relay that plays a network failure in the
// middle of an order stream, for the interop tests.
//
//   interop-proxy --target-port P --port-file F --fail-after-orders K [--blackhole-ms D]
//
// Listens on 127.0.0.1 (a free port, written to F), and relays each accepted
// connection to 127.0.0.1:P. On the first connection, once the client has
// sent its K-th NewOrderSingle (the K-th "<SOH>35=D<SOH>"), the link goes
// dark: for D ms every byte in either direction is read and discarded (both
// ends still think they are connected and keep sending), then both sockets
// are reset. Messages are cut wherever the failure falls. Later connections
// (the reconnect) are relayed untouched. Runs until SIGTERM/SIGINT; prints
// what it did to stdout.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "interop-proxy: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

std::int64_t now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

// Wall-clock time of day (UTC, ms), to line the proxy's events up with the peers' logs.
std::string stamp() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  ::gmtime_r(&ts.tv_sec, &t);
  char out[32];
  std::snprintf(out, sizeof out, "%02d:%02d:%02d.%03ld", t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1'000'000);
  return out;
}

// Closes with an RST (SO_LINGER 0), as a failed link ends for both sides.
void reset_close(int fd) {
  if (fd < 0) return;
  linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  ::close(fd);
}

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) die("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Counts "\x01" "35=D" "\x01" across reads (a tag may be split between two).
class OrderCounter {
 public:
  long feed(std::string_view chunk) {
    std::string text = carry_ + std::string(chunk);
    constexpr std::string_view kNeedle = "\x01" "35=D\x01";
    for (std::size_t pos = text.find(kNeedle); pos != std::string::npos; pos = text.find(kNeedle, pos + 1)) ++count_;
    carry_ = text.size() >= kNeedle.size() - 1 ? text.substr(text.size() - (kNeedle.size() - 1)) : text;
    return count_;
  }

 private:
  std::string carry_;
  long count_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int target_port = 0;
  long fail_after = 0;
  int blackhole_ms = 300;
  std::string port_file;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "interop-proxy: %s needs a value\n", arg.c_str());
      return 2;
    }
    const char* v = argv[++i];
    if (arg == "--target-port") target_port = std::atoi(v);
    else if (arg == "--port-file") port_file = v;
    else if (arg == "--fail-after-orders") fail_after = std::atol(v);
    else if (arg == "--blackhole-ms") blackhole_ms = std::atoi(v);
    else {
      std::fprintf(stderr, "usage: interop-proxy --target-port P --port-file F --fail-after-orders K [--blackhole-ms D]\n");
      return 2;
    }
  }
  if (target_port <= 0 || port_file.empty() || fail_after <= 0) {
    std::fprintf(stderr, "usage: interop-proxy --target-port P --port-file F --fail-after-orders K [--blackhole-ms D]\n");
    return 2;
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);

  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) die("socket");
  const int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) die("bind");
  if (::listen(listener, 8) != 0) die("listen");
  if (::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) die("getsockname");
  {
    const std::string tmp = port_file + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) die("port file");
    std::fprintf(f, "%d\n", ntohs(addr.sin_port));
    std::fclose(f);
    if (std::rename(tmp.c_str(), port_file.c_str()) != 0) die("rename port file");
  }

  int client = -1, server = -1;
  int connections = 0;
  bool failed = false;         // the failure has been played (only once)
  std::int64_t dark_until = 0; // > 0: blackhole until then
  long forwarded_orders = 0;
  std::uint64_t discarded_bytes[2] = {0, 0};  // client->server, server->client
  OrderCounter counter;
  char buf[65536];

  while (g_stop == 0) {
    pollfd fds[3] = {{listener, POLLIN, 0}, {client, POLLIN, 0}, {server, POLLIN, 0}};
    const int n = ::poll(fds, 3, 10);
    if (n < 0 && errno != EINTR) die("poll");
    if (dark_until > 0 && now_ms() >= dark_until) {
      std::printf("proxy %s: link reset after %d ms dark (discarded %llu bytes client->server, %llu server->client)\n",
                  stamp().c_str(), blackhole_ms, static_cast<unsigned long long>(discarded_bytes[0]),
                  static_cast<unsigned long long>(discarded_bytes[1]));
      std::fflush(stdout);
      reset_close(client);
      reset_close(server);
      client = server = -1;
      dark_until = 0;
      continue;
    }
    if (n <= 0) continue;
    if ((fds[0].revents & POLLIN) != 0) {
      sockaddr_in from{};
      socklen_t from_len = sizeof from;
      const int accepted = ::accept(listener, reinterpret_cast<sockaddr*>(&from), &from_len);
      if (accepted >= 0) {
        if (client >= 0) {
          std::printf("proxy %s: refused a second connection (from port %d)\n", stamp().c_str(), ntohs(from.sin_port));
          ::close(accepted);  // one connection at a time
        } else {
          const int upstream = connect_to(target_port);
          if (upstream < 0) {
            ::close(accepted);
          } else {
            ::setsockopt(accepted, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            client = accepted;
            server = upstream;
            ++connections;
            std::printf("proxy %s: connection %d from port %d relayed\n", stamp().c_str(), connections,
                        ntohs(from.sin_port));
            std::fflush(stdout);
          }
        }
      }
    }
    for (int side = 0; side < 2; ++side) {
      const int from = side == 0 ? client : server;
      const int to = side == 0 ? server : client;
      if (from < 0 || (fds[1 + side].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t got = ::recv(from, buf, sizeof buf, 0);
      if (got <= 0) {
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        // One side closed: pass the close on, as a relay does.
        std::printf("proxy %s: %s closed the connection (%s)\n", stamp().c_str(), side == 0 ? "client" : "server",
                    got == 0 ? "end of stream" : std::strerror(errno));
        std::fflush(stdout);
        ::shutdown(to, SHUT_WR);
        ::close(client);
        ::close(server);
        client = server = -1;
        dark_until = 0;
        break;
      }
      if (dark_until > 0) {
        discarded_bytes[side] += static_cast<std::uint64_t>(got);
        continue;
      }
      if (!write_all(to, buf, static_cast<std::size_t>(got))) continue;
      if (side == 0 && !failed) {
        forwarded_orders = counter.feed({buf, static_cast<std::size_t>(got)});
        if (forwarded_orders >= fail_after) {
          failed = true;
          dark_until = now_ms() + blackhole_ms;
          std::printf("proxy %s: link dark after %ld orders\n", stamp().c_str(), forwarded_orders);
          std::fflush(stdout);
        }
      }
    }
  }
  std::printf("proxy: connections=%d failed=%d\n", connections, failed ? 1 : 0);
  return 0;
}
