#include "common/venue_app.hpp"

#include <algorithm>
#include <cstring>

#include "hft/codec/encoder.hpp"
#include "hft/engine/engine.hpp"
#include "hft/messages/fix44.hpp"
#include "hft/messages/fix50sp2.hpp"

namespace hft::apps {

namespace tag = codec::tag;

OrderIdSet::OrderIdSet(std::size_t capacity) : capacity_(capacity) {
  if (capacity == 0) return;
  // Linear probing at most ~70% full.
  std::size_t slots = 16;
  while (slots < capacity + capacity / 2) slots <<= 1;
  mask_ = slots - 1;
  slots_ = core::ResidentArray<Entry>(slots);
}

std::uint64_t OrderIdSet::hash_of(const void* session, std::string_view id) noexcept {
  // FNV-1a over the bytes, seeded with the session; never 0 (0 marks empty).
  std::uint64_t h =
      0xcbf29ce484222325ull ^ (reinterpret_cast<std::uintptr_t>(session) * 0x9E3779B97F4A7C15ull);
  for (const char c : id) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  h ^= h >> 29;
  return h == 0 ? 1 : h;
}

bool OrderIdSet::matches(const Entry& e, std::uint64_t h, const void* session,
                         std::string_view id) const noexcept {
  const std::size_t n = std::min(id.size(), kInlineKey);
  return e.hash == h && e.session == session && e.length == id.size() &&
         std::memcmp(e.key, id.data(), n) == 0;
}

OrderIdSet::Insert OrderIdSet::insert(const void* session, std::string_view id) noexcept {
  // Full: no probe (see the header); contains() still finds every id.
  if (size_ == capacity_) return Insert::kFull;
  const std::uint64_t h = hash_of(session, id);
  for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
    Entry& e = slots_[i];
    if (e.hash == 0) {
      e.hash = h;
      e.session = session;
      e.length = static_cast<std::uint16_t>(std::min<std::size_t>(id.size(), 0xFFFF));
      std::memcpy(e.key, id.data(), std::min(id.size(), kInlineKey));
      ++size_;
      return Insert::kAdded;
    }
    if (matches(e, h, session, id)) return Insert::kPresent;
  }
}

bool OrderIdSet::contains(const void* session, std::string_view id) const noexcept {
  if (capacity_ == 0) return false;
  const std::uint64_t h = hash_of(session, id);
  for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
    const Entry& e = slots_[i];
    if (e.hash == 0) return false;
    if (matches(e, h, session, id)) return true;
  }
}

VenueApplication::VenueApplication(VenueOptions options)
    : options_(options), executed_(options.dedup_capacity) {}

session::Decision VenueApplication::from_app(session::Session& session, const codec::MessageView& message,
                                             const session::InboundInfo& info) noexcept {
  if (message.msg_type() != "D") return session::Decision::unsupported_message_type();
  if (options_.sink) {
    ++counters_.orders;
    return session::Decision::accept();
  }
  const std::string_view cl_ord_id = message.get(tag::kClOrdID);
  if (info.poss_dup) [[unlikely]] {
    ++counters_.possdup_orders;
    for (auto it = unfilled_.begin(); it != unfilled_.end(); ++it) {
      if (it->cl_ord_id != cl_ord_id) continue;
      // Acknowledged before, its fill not recorded (a full store): the
      // resend gets what it did not get.
      if (send_report(session, message, it->order_number, true)) unfilled_.erase(it);
      return session::Decision::accept();
    }
    if (executed_.contains(&session, cl_ord_id)) {
      ++counters_.duplicates;
      return session::Decision::accept();
    }
  }
  ++counters_.orders;
  const std::uint64_t order_id = next_order_id_++;
  // Either report failing ends the session, and this order is then not
  // accepted (the session's rule): the client resends it.
  if (!send_report(session, message, order_id, false)) return session::Decision::accept();
  // Remembered once its acknowledgement is recorded: an order whose "new"
  // could not be recorded was not executed, and its resend must be.
  if (executed_.capacity() != 0 && executed_.insert(&session, cl_ord_id) == OrderIdSet::Insert::kFull) {
    if (counters_.dedup_full++ == 0 && options_.logger != nullptr &&
        options_.logger->enabled(session::LogLevel::kWarn)) {
      options_.logger->log(
          session::LogLevel::kWarn, session.id(),
          "venue: ClOrdID set full (--dedup-capacity): orders from now on are not remembered, "
          "a resent one will be executed again");
    }
  }
  if (options_.fill && !send_report(session, message, order_id, true)) {
    unfilled_.push_back(Unfilled{std::string(cl_ord_id), order_id});
  }
  return session::Decision::accept();
}

// The two versions the venue writes with typed messages.
struct Fix44 {
  using Order = fix44::NewOrderSingleReader;
  using Report = fix44::ExecutionReportWriter;
  using ExecType = fix44::ExecType;
  using OrdStatus = fix44::OrdStatus;
  using Side = fix44::Side;
  static constexpr bool kAvgPxRequired = true;
};
struct Fix50Sp2 {
  using Order = fix50sp2::NewOrderSingleReader;
  using Report = fix50sp2::ExecutionReportWriter;
  using ExecType = fix50sp2::ExecType;
  using OrdStatus = fix50sp2::OrdStatus;
  using Side = fix50sp2::Side;
  static constexpr bool kAvgPxRequired = false;  // optional in 5.0SP2
};

template <typename V>
void VenueApplication::write_typed_report(session::OutgoingMessage& m, const codec::MessageView& view,
                                          std::string_view order_id, std::string_view exec_id, bool fill,
                                          std::int64_t now_ns, codec::TimePrecision precision) noexcept {
  const typename V::Order order(view);
  const codec::Decimal zero{0, 0};
  const codec::Decimal qty = order.order_qty_data().order_qty().value_or(zero);
  const auto price = order.price();
  const auto exec_type = fill ? V::ExecType::kTrade : V::ExecType::kNew;
  const auto ord_status = fill ? V::OrdStatus::kFilled : V::OrdStatus::kNew;
  const auto side = order.side().value_or(typename V::Side{});
  const codec::Decimal leaves = fill ? zero : qty, cum = fill ? qty : zero;
  const codec::Decimal avg = fill && price ? *price : zero;
  auto report = [&] {
    if constexpr (V::kAvgPxRequired) {
      return typename V::Report(m.writer(), formatter_, order_id, exec_id, exec_type, ord_status, side, leaves, cum,
                                avg);
    } else {
      typename V::Report r(m.writer(), formatter_, order_id, exec_id, exec_type, ord_status, side, leaves, cum);
      r.avg_px(avg);
      return r;
    }
  }();
  report.cl_ord_id(order.cl_ord_id().value_or(""));
  report.instrument().symbol(order.instrument().symbol().value_or(""));
  report.order_qty_data().order_qty(qty);
  if (price) report.price(*price);
  if (fill) report.last_qty(qty).last_px(price.value_or(zero));
  m.writer().add_timestamp(tag::kTransactTime, now_ns, precision, formatter_);
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
  // One clock read for SendingTime and TransactTime.
  const auto now = engine::Engine::now();
  const std::string_view oid{order_id, order_id_len}, eid{exec_id, exec_id_len};
  const codec::FixVersion version = session.version();
  const auto status = session.send_app("8", now, [&](session::OutgoingMessage& m) {
    if (version == codec::FixVersion::kFix44) {
      write_typed_report<Fix44>(m, order, oid, eid, fill, now.utc_ns, session.timestamp_precision());
    } else if (version == codec::FixVersion::kFixT11) {
      write_typed_report<Fix50Sp2>(m, order, oid, eid, fill, now.utc_ns, session.timestamp_precision());
    } else {
      // FIX.4.0-4.3: ExecTransType, ExecType 2 for a fill, ... by tag.
      const auto qty = order.get(tag::kOrderQty);
      const auto price = order.get(tag::kPrice);
      m.add(tag::kOrderID, oid);
      m.add(tag::kClOrdID, order.get(tag::kClOrdID));
      m.add(tag::kExecID, eid);
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
      m.writer().add_timestamp(tag::kTransactTime, now.utc_ns, session.timestamp_precision(), formatter_);
    }
  });
  if (status != session::SendStatus::kOk) {
    ++counters_.send_failures;
    return false;
  }
  ++counters_.reports_sent;
  return true;
}

}  // namespace hft::apps
