#include "common/venue_app.hpp"

#include "hft/codec/encoder.hpp"
#include "hft/engine/engine.hpp"

namespace hft::apps {

namespace tag = codec::tag;

session::Decision VenueApplication::from_app(session::Session& session, const codec::MessageView& message) noexcept {
  if (message.msg_type() != "D") return session::Decision::unsupported_message_type();
  if (!unfilled_.empty() && message.get(tag::kPossDupFlag) == "Y") [[unlikely]] {
    const std::string_view id = message.get(tag::kClOrdID);
    for (auto it = unfilled_.begin(); it != unfilled_.end(); ++it) {
      if (it->cl_ord_id != id) continue;
      // Acknowledged before: the resend gets what it did not get.
      if (send_report(session, message, it->order_number, true)) unfilled_.erase(it);
      return session::Decision::accept();
    }
  }
  ++counters_.orders;
  const std::uint64_t order_id = next_order_id_++;
  // Either report failing ends the session, and this order is then not
  // accepted (the session's rule): the client resends it.
  if (!send_report(session, message, order_id, false)) return session::Decision::accept();
  if (options_.fill && !send_report(session, message, order_id, true)) {
    unfilled_.push_back(Unfilled{std::string(message.get(tag::kClOrdID)), order_id});
  }
  return session::Decision::accept();
}

bool VenueApplication::send_report(session::Session& session, const codec::MessageView& order,
                                   std::uint64_t order_number, bool fill) noexcept {
  const bool fix43_plus = session.version() >= codec::FixVersion::kFix43;
  char order_id[24];
  char exec_id[24];
  order_id[0] = 'O';
  const std::size_t order_id_len = 1 + codec::format_uint(order_id + 1, order_number);
  exec_id[0] = 'E';
  const std::size_t exec_id_len = 1 + codec::format_uint(exec_id + 1, next_exec_id_++);
  const auto qty = order.get(tag::kOrderQty);
  const auto price = order.get(tag::kPrice);
  // One clock read for SendingTime and TransactTime.
  const auto now = engine::Engine::now();
  const auto status = session.send_app("8", now, [&](session::OutgoingMessage& m) {
    m.add(tag::kOrderID, {order_id, order_id_len});
    m.add(tag::kClOrdID, order.get(tag::kClOrdID));
    m.add(tag::kExecID, {exec_id, exec_id_len});
    if (!fix43_plus) m.add_char(20, '0');  // ExecTransType=New (FIX 4.0-4.2)
    m.add_char(tag::kExecType, fill ? (fix43_plus ? 'F' : '2') : '0');
    m.add_char(tag::kOrdStatus, fill ? '2' : '0');
    m.add(tag::kSymbol, order.get(tag::kSymbol));
    m.add(tag::kSide, order.get(tag::kSide));
    m.add(tag::kOrderQty, qty);
    if (!price.empty()) m.add(tag::kPrice, price);
    if (fill) {
      m.add(tag::kLastQty, qty);
      m.add(tag::kLastPx, price.empty() ? std::string_view("0") : price);
    }
    m.add(tag::kLeavesQty, fill ? std::string_view("0") : qty);
    m.add(tag::kCumQty, fill ? qty : std::string_view("0"));
    m.add(tag::kAvgPx, fill && !price.empty() ? price : std::string_view("0"));
    m.writer().add_timestamp(tag::kTransactTime, now.utc_ns, codec::TimePrecision::kMillis, formatter_);
  });
  if (status != session::SendStatus::kOk) {
    ++counters_.send_failures;
    return false;
  }
  ++counters_.reports_sent;
  return true;
}

}  // namespace hft::apps
