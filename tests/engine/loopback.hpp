// Helpers of the engine tests that run an acceptor and an initiator engine
// on loopback in one process, polled from the test's thread.
#pragma once

#include <cstdint>

#include "hft/codec/encoder.hpp"
#include "hft/codec/types.hpp"
#include "hft/core/clock.hpp"
#include "hft/engine/engine.hpp"
#include "hft/session/application.hpp"

namespace hft::engine::test {

/// An initiator's application: counts ExecutionReports, knows whether it is logged on.
class ReportClient : public session::Application {
 public:
  void on_logon(session::Session&) noexcept override { logged_on = true; }
  void on_logout(session::Session&) noexcept override { logged_on = false; }
  session::Decision from_app(session::Session&, const codec::MessageView& m) noexcept override {
    if (m.msg_type() == "8") ++reports;
    return session::Decision::accept();
  }
  bool logged_on = false;
  std::uint64_t reports = 0;
};

/// Polls both engines until done() or the timeout (generous: the host is shared).
template <typename Pred>
bool poll_until(Engine& a, Engine& b, Pred done, std::int64_t timeout_ns = 20'000'000'000) {
  const auto start = core::monotonic_ns();
  while (!done()) {
    if (core::monotonic_ns() - start > timeout_ns) return false;
    a.poll();
    b.poll();
  }
  return true;
}

/// Sends the tests' NewOrderSingle with ClOrdID `id` from `session`.
inline session::SendStatus send_test_order(session::Session& session, std::uint64_t id) {
  char text[24];
  const std::size_t n = codec::format_uint(text, id);
  return session.send_app("D", Engine::now(), [&](session::OutgoingMessage& m) {
    m.add(codec::tag::kClOrdID, {text, n});
    m.add_char(codec::tag::kHandlInst, '1');
    m.add(codec::tag::kSymbol, "NOKIA.HE");
    m.add_char(codec::tag::kSide, '1');
    m.add(codec::tag::kTransactTime, "20261130-14:36:30.691");
    m.add_int(codec::tag::kOrderQty, 10);
    m.add_char(codec::tag::kOrdType, '2');
    m.add_int(codec::tag::kPrice, 10000);
  });
}

}  // namespace hft::engine::test
