// startup_bench: how start-up cost grows with the number of sessions
// (docs/journal.md, "Many sessions"). For each N it starts one engine
// process (this program, re-executed as the child) with N journaled
// sessions and the engine's default journal settings, logs every session on
// from raw TCP peers in this process, and reports:
//
//   create_ms     Engine::create in the child (stores opened, listeners bound)
//   first_ms      spawn -> the first session's Logon answered (acceptor), or
//                 the first Logon received (initiator)
//   all_ms        spawn -> every session logged on
//   disk          bytes allocated under the store directory (st_blocks * 512)
//   written       bytes the child wrote through write(2)/pwrite(2) (/proc io wchar)
//   rss           the child's VmRSS after every session logged on (RssAnon,
//                 RssFile + RssShmem: mapped journal pages)
//
//   startup_bench [--role acceptor|initiator] [--sessions 1,10,100,1000]
//                 [--dir DIR] [--set KEY=VALUE ...] [--wave N]
//
// --set adds a [DEFAULT] key to the child's configuration (to compare
// settings). Peers connect from 127.0.0.x source addresses, at most 16 at a
// time per address and --wave (48) pending at once, inside the acceptor's
// default pre-logon limits (MaxPendingConnectionsPerAddress,
// MaxPendingConnections); a larger wave needs those raised with --set.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "hft/codec/parser.hpp"
#include "hft/core/clock.hpp"
#include "hft/engine/engine.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace hft;

std::atomic<bool> g_stop{false};
std::string g_begin = "FIX.4.4";
std::size_t g_wave = 48;  // Logons outstanding at once after the first (--wave)  // the peers' BeginString (--set BeginString=...)
void on_signal(int) { g_stop.store(true); }

double ms_since(std::int64_t t0) { return static_cast<double>(core::monotonic_ns() - t0) / 1e6; }

// ---- the child: one engine with N sessions --------------------------------

struct QuietApp final : session::Application {
  session::Decision from_app(session::Session&, const codec::MessageView&) noexcept override {
    return session::Decision::accept();
  }
};

int serve(const std::string& role, int sessions, int port, const std::string& dir,
          const std::vector<std::string>& sets) {
  std::ostringstream ini;
  // Defaults a --set can replace (e.g. BeginString=FIXT.1.1 with dictionaries).
  auto given = [&](std::string_view key) {
    for (const std::string& s : sets)
      if (s.rfind(std::string(key) + "=", 0) == 0) return true;
    return false;
  };
  ini << "[DEFAULT]\nConnectionType=" << role << "\nHeartBtInt=30\nNonStopSession=Y\nFileStorePath=" << dir
      << "\nLogLevel=error\nReconnectInterval=1\n";
  if (!given("BeginString")) ini << "BeginString=FIX.4.4\n";
  if (!given("UseDataDictionary") && !given("DataDictionary") && !given("AppDataDictionary"))
    ini << "UseDataDictionary=N\n";
  if (role == "acceptor") ini << "SocketAcceptPort=" << port << "\nSenderCompID=VENUE\n";
  else ini << "SocketConnectHost=127.0.0.1\nSocketConnectPort=" << port << "\nTargetCompID=VENUE\n";
  for (const std::string& s : sets) ini << s << "\n";
  for (int i = 1; i <= sessions; ++i) {
    ini << "[SESSION]\n" << (role == "acceptor" ? "TargetCompID=C" : "SenderCompID=C") << i << "\n";
  }
  const std::int64_t t0 = core::monotonic_ns();
  auto config = engine::Config::parse(ini.str(), "<startup_bench>");
  if (!config) {
    std::fprintf(stderr, "startup_bench: %s\n", config.error().message.c_str());
    return 2;
  }
  QuietApp app;
  auto created = engine::Engine::create(*config, app);
  if (!created) {
    std::fprintf(stderr, "startup_bench: %s\n", created.error().message.c_str());
    return 2;
  }
  engine::Engine& e = **created;
  // The acceptor listens on a port of its own choosing (port 0): a port
  // picked free by the parent and bound later here could be taken meanwhile
  // by one of the previous run's peer connections.
  std::printf("create_ms %.3f\nport %d\n", ms_since(t0), role == "acceptor" ? e.listen_port() : port);
  std::fflush(stdout);
  ::signal(SIGTERM, on_signal);
  bool all = false;
  while (!g_stop.load()) {
    e.poll();
    if (!all && role == "initiator") {
      std::size_t on = 0;
      for (std::size_t i = 0; i < e.session_count(); ++i) on += e.session(i).is_logged_on() ? 1 : 0;
      if (on == e.session_count()) {
        all = true;
        std::printf("all_logged_on\n");
        std::fflush(stdout);
      }
    }
  }
  e.logout_all(1'000'000'000);
  return 0;
}

// ---- the parent: raw FIX peers ----------------------------------------------

std::string fix_message(std::string_view sender, std::string_view target, std::string_view msg_type) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H:%M:%S.000", &tm);
  std::string body;
  body.append("35=").append(msg_type).append("\x01" "34=1\x01" "49=").append(sender);
  body.append("\x01" "52=").append(stamp).append("\x01" "56=").append(target).append("\x01");
  if (msg_type == "A") body.append("98=0\x01" "108=30\x01");
  if (msg_type == "A" && g_begin == "FIXT.1.1") body.append("1137=9\x01");
  std::string m;
  m.append("8=").append(g_begin).append("\x01" "9=").append(std::to_string(body.size())).append("\x01").append(body);
  unsigned sum = 0;
  for (const char c : m) sum += static_cast<unsigned char>(c);
  char tail[16];
  std::snprintf(tail, sizeof tail, "10=%03u\x01", sum % 256);
  m.append(tail);
  return m;
}

// Returns the first complete message in `buffer` (consumed), or empty.
std::string take_message(std::string& buffer) {
  const auto f = codec::frame(buffer);
  if (f.status != codec::FrameStatus::kComplete) return {};
  std::string m = buffer.substr(0, f.size);
  buffer.erase(0, f.size);
  return m;
}

std::string field(std::string_view m, std::string_view tag) {
  std::string key("\x01");
  key.append(tag).append("=");
  const std::size_t at = m.find(key);
  if (at == std::string_view::npos) return {};
  const std::size_t from = at + key.size();
  return std::string(m.substr(from, m.find('\x01', from) - from));
}

struct Peer {
  int fd = -1;
  std::string in;
  bool done = false;
  int index = 0;
};

int connect_from(int index, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(0x7F000000u | static_cast<std::uint32_t>(1 + index / 16));  // 127.0.0.x
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
    ::close(fd);
    return -1;
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool wait_writable(int fd, int timeout_ms) {
  pollfd p{fd, POLLOUT, 0};
  if (::poll(&p, 1, timeout_ms) != 1) return false;
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  return err == 0;
}

// Reads what is there; true when a Logon arrived (initiator answers sent by
// the caller). False on EOF/error.
bool pump(Peer& p, std::string& message) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(p.fd, buf, sizeof buf, 0);
    if (n > 0) {
      p.in.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    if (errno != EINTR) return false;
  }
  message = take_message(p.in);
  return true;
}

void send_all(int fd, const std::string& m) {
  std::size_t sent = 0;
  while (sent < m.size()) {
    const ssize_t n = ::send(fd, m.data() + sent, m.size() - sent, MSG_NOSIGNAL);
    if (n > 0) sent += static_cast<std::size_t>(n);
    else if (errno != EAGAIN && errno != EINTR) return;
  }
}

std::uint64_t disk_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); ++it) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0) total += static_cast<std::uint64_t>(st.st_blocks) * 512;
  }
  return total;
}

std::uint64_t proc_value(pid_t pid, const char* file, const char* key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + file);
  std::string line;
  const std::size_t n = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, n, key) == 0) return std::strtoull(line.c_str() + n, nullptr, 10);
  }
  return 0;
}

struct Child {
  pid_t pid = -1;
  int out = -1;  // its stdout
  std::string text;
  void read_some() {
    char buf[256];
    ssize_t n;
    while ((n = ::read(out, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  }
};

Child spawn_child(const char* self, const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipe_fds[1], 1);
  std::vector<char*> argv{const_cast<char*>(self)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  Child c;
  if (posix_spawn(&c.pid, self, &fa, nullptr, argv.data(), environ) != 0) c.pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  ::close(pipe_fds[1]);
  c.out = pipe_fds[0];
  ::fcntl(c.out, F_SETFL, O_NONBLOCK);
  return c;
}

struct Row {
  int sessions = 0;
  double create_ms = -1, first_ms = -1, all_ms = -1;
  std::uint64_t disk = 0, written = 0, rss = 0, rss_anon = 0, rss_file = 0;
  bool ok = false;
  std::string error;
};

double child_create_ms(Child& c) {
  c.read_some();
  const std::size_t at = c.text.find("create_ms ");
  return at == std::string::npos ? -1 : std::strtod(c.text.c_str() + at + 10, nullptr);
}

int child_port(Child& c) {
  c.read_some();
  const std::size_t at = c.text.find("\nport ");
  return at == std::string::npos ? 0 : std::atoi(c.text.c_str() + at + 6);
}

void measure_child(Child& c, Row& row, const fs::path& dir) {
  row.create_ms = child_create_ms(c);
  row.disk = disk_bytes(dir);
  row.written = proc_value(c.pid, "io", "wchar: ");
  row.rss = proc_value(c.pid, "status", "VmRSS:") * 1024;
  row.rss_anon = proc_value(c.pid, "status", "RssAnon:") * 1024;
  row.rss_file =
      (proc_value(c.pid, "status", "RssFile:") + proc_value(c.pid, "status", "RssShmem:")) * 1024;
}

void stop_child(Child& c) {
  ::kill(c.pid, SIGTERM);
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  ::close(c.out);
}

constexpr std::int64_t kTimeoutNs = 60'000'000'000;

// Acceptor child: raw initiators log on, session 1 first.
Row run_acceptor(const char* self, int n, const fs::path& dir, const std::vector<std::string>& sets) {
  Row row;
  row.sessions = n;
  int port = 0;  // the child's, once it says
  std::vector<std::string> args{"--serve", "acceptor", "--n",   std::to_string(n),
                                "--port",  "0",        "--dir", dir.string()};
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  const std::int64_t t0 = core::monotonic_ns();
  Child child = spawn_child(self, args);
  std::vector<Peer> peers(static_cast<std::size_t>(n));
  std::size_t next = 0, answered = 0, pending = 0;
  while (answered < peers.size()) {
    if (core::monotonic_ns() - t0 > kTimeoutNs) {
      row.error = "timeout: " + std::to_string(answered) + " of " + std::to_string(n) + " logged on";
      break;
    }
    int st = 0;
    if (::waitpid(child.pid, &st, WNOHANG) == child.pid) {
      child.read_some();
      row.error = "the engine exited";
      return row;
    }
    if (port == 0 && (port = child_port(child)) == 0) {
      ::usleep(200);
      continue;
    }
    // Session 1 alone until its Logon is answered; then waves.
    const std::size_t limit = answered == 0 ? 1 : g_wave;
    while (next < peers.size() && pending < limit) {
      Peer& p = peers[next];
      p.index = static_cast<int>(next);
      p.fd = connect_from(p.index, port);
      if (p.fd < 0 || !wait_writable(p.fd, 1000)) {
        if (p.fd >= 0) ::close(p.fd);
        p.fd = -1;
        if (next == 0) break;  // not listening yet: try again
        row.error = "connect failed for session " + std::to_string(next + 1);
        break;
      }
      const std::string sender = std::string("C").append(std::to_string(next + 1));
      send_all(p.fd, fix_message(sender, "VENUE", "A"));
      ++next;
      ++pending;
    }
    if (!row.error.empty()) break;
    if (pending == 0) {
      ::usleep(200);
      continue;
    }
    std::vector<pollfd> fds;
    std::vector<Peer*> who;
    for (std::size_t i = 0; i < next; ++i) {
      if (peers[i].done || peers[i].fd < 0) continue;
      fds.push_back(pollfd{peers[i].fd, POLLIN, 0});
      who.push_back(&peers[i]);
    }
    ::poll(fds.data(), fds.size(), 100);
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      std::string m;
      if (!pump(*who[i], m)) {
        row.error = "session " + std::to_string(who[i]->index + 1) + ": connection closed before its Logon";
        break;
      }
      if (!m.empty() && field(m, "35") == "A") {
        who[i]->done = true;
        --pending;
        if (++answered == 1) row.first_ms = ms_since(t0);
      }
    }
    if (!row.error.empty()) break;
  }
  if (answered == peers.size()) {
    row.all_ms = ms_since(t0);
    row.ok = true;
    measure_child(child, row, dir);
  }
  for (Peer& p : peers)
    if (p.fd >= 0) ::close(p.fd);
  stop_child(child);
  return row;
}

// Initiator child: a raw acceptor here answers every Logon.
Row run_initiator(const char* self, int n, const fs::path& dir, const std::vector<std::string>& sets) {
  Row row;
  row.sessions = n;
  const int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(lfd, 4096);
  socklen_t len = sizeof a;
  ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  std::vector<std::string> args{"--serve", "initiator", "--n", std::to_string(n), "--port", std::to_string(port),
                                "--dir", dir.string()};
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  const std::int64_t t0 = core::monotonic_ns();
  Child child = spawn_child(self, args);
  std::vector<Peer> peers;
  peers.reserve(static_cast<std::size_t>(n) * 2);
  std::size_t answered = 0;
  bool child_all = false;
  while (answered < static_cast<std::size_t>(n) || !child_all) {
    if (core::monotonic_ns() - t0 > kTimeoutNs) {
      row.error = "timeout: " + std::to_string(answered) + " of " + std::to_string(n) + " Logons answered";
      break;
    }
    int st = 0;
    if (::waitpid(child.pid, &st, WNOHANG) == child.pid) {
      row.error = "the engine exited";
      return row;
    }
    for (;;) {
      const int fd = ::accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) break;
      peers.push_back(Peer{fd, {}, false, static_cast<int>(peers.size())});
    }
    std::vector<pollfd> fds{pollfd{lfd, POLLIN, 0}, pollfd{child.out, POLLIN, 0}};
    std::vector<Peer*> who;
    for (Peer& p : peers) {
      if (p.done) continue;
      fds.push_back(pollfd{p.fd, POLLIN, 0});
      who.push_back(&p);
    }
    ::poll(fds.data(), fds.size(), 100);
    child.read_some();
    child_all = child.text.find("all_logged_on") != std::string::npos;
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      Peer& p = *who[i - 2];
      std::string m;
      if (!pump(p, m)) {
        p.done = true;
        continue;
      }
      if (!m.empty() && field(m, "35") == "A") {
        send_all(p.fd, fix_message(field(m, "56"), field(m, "49"), "A"));
        p.done = true;
        if (++answered == 1) row.first_ms = ms_since(t0);
      }
    }
  }
  if (row.error.empty()) {
    row.all_ms = ms_since(t0);
    row.ok = true;
    measure_child(child, row, dir);
  }
  stop_child(child);
  for (Peer& p : peers) ::close(p.fd);
  ::close(lfd);
  return row;
}

std::string mib(std::uint64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  std::string role = "acceptor", serve_role, dir = "startup-bench-out";
  std::vector<int> counts{1, 10, 100, 1000};
  std::vector<std::string> sets;
  int n = 0, port = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "startup_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--role") role = value();
    else if (a == "--serve") serve_role = value();
    else if (a == "--n") n = std::atoi(value().c_str());
    else if (a == "--port") port = std::atoi(value().c_str());
    else if (a == "--dir") dir = value();
    else if (a == "--set") sets.push_back(value());
    else if (a == "--wave") g_wave = static_cast<std::size_t>(std::atoi(value().c_str()));
    else if (a == "--sessions") {
      counts.clear();
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) counts.push_back(std::atoi(item.c_str()));
    } else {
      std::fprintf(stderr, "startup_bench: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (!serve_role.empty()) return serve(serve_role, n, port, dir, sets);
  for (const std::string& set : sets)
    if (set.rfind("BeginString=", 0) == 0) g_begin = set.substr(12);
  if (role != "acceptor" && role != "initiator") {
    std::fprintf(stderr, "startup_bench: --role must be acceptor or initiator\n");
    return 2;
  }
  std::printf("%-9s %-9s %10s %10s %10s %12s %12s %12s %12s %12s\n", "role", "sessions", "create_ms",
              "first_ms", "all_ms", "disk", "written", "rss", "rss_anon", "rss_mapped");
  int failures = 0;
  for (const int count : counts) {
    const fs::path d = fs::path(dir) / (role + "-" + std::to_string(count));
    std::error_code ec;
    fs::remove_all(d, ec);
    fs::create_directories(d);
    const Row r = role == "acceptor" ? run_acceptor(argv[0], count, d, sets) : run_initiator(argv[0], count, d, sets);
    if (!r.ok) {
      std::printf("%-9s %-9d FAILED: %s\n", role.c_str(), count, r.error.c_str());
      ++failures;
      continue;
    }
    std::printf("%-9s %-9d %10.1f %10.1f %10.1f %12s %12s %12s %12s %12s\n", role.c_str(), count, r.create_ms,
                r.first_ms, r.all_ms, mib(r.disk).c_str(), mib(r.written).c_str(), mib(r.rss).c_str(),
                mib(r.rss_anon).c_str(), mib(r.rss_file).c_str());
    std::fflush(stdout);
    fs::remove_all(d, ec);
  }
  return failures == 0 ? 0 : 1;
}
