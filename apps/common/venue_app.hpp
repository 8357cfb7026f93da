// The venue simulator's application: answers each NewOrderSingle with an
// ExecutionReport "new" and then, optionally, a "fill". Allocation-free per
// order: identifiers are counters formatted into fixed buffers.
#pragma once

#include <cstdint>

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

  VenueOptions options_;
  VenueCounters counters_;
  std::uint64_t next_order_id_ = 1;
  std::uint64_t next_exec_id_ = 1;
  codec::TimestampFormatter formatter_;
};

}  // namespace hft::apps
