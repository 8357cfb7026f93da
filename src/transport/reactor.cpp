#include "hft/transport/reactor.hpp"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>

#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"

namespace hft::transport {

namespace {
std::string errno_text(int error) {
  return std::strerror(error);
}
}  // namespace

std::optional<PollMode> parse_poll_mode(std::string_view name) noexcept {
  if (name == "busy") return PollMode::kBusy;
  if (name == "epoll") return PollMode::kEpoll;
  return std::nullopt;
}

std::string_view to_string(PollMode mode) noexcept {
  switch (mode) {
    case PollMode::kBusy:
      return "busy";
    case PollMode::kEpoll:
      return "epoll";
  }
  return "?";
}

Reactor::Reactor(const ReactorOptions& options) : options_(options) {}

Expected<std::unique_ptr<Reactor>> Reactor::create(const ReactorOptions& options) {
  if (options.max_connections == 0 || options.max_connections > (1u << 20)) {
    return Error{"reactor: max_connections must be in 1..1048576"};
  }
  if (options.max_events == 0) return Error{"reactor: max_events must be at least 1"};
  if (options.epoll_timeout_ms < 0) return Error{"reactor: epoll_timeout_ms must be >= 0"};
  if (options.service_interval_ns <= 0) return Error{"reactor: service_interval_ns must be > 0"};
  std::unique_ptr<Reactor> reactor(new Reactor(options));
  reactor->epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (reactor->epoll_fd_ < 0) return Error{"reactor: epoll_create1: " + errno_text(errno)};
  reactor->wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (reactor->wake_fd_ < 0) return Error{"reactor: eventfd: " + errno_text(errno)};
  if (!reactor->epoll_add(reactor->wake_fd_, EPOLLIN, tag(Kind::kWakeup, 0))) {
    return Error{"reactor: epoll_ctl: " + errno_text(errno)};
  }
  const auto n = static_cast<std::uint32_t>(options.max_connections);
  reactor->slots_.reserve(n);
  reactor->free_slots_.reserve(n);
  reactor->open_.reserve(n);
  reactor->closing_.reserve(n);
  reactor->draining_.reserve(n);
  reactor->handshaking_.reserve(n);
  reactor->pending_reads_.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    reactor->slots_.emplace_back(new Connection(*reactor, i));
    reactor->free_slots_.push_back(n - 1 - i);  // lowest slot first
  }
  reactor->events_.resize(options.max_events);
  return reactor;
}

Reactor::~Reactor() {
  stop();
  for (const std::uint32_t slot : open_) {
    Connection& c = *slots_[slot];
    if (c.state_ == Connection::State::kHandshaking) {  // never delivered: nothing to tell
      c.free_tls();
      ::close(c.fd_);
      c.fd_ = -1;
      continue;
    }
    if (c.state_ != Connection::State::kOpen && c.state_ != Connection::State::kDraining) continue;
    ::close(c.fd_);
    c.fd_ = -1;
    // A drain cut short by the shutdown: what it had not delivered is lost.
    c.close_reason_ =
        c.state_ == Connection::State::kDraining ? CloseReason::kDrainTimeout : CloseReason::kShutdown;
    c.state_ = Connection::State::kClosing;
    closing_.push_back(slot);
  }
  for (std::size_t i = 0; i < closing_.size(); ++i) {
    Connection& c = *slots_[closing_[i]];
    if (c.handler_ != nullptr) c.handler_->on_closed(c, c.close_reason_, c.close_error_);
  }
  closing_.clear();
  connectors_.clear();
  listeners_.clear();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

Expected<Connector*> Reactor::add_connector(ConnectorOptions options, ConnectionHandler& handler) {
  if (options.endpoints.empty()) return Error{"connector: no endpoint"};
  if (options.reconnect_interval_ns < 0 || options.connect_timeout_ns <= 0) {
    return Error{"connector: reconnect interval must be >= 0 and connect timeout > 0"};
  }
  std::vector<SocketAddress> addresses;
  addresses.reserve(options.endpoints.size());
  for (const Endpoint& endpoint : options.endpoints) {
    auto address = resolve(endpoint);
    if (!address) return address.error();
    addresses.push_back(*address);
  }
  const bool enabled = options.enabled;
  const auto index = static_cast<std::uint32_t>(connectors_.size());
  connectors_.emplace_back(new Connector(*this, index, std::move(options), std::move(addresses), handler));
  Connector* connector = connectors_.back().get();
  if (enabled) connector->enable();
  return connector;
}

Expected<Listener*> Reactor::add_listener(ListenerOptions options, ConnectionHandler& handler) {
  const std::string where = Endpoint{options.host, options.port}.to_string();
  auto address = resolve(Endpoint{options.host, options.port});
  if (!address) return address.error();
  const int fd = ::socket(address->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error{"listen " + where + ": socket: " + errno_text(errno)};
  const int one = 1;
  auto fail = [&](const char* step) {
    const int error = errno;
    ::close(fd);
    return Error{"listen " + where + ": " + step + ": " + errno_text(error)};
  };
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) return fail("SO_REUSEADDR");
  // Accepted sockets inherit the buffer sizes; they must be set before
  // listen() for the window scale of the handshake to match.
  if (options.socket.receive_buffer_size > 0 &&
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &options.socket.receive_buffer_size, sizeof(int)) != 0) {
    return fail("SO_RCVBUF");
  }
  if (options.socket.send_buffer_size > 0 &&
      ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &options.socket.send_buffer_size, sizeof(int)) != 0) {
    return fail("SO_SNDBUF");
  }
  if (::bind(fd, reinterpret_cast<const sockaddr*>(address->storage), address->length) != 0)
    return fail("bind");
  if (::listen(fd, options.backlog) != 0) return fail("listen");
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return fail("getsockname");
  const std::uint16_t port = bound.ss_family == AF_INET6
                                 ? ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port)
                                 : ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  const auto index = static_cast<std::uint32_t>(listeners_.size());
  if (!epoll_add(fd, EPOLLIN, tag(Kind::kListener, index))) return fail("epoll_ctl");
  listeners_.emplace_back(new Listener(*this, fd, port, std::move(options), handler));
  return listeners_.back().get();
}

void Reactor::set_tick_handler(TickHandler* handler, std::int64_t interval_ns) noexcept {
  tick_handler_ = handler;
  tick_interval_ns_ = interval_ns > 0 ? interval_ns : 1'000'000;
  next_tick_ns_ = core::monotonic_ns() + tick_interval_ns_;
  timer_changed(next_tick_ns_);
}

Connection* Reactor::find(std::uint32_t slot, std::uint32_t generation) const noexcept {
  if (slot >= slots_.size()) return nullptr;
  Connection* c = slots_[slot].get();
  return c->state_ == Connection::State::kOpen && c->generation_ == generation ? c : nullptr;
}

Connection* Reactor::adopt(int fd, const ConnectionBuffers& buffers, const SocketOptions& socket,
                           OptionError option_error, ConnectionHandler* handler, Connector* connector,
                           Listener* listener, const TlsContext* tls, std::int64_t now_ns) noexcept {
  if (free_slots_.empty()) return nullptr;
  const std::uint32_t slot = free_slots_.back();
  Connection& c = *slots_[slot];
  // Buffer allocation happens here, at connection set-up, not per message;
  // running out of memory at set-up refuses the connection.
  try {
    c.open(fd, buffers, socket.tcp_quickack, option_error);
  } catch (...) {
    c.reset();
    return nullptr;
  }
  if (options_.poll_mode == PollMode::kEpoll && !epoll_add(fd, EPOLLIN, tag(Kind::kConnection, slot))) {
    c.reset();
    return nullptr;
  }
  if (tls != nullptr && !c.start_tls(*tls, now_ns)) {
    if (options_.poll_mode == PollMode::kEpoll) epoll_del(fd);
    c.reset();
    return nullptr;
  }
  free_slots_.pop_back();
  c.handler_ = handler;
  c.connector_ = connector;
  c.listener_ = listener;
  open_.push_back(slot);
  if (tls != nullptr) {
    handshaking_.push_back(slot);  // capacity max_connections: never reallocates
    timer_changed(c.handshake_deadline_ns_);
    (void)step_handshake(c, now_ns);  // a client's hello leaves now
  }
  return &c;
}

int Reactor::step_handshake(Connection& c, std::int64_t now_ns) noexcept {
  const int step = c.handshake_step(now_ns);
  if (step == 0) return 0;
  forget_handshake(c.slot_);
  if (step < 0) {
    ++stats_.tls_handshake_failures;
    c.mark_closing(CloseReason::kError, EPROTO);  // handshake_failed_: recycled without on_closed
    return 1;
  }
  ++stats_.tls_handshakes;
  if (c.connector_ != nullptr) {
    c.connector_->established(c);
  } else if (c.listener_ != nullptr) {
    c.listener_->established(c);
  }
  if (c.state_ == Connection::State::kOpen && c.read_pending_) schedule_pending_read(c);
  return 1;
}

void Reactor::forget_handshake(std::uint32_t slot) noexcept {
  const auto it = std::find(handshaking_.begin(), handshaking_.end(), slot);
  if (it == handshaking_.end()) return;
  *it = handshaking_.back();
  handshaking_.pop_back();
}

int Reactor::service_handshakes(std::int64_t now_ns) noexcept {
  int work = 0;
  // Busy mode steps every handshake each pass (its sockets are not in
  // epoll); epoll mode only looks for deadlines here, events drive the rest.
  for (std::size_t i = 0; i < handshaking_.size();) {
    Connection& c = *slots_[handshaking_[i]];
    const std::size_t before = handshaking_.size();
    if (options_.poll_mode == PollMode::kBusy || now_ns >= c.handshake_deadline_ns_) {
      work += step_handshake(c, now_ns);
    }
    if (handshaking_.size() == before) ++i;  // still in progress; else slot i holds another
  }
  return work;
}

void Reactor::schedule_pending_read(Connection& connection) noexcept {
  if (std::find(pending_reads_.begin(), pending_reads_.end(), connection.slot_) != pending_reads_.end()) return;
  pending_reads_.push_back(connection.slot_);  // capacity max_connections: never reallocates
}

int Reactor::service_pending_reads() noexcept {
  int work = 0;
  // A read may schedule its connection again (still more held): those wait
  // for the next pass, so one connection cannot hold the loop.
  const std::size_t count = pending_reads_.size();
  for (std::size_t i = 0; i < count; ++i) {
    Connection& c = *slots_[pending_reads_[i]];
    pending_reads_[i] = UINT32_MAX;  // so that the read below may schedule it again
    c.read_pending_ = c.read_pending_ && c.state_ == Connection::State::kOpen;
    if (c.read_pending_) work += c.read_once();
  }
  pending_reads_.erase(pending_reads_.begin(), pending_reads_.begin() + static_cast<std::ptrdiff_t>(count));
  return work;
}

void Reactor::schedule_close(Connection& connection) noexcept {
  closing_.push_back(connection.slot_);  // capacity max_connections: never reallocates
}

void Reactor::schedule_drain(Connection& connection) noexcept {
  draining_.push_back(connection.slot_);  // capacity max_connections: never reallocates
}

int Reactor::service_drains(std::int64_t now_ns) noexcept {
  int work = 0;
  for (std::size_t i = 0; i < draining_.size();) {
    Connection& c = *slots_[draining_[i]];
    work += c.drain(now_ns);
    if (c.state_ == Connection::State::kDraining) {
      ++i;
    } else {
      draining_[i] = draining_.back();
      draining_.pop_back();
    }
  }
  return work;
}

void Reactor::timer_changed(std::int64_t deadline_ns) noexcept {
  if (deadline_ns < next_timer_ns_) next_timer_ns_ = deadline_ns;
}

bool Reactor::epoll_add(int fd, std::uint32_t events, std::uint64_t data) noexcept {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = data;
  return ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0;
}

bool Reactor::epoll_mod(int fd, std::uint32_t events, std::uint64_t data) noexcept {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = data;
  return ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void Reactor::epoll_del(int fd) noexcept {
  epoll_event ev{};
  (void)::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, &ev);
}

int Reactor::epoll_timeout(std::int64_t now_ns) const noexcept {
  if (!closing_.empty() || !pending_reads_.empty()) return 0;
  // Draining connections wait for acknowledgements, which raise no event:
  // look again within a millisecond.
  if (!draining_.empty() && options_.epoll_timeout_ms > 1) {
    const std::int64_t until = next_timer_ns_ - now_ns;
    return until <= 0 ? 0 : 1;
  }
  const std::int64_t until = next_timer_ns_ - now_ns;
  if (until <= 0) return 0;
  const std::int64_t ms = (until + 999'999) / 1'000'000;
  return ms < options_.epoll_timeout_ms ? static_cast<int>(ms) : options_.epoll_timeout_ms;
}

int Reactor::dispatch(int count, std::int64_t now_ns) noexcept {
  int work = 0;
  for (int i = 0; i < count; ++i) {
    const epoll_event& ev = events_[static_cast<std::size_t>(i)];
    const auto kind = static_cast<Kind>(ev.data.u64 >> 32);
    const auto index = static_cast<std::uint32_t>(ev.data.u64 & 0xffffffffu);
    switch (kind) {
      case Kind::kConnection: {
        Connection& c = *slots_[index];
        if (c.state_ == Connection::State::kDraining) {
          work += c.drain(now_ns);
          break;
        }
        if (c.state_ == Connection::State::kHandshaking) {
          work += step_handshake(c, now_ns);
          break;
        }
        // A callback earlier in this batch may have closed it.
        if (c.state_ != Connection::State::kOpen) break;
        if ((ev.events & EPOLLOUT) != 0 && c.send_end_ != c.send_begin_) {
          work += c.flush();
          if (c.state_ == Connection::State::kOpen && c.send_end_ == c.send_begin_) c.handler_->on_drained(c);
        } else if ((ev.events & EPOLLOUT) != 0 && c.ssl_ != nullptr) {
          // TLS asked for writability inside a read (a KeyUpdate answer).
          c.watch_writable(false);
          work += c.read_once();
        }
        if ((ev.events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0 && c.state_ == Connection::State::kOpen) {
          work += c.read_once();
        }
        break;
      }
      case Kind::kListener:
        if (index < listeners_.size()) work += listeners_[index]->on_readable();
        break;
      case Kind::kConnector:
        if (index < connectors_.size()) work += connectors_[index]->on_writable(now_ns);
        break;
      case Kind::kWakeup: {
        std::uint64_t value = 0;
        (void)!::read(wake_fd_, &value, sizeof(value));
        break;
      }
    }
  }
  return work;
}

int Reactor::service_timers(std::int64_t now_ns) noexcept {
  if (now_ns < next_timer_ns_) return 0;
  // Callbacks below that arm a timer lower next_timer_ns_ (timer_changed),
  // so start from "nothing due" and fold in what they set.
  next_timer_ns_ = INT64_MAX;
  int work = 0;
  std::int64_t next = INT64_MAX;
  // By index: a callback may add a connector (and reallocate the vector).
  for (std::size_t i = 0; i < connectors_.size(); ++i) {
    work += connectors_[i]->service(now_ns);
    next = std::min(next, connectors_[i]->deadline_ns());
  }
  if (tick_handler_ != nullptr) {
    if (now_ns >= next_tick_ns_) {
      ++stats_.ticks;
      ++work;
      // Late by more than an interval (a stalled loop): resynchronise rather
      // than firing a burst of catch-up ticks.
      next_tick_ns_ += tick_interval_ns_;
      if (next_tick_ns_ <= now_ns) next_tick_ns_ = now_ns + tick_interval_ns_;
      tick_handler_->on_tick(now_ns);
    }
    next = std::min(next, next_tick_ns_);
  }
  next_timer_ns_ = std::min(next, next_timer_ns_);
  return work;
}

int Reactor::deliver_closes(std::int64_t now_ns) noexcept {
  int work = 0;
  // on_closed() may close more connections: they are appended and handled
  // in this same loop.
  for (std::size_t i = 0; i < closing_.size(); ++i) {
    const std::uint32_t slot = closing_[i];
    Connection& c = *slots_[slot];
    ++work;
    if (c.handshake_failed_) {
      // Its handler never saw it: the failure goes to the connector (a
      // failed attempt) or the listener's handler.
      if (c.connector_ != nullptr) {
        c.connector_->handshake_failed(c, now_ns);
      } else if (c.listener_ != nullptr) {
        c.listener_->handshake_failed(c);
      }
    } else {
      ++stats_.closed;
      c.handler_->on_closed(c, c.close_reason_, c.close_error_);
      if (c.connector_ != nullptr) c.connector_->on_connection_closed(now_ns);
    }
    c.reset();
    const auto it = std::find(open_.begin(), open_.end(), slot);
    if (it != open_.end()) {
      *it = open_.back();
      open_.pop_back();
    }
    free_slots_.push_back(slot);
  }
  closing_.clear();
  return work;
}

int Reactor::do_work() noexcept {
  int work = 0;
  std::int64_t now = core::monotonic_ns();
  if (options_.poll_mode == PollMode::kEpoll) {
    const int n =
        ::epoll_wait(epoll_fd_, events_.data(), static_cast<int>(events_.size()), epoll_timeout(now));
    if (n > 0) {
      now = core::monotonic_ns();
      work += dispatch(n, now);
    }
  } else {
    // Index loop over a snapshot of the count: callbacks never add to
    // open_ here (accepts and connects complete in the service step).
    const std::size_t count = open_.size();
    for (std::size_t i = 0; i < count && i < open_.size(); ++i) {
      Connection& c = *slots_[open_[i]];
      if (c.state_ != Connection::State::kOpen) continue;
      if (c.send_end_ != c.send_begin_) {
        work += c.flush();
        if (c.state_ == Connection::State::kOpen && c.send_end_ == c.send_begin_) c.handler_->on_drained(c);
      }
      if (c.state_ == Connection::State::kOpen) work += c.read_once();
    }
    if (now >= next_service_ns_) {
      next_service_ns_ = now + options_.service_interval_ns;
      const int n = ::epoll_wait(epoll_fd_, events_.data(), static_cast<int>(events_.size()), 0);
      if (n > 0) work += dispatch(n, now);
    }
  }
  if (!pending_reads_.empty()) work += service_pending_reads();
  if (!handshaking_.empty()) work += service_handshakes(now);
  work += service_timers(now);
  if (!draining_.empty()) work += service_drains(now);
  if (!closing_.empty()) work += deliver_closes(now);
  return work;
}

bool Reactor::run() noexcept {
  if (!core::pin_current_thread(options_.cpu)) return false;
  core::IdleStrategy idle(options_.idle);
  while (!stop_.load(std::memory_order_relaxed)) idle.idle(do_work());
  return true;
}

Expected<void> Reactor::start() {
  if (thread_.joinable()) return Error{"reactor: already started"};
  stop_.store(false, std::memory_order_relaxed);
  std::promise<bool> pinned;
  auto pinned_result = pinned.get_future();
  thread_ = std::thread([this, pinned = std::move(pinned)]() mutable {
    core::name_current_thread(options_.thread_name);
    const bool ok = core::pin_current_thread(options_.cpu);
    pinned.set_value(ok);
    if (!ok) return;
    core::IdleStrategy idle(options_.idle);
    while (!stop_.load(std::memory_order_relaxed)) idle.idle(do_work());
  });
  if (!pinned_result.get()) {
    thread_.join();
    return Error{"reactor: cannot pin thread to CPU " + std::to_string(options_.cpu)};
  }
  return {};
}

void Reactor::request_stop() noexcept {
  stop_.store(true, std::memory_order_relaxed);
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
}

void Reactor::stop() noexcept {
  request_stop();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

}  // namespace hft::transport
