// Sending from several threads: two strategy threads each queue typed
// NewOrderSingles through a ring of their own (engine::SendRing); the engine
// thread (main) sends them through the session and counts the
// ExecutionReports that come back. Run against hello_acceptor:
//
//   multi_thread_sender <port> [orders per thread]
//
// A full ring is a status, never a wait: here the strategy retries after
// a pause, as a real one would apply its own back-pressure policy.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hft/engine/engine.hpp"
#include "hft/messages/fix44.hpp"

using namespace hft;

struct App : session::Application {
  std::atomic<std::uint64_t> reports{0};
  session::Decision from_app(session::Session&, const codec::MessageView& m) noexcept override {
    return fix44::crack(m, *this);
  }
  session::Decision on_message(const fix44::ExecutionReportReader&) {
    reports.fetch_add(1, std::memory_order_relaxed);
    return session::Decision::accept();
  }
  session::Decision on_unhandled(const codec::MessageView&) { return session::Decision::unsupported_message_type(); }
};

int main(int argc, char** argv) {
  const std::string port = argc > 1 ? argv[1] : "9878";
  const std::uint64_t per_thread = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000;
  const auto config = engine::Config::parse(
      "[SESSION]\nConnectionType=initiator\nNonStopSession=Y\nBeginString=FIX.4.4\nSenderCompID=CLIENT\n"
      "TargetCompID=VENUE\nHeartBtInt=30\nUseDataDictionary=N\nSocketConnectHost=127.0.0.1\nSocketConnectPort=" +
          port,
      "multi_thread_sender");
  App app;
  auto engine = config ? engine::Engine::create(*config, app)
                       : Expected<std::unique_ptr<engine::Engine>>(config.error());
  if (!engine) return std::fprintf(stderr, "%s\n", engine.error().message.c_str()), 1;
  auto& e = **engine;
  // One ring per producer thread, made before the threads start.
  std::vector<engine::SendRing*> rings{&e.add_send_ring({.capacity = 256}), &e.add_send_ring({.capacity = 256})};
  const engine::SessionHandle venue = *e.handle_of(e.session(0).id());

  const auto deadline = engine::Engine::now().mono_ns + 20'000'000'000;  // 20 s
  while (!e.session(0).is_logged_on() && engine::Engine::now().mono_ns < deadline) e.poll();
  if (!e.session(0).is_logged_on()) return std::fprintf(stderr, "no logon\n"), 1;

  std::atomic<int> running{static_cast<int>(rings.size())};
  std::vector<std::thread> strategies;
  for (std::size_t t = 0; t < rings.size(); ++t) {
    strategies.emplace_back([&, t] {
      char id[32];
      for (std::uint64_t i = 1; i <= per_thread;) {
        const int n = std::snprintf(id, sizeof id, "T%zu-%llu", t, static_cast<unsigned long long>(i));
        const std::int64_t now = engine::Engine::now().utc_ns;
        const engine::QueueStatus q = rings[t]->send(venue, "D", [&](codec::MessageWriter& w) {
          fix44::NewOrderSingleWriter order(w, {id, static_cast<std::size_t>(n)}, fix44::Side::kBuy, now,
                                            fix44::OrdType::kLimit);
          order.instrument().symbol("NOKIA.HE");
          order.order_qty_data().order_qty({10, 0});
          order.price({1005, 1});
        });
        if (q == engine::QueueStatus::kOk) ++i;
        else if (q == engine::QueueStatus::kFull) std::this_thread::yield();
        else return (void)std::fprintf(stderr, "thread %zu: %s\n", t, std::string(to_string(q)).c_str());
      }
      running.fetch_sub(1);
    });
  }
  const std::uint64_t expected = per_thread * rings.size();
  while ((running.load() > 0 || app.reports.load() < expected) && engine::Engine::now().mono_ns < deadline) e.poll();
  for (auto& t : strategies) t.join();
  e.logout_all(2'000'000'000);
  std::uint64_t sent = 0, full = 0;
  for (const engine::SendRing* r : rings) {
    sent += r->stats().sent;
    full += r->stats().full;
  }
  std::printf("orders sent from %zu threads: %llu, reports: %llu\n", rings.size(),
              static_cast<unsigned long long>(sent), static_cast<unsigned long long>(app.reports.load()));
  std::printf("a ring was full %llu times\n", static_cast<unsigned long long>(full));
  return app.reports.load() == expected && sent == expected ? 0 : 1;
}
