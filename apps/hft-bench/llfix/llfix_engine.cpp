// The llfix engine adapter (--engines llfix) for the tx and rtt lanes: same
// venue, same message, same cores as the libhft and QuickFIX adapters, at
// the boundary of llfix's own networked_client_tx benchmark
// (llfix_client.hpp says what one send_new_order call covers). Its journal
// is llfix's serialised outgoing message files under RUN/llfix-store/
// outgoing, audited after the run (hft/lab/foreign_journals.hpp).
//
// Journal options: --segment-size is llfix's max_serialised_file_size (a
// multiple of 4096, llfix's own rule). llfix always creates a file at that
// size by writing zeros (at session start, and inline on the sending thread
// at each rotation), with no way to skip it or to prepare the next file
// ahead: --prealloc on is that, --prealloc off is refused.
#include <memory>
#include <string>
#include <system_error>

#include "foreign_adapter.hpp"
#include "llfix_client.hpp"

namespace hft::lab::lanes {
namespace {

constexpr std::uint64_t kLlfixFileGranule = 4096;

Expected<void> check_llfix_config(const LaneConfig& config) {
  if (!config.prealloc) {
    return Error{"--prealloc off: llfix has no equivalent (it always creates each journal file at its full size "
                 "by writing zeros, at start and inline at each rotation); use --prealloc on with --engines llfix"};
  }
  if (config.segment_size < kLlfixFileGranule || config.segment_size % kLlfixFileGranule != 0) {
    return Error{"--segment-size " + std::to_string(config.segment_size) +
                 ": llfix's max_serialised_file_size must be a positive multiple of 4096 bytes (e.g. 64MiB)"};
  }
  return {};
}

class LlfixAdapter final : public ForeignClientAdapter<hft_bench_llfix::LlfixClient> {
 public:
  std::string_view name() const noexcept override { return "llfix"; }
  std::string version() const override { return hft_bench_llfix::describe_llfix(); }

  Expected<void> start(const LaneConfig& config) override {
    if (auto ok = check_llfix_config(config); !ok) return ok.error();
    hft_bench_llfix::LlfixSettings s;
    set_venue_and_ids(s, config);
    store_dir_ = config.run_dir / "llfix-store";
    std::error_code ec;
    std::filesystem::create_directories(store_dir_, ec);
    if (ec) return Error{store_dir_.string() + ": cannot create (" + ec.message() + ")"};
    s.store_dir = store_dir_.string();
    s.max_serialised_file_size = config.segment_size;
    return start_client(hft_bench_llfix::make_llfix_client, s);
  }

  Expected<std::filesystem::path> stop() override {
    if (!client_) return std::filesystem::path{};
    const std::uint64_t failures = client_->failures();
    const std::filesystem::path outgoing = client_->outgoing_dir();
    std::string error;
    const bool stopped = client_->stop(error);
    client_.reset();  // flushes (msync) and unmaps the journals
    if (!stopped) return Error{error};
    if (failures != 0) {
      return Error{"llfix: " + std::to_string(failures) +
                   " ExecutionReport(s) without a numeric ClOrdID or exception(s) inside timed calls"};
    }
    return outgoing;
  }

 private:
  std::filesystem::path store_dir_;
};

EngineInfo make_llfix_engine() {
  EngineInfo info{"llfix", true, [] { return std::unique_ptr<EngineAdapter>(new LlfixAdapter()); }, {}, {}};
  info.check = check_llfix_config;
  return info;
}

}  // namespace
HFT_LAB_REGISTER_ENGINE(make_llfix_engine);
}  // namespace hft::lab::lanes
