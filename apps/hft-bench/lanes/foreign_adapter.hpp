// What the adapters of the other engines share (QuickFIX in ../quickfix,
// llfix in ../llfix): each engine's code is compiled apart, at its own
// language level, behind a small client interface (send_new_order, poll,
// last_order_size, start, stop); the adapter forwards the timed calls to it
// and starts it with the reference CompIDs.
#pragma once

#include <memory>
#include <string>

#include "hft/lab/engine_adapter.hpp"
#include "lane_support.hpp"

namespace hft::lab::lanes {

/// Sets the venue's address and the reference order's CompIDs and sub IDs
/// (LAB.md) on an engine's settings struct (fields host, port, sender,
/// target, sender_sub, target_sub).
template <typename Settings>
void set_venue_and_ids(Settings& s, const LaneConfig& config) {
  s.host = config.venue_host;
  s.port = config.venue_port;
  s.sender = std::string(ref::kSender);
  s.target = std::string(ref::kTarget);
  s.sender_sub = std::string(ref::kSenderSub);
  s.target_sub = std::string(ref::kTargetSub);
}

/// An EngineAdapter whose timed calls go to `client_` unchanged.
template <typename Client>
class ForeignClientAdapter : public EngineAdapter {
 public:
  bool send_new_order(std::uint64_t i) noexcept override { return client_->send_new_order(i); }

  std::uint32_t poll_execution_reports(std::uint64_t& first_index) noexcept override {
    return client_->poll(first_index);
  }

  std::size_t last_order_size() const noexcept override { return client_ ? client_->last_order_size() : 0; }

 protected:
  /// Builds the client with `make(settings, error)` and logs it on (10 s).
  template <typename Make, typename Settings>
  Expected<void> start_client(Make make, const Settings& settings) {
    std::string error;
    client_ = make(settings, error);
    if (!client_) return Error{error};
    if (!client_->start(error, 10'000)) return Error{error};
    return {};
  }

  std::unique_ptr<Client> client_;
};

}  // namespace hft::lab::lanes
