// The rx lane: acceptor throughput. N client connections (--clients,
// default 8; sessions CLIENT1..CLIENTN) stream reference NewOrderSingles
// into ONE hft-venue engine thread (pinned to --server-core), which frames,
// parses, validates against FIXT11 + FIX50SP2, journals the order, and
// answers with an ExecutionReport that it journals too.
//
// Variants (how the venue's engine thread waits):
//   busy   PollMode=busy: it spins on its sockets (the latency setting)
//   epoll  PollMode=epoll, IdleStrategy=backoff: it sleeps when idle, so its
//          CPU time is its work (the "acceptor CPU" note is then exact)
//
// The clients are a lean load generator on one pinned thread (not an
// engine: its cost must not be what is measured): pre-built header
// templates, orders encoded with the codec into per-connection buffers, up
// to 16 per send(), at most --window unanswered orders per connection, the
// reports framed and matched by ClOrdID. Warm-up orders (--warmup, spread
// over the connections) are sent and answered first.
//
// Measured over the --calls orders of the measured phase:
//   messages/s          orders answered / (last report - first send), the
//                       run's achieved rate
//   ns_per_message      series: for each block of 1,000 answered orders, the
//                       wall time of the block / 1,000 (TSC ticks) - the
//                       acceptor's cost per message while saturated
//   rtt_under_load      series: per order, its send() to its report
//   acceptor CPU        the venue engine thread's CPU time (schedstat) over
//                       the phase / orders: ns of acceptor CPU per message
// The audit checks each venue session's inbound journal holds exactly the
// orders its connection sent and its outbound journal as many reports.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "hft/codec/encoder.hpp"
#include "hft/codec/parser.hpp"
#include "hft/core/clock.hpp"
#include "hft/core/cpu.hpp"
#include "lane_support.hpp"

namespace hft::lab::lanes {
namespace {

namespace tag = codec::tag;

constexpr std::size_t kBatch = 16;
constexpr std::size_t kSlot = 512;
constexpr std::uint64_t kBlock = 1000;

struct Conn {
  int fd = -1;
  std::string comp_id;
  codec::HeaderTemplate header;
  std::uint64_t seq = 1;
  std::vector<char> tx = std::vector<char>(kBatch * kSlot * 2);
  std::size_t tx_begin = 0, tx_end = 0;
  std::vector<char> rx = std::vector<char>(1 << 20);
  std::size_t rx_len = 0;
  std::uint64_t quota = 0;  // orders to send in this phase
  std::uint64_t sent = 0;   // in this phase
  std::uint64_t acked = 0;  // in this phase
  std::uint64_t orders_total = 0;
  bool logged_on = false;
  bool logged_out = false;
  bool closed = false;

  ~Conn() {
    if (fd >= 0) ::close(fd);
  }
};

class RxClient {
 public:
  RxClient(const LaneConfig& cfg, RunContext& ctx, std::uint16_t port)
      : cfg_(cfg), ctx_(ctx), port_(port), hz_(ctx.tsc->hz()),
        sent_tsc_(cfg.warmup + cfg.calls), rtt_(cfg.calls, -1) {}

  Expected<void> connect_all(std::uint32_t n) {
    const std::string subs =
        "50=" + std::string(ref::kSenderSub) + "\x01" "57=" + std::string(ref::kTargetSub) + "\x01";
    for (std::uint32_t k = 0; k < n; ++k) {
      auto c = std::make_unique<Conn>();
      c->comp_id = "CLIENT" + std::to_string(k + 1);
      if (!c->header.init(ref::kBeginString, c->comp_id, ref::kTarget, subs)) {
        return Error{"header template for " + c->comp_id};
      }
      c->fd = ::socket(AF_INET, SOCK_STREAM, 0);
      if (c->fd < 0) return Error{std::string("socket: ") + std::strerror(errno)};
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(port_);
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(c->fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
        return Error{"connect to the venue (127.0.0.1:" + std::to_string(port_) + "): " + std::strerror(errno)};
      }
      const int one = 1;
      ::setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      ::fcntl(c->fd, F_SETFL, ::fcntl(c->fd, F_GETFL, 0) | O_NONBLOCK);
      conns_.push_back(std::move(c));
    }
    // Logon on every connection, then wait for every answer.
    for (auto& c : conns_) {
      codec::MessageWriter w(scratch());
      w.start(c->header, "A", c->seq++, core::realtime_ns(), codec::TimePrecision::kMillis, fmt_);
      w.add_int(98, 0);
      w.add_int(108, 30);
      w.add_char(141, 'Y');
      w.add(1137, "9");
      if (auto e = queue(*c, w); !e) return e;
    }
    return pump_until([&] {
      for (auto& c : conns_) {
        if (!c->logged_on) return false;
      }
      return true;
    }, "the Logon answers");
  }

  /// Sends `orders` orders spread over the connections and waits for every
  /// report. `measured`: record the series.
  Expected<void> phase(std::uint64_t orders, bool measured) {
    const std::uint64_t n = conns_.size();
    for (std::uint64_t k = 0; k < n; ++k) {
      Conn& c = *conns_[k];
      c.quota = orders / n + (k < orders % n ? 1 : 0);
      c.sent = c.acked = 0;
    }
    measured_ = measured;
    phase_acked_ = 0;
    phase_total_ = orders;
    const pid_t self = static_cast<pid_t>(::gettid());
    if (measured) {
      t_start_ = tsc_now();
      block_start_ = t_start_;
      cpu_start_ = venue_cpu_ != nullptr ? venue_cpu_() : 0;
      client_cpu_start_ = thread_cpu_ns(::getpid(), self);
    }
    auto done = pump_until([&] { return phase_acked_ == phase_total_; }, "the ExecutionReports");
    if (measured) {
      t_end_ = last_ack_;
      cpu_end_ = venue_cpu_ != nullptr ? venue_cpu_() : 0;
      client_cpu_end_ = thread_cpu_ns(::getpid(), self);
    }
    return done;
  }

  Expected<void> logout_all() {
    for (auto& c : conns_) {
      codec::MessageWriter w(scratch());
      w.start(c->header, "5", c->seq++, core::realtime_ns(), codec::TimePrecision::kMillis, fmt_);
      if (auto e = queue(*c, w); !e) return e;
    }
    return pump_until([&] {
      for (auto& c : conns_) {
        if (!c->logged_out && !c->closed) return false;
      }
      return true;
    }, "the Logout answers", 5.0);
  }

  std::function<std::uint64_t()> venue_cpu_;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::vector<std::int64_t> blocks_;
  std::vector<std::int64_t> block_time_;
  std::uint64_t t_start_ = 0, t_end_ = 0, cpu_start_ = 0, cpu_end_ = 0;
  std::uint64_t client_cpu_start_ = 0, client_cpu_end_ = 0;
  std::uint64_t batches_ = 0;

  /// Measured orders whose report never matched (must be 0).
  [[nodiscard]] std::uint64_t unmatched() const noexcept {
    return static_cast<std::uint64_t>(std::count(rtt_.begin(), rtt_.end(), -1));
  }

  Series rtt_series() {
    Series s;
    s.name = "rtt_under_load";
    s.unit = Unit::kTscTicks;
    s.ticks_per_second = hz_;
    s.values = std::move(rtt_);
    return s;
  }

 private:
  std::span<char> scratch() noexcept { return {scratch_, sizeof scratch_}; }

  Expected<void> queue(Conn& c, codec::MessageWriter& w) {
    const auto r = w.finish();
    if (!r.ok()) return Error{"encoding a message for " + c.comp_id + " failed"};
    if (c.tx.size() - c.tx_end < r.message.size()) return Error{"send buffer of " + c.comp_id + " full"};
    std::memcpy(c.tx.data() + c.tx_end, r.message.data(), r.message.size());
    c.tx_end += r.message.size();
    return {};
  }

  // Writes what is pending on c without blocking.
  Expected<void> flush(Conn& c) {
    while (c.tx_begin < c.tx_end) {
      const ssize_t k = ::send(c.fd, c.tx.data() + c.tx_begin, c.tx_end - c.tx_begin, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (k > 0) {
        c.tx_begin += static_cast<std::size_t>(k);
      } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        return {};
      } else {
        return Error{c.comp_id + ": send: " + std::strerror(errno)};
      }
    }
    c.tx_begin = c.tx_end = 0;
    return {};
  }

  void fill_orders(Conn& c) {
    if (c.tx_end != 0 || c.sent >= c.quota) return;
    const std::uint64_t window = cfg_.window;
    const std::uint64_t unanswered = c.sent - c.acked;
    if (unanswered >= window) return;
    std::uint64_t n = std::min<std::uint64_t>({kBatch, c.quota - c.sent, window - unanswered});
    const std::int64_t now_ns = core::realtime_ns();
    const std::uint64_t t = tsc_now();
    for (; n > 0; --n) {
      const std::uint64_t index = next_index_++;
      codec::MessageWriter w(scratch());
      w.start(c.header, "D", c.seq++, now_ns, codec::TimePrecision::kMillis, fmt_);
      ref::write_order_body(w, index, now_ns, fmt_);
      const auto r = w.finish();
      std::memcpy(c.tx.data() + c.tx_end, r.message.data(), r.message.size());
      c.tx_end += r.message.size();
      if (index < sent_tsc_.size()) sent_tsc_[index] = t;
      ++c.sent;
      ++c.orders_total;
    }
    ++batches_;
  }

  Expected<void> on_message(Conn& c, std::string_view msg, std::uint64_t now) {
    if (view_.parse(msg) != codec::ParseStatus::kOk) return Error{c.comp_id + ": unparsable message from the venue"};
    const std::string_view type = view_.msg_type();
    if (type == "8") {
      std::uint64_t index = 0;
      if (!view_.get_uint(tag::kClOrdID, index)) return Error{c.comp_id + ": ExecutionReport without ClOrdID"};
      ++c.acked;
      ++phase_acked_;
      last_ack_ = now;
      if (measured_) {
        if (index >= cfg_.warmup && index - cfg_.warmup < rtt_.size() && index < sent_tsc_.size()) {
          rtt_[index - cfg_.warmup] = static_cast<std::int64_t>(now - sent_tsc_[index]);
        }
        if (phase_acked_ % kBlock == 0) {
          blocks_.push_back(static_cast<std::int64_t>((now - block_start_) / kBlock));
          block_time_.push_back(static_cast<std::int64_t>(block_start_ - t_start_));
          block_start_ = now;
        }
        if ((phase_acked_ & 1023U) == 0) ctx_.report_progress(cfg_.warmup + phase_acked_);
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

  Expected<void> receive(Conn& c) {
    if (c.closed) return {};
    const ssize_t k = ::recv(c.fd, c.rx.data() + c.rx_len, c.rx.size() - c.rx_len, MSG_DONTWAIT);
    if (k == 0) {
      c.closed = true;
      if (!c.logged_out) return Error{c.comp_id + ": the venue closed the connection"};
      return {};
    }
    if (k < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return {};
      return Error{c.comp_id + ": recv: " + std::strerror(errno)};
    }
    c.rx_len += static_cast<std::size_t>(k);
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

  template <typename Done>
  Expected<void> pump_until(Done done, const char* what, double timeout_s = 30.0) {
    std::uint64_t last_progress = tsc_now();
    std::uint64_t progress_mark = 0;
    std::uint64_t spins = 0;
    while (!done()) {
      for (auto& c : conns_) {
        fill_orders(*c);
        if (auto e = flush(*c); !e) return e;
        if (auto e = receive(*c); !e) return e;
      }
      if ((++spins & 1023U) == 0) {
        const std::uint64_t now = tsc_now();
        const std::uint64_t mark = phase_acked_ + next_index_;
        if (mark != progress_mark) {
          progress_mark = mark;
          last_progress = now;
        } else if (static_cast<double>(now - last_progress) / hz_ > timeout_s) {
          return Error{std::string("no progress for ") + std::to_string(static_cast<int>(timeout_s)) +
                       " s waiting for " + what + " (" + std::to_string(phase_acked_) + " of " +
                       std::to_string(phase_total_) + " answered)"};
        }
      }
    }
    return {};
  }

  const LaneConfig& cfg_;
  RunContext& ctx_;
  std::uint16_t port_;
  double hz_;
  codec::TimestampFormatter fmt_;
  codec::MessageView view_;
  char scratch_[kSlot];
  std::vector<std::uint64_t> sent_tsc_;
  std::vector<std::int64_t> rtt_;
  std::uint64_t next_index_ = 0;
  bool measured_ = false;
  std::uint64_t phase_acked_ = 0, phase_total_ = 0;
  std::uint64_t block_start_ = 0, last_ack_ = 0;
};

struct Outcome {
  std::optional<Error> error;
  RunResult result;
};

void run_rx_thread(const LaneConfig& cfg, RunContext& ctx, Outcome& out) {
  core::name_current_thread("rx-clients");
  RunResult& result = out.result;
  ThreadPlacement place{"clients", cfg.client_core, -1, -1};
  if (!core::pin_current_thread(cfg.client_core)) {
    out.error = Error{"cannot pin the client thread to CPU " + std::to_string(cfg.client_core)};
    return;
  }
  place.cpu_at_start = core::current_cpu();
  const std::uint32_t n = std::max<std::uint32_t>(1, cfg.connections);

  std::unique_ptr<VenueProcess> venue;
  std::uint16_t port = cfg.venue_port;
  if (port == 0) {
    VenueSpec spec;
    spec.sessions.clear();
    for (std::uint32_t k = 0; k < n; ++k) spec.sessions.push_back({"CLIENT" + std::to_string(k + 1)});
    spec.busy_poll = cfg.variant != "epoll";
    spec.core = cfg.server_core;
    spec.segment_size = cfg.segment_size;
    spec.prealloc = cfg.prealloc;
    auto started = VenueProcess::start(spec, cfg.run_dir);
    if (!started) {
      out.error = Error{"venue: " + started.error().message};
      return;
    }
    venue = std::move(*started);
    port = venue->port();
    result.notes.emplace_back("venue", "hft-venue pid " + std::to_string(venue->pid()) + ", " + std::to_string(n) +
                                           " sessions, PollMode=" + (spec.busy_poll ? std::string("busy") : std::string("epoll")) + ", --no-fill, journal " +
                                           std::to_string(cfg.segment_size >> 20) + " MiB segments");
  }
  if (ctx.progress_total != nullptr) ctx.progress_total->store(cfg.warmup + cfg.calls);

  RxClient client(cfg, ctx, port);
  if (venue) {
    VenueProcess* v = venue.get();
    client.venue_cpu_ = [v] { return v->engine_cpu_ns(); };
  }
  Expected<void> ok = client.connect_all(n);
  if (ok && venue) {
    // After the logons: ResetOnLogon rolls every journal to its spare, and
    // the new spares (two per session) are pre-faulted now, not while measuring.
    const double settle_max = 10.0 + 4.0 * n * static_cast<double>(cfg.segment_size) / 100e6;
    result.notes.emplace_back("settle", wait_journal_threads_idle({venue->pid()}, settle_max));
    result.threads.push_back({"venue", cfg.server_core, venue->engine_cpu(), -1});
  }
  if (ok && cfg.warmup > 0) ok = client.phase(cfg.warmup, false);
  if (ok) ok = client.phase(cfg.calls, true);
  if (ok) ok = client.logout_all();
  place.cpu_at_end = core::current_cpu();
  if (venue && !result.threads.empty()) result.threads.back().cpu_at_end = venue->engine_cpu();
  result.threads.insert(result.threads.begin(), place);
  if (!ok) {
    out.error = Error{ok.error().message + (venue ? " (venue log: " + venue->log_tail(300) + ")" : "")};
    return;
  }

  if (const std::uint64_t missing = client.unmatched(); missing != 0) {
    out.error = Error{std::to_string(missing) + " measured orders got no ExecutionReport with their ClOrdID"};
    return;
  }
  const double hz = ctx.tsc->hz();
  const double wall = static_cast<double>(client.t_end_ - client.t_start_) / hz;
  result.completed = cfg.calls;
  result.warmup_done = cfg.warmup;
  result.wall_seconds = wall;
  result.achieved_rate = wall > 0 ? static_cast<double>(cfg.calls) / wall : 0;
  result.window = cfg.window;
  Series per_message;
  per_message.name = "ns_per_message";
  per_message.unit = Unit::kTscTicks;
  per_message.ticks_per_second = hz;
  per_message.values = std::move(client.blocks_);
  per_message.time = std::move(client.block_time_);
  result.series.push_back(std::move(per_message));
  result.series.push_back(client.rtt_series());

  char text[200];
  std::snprintf(text, sizeof text, "%.0f messages/s (%u connections, %.3f s for %llu orders; %.0f ns/message wall)",
                result.achieved_rate, n, wall, static_cast<unsigned long long>(cfg.calls),
                wall * 1e9 / static_cast<double>(cfg.calls));
  result.notes.emplace_back("throughput", text);
  if (venue) {
    const double cpu_ns = static_cast<double>(client.cpu_end_ - client.cpu_start_);
    std::snprintf(text, sizeof text, "%.0f ns of venue engine-thread CPU per message (%.0f%% of the wall time busy)",
                  cpu_ns / static_cast<double>(cfg.calls), wall > 0 ? 100.0 * cpu_ns * 1e-9 / wall : 0.0);
    result.notes.emplace_back("acceptor CPU", text);
  }
  {
    const double client_ns = static_cast<double>(client.client_cpu_end_ - client.client_cpu_start_);
    std::snprintf(text, sizeof text, "%.0f ns of client-thread CPU per message (%.0f%% of the wall time on CPU)",
                  client_ns / static_cast<double>(cfg.calls), wall > 0 ? 100.0 * client_ns * 1e-9 / wall : 0.0);
    result.notes.emplace_back("load generator CPU", text);
  }
  result.notes.emplace_back("client batches", std::to_string(client.batches_) + " send batches of up to " +
                                                  std::to_string(kBatch) + " orders, window " +
                                                  std::to_string(cfg.window) + " per connection");

  // Collect per-connection totals before the connections close.
  std::vector<std::pair<std::string, std::uint64_t>> totals;
  for (const auto& c : client.conns_) totals.emplace_back(c->comp_id, c->orders_total);
  client.conns_.clear();

  if (venue) {
    auto stopped = venue->stop();
    if (!stopped) {
      out.error = stopped.error();
      return;
    }
    result.notes.emplace_back("venue at exit", *stopped);
    std::vector<std::pair<std::string, AuditResult>> audits;
    for (const auto& [comp, orders] : totals) {
      const auto dir = venue->store_dir() /
                       (std::string(ref::kBeginString) + "-" + std::string(ref::kTarget) + "-" + comp);
      audits.emplace_back(comp, audit_venue_store(dir, orders, orders));
    }
    result.audit = combine_audits(audits);
    result.notes.emplace_back("journal disk use", remove_run_journals(cfg.run_dir, result.audit));
  } else {
    result.audit = {AuditResult::Status::kNotRun, 0, "external venue: its journals are not ours to audit"};
  }
}

Expected<RunResult> run_rx(const LaneConfig& cfg, RunContext& ctx) {
  if (ctx.tsc == nullptr) return Error{"rx: no calibrated TSC clock in the run context"};
  if (cfg.calls < kBlock) return Error{"rx: --calls must be at least " + std::to_string(kBlock)};
  if (cfg.variant != "busy" && cfg.variant != "epoll") return Error{"rx: unknown variant '" + cfg.variant + "'"};
  Outcome out;
  std::thread t(run_rx_thread, std::cref(cfg), std::ref(ctx), std::ref(out));
  t.join();
  if (out.error) return Error{"rx: " + out.error->message};
  return std::move(out.result);
}

Expected<void> rx_preflight(const LaneConfig& cfg) {
  if (cfg.calls < kBlock) return Error{"rx: --calls " + std::to_string(cfg.calls) + ": at least 1000 orders"};
  LaneConfig c = cfg;
  c.engine = "libhft";
  return engine_lane_preflight(c);
}

Lane make_rx_lane() {
  Lane lane;
  lane.name = "rx";
  lane.summary = "N clients stream orders into one hft-venue thread (validate, journal, answer): messages/s, ns/message";
  lane.available = true;
  lane.variants = {"busy", "epoll"};
  lane.default_variants = {"busy"};
  lane.preflight = rx_preflight;
  lane.run = run_rx;
  return lane;
}

}  // namespace
HFT_LAB_REGISTER_LANE(make_rx_lane);
}  // namespace hft::lab::lanes
