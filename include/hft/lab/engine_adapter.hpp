// The engine adapter: the small interface the tx and rtt lanes drive, so that
// libhft, QuickFIX or another engine is measured by the same lane code at the
// same boundary (LAB.md, "Lanes").
//
// An adapter is created per run, started outside the timed region, driven by
// one thread, then stopped; stop() hands back the journal to audit. The two
// timed operations are noexcept and must not allocate in the engines that
// promise so (the lane's numbers are that engine's numbers, whatever it does).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/lab/lane.hpp"

namespace hft::lab {

/// One engine connected to a venue as an initiator.
class EngineAdapter {
 public:
  virtual ~EngineAdapter() = default;

  /// Engine name as given to --engines ("libhft", "quickfix", "llfix").
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  /// Engine version and build facts for the report.
  [[nodiscard]] virtual std::string version() const = 0;

  /// Configures journal (config.segment_size, config.prealloc, run_dir),
  /// connects to config.venue_host:venue_port, logs on and waits for the
  /// Logon reply. Not timed. Errors name what to change.
  [[nodiscard]] virtual Expected<void> start(const LaneConfig& config) = 0;

  /// tx boundary: takes an order, sets ClOrdID from `i`, encodes it with
  /// header, SendingTime and CheckSum, journals it and returns when send()
  /// has accepted every byte. False if the message could not be sent.
  [[nodiscard]] virtual bool send_new_order(std::uint64_t i) noexcept = 0;

  /// Polls inbound traffic once; returns the number of ExecutionReports
  /// received by this call and stores the ClOrdID index of the first in
  /// `first_index` (rtt lanes match replies to orders by it).
  [[nodiscard]] virtual std::uint32_t poll_execution_reports(std::uint64_t& first_index) noexcept = 0;

  /// Stages of send_new_order the adapter stamps itself (the tx lane's
  /// series "stage.<name>"), in call order; none by default (the lane still
  /// splits every engine's call into send() and the rest).
  [[nodiscard]] virtual std::span<const std::string_view> stage_names() const noexcept { return {}; }
  /// TSC ticks of each stage of the last send_new_order, stage_names() order.
  [[nodiscard]] virtual std::span<const std::uint64_t> last_stages() const noexcept { return {}; }

  /// Bytes of the last order on the wire (LAB.md: 230-242).
  [[nodiscard]] virtual std::size_t last_order_size() const noexcept = 0;

  // ---- cross-thread send (tx variants paced-ring, paced-ring-sink) ----

  /// True if the engine has a way for another thread to hand it orders
  /// that its own thread then sends.
  [[nodiscard]] virtual bool supports_queued_send() const noexcept { return false; }
  /// Producer thread (not the driving thread; one producer): builds order
  /// `i` and hands it to the engine thread. False if the engine cannot take
  /// it now (its queue is full): nothing was queued.
  [[nodiscard]] virtual bool queue_new_order(std::uint64_t i) noexcept {
    (void)i;
    return false;
  }
  /// Driving thread: sends what the producer queued, in order; returns the
  /// orders sent by this call (send() has returned for each when it returns)
  /// and adds those the engine refused to `failed`.
  [[nodiscard]] virtual std::uint32_t send_queued(std::uint64_t& failed) noexcept {
    (void)failed;
    return 0;
  }

  /// Logs out and closes; returns the directory of the outbound journal for
  /// the audit (empty path if the engine journals elsewhere or not at all).
  [[nodiscard]] virtual Expected<std::filesystem::path> stop() = 0;
};

/// An engine the lab can build adapters for.
struct EngineInfo {
  std::string name;
  bool available = false;
  std::function<std::unique_ptr<EngineAdapter>()> make;
  /// Optional: refuses a run configuration the engine cannot honour (a
  /// journal setting it has no equivalent for), with an error that names
  /// the option. The engine lanes call it in their preflight, before any run.
  std::function<Expected<void>(const LaneConfig&)> check;
  /// For an unavailable engine: how to build it (appended to the error).
  std::string build_hint;
  /// The adapter connects over TLS when the run asks for it (variants
  /// ending in "-tls"; LaneConfig::extra "tls-ca", "tls-cert", "tls-key").
  bool tls = false;
};

/// The engine table; "libhft", "quickfix" and "llfix" are always known.
class EngineRegistry {
 public:
  static EngineRegistry& instance();
  /// Adds or replaces the engine of that name.
  void add(EngineInfo engine);
  [[nodiscard]] const EngineInfo* find(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> names() const;

  EngineRegistry();

 private:
  std::vector<EngineInfo> engines_;
};

/// Registers an engine at static initialisation (same linking rule as lanes).
struct EngineRegistrar {
  explicit EngineRegistrar(EngineInfo (*factory)());
};
#define HFT_LAB_REGISTER_ENGINE(factory) \
  static const ::hft::lab::EngineRegistrar HFT_LAB_CONCAT(hft_lab_engine_registrar_, __LINE__){factory}

}  // namespace hft::lab
