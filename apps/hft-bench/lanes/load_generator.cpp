#include "load_generator.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "hft/core/clock.hpp"
#include "lane_support.hpp"

namespace hft::lab::lanes {

namespace tag = codec::tag;

LoadConn::~LoadConn() {
  if (fd >= 0) ::close(fd);
}

LoadGenerator::LoadGenerator(const LoadGeneratorOptions& options) : opt_(options) {}

LoadGenerator::~LoadGenerator() {
  conns_.clear();
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

Expected<void> LoadGenerator::connect(std::uint16_t port, const std::vector<std::string>& comp_ids) {
  const std::string subs =
      "50=" + std::string(ref::kSenderSub) + "\x01" "57=" + std::string(ref::kTargetSub) + "\x01";
  if (opt_.use_epoll && epoll_fd_ < 0) {
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) return Error{std::string("epoll_create1: ") + std::strerror(errno)};
  }
  conns_.reserve(conns_.size() + comp_ids.size());
  backlog_.reserve(conns_.capacity());
  for (const std::string& comp : comp_ids) {
    auto c = std::make_unique<LoadConn>();
    c->comp_id = comp;
    c->rx.resize(opt_.rx_buffer);
    if (!c->header.init(ref::kBeginString, c->comp_id, ref::kTarget, subs)) {
      return Error{"header template for " + c->comp_id};
    }
    c->fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0) return Error{std::string("socket: ") + std::strerror(errno)};
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(c->fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
      return Error{c->comp_id + ": connect to the venue (127.0.0.1:" + std::to_string(port) +
                   "): " + std::strerror(errno)};
    }
    const int one = 1;
    ::setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ::fcntl(c->fd, F_SETFL, ::fcntl(c->fd, F_GETFL, 0) | O_NONBLOCK);
    if (opt_.use_epoll) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = c.get();
      if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
        return Error{std::string("epoll_ctl: ") + std::strerror(errno)};
      }
    }
    conns_.push_back(std::move(c));
  }
  return {};
}

Expected<void> LoadGenerator::logon_all(double timeout_s) {
  for (auto& c : conns_) {
    c->quota = c->sent = c->acked = 0;
    codec::MessageWriter w(scratch());
    w.start(c->header, "A", c->seq++, core::realtime_ns(), codec::TimePrecision::kMillis, fmt_);
    w.add_int(98, 0);
    w.add_int(108, 30);
    w.add_char(141, 'Y');
    w.add(1137, "9");
    if (auto e = queue(*c, w); !e) return e;
  }
  quota_per_conn_ = true;
  ticks_per_order_ = 0;
  spec_ = PhaseSpec{};
  return pump_until([&] {
    for (auto& c : conns_) {
      if (!c->logged_on) return false;
    }
    return true;
  }, "the Logon answers", timeout_s);
}

Expected<void> LoadGenerator::logout_all(double timeout_s) {
  quota_per_conn_ = true;
  ticks_per_order_ = 0;
  spec_ = PhaseSpec{};
  for (auto& c : conns_) {
    c->quota = c->sent = c->acked = 0;
    codec::MessageWriter w(scratch());
    w.start(c->header, "5", c->seq++, core::realtime_ns(), codec::TimePrecision::kMillis, fmt_);
    if (auto e = queue(*c, w); !e) return e;
  }
  return pump_until([&] {
    for (auto& c : conns_) {
      if (!c->logged_out && !c->closed) return false;
    }
    return true;
  }, "the Logout answers", timeout_s);
}

void LoadGenerator::record_rtt(std::uint64_t first, std::uint64_t capacity) {
  record_first_ = first;
  sent_tsc_.assign(capacity, 0);
  rtt_.assign(capacity, -1);
}

std::uint64_t LoadGenerator::unmatched(std::uint64_t count) const noexcept {
  count = std::min<std::uint64_t>(count, rtt_.size());
  return static_cast<std::uint64_t>(std::count(rtt_.begin(), rtt_.begin() + static_cast<std::ptrdiff_t>(count), -1));
}

Series LoadGenerator::rtt_series(std::string name, std::uint64_t count, std::uint64_t origin) {
  Series s;
  s.name = std::move(name);
  s.unit = Unit::kTscTicks;
  s.ticks_per_second = opt_.hz;
  rtt_.resize(std::min<std::uint64_t>(count, rtt_.size()));
  if (origin != 0) {
    s.time.resize(rtt_.size());
    for (std::size_t k = 0; k < rtt_.size() && k < sent_tsc_.size(); ++k) {
      s.time[k] = static_cast<std::int64_t>(sent_tsc_[k] - origin);
    }
  }
  s.values = std::move(rtt_);
  rtt_.clear();
  sent_tsc_.clear();
  return s;
}

Expected<PhaseStats> LoadGenerator::phase(const PhaseSpec& spec) {
  spec_ = spec;
  stats_ = PhaseStats{};
  phase_sent_ = phase_acked_ = 0;
  phase_limit_ = spec.orders;
  rr_ = 0;
  const std::uint64_t n = conns_.size();
  quota_per_conn_ = spec.rate <= 0;
  ticks_per_order_ = spec.rate > 0 ? opt_.hz / spec.rate : 0;
  if (spec_.t0 == 0) spec_.t0 = tsc_now();
  for (std::uint64_t k = 0; k < n; ++k) {
    LoadConn& c = *conns_[k];
    c.quota = quota_per_conn_ ? spec.orders / n + (k < spec.orders % n ? 1 : 0) : 0;
    c.sent = c.acked = 0;
  }
  if (opt_.use_epoll && quota_per_conn_) {
    // Every window opens here; afterwards a connection is topped up to its
    // window when its reports arrive.
    for (auto& c : conns_) {
      if (auto e = fill_window(*c); !e) return e.error();
    }
  }
  auto done = pump_until([&] { return phase_acked_ == spec.orders; }, "the ExecutionReports", spec.timeout_s);
  if (!done) return done.error();
  return stats_;
}

void LoadGenerator::start_open_phase(std::uint64_t limit) {
  spec_ = PhaseSpec{};
  stats_ = PhaseStats{};
  phase_sent_ = phase_acked_ = 0;
  phase_limit_ = limit;
  quota_per_conn_ = false;
  ticks_per_order_ = 0;
  for (auto& c : conns_) c->sent = c->acked = 0;
}

Expected<void> LoadGenerator::step() { return pump_once(); }

Expected<void> LoadGenerator::finish(double timeout_s) {
  return pump_until([&] { return phase_acked_ == phase_sent_; }, "the last ExecutionReport", timeout_s);
}

Expected<void> LoadGenerator::queue(LoadConn& c, codec::MessageWriter& w) {
  const auto r = w.finish();
  if (!r.ok()) return Error{"encoding a message for " + c.comp_id + " failed"};
  if (c.tx.size() - c.tx_end < r.message.size()) return Error{"send buffer of " + c.comp_id + " full"};
  std::memcpy(c.tx.data() + c.tx_end, r.message.data(), r.message.size());
  c.tx_end += r.message.size();
  if (opt_.use_epoll && !c.in_backlog) {
    c.in_backlog = true;
    backlog_.push_back(&c);
  }
  return {};
}

// Writes what is pending on c without blocking; with epoll, a connection
// the socket did not take everything from waits in the backlog.
Expected<void> LoadGenerator::flush(LoadConn& c) {
  if (c.stamp_count != 0 && c.tx_begin < c.tx_end) {
    const std::uint64_t t = tsc_now();
    for (std::uint64_t k = 0; k < c.stamp_count; ++k) {
      const std::uint64_t slot = c.stamp_first + k - record_first_;
      if (c.stamp_first + k >= record_first_ && slot < sent_tsc_.size()) sent_tsc_[slot] = t;
    }
    c.stamp_count = 0;
  }
  while (c.tx_begin < c.tx_end) {
    const ssize_t k = ::send(c.fd, c.tx.data() + c.tx_begin, c.tx_end - c.tx_begin, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      c.tx_begin += static_cast<std::size_t>(k);
      stats_.bytes_sent += static_cast<std::uint64_t>(k);
    } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (opt_.use_epoll && !c.in_backlog) {
        c.in_backlog = true;
        backlog_.push_back(&c);
      }
      return {};
    } else {
      return Error{c.comp_id + ": send: " + std::strerror(errno)};
    }
  }
  c.tx_begin = c.tx_end = 0;
  return {};
}

Expected<void> LoadGenerator::fill_window(LoadConn& c) {
  // Batches of up to kLoadBatch orders, one send() each, until the window
  // is full (as the scanning pump does over its passes): one batch per
  // wake-up kept a 64-order window at 16 in flight.
  for (;;) {
    const std::uint64_t before = c.sent;
    fill_orders(c, std::numeric_limits<std::uint64_t>::max());
    if (c.sent == before) return {};
    // A socket that takes no more leaves tx_end set: the next fill_orders
    // adds nothing, and the backlog sends the rest.
    if (auto e = flush(c); !e) return e;
  }
}

void LoadGenerator::fill_orders(LoadConn& c, std::uint64_t limit) {
  if (c.tx_end != 0) return;
  std::uint64_t room = 0;
  if (quota_per_conn_) {
    if (c.sent >= c.quota) return;
    room = c.quota - c.sent;
  } else {
    if (phase_sent_ >= phase_limit_) return;
    room = phase_limit_ - phase_sent_;
  }
  const std::uint64_t window = opt_.window;
  const std::uint64_t unanswered = c.sent - c.acked;
  if (unanswered >= window) return;
  std::uint64_t n = std::min<std::uint64_t>({kLoadBatch, room, window - unanswered, limit});
  if (n == 0) return;
  const std::int64_t now_ns = core::realtime_ns();
  const std::uint64_t t = tsc_now();
  if (stats_.first_send == 0) stats_.first_send = t;
  if (opt_.stamp_at_send) {
    c.stamp_first = next_index_;
    c.stamp_count = n;
  }
  for (; n > 0; --n) {
    const std::uint64_t index = next_index_++;
    codec::MessageWriter w(scratch());
    w.start(c.header, "D", c.seq++, now_ns, codec::TimePrecision::kMillis, fmt_);
    ref::write_order_body(w, index * opt_.id_stride + opt_.id_offset, now_ns, fmt_);
    const auto r = w.finish();
    std::memcpy(c.tx.data() + c.tx_end, r.message.data(), r.message.size());
    c.tx_end += r.message.size();
    if (!opt_.stamp_at_send && index >= record_first_ && index - record_first_ < sent_tsc_.size()) {
      sent_tsc_[index - record_first_] = t;
    }
    if (ticks_per_order_ > 0) {
      // Planned arrival of the phase's order phase_sent_: t0 + i / rate.
      const double planned = static_cast<double>(spec_.t0) + static_cast<double>(phase_sent_) * ticks_per_order_;
      if (static_cast<double>(t) - planned >= ticks_per_order_) ++stats_.late;
    }
    ++c.sent;
    ++c.orders_total;
    ++phase_sent_;
  }
  ++stats_.batches;
  stats_.max_in_flight = std::max(stats_.max_in_flight, c.sent - c.acked);
}

Expected<void> LoadGenerator::on_message(LoadConn& c, std::string_view msg, std::uint64_t now) {
  if (view_.parse(msg) != codec::ParseStatus::kOk) return Error{c.comp_id + ": unparsable message from the venue"};
  const std::string_view type = view_.msg_type();
  if (type == "8") {
    std::uint64_t id = 0;
    if (!view_.get_uint(tag::kClOrdID, id)) return Error{c.comp_id + ": ExecutionReport without ClOrdID"};
    ++c.acked;
    ++phase_acked_;
    stats_.last_ack = now;
    if (id >= opt_.id_offset && (id - opt_.id_offset) % opt_.id_stride == 0) {
      const std::uint64_t index = (id - opt_.id_offset) / opt_.id_stride;
      if (index >= record_first_ && index - record_first_ < rtt_.size()) {
        rtt_[index - record_first_] = static_cast<std::int64_t>(now - sent_tsc_[index - record_first_]);
      }
    }
    if (spec_.measured && spec_.shared != nullptr) {
      const std::uint64_t k = spec_.shared->acked.fetch_add(1, std::memory_order_relaxed) + 1;
      if (k % kLoadBlock == 0 && k / kLoadBlock - 1 < spec_.shared->boundary.size()) {
        spec_.shared->boundary[k / kLoadBlock - 1] = now;
      }
      if ((k & 1023U) == 0 && spec_.ctx != nullptr) spec_.ctx->report_progress(spec_.progress_base + k);
    }
  } else if (type == "A") {
    c.logged_on = true;
  } else if (type == "5") {
    c.logged_out = true;
  } else if (type == "3" || type == "j") {
    return Error{c.comp_id + ": the venue rejected a message: " + std::string(view_.get(58))};
  }
  return {};
}

Expected<void> LoadGenerator::receive(LoadConn& c) {
  if (c.closed) return {};
  const ssize_t k = ::recv(c.fd, c.rx.data() + c.rx_len, c.rx.size() - c.rx_len, MSG_DONTWAIT);
  if (k == 0) {
    c.closed = true;
    if (opt_.use_epoll) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
    if (!c.logged_out) return Error{c.comp_id + ": the venue closed the connection"};
    return {};
  }
  if (k < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return {};
    return Error{c.comp_id + ": recv: " + std::strerror(errno)};
  }
  c.rx_len += static_cast<std::size_t>(k);
  stats_.bytes_received += static_cast<std::uint64_t>(k);
  const std::uint64_t now = tsc_now();
  std::size_t pos = 0;
  for (;;) {
    const codec::FrameResult fr = codec::frame({c.rx.data() + pos, c.rx_len - pos});
    if (fr.status == codec::FrameStatus::kNeedMore) break;
    if (fr.status == codec::FrameStatus::kGarbled) return Error{c.comp_id + ": garbled bytes from the venue"};
    if (auto e = on_message(c, {c.rx.data() + pos, fr.size}, now); !e) return e;
    pos += fr.size;
  }
  std::memmove(c.rx.data(), c.rx.data() + pos, c.rx_len - pos);
  c.rx_len -= pos;
  return {};
}

Expected<void> LoadGenerator::dispatch_paced(std::uint64_t now) {
  const std::size_t n = conns_.size();
  std::size_t idle = 0;
  // Orders go out in chunks of up to kLoadBatch consecutive orders to one
  // connection, in one send(), when the chunk's first order is due (its
  // later orders go early by less than a chunk's period; none is held back
  // late by the batching). Round robin over the connections; one that
  // cannot take an order (window full, last batch still pending) is passed
  // over, so the order waits (and is counted late) rather than dropped.
  while (phase_sent_ < phase_limit_ && idle < n) {
    const double first_planned = static_cast<double>(spec_.t0) + static_cast<double>(phase_sent_) * ticks_per_order_;
    if (static_cast<double>(now) < first_planned) break;
    LoadConn& c = *conns_[rr_];
    rr_ = rr_ + 1 == n ? 0 : rr_ + 1;
    const std::uint64_t before = phase_sent_;
    fill_orders(c, std::min<std::uint64_t>(kLoadBatch, phase_limit_ - phase_sent_));
    if (phase_sent_ == before) {
      ++idle;
      continue;
    }
    idle = 0;
    if (auto e = flush(c); !e) return e;
    now = tsc_now();
  }
  return {};
}

Expected<void> LoadGenerator::pump_once() {
  const bool paced = ticks_per_order_ > 0;
  if (paced) {
    if (auto e = dispatch_paced(tsc_now()); !e) return e;
  }
  if (!opt_.use_epoll) {
    for (auto& c : conns_) {
      if (!paced) fill_orders(*c, std::numeric_limits<std::uint64_t>::max());
      if (auto e = flush(*c); !e) return e;
      if (auto e = receive(*c); !e) return e;
    }
  } else {
    for (std::size_t k = 0; k < backlog_.size();) {
      LoadConn& c = *backlog_[k];
      if (auto e = flush(c); !e) return e;
      if (c.tx_begin == c.tx_end) {
        c.in_backlog = false;
        backlog_[k] = backlog_.back();
        backlog_.pop_back();
      } else {
        ++k;
      }
    }
    epoll_event events[64];
    const bool backlog_empty = backlog_.empty();
    const int ready = ::epoll_wait(epoll_fd_, events, 64, 0);
    if (ready < 0 && errno != EINTR) return Error{std::string("epoll_wait: ") + std::strerror(errno)};
    ++stats_.pumps;
    if (ready <= 0 && backlog_empty) ++stats_.idle_pumps;
    for (int k = 0; k < ready; ++k) {
      LoadConn& c = *static_cast<LoadConn*>(events[k].data.ptr);
      if (auto e = receive(c); !e) return e;
      if (!paced) {
        if (auto e = fill_window(c); !e) return e;
      }
      // The hook (the probe) also between every 8 ready connections: a
      // pass over 64 of them takes 100 us or more.
      if ((k & 7) == 7 && k + 1 < ready && spec_.hook != nullptr) {
        if (auto e = spec_.hook->on_pump(); !e) return e;
      }
    }
  }
  if (spec_.hook != nullptr) {
    if (auto e = spec_.hook->on_pump(); !e) return e;
  }
  return {};
}

template <typename Done>
Expected<void> LoadGenerator::pump_until(Done done, const char* what, double timeout_s) {
  std::uint64_t last_progress = tsc_now();
  std::uint64_t progress_mark = 0;
  std::uint64_t spins = 0;
  while (!done()) {
    if (auto e = pump_once(); !e) {
      if (spec_.shared != nullptr) spec_.shared->abort.store(true, std::memory_order_relaxed);
      return e;
    }
    if ((++spins & 1023U) == 0) {
      if (spec_.shared != nullptr && spec_.shared->abort.load(std::memory_order_relaxed)) {
        return Error{std::string("stopped waiting for ") + what + ": another load thread failed"};
      }
      const std::uint64_t now = tsc_now();
      const std::uint64_t mark = phase_acked_ + next_index_;
      if (mark != progress_mark) {
        progress_mark = mark;
        last_progress = now;
      } else if (static_cast<double>(now - last_progress) / opt_.hz > timeout_s) {
        if (spec_.shared != nullptr) spec_.shared->abort.store(true, std::memory_order_relaxed);
        return Error{std::string("no progress for ") + std::to_string(static_cast<int>(timeout_s)) +
                     " s waiting for " + what + " (" + std::to_string(phase_acked_) + " of " +
                     std::to_string(quota_per_conn_ ? spec_.orders : phase_sent_) + " answered)"};
      }
    }
  }
  return {};
}

void block_series(const PhaseShared& shared, Series& s) {
  s.values.clear();
  s.time.clear();
  s.values.reserve(shared.boundary.size());
  s.time.reserve(shared.boundary.size());
  std::uint64_t start = shared.t_start;
  for (const std::uint64_t b : shared.boundary) {
    s.values.push_back(static_cast<std::int64_t>((b - start) / kLoadBlock));
    s.time.push_back(static_cast<std::int64_t>(start - shared.t_start));
    start = b;
  }
}

std::string rate_by_tenths(const PhaseShared& shared, double hz) {
  const std::size_t blocks = shared.boundary.size();
  if (blocks < 10 || hz <= 0) return {};
  // Rate over blocks [from, to): their answers over the time from the end
  // of block from - 1 (the phase start for 0) to the end of block to - 1.
  const auto rate = [&](std::size_t from, std::size_t to) {
    const std::uint64_t t0 = from == 0 ? shared.t_start : shared.boundary[from - 1];
    const std::uint64_t t1 = shared.boundary[to - 1];
    if (t1 <= t0) return 0.0;
    return static_cast<double>((to - from) * kLoadBlock) / (static_cast<double>(t1 - t0) / hz);
  };
  std::string out = "answered orders/s by tenth of the measured orders:";
  char part[48];
  for (std::size_t t = 0; t < 10; ++t) {
    std::snprintf(part, sizeof part, " %.0f", rate(blocks * t / 10, blocks * (t + 1) / 10));
    out += part;
  }
  std::snprintf(part, sizeof part, "; first half %.0f,", rate(0, blocks / 2));
  out += part;
  std::snprintf(part, sizeof part, " second half %.0f", rate(blocks / 2, blocks));
  out += part;
  return out;
}

std::vector<RxFigure>& rx_figures() {
  static std::vector<RxFigure> figures;
  return figures;
}

}  // namespace hft::lab::lanes
