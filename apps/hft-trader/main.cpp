// hft-trader: a FIX initiator that logs on, sends N NewOrderSingles at a
// given rate, waits for their ExecutionReports and prints what came back.
//
//   hft-trader --port 9878 --orders 1000 --rate 10000 [--show 3]
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "common/configs.hpp"
#include "hft/codec/dictionary.hpp"
#include "hft/codec/printer.hpp"
#include "hft/core/clock.hpp"
#include "hft/engine/engine.hpp"
#include "hft/engine/log.hpp"

namespace {

namespace tag = hft::codec::tag;

class Trader final : public hft::session::Application {
 public:
  explicit Trader(int show) : show_(show) {}
  void set_dictionary(std::shared_ptr<const hft::codec::Dictionary> dict) { dict_ = std::move(dict); }

  void on_logon(hft::session::Session&) noexcept override { logged_on = true; }
  void on_logout(hft::session::Session&) noexcept override { logged_on = false; }
  hft::session::Decision to_app(hft::session::Session&, std::span<const char> message, bool poss_dup) noexcept override {
    if (!poss_dup && shown_out_ < show_) {
      ++shown_out_;
      print(">>", {message.data(), message.size()});
    }
    return hft::session::Decision::accept();
  }
  hft::session::Decision from_app(hft::session::Session&, const hft::codec::MessageView& m) noexcept override {
    if (m.msg_type() != "8") return hft::session::Decision::unsupported_message_type();
    char exec_type = 0;
    (void)m.get_char(tag::kExecType, exec_type);
    if (exec_type == '0') ++acks;
    else if (exec_type == 'F' || exec_type == '2' || exec_type == '1') ++fills;
    else ++other;
    if (shown_in_ < 2 * show_) {
      ++shown_in_;
      print("<<", m.text());
    }
    return hft::session::Decision::accept();
  }

  bool logged_on = false;
  std::uint64_t acks = 0, fills = 0, other = 0;

 private:
  void print(const char* dir, std::string_view msg) {
    const std::string text = dict_ ? hft::codec::to_named(msg, *dict_) : hft::codec::to_printable(msg);
    std::printf("%s %s\n", dir, text.c_str());
  }
  int show_;
  int shown_out_ = 0, shown_in_ = 0;
  std::shared_ptr<const hft::codec::Dictionary> dict_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"hft-trader: FIX initiator sending orders"};
  std::string host = "127.0.0.1", begin_string = "FIX.4.4", sender = "CLIENT", target = "VENUE";
  std::string log_level = "warn";
  int port = 9878, show = 3;
  std::uint64_t orders = 1000;
  double rate = 10000, timeout_s = 30;
  cli.add_option("--host", host, "venue host");
  cli.add_option("--port", port, "venue port")->required();
  cli.add_option("--begin-string", begin_string, "FIX.4.2, FIX.4.4, FIXT.1.1, ...");
  cli.add_option("--sender", sender, "our SenderCompID");
  cli.add_option("--target", target, "the venue's CompID");
  cli.add_option("--orders", orders, "NewOrderSingles to send");
  cli.add_option("--rate", rate, "orders per second (0: as fast as possible)");
  cli.add_option("--show", show, "print the first N orders and their reports");
  std::string spec_dir = hft::apps::default_spec_dir();
  cli.add_option("--spec-dir", spec_dir, "directory of the FIX XML dictionaries (validation and printing)");
  cli.add_option("--timeout", timeout_s, "give up after this many seconds");
  cli.add_option("--log-level", log_level, "debug, info, warn or error");
  CLI11_PARSE(cli, argc, argv);
  if (rate < 0) {
    std::fprintf(stderr, "hft-trader: --rate must be >= 0\n");
    return 2;
  }
  hft::session::LogLevel level;
  if (!hft::engine::parse_log_level(log_level, level)) {
    std::fprintf(stderr, "hft-trader: --log-level: use debug, info, warn or error\n");
    return 2;
  }

  hft::apps::SimpleSession s;
  s.initiator = true;
  s.begin_string = begin_string;
  s.sender = sender;
  s.target = target;
  s.host = host;
  s.port = port;
  s.extra = "SocketConnectTimeoutMs=2000\n";
  s.spec_dir = spec_dir;
  auto config = hft::engine::Config::parse(hft::apps::simple_config(s), "<command line>");
  if (!config) {
    std::fprintf(stderr, "hft-trader: %s\n", config.error().message.c_str());
    return 2;
  }
  hft::engine::StreamLogger logger(level);
  Trader trader(show);
  auto engine = hft::engine::Engine::create(*config, trader, &logger);
  if (!engine) {
    std::fprintf(stderr, "hft-trader: %s\n", engine.error().message.c_str());
    return 2;
  }
  auto& e = **engine;
  auto& session = e.session(0);
  trader.set_dictionary(session.settings().app_dictionary ? session.settings().app_dictionary
                                                          : session.settings().dictionary);
  const auto start = hft::engine::Engine::now();
  const std::int64_t deadline = start.mono_ns + static_cast<std::int64_t>(timeout_s * 1e9);
  while (!trader.logged_on && hft::engine::Engine::now().mono_ns < deadline) e.poll();
  if (!trader.logged_on) {
    std::fprintf(stderr, "hft-trader: no logon from %s:%d within %.0f s\n", host.c_str(), port, timeout_s);
    return 1;
  }
  const auto t0 = hft::engine::Engine::now();
  std::uint64_t sent = 0, failed = 0;
  char cl_ord_id[24];
  hft::codec::TimestampFormatter ts;
  while (hft::engine::Engine::now().mono_ns < deadline) {
    e.poll();
    const auto now = hft::engine::Engine::now();
    const bool due = rate == 0 || static_cast<double>(now.mono_ns - t0.mono_ns) * rate / 1e9 >= static_cast<double>(sent);
    if (sent < orders && due && trader.logged_on) {
      const std::size_t n = hft::codec::format_uint(cl_ord_id, sent + 1);
      const auto st = session.send_app("D", now, [&](hft::session::OutgoingMessage& m) {
        m.add(tag::kClOrdID, {cl_ord_id, n});
        if (begin_string <= "FIX.4.2") m.add_char(tag::kHandlInst, '1');
        m.add(tag::kSymbol, "NOKIA.HE");
        m.add_char(tag::kSide, '1');
        m.writer().add_timestamp(tag::kTransactTime, now.utc_ns, hft::codec::TimePrecision::kMillis, ts);
        m.add_int(tag::kOrderQty, 10);
        m.add_char(tag::kOrdType, '2');
        m.add_int(tag::kPrice, 10000);
      });
      if (st == hft::session::SendStatus::kOk) ++sent;
      else ++failed;
    }
    if (sent == orders && trader.acks >= orders && trader.acks + trader.fills + trader.other >= 2 * orders) break;
    if (sent == orders && trader.acks >= orders && trader.fills == 0 &&
        hft::engine::Engine::now().mono_ns - t0.mono_ns > 2'000'000'000) break;
  }
  const double secs = static_cast<double>(hft::engine::Engine::now().mono_ns - t0.mono_ns) / 1e9;
  e.logout_all(2'000'000'000);
  std::printf("orders sent %llu (send failures %llu), acks %llu, fills %llu, other %llu in %.3f s\n",
              static_cast<unsigned long long>(sent), static_cast<unsigned long long>(failed),
              static_cast<unsigned long long>(trader.acks), static_cast<unsigned long long>(trader.fills),
              static_cast<unsigned long long>(trader.other), secs);
  return trader.acks == orders ? 0 : 1;
}
