// hft-trader: a FIX initiator that logs on, sends N NewOrderSingles at a
// given rate, waits for their ExecutionReports and prints what came back.
//
//   hft-trader --port 9878 --orders 1000 --rate 10000 [--show 3]
//   hft-trader --port 9878 --orders 10000 --store DIR --disconnect-after 3000 --require-fills
//   hft-trader --config initiator.cfg --orders 1000 --set ReconnectInterval=5
//
// The session comes from the command line's session flags or from a
// QuickFIX-style file (--config: its first initiator session); --set
// KEY=VALUE applies over either, so a user's value wins over the tool's
// own (ReconnectInterval=1, SocketConnectTimeoutMs=2000 without --config).
//
// Reports are counted per ClOrdID (the order number, 1..N) and kind (New,
// Fill, Rejected): a kind seen again for an order is a PossDup repeat when
// the report carries PossDupFlag=Y (a resend after a gap, legitimate) and a
// duplicate otherwise (a failure). The last line printed is key=value
// counts for scripts; the exit code is 0 iff every order was acknowledged
// (and filled, with --require-fills) exactly once.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "common/configs.hpp"
#include "hft/codec/dictionary.hpp"
#include "hft/codec/printer.hpp"
#include "hft/core/clock.hpp"
#include "hft/engine/async_logger.hpp"
#include "hft/engine/engine.hpp"
#include "hft/engine/log.hpp"
#include "hft/messages/fix44.hpp"
#include "hft/messages/fix50sp2.hpp"

namespace {

namespace tag = hft::codec::tag;

// The order, with the typed messages of FIX.4.4 or 5.0SP2 (FIXT.1.1).
template <typename Writer, typename Side, typename OrdType>
void typed_order(hft::session::OutgoingMessage& m, std::string_view cl_ord_id, std::int64_t now_ns,
                 hft::codec::TimePrecision precision, hft::codec::TimestampFormatter& ts) {
  Writer order(m.writer(), ts, cl_ord_id, Side::kBuy, hft::messages::Timestamp{now_ns, precision}, OrdType::kLimit);
  order.instrument().symbol("NOKIA.HE");
  order.order_qty_data().order_qty({10, 0});
  order.price({10000, 0});
}

struct TraderCounts {
  std::uint64_t reports = 0;
  std::uint64_t acked = 0, filled = 0, rejected = 0, other = 0;
  std::uint64_t duplicates = 0;        // a kind repeated without PossDupFlag=Y
  std::uint64_t possdup_received = 0;  // application messages with PossDupFlag=Y
  std::uint64_t possdup_repeats = 0;   // PossDup reports for what was already counted
  std::uint64_t unknown_orders = 0;    // ClOrdID not one of 1..N
  std::uint64_t business_rejects = 0, session_rejects = 0;
  std::uint64_t logons = 0, logouts = 0, logouts_received = 0;
  std::uint64_t heartbeats_received = 0, test_requests_received = 0;
  std::uint64_t resend_requests_received = 0, sequence_resets_received = 0;
  std::uint64_t reset_logons_received = 0, last_logon_seq = 0;
};

class Trader final : public hft::session::Application {
 public:
  Trader(int show, std::uint64_t orders) : show_(show), state_(orders + 1, 0) {}
  void set_dictionary(std::shared_ptr<const hft::codec::Dictionary> dict) { dict_ = std::move(dict); }

  void on_logon(hft::session::Session&) noexcept override {
    logged_on = true;
    ++counts.logons;
  }
  void on_logout(hft::session::Session&) noexcept override {
    logged_on = false;
    ++counts.logouts;
  }
  hft::session::Decision to_app(hft::session::Session&, std::span<const char> message,
                                bool poss_dup) noexcept override {
    if (!poss_dup && shown_out_ < show_) {
      ++shown_out_;
      print(">>", {message.data(), message.size()});
    }
    return hft::session::Decision::accept();
  }
  hft::session::Decision from_admin(hft::session::Session&,
                                    const hft::codec::MessageView& m) noexcept override {
    const std::string_view type = m.msg_type();
    if (type == "0")
      ++counts.heartbeats_received;
    else if (type == "1")
      ++counts.test_requests_received;
    else if (type == "2")
      ++counts.resend_requests_received;
    else if (type == "4")
      ++counts.sequence_resets_received;
    else if (type == "3")
      ++counts.session_rejects;
    else if (type == "5")
      ++counts.logouts_received;
    else if (type == "A") {
      (void)m.get_uint(tag::kMsgSeqNum, counts.last_logon_seq);
      if (m.get(141) == "Y") ++counts.reset_logons_received;
    }
    return hft::session::Decision::accept();
  }
  hft::session::Decision from_app(hft::session::Session&,
                                  const hft::codec::MessageView& m) noexcept override {
    const bool poss_dup = m.get(tag::kPossDupFlag) == "Y";
    if (poss_dup) ++counts.possdup_received;
    if (m.msg_type() == "j") {
      ++counts.business_rejects;
      return hft::session::Decision::accept();
    }
    if (m.msg_type() != "8") return hft::session::Decision::unsupported_message_type();
    ++counts.reports;
    char exec_type = 0;
    (void)m.get_char(tag::kExecType, exec_type);
    std::uint8_t bit = 0;
    std::uint64_t* distinct = &counts.other;
    if (exec_type == '0')
      bit = kAcked, distinct = &counts.acked;
    else if (exec_type == 'F' || exec_type == '2')
      bit = kFilled, distinct = &counts.filled;
    else if (exec_type == '8')
      bit = kRejected, distinct = &counts.rejected;
    std::uint64_t order = 0;
    if (!m.get_uint(tag::kClOrdID, order) || order == 0 || order >= state_.size()) {
      ++counts.unknown_orders;
    } else if (bit == 0) {
      ++counts.other;
    } else if ((state_[order] & bit) != 0) {
      ++(poss_dup ? counts.possdup_repeats : counts.duplicates);
    } else {
      state_[order] |= bit;
      ++*distinct;
    }
    if (shown_in_ < 2 * show_) {
      ++shown_in_;
      print("<<", m.text());
    }
    return hft::session::Decision::accept();
  }

  bool logged_on = false;
  TraderCounts counts;

 private:
  static constexpr std::uint8_t kAcked = 1, kFilled = 2, kRejected = 4;
  void print(const char* dir, std::string_view msg) {
    const std::string text = dict_ ? hft::codec::to_named(msg, *dict_) : hft::codec::to_printable(msg);
    std::printf("%s %s\n", dir, text.c_str());
  }
  int show_;
  int shown_out_ = 0, shown_in_ = 0;
  std::vector<std::uint8_t> state_;  // per order number: kAcked | kFilled | kRejected
  std::shared_ptr<const hft::codec::Dictionary> dict_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"hft-trader: FIX initiator sending orders"};
  std::string host = "127.0.0.1", begin_string = "FIX.4.4", sender = "CLIENT", target = "VENUE";
  std::string log_level = "warn", store_dir, config_path;
  std::vector<std::string> settings;
  int port = 9878, show = 3, heartbeat = 30;
  std::uint64_t orders = 1000, disconnect_after = 0;
  double rate = 10000, timeout_s = 30, idle_s = 0;
  bool require_fills = false;
  auto* config_opt = cli.add_option("--config", config_path,
                                    "QuickFIX-style session file: its first initiator session is used "
                                    "(excludes the session flags --host, --port, --begin-string, --sender, "
                                    "--target, --store, --heartbeat)");
  auto* port_opt = cli.add_option("--port", port, "venue port (required without --config)");
  std::vector<CLI::Option*> session_flags{
      cli.add_option("--host", host, "venue host"), port_opt,
      cli.add_option("--begin-string", begin_string, "FIX.4.2, FIX.4.4, FIXT.1.1, ..."),
      cli.add_option("--sender", sender, "our SenderCompID"),
      cli.add_option("--target", target, "the venue's CompID")};
  cli.add_option("--orders", orders, "NewOrderSingles to send");
  cli.add_option("--rate", rate, "orders per second (0: as fast as possible)");
  cli.add_option("--show", show, "print the first N orders and their reports");
  std::string spec_dir = hft::apps::default_spec_dir();
  cli.add_option("--spec-dir", spec_dir, "directory of the FIX XML dictionaries (validation and printing)");
  cli.add_option("--timeout", timeout_s, "give up after this many seconds");
  cli.add_option("--log-level", log_level, "debug, info, warn or error");
  session_flags.push_back(cli.add_option(
      "--store", store_dir,
      "journal directory (FileStorePath): sequence numbers and sent messages survive a restart "
      "(default: in memory)"));
  session_flags.push_back(cli.add_option("--heartbeat", heartbeat, "HeartBtInt, seconds"));
  for (CLI::Option* flag : session_flags) flag->excludes(config_opt);
  cli.add_option("--set", settings,
                 "setting KEY=VALUE (repeatable) applied over the session (engine-wide keys over [DEFAULT]), "
                 "e.g. JournalSegmentSize=1M or ReconnectInterval=5");
  cli.add_option("--idle", idle_s,
                 "stay logged on and idle this many seconds before sending (heartbeats only); the session "
                 "must stay up without a reconnect");
  cli.add_option("--disconnect-after", disconnect_after,
                 "after order K, close the TCP connection without a Logout; the engine reconnects "
                 "(ReconnectInterval=1) and gaps are recovered by ResendRequest");
  cli.add_flag("--require-fills", require_fills, "every order must also be filled");
  CLI11_PARSE(cli, argc, argv);
  if (rate < 0) {
    std::fprintf(stderr, "hft-trader: --rate must be >= 0\n");
    return 2;
  }
  if (disconnect_after > orders) {
    std::fprintf(stderr, "hft-trader: --disconnect-after must be <= --orders\n");
    return 2;
  }
  hft::session::LogLevel level;
  if (!hft::engine::parse_log_level(log_level, level)) {
    std::fprintf(stderr, "hft-trader: --log-level: use debug, info, warn or error\n");
    return 2;
  }

  if (config_path.empty() && port_opt->count() == 0) {
    std::fprintf(stderr, "hft-trader: --port is required (or --config FILE)\n");
    return 2;
  }
  std::vector<hft::engine::Override> overrides;
  for (const std::string& kv : settings) {
    auto o = hft::engine::parse_override(kv);
    if (!o) {
      std::fprintf(stderr, "hft-trader: %s\n", o.error().message.c_str());
      return 2;
    }
    overrides.push_back(std::move(*o));
  }
  auto config = [&]() -> hft::Expected<hft::engine::Config> {
    if (!config_path.empty()) return hft::engine::Config::load(config_path, overrides);
    hft::apps::SimpleSession s;
    s.initiator = true;
    s.begin_string = begin_string;
    s.sender = sender;
    s.target = target;
    s.host = host;
    s.port = port;
    s.heartbeat = heartbeat;
    s.store_dir = store_dir;
    s.extra = "SocketConnectTimeoutMs=2000\n";
    s.spec_dir = spec_dir;
    s.origins = {.begin_string = "--begin-string", .sender = "--sender", .target = "--target", .host = "--host",
                 .port = "--port", .heartbeat = "--heartbeat", .store_dir = "--store", .spec_dir = "--spec-dir"};
    return hft::apps::simple_builder(s, "hft-trader").build(overrides);
  }();
  if (!config) {
    std::fprintf(stderr, "hft-trader: %s\n", config.error().message.c_str());
    return 2;
  }
  std::size_t session_index = config->sessions().size();
  for (std::size_t i = 0; i < config->sessions().size(); ++i) {
    if (config->sessions()[i].connection_type() == hft::engine::ConnectionType::kInitiator) {
      session_index = i;
      break;
    }
  }
  if (session_index == config->sessions().size()) {
    std::fprintf(stderr, "hft-trader: %s: no initiator session\n", config->file().c_str());
    return 2;
  }
  const hft::engine::Section& section = config->sessions()[session_index];
  begin_string = section.session_id().begin_string;
  if (!section.connect_endpoints().empty()) {
    host = section.connect_endpoints().front().host;
    port = section.connect_endpoints().front().port;
  }
  // Events are formatted and written by a writer thread: the engine thread only copies them.
  hft::engine::AsyncLoggerOptions log_options;
  log_options.level = level;
  log_options.to_stderr = true;
  auto async_log = hft::engine::AsyncLogger::create(std::move(log_options));
  if (!async_log) {
    std::fprintf(stderr, "hft-trader: %s\n", async_log.error().message.c_str());
    return 2;
  }
  hft::engine::AsyncLogger& logger = **async_log;
  Trader trader(show, orders);
  auto engine = hft::engine::Engine::create(*config, trader, &logger);
  if (!engine) {
    std::fprintf(stderr, "hft-trader: %s\n", engine.error().message.c_str());
    return 2;
  }
  auto& e = **engine;
  auto& session = e.session(session_index);
  trader.set_dictionary(session.settings().app_dictionary ? session.settings().app_dictionary
                                                          : session.settings().dictionary);
  const auto start = hft::engine::Engine::now();
  const std::int64_t deadline = start.mono_ns + static_cast<std::int64_t>(timeout_s * 1e9);
  while (!trader.logged_on && hft::engine::Engine::now().mono_ns < deadline) e.poll();
  if (!trader.logged_on) {
    std::fprintf(stderr, "hft-trader: no logon from %s:%d within %.0f s\n", host.c_str(), port, timeout_s);
    return 1;
  }
  bool idle_ok = true;
  if (idle_s > 0) {
    const std::int64_t idle_end =
        hft::engine::Engine::now().mono_ns + static_cast<std::int64_t>(idle_s * 1e9);
    while (hft::engine::Engine::now().mono_ns < idle_end) e.poll();
    idle_ok = trader.logged_on && trader.counts.logons == 1 && trader.counts.logouts == 0;
    if (!idle_ok) std::fprintf(stderr, "hft-trader: the session did not stay up while idle\n");
  }
  const auto t0 = hft::engine::Engine::now();
  std::uint64_t sent = 0, failed = 0, drops = 0;
  std::int64_t acks_complete_ns = 0;
  char cl_ord_id[24];
  hft::codec::TimestampFormatter ts;
  const TraderCounts& c = trader.counts;
  while (hft::engine::Engine::now().mono_ns < deadline) {
    e.poll();
    const auto now = hft::engine::Engine::now();
    const bool due =
        rate == 0 || static_cast<double>(now.mono_ns - t0.mono_ns) * rate / 1e9 >= static_cast<double>(sent);
    if (sent < orders && due && trader.logged_on) {
      const std::size_t n = hft::codec::format_uint(cl_ord_id, sent + 1);
      const auto st = session.send_app("D", now, [&](hft::session::OutgoingMessage& m) {
        const std::string_view id{cl_ord_id, n};
        if (session.version() == hft::codec::FixVersion::kFix44) {
          typed_order<hft::fix44::NewOrderSingleWriter, hft::fix44::Side, hft::fix44::OrdType>(
              m, id, now.utc_ns, session.timestamp_precision(), ts);
        } else if (session.version() == hft::codec::FixVersion::kFixT11) {
          typed_order<hft::fix50sp2::NewOrderSingleWriter, hft::fix50sp2::Side, hft::fix50sp2::OrdType>(
              m, id, now.utc_ns, session.timestamp_precision(), ts);
        } else {  // FIX.4.0-4.3, by tag
          m.add(tag::kClOrdID, id);
          if (begin_string <= "FIX.4.2") m.add_char(tag::kHandlInst, '1');
          m.add(tag::kSymbol, "NOKIA.HE");
          m.add_char(tag::kSide, '1');
          m.writer().add_timestamp(tag::kTransactTime, now.utc_ns, session.timestamp_precision(), ts);
          m.add_int(tag::kOrderQty, 10);
          m.add_char(tag::kOrdType, '2');
          m.add_int(tag::kPrice, 10000);
        }
      });
      if (st == hft::session::SendStatus::kOk) {
        ++sent;
        // A network failure right after this order: what the venue answers
        // from now on is lost with the connection, and the venue's reports
        // come back through the ResendRequest after the reconnect.
        if (sent == disconnect_after) {
          session.disconnect(now);
          ++drops;
        }
      } else {
        ++failed;
      }
    }
    if (sent == orders && c.acked + c.rejected >= orders) {
      if (c.filled + c.rejected >= orders) break;
      // Without --require-fills a venue that only acknowledges is fine: stop 2 s after the last ack.
      if (acks_complete_ns == 0) acks_complete_ns = now.mono_ns;
      if (!require_fills && now.mono_ns - acks_complete_ns > 2'000'000'000) break;
    }
  }
  const double secs = static_cast<double>(hft::engine::Engine::now().mono_ns - t0.mono_ns) / 1e9;
  // After a reconnect the venue may still be resending (a ResendRequest asks
  // for everything from the gap on, also what arrived meanwhile): wait until
  // nothing has arrived for 300 ms, so that late repeats are counted (PossDup
  // repeats are fine, duplicates are not) and the Logout is not answered
  // behind a replay.
  {
    const std::int64_t settle_end = hft::engine::Engine::now().mono_ns + 15'000'000'000;
    std::uint64_t seen = session.counters().messages_received;
    std::int64_t quiet_since = hft::engine::Engine::now().mono_ns;
    for (auto now = hft::engine::Engine::now().mono_ns; now < settle_end;
         now = hft::engine::Engine::now().mono_ns) {
      e.poll();
      if (session.counters().messages_received != seen) {
        seen = session.counters().messages_received;
        quiet_since = now;
      } else if (now - quiet_since >= 300'000'000) {
        break;
      }
    }
  }
  e.logout_all(2'000'000'000);
  std::printf("orders sent %llu (send failures %llu), acks %llu, fills %llu, other %llu in %.3f s\n",
              static_cast<unsigned long long>(sent), static_cast<unsigned long long>(failed),
              static_cast<unsigned long long>(c.acked), static_cast<unsigned long long>(c.filled),
              static_cast<unsigned long long>(c.other), secs);
  const auto& sc = session.counters();
  auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf(
      "orders=%llu sent=%llu send_failures=%llu execution_reports=%llu acked=%llu filled=%llu rejected=%llu "
      "duplicates=%llu possdup_received=%llu possdup_repeats=%llu unknown_orders=%llu session_rejects=%llu "
      "business_rejects=%llu logons=%llu logouts=%llu logouts_received=%llu heartbeats_received=%llu "
      "test_requests_received=%llu resend_requests_received=%llu sequence_resets_received=%llu "
      "reset_logons_received=%llu last_logon_seq=%llu drops=%llu resend_requests_sent=%llu "
      "messages_resent=%llu gap_fills_sent=%llu send_overflows=%llu next_sender_seq=%llu "
      "next_target_seq=%llu\n",
      u(orders), u(sent), u(failed), u(c.reports), u(c.acked), u(c.filled), u(c.rejected), u(c.duplicates),
      u(c.possdup_received), u(c.possdup_repeats), u(c.unknown_orders), u(c.session_rejects),
      u(c.business_rejects), u(c.logons), u(c.logouts), u(c.logouts_received), u(c.heartbeats_received),
      u(c.test_requests_received), u(c.resend_requests_received), u(c.sequence_resets_received),
      u(c.reset_logons_received), u(c.last_logon_seq), u(drops), u(sc.resend_requests_sent),
      u(sc.messages_resent), u(sc.gap_fills_sent), u(e.stats().send_overflows), u(session.next_sender_seq()),
      u(session.next_target_seq()));
  const bool ok = idle_ok && c.acked == orders && (!require_fills || c.filled == orders) &&
                  c.duplicates == 0 && c.unknown_orders == 0;
  return ok ? 0 : 1;
}
