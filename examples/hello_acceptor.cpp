// Answers each typed NewOrderSingle with a filled ExecutionReport. Listens
// on <port> (0: any free port; the port is printed), exits once its client
// has logged out, or after <seconds> (default 30).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "hft/engine/engine.hpp"
#include "hft/messages/fix44.hpp"

using namespace hft;
using codec::Decimal;

struct Venue : session::Application {
  bool logged_on = false, finished = false;
  std::uint64_t orders = 0;
  void on_logon(session::Session&) noexcept override { logged_on = true; }
  void on_logout(session::Session&) noexcept override { finished = logged_on; }
  session::Decision from_app(session::Session& s, const codec::MessageView& m) noexcept override {
    return fix44::crack(m, *this, s);
  }
  session::Decision on_message(const fix44::NewOrderSingleReader& order, session::Session& s) {
    const auto qty = order.order_qty_data().order_qty();
    const auto px = order.price();
    if (!order.cl_ord_id() || !qty || !order.side()) {
      return session::Decision::reject(codec::RejectReason::kRequiredTagMissing, fix44::tag::kOrderQty);
    }
    char order_id[24];
    const std::size_t n = codec::format_uint(order_id, ++orders);
    const auto now = engine::Engine::now();
    const auto st = s.send_app(fix44::ExecutionReportWriter::kMsgType, now, [&](session::OutgoingMessage& m) {
      fix44::ExecutionReportWriter er(m.writer(), {order_id, n}, {order_id, n}, fix44::ExecType::kTrade,
                                      fix44::OrdStatus::kFilled, *order.side(), Decimal{0, 0}, *qty,
                                      px.value_or(Decimal{0, 0}));
      er.cl_ord_id(*order.cl_ord_id())
          .last_qty(*qty)
          .last_px(px.value_or(Decimal{0, 0}))
          .transact_time(now.utc_ns);
      er.instrument().symbol(order.instrument().symbol().value_or("?"));
    });
    if (st != session::SendStatus::kOk)
      std::fprintf(stderr, "ExecutionReport not sent: %d\n", static_cast<int>(st));
    return session::Decision::accept();
  }
  session::Decision on_unhandled(const codec::MessageView&, session::Session&) {
    return session::Decision::unsupported_message_type();
  }
};

int main(int argc, char** argv) {
  const std::string port = argc > 1 ? argv[1] : "9878";
  const double seconds = argc > 2 ? std::atof(argv[2]) : 30;
  const auto config = engine::Config::parse(
      "[SESSION]\nConnectionType=acceptor\nNonStopSession=Y\nBeginString=FIX.4.4\nSenderCompID="
      "VENUE\nTargetCompID=CLIENT\n"
      "UseDataDictionary=N\nSocketAcceptPort=" +
          port + "\n",
      "hello_acceptor");
  if (!config) return std::fprintf(stderr, "%s\n", config.error().message.c_str()), 2;
  Venue venue;
  auto engine = engine::Engine::create(*config, venue);
  if (!engine) return std::fprintf(stderr, "%s\n", engine.error().message.c_str()), 2;
  auto& e = **engine;
  std::printf("listening on %d\n", e.listen_port());
  std::fflush(stdout);
  const std::int64_t deadline = engine::Engine::now().mono_ns + static_cast<std::int64_t>(seconds * 1e9);
  while (!venue.finished && engine::Engine::now().mono_ns < deadline) e.poll();
  std::printf("orders answered: %llu\n", static_cast<unsigned long long>(venue.orders));
  return venue.finished && venue.orders > 0 ? 0 : 1;
}
