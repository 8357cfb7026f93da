#include "garbage_peer.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <random>
#include <string_view>
#include <vector>

#include "hft/core/clock.hpp"
#include "lane_support.hpp"

namespace hft::lab::lanes {

namespace {

// A one-piece connection the venue leaves open longer is closed by the peer.
constexpr std::int64_t kWatchNs = 5'000'000'000;
constexpr std::uint64_t kSeqTooLowEvery = 25;  // session pieces per MsgSeqNum-too-low Heartbeat
constexpr const char* kIntruder = "INTRUDER";  // CompID no venue session has

enum Kind : int { kNoise = 0, kBadFrame = 1, kUnknownLogon = 2, kSession = 3 };

std::string sending_time() {
  codec::TimestampFormatter f;
  char text[codec::TimestampFormatter::length(codec::TimePrecision::kMillis)];
  return std::string(text, f.format(text, core::realtime_ns(), codec::TimePrecision::kMillis));
}

// "8=..|9=<body size + length_delta>|" + body + "10=<sum + checksum_delta>|".
std::string framed(std::string_view body, int length_delta, int checksum_delta) {
  std::string m = "8=" + std::string(ref::kBeginString) + "\x01" +
                  "9=" + std::to_string(static_cast<long long>(body.size()) + length_delta) + "\x01";
  m += body;
  unsigned sum = 0;
  for (const char c : m) sum += static_cast<unsigned char>(c);
  char tail[16];
  std::snprintf(tail, sizeof tail, "10=%03u\x01", (sum + static_cast<unsigned>(checksum_delta)) % 256U);
  return m + tail;
}

std::string header(const char* type, std::uint64_t seq, const char* sender) {
  return "35=" + std::string(type) + "\x01" + "34=" + std::to_string(seq) + "\x01" + "49=" + sender + "\x01" +
         "50=" + std::string(ref::kSenderSub) + "\x01" + "52=" + sending_time() + "\x01" +
         "56=" + std::string(ref::kTarget) + "\x01" + "57=" + std::string(ref::kTargetSub) + "\x01";
}

std::string logon_body(const char* sender) {
  return header("A", 1, sender) +
         "98=0\x01"
         "108=30\x01"
         "141=Y\x01"
         "1137=9\x01";
}

struct Conn {
  int fd = -1;
  int kind = kNoise;
  bool connecting = false;
  bool active_session = false;  // the HOSTILE connection new session pieces go to
  bool answered = false;        // HOSTILE: the venue's Logon came back
  std::int64_t deadline = 0;    // 0: none (the active session)
  std::string pending;          // bytes not sent yet
  std::string seen;             // HOSTILE: the start of what came back, until the Logon answer is found
};

}  // namespace

void GarbagePeer::work() noexcept {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(options_.port);
  (void)::inet_pton(AF_INET, options_.host.c_str(), &addr.sin_addr);

  std::mt19937_64 rng(options_.seed);
  std::vector<Conn> conns;
  conns.reserve(256);
  std::vector<pollfd> fds;
  fds.reserve(256);
  char scratch[4096];
  std::uint64_t session_pieces = 0;
  GarbagePeerCounts& c = counts_;

  const auto flush = [&](Conn& k) {
    while (!k.pending.empty()) {
      const ssize_t n = ::send(k.fd, k.pending.data(), k.pending.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.bytes += static_cast<std::uint64_t>(n);
        k.pending.erase(0, static_cast<std::size_t>(n));
      } else {
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
          ++c.send_errors;
          k.pending.clear();
        }
        return;
      }
    }
  };
  // Opens a connection carrying `bytes`; nullptr when connect() failed at once.
  const auto open = [&](int kind, std::string bytes, std::int64_t now) -> Conn* {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      ++c.connect_failures;
      return nullptr;
    }
    const int one = 1;
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Conn k;
    k.fd = fd;
    k.kind = kind;
    k.deadline = kind == kSession ? 0 : now + kWatchNs;
    k.pending = std::move(bytes);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
      ++c.connects;
      flush(k);
    } else if (errno == EINPROGRESS) {
      k.connecting = true;
    } else {
      ++c.connect_failures;
      ::close(fd);
      return nullptr;
    }
    conns.push_back(std::move(k));
    return &conns.back();
  };
  const auto issue = [&](std::uint64_t i, std::int64_t now) {
    const int kind = static_cast<int>(i % 4);
    const bool odd = (i / 4) % 2 == 1;  // which defect a garbled frame has
    ++c.pieces;
    ++c.per_kind[kind];
    switch (kind) {
      case kNoise: {
        std::string noise(64 + rng() % 449, '\0');
        for (char& b : noise) b = static_cast<char>(rng() & 0xFF);
        (void)open(kNoise, std::move(noise), now);
        break;
      }
      case kBadFrame:
        (void)open(kBadFrame, framed(logon_body(kIntruder), odd ? -5 : 0, odd ? 0 : 1), now);
        break;
      case kUnknownLogon:
        (void)open(kUnknownLogon, framed(logon_body(kIntruder), 0, 0), now);
        break;
      default: {
        Conn* s = nullptr;
        for (Conn& k : conns) s = k.active_session ? &k : s;
        std::string bytes;
        if (s == nullptr) {
          ++c.session_logons;
          bytes = framed(logon_body(kHostileCompId), 0, 0);
        }
        ++session_pieces;
        const bool too_low = session_pieces % kSeqTooLowEvery == 0;
        // A Heartbeat the venue cannot accept: garbled (ignored, one WARN
        // line), or well-formed with MsgSeqNum 1 after the Logon's 1 (Logout
        // and disconnect).
        bytes += too_low ? framed(header("0", 1, kHostileCompId), 0, 0)
                         : framed(header("0", 2, kHostileCompId), odd ? -5 : 0, odd ? 0 : 1);
        if (s == nullptr) {
          s = open(kSession, std::move(bytes), now);
          if (s != nullptr) s->active_session = true;
        } else {
          s->pending += bytes;
          if (!s->connecting) flush(*s);
        }
        if (too_low && s != nullptr) {
          // The venue will close it: watched like the others, the next piece opens another.
          s->active_session = false;
          s->deadline = now + kWatchNs;
        }
      }
    }
  };
  const auto close_at = [&](std::size_t i) {
    ::close(conns[i].fd);
    if (i + 1 != conns.size()) conns[i] = std::move(conns.back());
    conns.pop_back();
  };

  const std::int64_t t0 = core::monotonic_ns();
  const double period_ns = 1e9 / options_.rate;
  std::uint64_t next = 0;
  while (!stopping()) {
    std::int64_t now = core::monotonic_ns();
    // Due pieces (a burst after a stall is capped; the achieved rate tells).
    for (int burst = 0;
         burst < 64 && now >= t0 + static_cast<std::int64_t>(static_cast<double>(next) * period_ns);
         ++burst) {
      issue(next++, now);
      now = core::monotonic_ns();
    }
    fds.clear();
    for (const Conn& k : conns) {
      short events = POLLIN;
      if (k.connecting || !k.pending.empty()) events |= POLLOUT;
      fds.push_back(pollfd{k.fd, events, 0});
    }
    const std::int64_t due = t0 + static_cast<std::int64_t>(static_cast<double>(next) * period_ns);
    const std::int64_t wait =
        std::clamp<std::int64_t>(due - now, 0, 5'000'000);  // stop is checked every 5 ms
    const timespec ts{0, static_cast<long>(wait)};
    const int ready = ::ppoll(fds.data(), fds.size(), &ts, nullptr);
    now = core::monotonic_ns();
    // Back to front: close_at() moves the last connection into the slot.
    for (std::size_t i = fds.size(); i-- > 0;) {
      Conn& k = conns[i];
      const short ev = ready > 0 ? fds[i].revents : 0;
      if (k.connecting && (ev & (POLLOUT | POLLERR | POLLHUP)) != 0) {
        int err = 0;
        socklen_t len = sizeof err;
        (void)::getsockopt(k.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
          ++c.connect_failures;
          close_at(i);
          continue;
        }
        k.connecting = false;
        ++c.connects;
      }
      if (!k.connecting && !k.pending.empty()) flush(k);
      bool closed = false;
      if (!k.connecting && (ev & (POLLIN | POLLHUP | POLLERR)) != 0) {
        for (;;) {
          const ssize_t n = ::recv(k.fd, scratch, sizeof scratch, MSG_DONTWAIT);
          if (n > 0) {
            if (k.kind == kSession && !k.answered) {
              k.seen.append(scratch, static_cast<std::size_t>(n));
              if (k.seen.find("\00135=A\001") != std::string::npos) {  // the venue's Logon
                k.answered = true;
                ++c.session_answered;
                k.seen.clear();
              } else if (k.seen.size() > 4096) {
                k.seen.erase(0, k.seen.size() - 16);
              }
            }
            continue;
          }
          closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
          break;
        }
      }
      if (closed) {
        ++(k.kind == kSession ? c.session_closed : c.closed_by_venue);
        close_at(i);
      } else if (k.deadline != 0 && now > k.deadline) {
        ++c.left_open;
        close_at(i);
      }
    }
  }
  for (const Conn& k : conns) {
    if (!k.active_session) ++c.left_open;
    ::close(k.fd);
  }
  conns.clear();
  c.seconds = static_cast<double>(core::monotonic_ns() - t0) * 1e-9;
}

std::string GarbagePeer::describe() const {
  const GarbagePeerCounts& c = counts_;
  char text[768];
  std::snprintf(
      text, sizeof text,
      "%llu pieces in %.2f s (%.0f/s, target %.0f/s: %llu random-byte connections, %llu Logons with a "
      "wrong BodyLength or CheckSum, %llu Logons from an unknown CompID, %llu garbled or out-of-sequence "
      "Heartbeats on session %s), %llu bytes; %llu connections made, %llu connect failures, %llu closed "
      "by the venue, %llu left open by it (closed by the peer), %llu send errors; %s: %llu Logons sent, "
      "%llu answered, %llu of its connections closed by the venue; peer thread CPU %.1f ms",
      static_cast<unsigned long long>(c.pieces), c.seconds,
      c.seconds > 0 ? static_cast<double>(c.pieces) / c.seconds : 0.0, options_.rate,
      static_cast<unsigned long long>(c.per_kind[kNoise]),
      static_cast<unsigned long long>(c.per_kind[kBadFrame]),
      static_cast<unsigned long long>(c.per_kind[kUnknownLogon]),
      static_cast<unsigned long long>(c.per_kind[kSession]), kHostileCompId,
      static_cast<unsigned long long>(c.bytes), static_cast<unsigned long long>(c.connects),
      static_cast<unsigned long long>(c.connect_failures), static_cast<unsigned long long>(c.closed_by_venue),
      static_cast<unsigned long long>(c.left_open), static_cast<unsigned long long>(c.send_errors),
      kHostileCompId, static_cast<unsigned long long>(c.session_logons),
      static_cast<unsigned long long>(c.session_answered), static_cast<unsigned long long>(c.session_closed),
      static_cast<double>(cpu_ns()) * 1e-6);
  return text;
}

}  // namespace hft::lab::lanes
