// The venue simulator's application: answers each NewOrderSingle with an
// ExecutionReport "new" and then, optionally, a "fill". Allocation-free per
// order: identifiers are counters formatted into fixed buffers, and the
// ClOrdIDs it has executed go into a set preallocated at construction.
//
// A resent order (PossDupFlag=Y) whose ClOrdID the venue has executed on the
// same session is not executed again, as a real venue would not: its
// reports went out the first time and are in the venue's own journal for
// the client's ResendRequest. A resent order the venue has not seen (sent
// before a restart of the venue, or never received) is executed. An order
// without PossDupFlag is always executed, even with a ClOrdID seen before:
// benchmark clients restart their ClOrdIDs at 1 on every run.
//
// A report the session could not record (SendStatus kStoreFull/kStoreError:
// its journal is full) ends the session, and the order is not accepted: the
// client resends it (PossDupFlag=Y) after the next logon. An order whose
// "new" went out but whose fill did not is remembered, so that its resend
// gets only the fill: no order is acknowledged or executed twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hft/codec/encoder.hpp"
#include "hft/core/byte_buffer.hpp"
#include "hft/session/application.hpp"
#include "hft/session/logger.hpp"
#include "hft/session/session.hpp"

namespace hft::apps {

/// A set of (session, ClOrdID) with a fixed capacity, preallocated: insert
/// and find never allocate. Keys of up to kInlineKey bytes are compared in
/// full; longer ones by their first kInlineKey bytes, length and a 64-bit
/// hash of the whole.
class OrderIdSet {
 public:
  static constexpr std::size_t kInlineKey = 30;

  /// Room for `capacity` keys (0: the set is off; find() is always false and
  /// insert() does nothing).
  explicit OrderIdSet(std::size_t capacity);

  enum class Insert : std::uint8_t { kAdded, kPresent, kFull };
  /// kAdded, or kPresent if `id` is already there. Once the set is full it
  /// returns kFull at once, without looking (a present id too): a full
  /// table would cost a probe of cache misses per order for nothing.
  [[nodiscard]] Insert insert(const void* session, std::string_view id) noexcept;
  [[nodiscard]] bool contains(const void* session, std::string_view id) const noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

 private:
  struct Entry {
    std::uint64_t hash = 0;  ///< 0: empty
    const void* session = nullptr;
    std::uint16_t length = 0;
    char key[kInlineKey] = {};
  };
  static_assert(sizeof(Entry) == 48);

  [[nodiscard]] static std::uint64_t hash_of(const void* session, std::string_view id) noexcept;
  [[nodiscard]] bool matches(const Entry& e, std::uint64_t h, const void* session,
                             std::string_view id) const noexcept;

  std::size_t capacity_ = 0;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
  // Resident from construction (the whole table: orders hash to any page of
  // it) and zero, all in one call rather than one page fault per page.
  core::ResidentArray<Entry> slots_;
};

struct VenueOptions {
  bool fill = true;  ///< send a fill after the "new" acknowledgement
  /// hft-venue --sink: accept and count orders (each is journaled inbound by
  /// the session) but answer none, as llfix's benchmark server does: the
  /// lab's tx boundary without ExecutionReports sharing the loopback.
  bool sink = false;
  /// ClOrdIDs remembered to recognise a resent order (hft-venue
  /// --dedup-capacity). Full: orders still execute but are no longer
  /// remembered (VenueCounters::dedup_full, one WARN line); 0 turns the
  /// check off.
  std::size_t dedup_capacity = std::size_t{1} << 18;
  /// Where the one "set is full" line goes (may be null).
  session::Logger* logger = nullptr;
};

struct VenueCounters {
  std::uint64_t orders = 0;  ///< orders executed (with sink: received)
  std::uint64_t reports_sent = 0;
  std::uint64_t send_failures = 0;
  std::uint64_t logons = 0;
  std::uint64_t logouts = 0;
  std::uint64_t possdup_orders = 0;  ///< orders received with PossDupFlag=Y
  std::uint64_t duplicates = 0;      ///< PossDup orders not executed: their ClOrdID was executed before
  std::uint64_t dedup_full = 0;      ///< orders executed but not remembered: the set was full
};

class VenueApplication : public session::Application {
 public:
  explicit VenueApplication(VenueOptions options = {});

  void on_logon(session::Session&) noexcept override { ++counters_.logons; }
  void on_logout(session::Session&) noexcept override { ++counters_.logouts; }
  using session::Application::from_app;
  session::Decision from_app(session::Session& session, const codec::MessageView& message,
                             const session::InboundInfo& info) noexcept override;

  [[nodiscard]] const VenueCounters& counters() const noexcept { return counters_; }

 private:
  bool send_report(session::Session& session, const codec::MessageView& order, std::uint64_t order_number,
                   bool fill) noexcept;
  /// The report with the typed messages of FIX.4.4 (V = Fix44) or 5.0SP2
  /// (FIXT.1.1 sessions); the other versions write it field by field.
  template <typename V>
  void write_typed_report(session::OutgoingMessage& m, const codec::MessageView& order, std::string_view order_id,
                          std::string_view exec_id, bool fill, std::int64_t now_ns,
                          codec::TimePrecision precision) noexcept;

  /// An order acknowledged whose fill could not be sent (failure path only).
  struct Unfilled {
    std::string cl_ord_id;
    std::uint64_t order_number = 0;
  };

  VenueOptions options_;
  std::vector<Unfilled> unfilled_;
  VenueCounters counters_;
  OrderIdSet executed_;
  std::uint64_t next_order_id_ = 1;
  std::uint64_t next_exec_id_ = 1;
  codec::TimestampFormatter formatter_;
};

}  // namespace hft::apps
