// The LAB.md reference NewOrderSingle, field by field: what every engine
// lane sends (whatever the engine) and what the journal audits count and
// check. FIXT.1.1 session, FIX.5.0SP2 application messages; 230-242 bytes on
// the wire with its header (EngineAdapter::last_order_size).
#pragma once

#include <cstdint>
#include <string_view>

#include "hft/codec/encoder.hpp"

namespace hft::lab::ref {

inline constexpr std::string_view kBeginString = "FIXT.1.1";
inline constexpr std::string_view kApplVerID = "FIX.5.0SP2";  ///< DefaultApplVerID of the session
inline constexpr std::string_view kSender = "CLIENT1";
inline constexpr std::string_view kTarget = "EXECUTOR";
inline constexpr std::string_view kSenderSub = "SNDR_SUB";  ///< 50
inline constexpr std::string_view kTargetSub = "SRVR_SUB";  ///< 57
inline constexpr std::string_view kSymbol = "NOKIA.HE";     ///< 55
inline constexpr char kSide = '1';                          ///< 54
inline constexpr std::int64_t kOrderQty = 10;               ///< 38
inline constexpr std::int64_t kPrice = 10000;               ///< 44
inline constexpr char kOrdType = '2';                       ///< 40
inline constexpr char kTimeInForce = '0';                   ///< 59
/// 453 with its two party entries, pre-encoded (SOH-terminated).
// clang-format off
inline constexpr std::string_view kParties =
    "453=2\x01" "448=PARTY1\x01" "447=D\x01" "452=1\x01" "448=PARTY2\x01" "447=D\x01" "452=3\x01";
// clang-format on

/// Appends the reference NewOrderSingle's body (11 .. 60) to `w`, after
/// its header: ClOrdID `id`, TransactTime `now_ns` in milliseconds.
inline void write_order_body(codec::MessageWriter& w, std::uint64_t id, std::int64_t now_ns,
                             codec::TimestampFormatter& f) noexcept {
  w.add_uint(codec::tag::kClOrdID, id);
  w.add(codec::tag::kSymbol, kSymbol);
  w.add_char(codec::tag::kSide, kSide);
  w.add_int(codec::tag::kOrderQty, kOrderQty);
  w.add_int(codec::tag::kPrice, kPrice);
  w.add_char(codec::tag::kOrdType, kOrdType);
  w.add_char(codec::tag::kTimeInForce, kTimeInForce);
  w.add_raw(kParties);
  w.add_timestamp(codec::tag::kTransactTime, now_ns, codec::TimePrecision::kMillis, f);
}

}  // namespace hft::lab::ref
