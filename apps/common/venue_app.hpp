// The venue simulator's application: answers each NewOrderSingle with an
// ExecutionReport "new" and then, optionally, a "fill". Allocation-free per
// order: identifiers are counters formatted into fixed buffers.
//
// A report the session could not record (SendStatus kStoreFull/kStoreError:
// its journal is full) ends the session, and the order is not accepted: the
// client resends it (PossDupFlag=Y) after the next logon. An order whose
// "new" went out but whose fill did not is remembered, so that its resend
// gets only the fill: no order is acknowledged or executed twice.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hft/codec/encoder.hpp"
#include "hft/session/application.hpp"
#include "hft/session/session.hpp"

namespace hft::apps {

struct VenueOptions {
  bool fill = true;  ///< send a fill after the "new" acknowledgement
};

struct VenueCounters {
  std::uint64_t orders = 0;
  std::uint64_t reports_sent = 0;
  std::uint64_t send_failures = 0;
  std::uint64_t logons = 0;
  std::uint64_t logouts = 0;
};

class VenueApplication : public session::Application {
 public:
  explicit VenueApplication(VenueOptions options = {}) noexcept : options_(options) {}

  void on_logon(session::Session&) noexcept override { ++counters_.logons; }
  void on_logout(session::Session&) noexcept override { ++counters_.logouts; }
  session::Decision from_app(session::Session& session, const codec::MessageView& message) noexcept override;

  [[nodiscard]] const VenueCounters& counters() const noexcept { return counters_; }

 private:
  bool send_report(session::Session& session, const codec::MessageView& order, std::uint64_t order_number,
                   bool fill) noexcept;

  /// An order acknowledged whose fill could not be sent (failure path only).
  struct Unfilled {
    std::string cl_ord_id;
    std::uint64_t order_number = 0;
  };

  VenueOptions options_;
  std::vector<Unfilled> unfilled_;
  VenueCounters counters_;
  std::uint64_t next_order_id_ = 1;
  std::uint64_t next_exec_id_ = 1;
  codec::TimestampFormatter formatter_;
};

}  // namespace hft::apps
