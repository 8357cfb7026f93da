// Hello engine: logs on to a FIX 4.4 acceptor on 127.0.0.1:<port>, sends one
// typed NewOrderSingle, prints the ExecutionReport that answers it, logs out.
#include <cstdio>
#include <string>

#include "hft/engine/engine.hpp"
#include "hft/messages/fix44.hpp"

using namespace hft;
using Decision = session::Decision;

struct App : session::Application {
  bool done = false;
  Decision from_app(session::Session&, const codec::MessageView& m) noexcept override {
    return fix44::crack(m, *this);
  }
  Decision on_message(const fix44::ExecutionReportReader& er) {
    std::printf("ExecutionReport %s: ExecType %c\n", std::string(er.cl_ord_id().value_or("?")).c_str(),
                static_cast<char>(er.exec_type().value_or({})));
    done = true;
    return Decision::accept();
  }
  Decision on_unhandled(const codec::MessageView&) { return Decision::unsupported_message_type(); }
};

int main(int argc, char** argv) {
  const auto config = engine::Config::parse(
      "[SESSION]\nConnectionType=initiator\nNonStopSession=Y\nBeginString=FIX.4.4\nSenderCompID=CLIENT\n"
      "TargetCompID=VENUE\n"
      "HeartBtInt=30\nUseDataDictionary=N\nSocketConnectHost=127.0.0.1\nSocketConnectPort=" +
          std::string(argc > 1 ? argv[1] : "9878"),
      "hello_initiator");
  App app;
  auto engine = config ? engine::Engine::create(*config, app)
                       : Expected<std::unique_ptr<engine::Engine>>(config.error());
  if (!engine) return std::fprintf(stderr, "%s\n", engine.error().message.c_str()), 1;
  auto& e = **engine;
  const auto deadline = engine::Engine::now().mono_ns + 10'000'000'000;  // 10 s
  while (!e.session(0).is_logged_on() && engine::Engine::now().mono_ns < deadline) e.poll();
  const auto now = engine::Engine::now();
  const auto sent = e.session(0).send_app("D", now, [&](session::OutgoingMessage& m) {
    fix44::NewOrderSingleWriter order(m.writer(), "ORD1", fix44::Side::kBuy, now.utc_ns,
                                      fix44::OrdType::kLimit);
    order.instrument().symbol("NOKIA.HE");
    order.order_qty_data().order_qty({10, 0});
    order.price({1005, 1});
  });
  while (sent == session::SendStatus::kOk && !app.done && engine::Engine::now().mono_ns < deadline) e.poll();
  e.logout_all(2'000'000'000);
  return app.done ? 0 : 1;
}
