// The QuickFIX engine adapter (--engines quickfix) for the tx and rtt
// lanes: same venue, same message, same boundary as libhft's adapter
// (qf_client.hpp says what one send_new_order call covers). Its journal is
// QuickFIX's FileStore under RUN/quickfix-store, audited after the run.
#include <memory>
#include <string>

#include "hft/lab/engine_adapter.hpp"
#include "lane_support.hpp"
#include "qf_client.hpp"

namespace hft::lab::lanes {
namespace {

class QuickfixAdapter final : public EngineAdapter {
 public:
  std::string_view name() const noexcept override { return "quickfix"; }
  std::string version() const override {
    return client_ ? client_->version() : std::string("QuickFIX 1.15.1 (Debian libquickfix)");
  }

  Expected<void> start(const LaneConfig& config) override {
    hft_bench_qf::QfSettings s;
    s.host = config.venue_host;
    s.port = config.venue_port;
    store_dir_ = config.run_dir / "quickfix-store";
    std::error_code ec;
    std::filesystem::create_directories(store_dir_, ec);
    s.store_dir = store_dir_.string();
    s.spec_dir = spec_dir();
    s.sender = std::string(ref::kSender);
    s.target = std::string(ref::kTarget);
    s.sender_sub = std::string(ref::kSenderSub);
    s.target_sub = std::string(ref::kTargetSub);
    std::string error;
    client_ = hft_bench_qf::make_qf_client(s, error);
    if (!client_) return Error{error};
    if (!client_->start(error, 10'000)) return Error{error};
    return {};
  }

  bool send_new_order(std::uint64_t i) noexcept override { return client_->send_new_order(i); }

  std::uint32_t poll_execution_reports(std::uint64_t& first_index) noexcept override {
    return client_->poll(first_index);
  }

  std::size_t last_order_size() const noexcept override { return client_ ? client_->last_order_size() : 0; }

  Expected<std::filesystem::path> stop() override {
    if (!client_) return std::filesystem::path{};
    const std::uint64_t exceptions = client_->exceptions();
    std::string error;
    const bool stopped = client_->stop(error);
    client_.reset();
    if (!stopped) return Error{error};
    if (exceptions != 0) {
      return Error{"QuickFIX threw " + std::to_string(exceptions) + " exception(s) inside timed calls"};
    }
    return store_dir_;
  }

 private:
  std::unique_ptr<hft_bench_qf::QfClient> client_;
  std::filesystem::path store_dir_;
};

EngineInfo make_quickfix_engine() {
  return EngineInfo{"quickfix", true, [] { return std::unique_ptr<EngineAdapter>(new QuickfixAdapter()); }};
}

}  // namespace
HFT_LAB_REGISTER_ENGINE(make_quickfix_engine);
}  // namespace hft::lab::lanes
