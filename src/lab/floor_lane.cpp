#include "hft/lab/floor_lane.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "hft/core/idle.hpp"
#include "hft/lab/pacer.hpp"

namespace hft::lab {

namespace {

enum class PollMode : std::uint8_t { kBusy, kBlocking };
enum class LoadMode : std::uint8_t { kClosed, kPaced };

struct Variant {
  PollMode poll;
  LoadMode load;
};

std::optional<Variant> parse_variant(std::string_view name) {
  if (name == "busy-closed") return Variant{PollMode::kBusy, LoadMode::kClosed};
  if (name == "blocking-closed") return Variant{PollMode::kBlocking, LoadMode::kClosed};
  if (name == "busy-paced") return Variant{PollMode::kBusy, LoadMode::kPaced};
  if (name == "blocking-paced") return Variant{PollMode::kBlocking, LoadMode::kPaced};
  return std::nullopt;
}

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    reset();
    fd_ = std::exchange(o.fd_, -1);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  [[nodiscard]] int get() const noexcept { return fd_; }

 private:
  int fd_ = -1;
};

std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

bool set_nodelay(int fd) {
  const int one = 1;
  return ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0;
}

bool set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

int int_sockopt(int fd, int level, int name) {
  int v = -1;
  socklen_t len = sizeof(v);
  if (::getsockopt(fd, level, name, &v, &len) != 0) return -1;
  return v;
}

/// Sends all of [p, p+n). Busy mode spins on EAGAIN. Returns false on error.
bool send_all(int fd, const char* p, std::size_t n, PollMode mode) noexcept {
  const int flags = MSG_NOSIGNAL | (mode == PollMode::kBusy ? MSG_DONTWAIT : 0);
  while (n > 0) {
    const ssize_t k = ::send(fd, p, n, flags);
    if (k > 0) {
      p += k;
      n -= static_cast<std::size_t>(k);
    } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      core::cpu_relax();
    } else {
      return false;
    }
  }
  return true;
}

/// Receives exactly n bytes. Returns false on error or EOF.
bool recv_exact(int fd, char* p, std::size_t n, PollMode mode) noexcept {
  const int flags = mode == PollMode::kBusy ? MSG_DONTWAIT : MSG_WAITALL;
  while (n > 0) {
    const ssize_t k = ::recv(fd, p, n, flags);
    if (k > 0) {
      p += k;
      n -= static_cast<std::size_t>(k);
    } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      core::cpu_relax();
    } else {
      return false;
    }
  }
  return true;
}

void stamp(std::string& msg, std::uint64_t i) noexcept { std::memcpy(msg.data(), &i, sizeof(i)); }

/// Checks echoed bytes against the message of index i, from byte `offset`.
bool echo_matches(const std::string& tmpl, std::uint64_t i, std::size_t offset, const char* data,
                  std::size_t len) noexcept {
  char idx[8];
  std::memcpy(idx, &i, sizeof(i));
  for (std::size_t k = 0; k < len; ++k) {
    const std::size_t pos = offset + k;
    const char want = pos < 8 ? idx[pos] : tmpl[pos];
    if (data[k] != want) return false;
  }
  return true;
}

struct ServerState {
  std::atomic<int> phase{0};  // 0 starting, 1 listening-and-pinned, 2 done
  std::string error;
  ThreadPlacement placement{"server", -1, -1, -1};
  std::uint64_t bytes = 0;
};

void echo_server(int listener, PollMode mode, int core, ServerState& st) {
  core::name_current_thread("floor-echo");
  st.placement.requested_cpu = core;
  if (!core::pin_current_thread(core)) {
    st.error = "server: cannot pin the echo thread to CPU " + std::to_string(core);
    st.phase.store(2);
    return;
  }
  st.placement.cpu_at_start = core::current_cpu();
  st.phase.store(1);
  pollfd pfd{listener, POLLIN, 0};
  // Bounded wait: if the client never connects the run fails instead of hanging.
  if (::poll(&pfd, 1, 10'000) != 1) {
    st.error = "server: no client connected within 10 s";
    st.phase.store(2);
    return;
  }
  Fd conn(::accept(listener, nullptr, nullptr));
  if (conn.get() < 0) {
    st.error = sys_error("server: accept");
    st.phase.store(2);
    return;
  }
  if (!set_nodelay(conn.get()) || (mode == PollMode::kBusy && !set_nonblocking(conn.get()))) {
    st.error = sys_error("server: socket options");
    st.phase.store(2);
    return;
  }
  std::vector<char> buf(1 << 16);
  const int flags = mode == PollMode::kBusy ? MSG_DONTWAIT : 0;
  for (;;) {
    const ssize_t n = ::recv(conn.get(), buf.data(), buf.size(), flags);
    if (n > 0) {
      if (!send_all(conn.get(), buf.data(), static_cast<std::size_t>(n), mode)) {
        st.error = sys_error("server: send");
        break;
      }
      st.bytes += static_cast<std::uint64_t>(n);
    } else if (n == 0) {
      break;  // the client closed: the run is over
    } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      core::cpu_relax();
    } else {
      st.error = sys_error("server: recv");
      break;
    }
  }
  st.placement.cpu_at_end = core::current_cpu();
  st.phase.store(2);
}

struct ClientOutcome {
  std::optional<Error> error;
  RunResult result;
};

class FloorClient {
 public:
  FloorClient(const LaneConfig& cfg, RunContext& ctx, Variant v, std::uint16_t port)
      : cfg_(cfg), ctx_(ctx), v_(v), port_(port), msg_(floor_message(cfg.message_size)),
        rx_(cfg.message_size, '\0') {}

  ClientOutcome run() {
    ClientOutcome out;
    out.result.threads.push_back({"client", cfg_.client_core, -1, -1});
    ThreadPlacement& place = out.result.threads.back();
    core::name_current_thread("floor-client");
    if (!core::pin_current_thread(cfg_.client_core)) {
      out.error = Error{"client: cannot pin to CPU " + std::to_string(cfg_.client_core)};
      return out;
    }
    place.cpu_at_start = core::current_cpu();
    if (auto e = connect_socket(); !e) {
      out.error = e.error();
      return out;
    }
    out.result.notes.emplace_back("client SO_SNDBUF", std::to_string(int_sockopt(fd_.get(), SOL_SOCKET, SO_SNDBUF)));
    out.result.notes.emplace_back("client SO_RCVBUF", std::to_string(int_sockopt(fd_.get(), SOL_SOCKET, SO_RCVBUF)));
    out.result.notes.emplace_back("TCP_NODELAY", "on (client and server)");
    out.result.notes.emplace_back("message bytes", std::to_string(msg_.size()));
    out.result.notes.emplace_back("sockets", v_.poll == PollMode::kBusy ? "non-blocking, spinning on recv/send"
                                                                       : "blocking");
    if (v_.poll == PollMode::kBlocking && v_.load == LoadMode::kPaced) {
      // Default timer slack (50 us) would dominate the scheduler delay of a
      // ppoll() wait; 1 ns asks for the precision the schedule needs.
      ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
      out.result.notes.emplace_back("client timer slack", "1 ns (ppoll waits)");
    }
    if (ctx_.progress_total != nullptr) ctx_.progress_total->store(cfg_.warmup + cfg_.calls);

    if (auto e = closed_loop(cfg_.warmup, nullptr); !e) {
      out.error = e.error();
      return out;
    }
    out.result.warmup_done = cfg_.warmup;
    Expected<void> measured = v_.load == LoadMode::kClosed ? closed_measured(out.result) : paced_measured(out.result);
    if (!measured) {
      out.error = measured.error();
      return out;
    }
    place.cpu_at_end = core::current_cpu();
    out.result.audit.checked = verified_;
    if (mismatches_ == 0 && verified_ == cfg_.calls) {
      out.result.audit.status = AuditResult::Status::kPass;
      out.result.audit.detail = "every measured echo (" + std::to_string(verified_) +
                                ") matched the bytes sent; count equals calls made; no journal in this lane";
    } else {
      out.result.audit.status = AuditResult::Status::kFail;
      out.result.audit.detail = std::to_string(mismatches_) + " echoes differed from the bytes sent; " +
                                std::to_string(verified_) + " verified of " + std::to_string(cfg_.calls);
    }
    return out;
  }

  void close() noexcept { fd_.reset(); }

 private:
  Expected<void> connect_socket() {
    fd_ = Fd(::socket(AF_INET, SOCK_STREAM, 0));
    if (fd_.get() < 0) return Error{sys_error("client: socket")};
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port_);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
      return Error{sys_error("client: connect to 127.0.0.1:" + std::to_string(port_))};
    }
    if (!set_nodelay(fd_.get())) return Error{sys_error("client: TCP_NODELAY")};
    // Paced runs always poll the socket without blocking; "blocking" there
    // means the waits happen in the kernel (ppoll), not in a spin.
    if ((v_.poll == PollMode::kBusy || v_.load == LoadMode::kPaced) && !set_nonblocking(fd_.get())) {
      return Error{sys_error("client: O_NONBLOCK")};
    }
    return {};
  }

  PollMode io_mode() const noexcept {
    // A paced blocking client has a non-blocking socket; it must spin on a
    // partial send rather than fail on EAGAIN.
    return (v_.poll == PollMode::kBusy || v_.load == LoadMode::kPaced) ? PollMode::kBusy : PollMode::kBlocking;
  }

  /// One in flight: `calls` round trips starting at index `first`. Records
  /// into `rec` when given (measured), else warm-up.
  Expected<void> closed_loop(std::uint64_t calls, Recorder* rec, std::uint64_t first = 0, std::uint64_t t_start = 0,
                             std::uint64_t* t_last = nullptr) {
    const PollMode mode = io_mode();
    for (std::uint64_t k = 0; k < calls; ++k) {
      const std::uint64_t i = first + k;
      stamp(msg_, i);
      const std::uint64_t t0 = tsc_now();
      if (!send_all(fd_.get(), msg_.data(), msg_.size(), mode)) return Error{sys_error("client: send")};
      if (!recv_exact(fd_.get(), rx_.data(), rx_.size(), mode)) return Error{sys_error("client: recv")};
      const std::uint64_t t1 = tsc_now();
      if (rec != nullptr) {
        rec->record(static_cast<std::int64_t>(t1 - t0), static_cast<std::int64_t>(t0 - t_start));
        if (t_last != nullptr) *t_last = t1;
        if (echo_matches(msg_, i, 0, rx_.data(), rx_.size())) {
          ++verified_;
        } else {
          ++mismatches_;
        }
      }
      if ((i & 1023U) == 0) ctx_.report_progress(i);
    }
    return {};
  }

  Expected<void> closed_measured(RunResult& result) {
    const double hz = ctx_.tsc->hz();
    Recorder rec("rtt", cfg_.calls, 0, Unit::kTscTicks, hz, /*with_time=*/true);
    const std::uint64_t t_start = tsc_now();
    std::uint64_t t_last = t_start;
    if (auto e = closed_loop(cfg_.calls, &rec, cfg_.warmup, t_start, &t_last); !e) return e;
    ctx_.report_progress(cfg_.warmup + cfg_.calls);
    result.completed = rec.size();
    result.overflow = rec.overflow();
    result.wall_seconds = static_cast<double>(t_last - t_start) / hz;
    result.achieved_rate = result.wall_seconds > 0 ? static_cast<double>(result.completed) / result.wall_seconds : 0;
    result.window = 1;
    result.max_in_flight = 1;
    result.series.push_back(std::move(rec).take());
    return {};
  }

  Expected<void> paced_measured(RunResult& result) {
    const double hz = ctx_.tsc->hz();
    PacerSettings ps;
    ps.rate_per_s = cfg_.rate;
    ps.ticks_per_second = hz;
    ps.window = cfg_.window;
    Pacer pacer(cfg_.calls, ps, Unit::kTscTicks);
    const std::uint64_t base = cfg_.warmup;  // message indices continue after warm-up
    const std::size_t m = msg_.size();
    std::vector<char> buf(1 << 16);
    std::uint64_t rx_index = 0;    // measured call whose echo is being assembled
    std::size_t rx_offset = 0;     // bytes of it received so far
    const int fd = fd_.get();
    pollfd pfd{fd, POLLIN, 0};

    const auto t0 = static_cast<std::int64_t>(tsc_now());
    pacer.start(t0);
    while (!pacer.done()) {
      std::int64_t now = static_cast<std::int64_t>(tsc_now());
      if (pacer.due(now)) {
        stamp(msg_, base + pacer.next());
        const auto t_issue = static_cast<std::int64_t>(tsc_now());
        (void)pacer.issue(t_issue);
        if (!send_all(fd, msg_.data(), m, PollMode::kBusy)) return Error{sys_error("client: send")};
        continue;
      }
      if (v_.poll == PollMode::kBlocking) {
        // Sleep in the kernel until a reply or the next planned arrival.
        const std::int64_t wait = pacer.window_full() ? -1 : pacer.until_next(now);
        timespec ts{};
        timespec* tsp = nullptr;
        if (wait >= 0) {
          const auto ns = static_cast<std::int64_t>(static_cast<double>(wait) * 1e9 / hz);
          ts.tv_sec = ns / 1'000'000'000;
          ts.tv_nsec = ns % 1'000'000'000;
          tsp = &ts;
        }
        if (pacer.in_flight() == 0 && wait > 0) {
          // Nothing to receive: just wait for the schedule.
          ::ppoll(nullptr, 0, tsp, nullptr);
          continue;
        }
        const int r = ::ppoll(&pfd, 1, tsp, nullptr);
        if (r < 0 && errno != EINTR) return Error{sys_error("client: ppoll")};
        if (r <= 0) continue;
      }
      const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
      if (n > 0) {
        const auto t_done = static_cast<std::int64_t>(tsc_now());
        std::size_t pos = 0;
        const auto got = static_cast<std::size_t>(n);
        while (pos < got) {
          const std::size_t take = std::min(m - rx_offset, got - pos);
          if (!echo_matches(msg_, base + rx_index, rx_offset, buf.data() + pos, take)) ++mismatches_;
          rx_offset += take;
          pos += take;
          if (rx_offset == m) {
            pacer.complete(rx_index, t_done);
            ++verified_;
            ++rx_index;
            rx_offset = 0;
            if ((rx_index & 1023U) == 0) ctx_.report_progress(base + rx_index);
          }
        }
      } else if (n == 0) {
        return Error{"client: the echo server closed the connection"};
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return Error{sys_error("client: recv")};
      }
    }
    pacer.finish();
    ctx_.report_progress(cfg_.warmup + cfg_.calls);
    // verified_ counted messages; an echo with a wrong byte was also counted
    // in mismatches_, so the audit fails on either.
    if (pacer.errors() != 0) {
      return Error{"client: " + std::to_string(pacer.errors()) + " completions did not match an issued call"};
    }
    take_pacer_result(std::move(pacer), result);
    return {};
  }

  const LaneConfig& cfg_;
  RunContext& ctx_;
  Variant v_;
  std::uint16_t port_;
  std::string msg_;
  std::string rx_;
  Fd fd_;
  std::uint64_t verified_ = 0;
  std::uint64_t mismatches_ = 0;
};

}  // namespace

std::string floor_message(std::size_t size) {
  std::string msg;
  msg.reserve(size);
  while (msg.size() < size) msg.append(kReferenceOrder.substr(0, size - msg.size()));
  return msg;
}

Expected<RunResult> run_floor(const LaneConfig& cfg, RunContext& ctx) {
  const std::optional<Variant> v = parse_variant(cfg.variant);
  if (!v) return Error{"floor: unknown variant '" + cfg.variant + "'"};
  if (ctx.tsc == nullptr) return Error{"floor: no calibrated TSC clock in the run context"};
  if (cfg.message_size < 8) return Error{"floor: --message-size must be at least 8 bytes"};
  if (v->load == LoadMode::kPaced && !(cfg.rate > 0)) return Error{"floor: paced variant needs --rate > 0"};

  Fd listener(::socket(AF_INET, SOCK_STREAM, 0));
  if (listener.get() < 0) return Error{sys_error("floor: socket")};
  const int one = 1;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Error{sys_error("floor: bind 127.0.0.1")};
  }
  if (::listen(listener.get(), 1) != 0) return Error{sys_error("floor: listen")};
  socklen_t len = sizeof(addr);
  if (::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Error{sys_error("floor: getsockname")};
  }
  const std::uint16_t port = ntohs(addr.sin_port);

  ServerState server;
  std::thread server_thread(echo_server, listener.get(), v->poll, cfg.server_core, std::ref(server));
  while (server.phase.load() == 0) std::this_thread::yield();
  if (server.phase.load() == 2) {
    server_thread.join();
    return Error{"floor " + cfg.variant + ": " + server.error};
  }

  ClientOutcome outcome;
  std::thread client_thread([&] {
    FloorClient client(cfg, ctx, *v, port);
    outcome = client.run();
    client.close();  // lets the echo thread see EOF and finish
  });
  client_thread.join();
  // A client that failed before connecting leaves the echo thread in poll():
  // shutting the listener down wakes it at once.
  ::shutdown(listener.get(), SHUT_RDWR);
  server_thread.join();

  if (outcome.error) return Error{"floor " + cfg.variant + ": " + outcome.error->message};
  if (!server.error.empty()) return Error{"floor " + cfg.variant + ": " + server.error};
  RunResult result = std::move(outcome.result);
  result.threads.push_back(server.placement);
  result.notes.emplace_back("server bytes echoed", std::to_string(server.bytes));
  result.notes.emplace_back("port", std::to_string(port));
  return result;
}

Lane make_floor_lane() {
  Lane lane;
  lane.name = "floor";
  lane.summary = "raw loopback TCP round trip of a reference-order-sized message, no engine";
  lane.available = true;
  lane.variants = {"busy-closed", "blocking-closed", "busy-paced", "blocking-paced"};
  lane.default_variants = lane.variants;
  lane.run = run_floor;
  return lane;
}

}  // namespace hft::lab
