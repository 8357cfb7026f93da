// The frame of one tx or rtt run: a pinned client thread; on it the venue
// is started (or the --venue is used), the engine adapter connects and logs
// on, background journal work settles, the lane's loop runs, then every
// ExecutionReport is awaited, the adapter and the venue stop, and the
// client's outbound journal and the venue's journals are audited.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/lab/engine_adapter.hpp"
#include "hft/lab/lane.hpp"
#include "hft/lab/thread_counters.hpp"
#include "lane_support.hpp"

namespace hft::lab::lanes {

/// What a lane's loop gets: the connected adapter and the run's result to fill.
struct EngineRun {
  const LaneConfig& config;
  RunContext& context;
  EngineAdapter& adapter;
  RunResult& result;
  double hz = 0;                 ///< TSC ticks per second
  std::uint64_t reports = 0;     ///< ExecutionReports received so far (the loop adds to it)
  std::uint64_t orders = 0;      ///< orders sent so far (warm-up included; the loop adds to it)
  std::uint64_t mismatches = 0;  ///< reports whose ClOrdID was not the one expected
  /// The venue is a sink (variants "...-sink"): it answers nothing, so there
  /// is no report to wait for and no flow control by reports.
  bool sink = false;
  /// TSC of time 0 of the loop's series (the start of its measured phase):
  /// the loop sets it, the frame makes the events' stamps offsets from it.
  std::uint64_t time_origin = 0;
  /// The timed thread's OS counters (--os-counters on), or nullptr: the
  /// loop calls sample() after each measured call, outside its timed region.
  ThreadCounterSampler* os = nullptr;

  /// Starts the measured phase at TSC `now`: the series' time origin and
  /// the OS counters' baseline.
  void start_measuring(std::uint64_t now) noexcept {
    time_origin = now;
    if (os != nullptr) os->start(now);
  }
  /// After a measured call that ended at TSC `now` (outside its timed region).
  void after_call(std::uint64_t now) noexcept {
    if (os != nullptr) os->sample(now);
  }

  /// Polls once and adds to `reports`; returns what the adapter returned.
  std::uint32_t poll(std::uint64_t& first_index) noexcept {
    const std::uint32_t n = adapter.poll_execution_reports(first_index);
    reports += n;
    return n;
  }
};

/// The lane's loop. Errors end the run (the venue and adapter still stop).
using EngineLoop = std::function<Expected<void>(EngineRun&)>;

/// Runs one engine lane run (see the file comment). The venue answers each
/// order with exactly one ExecutionReport (hft-venue --no-fill), or, for a
/// variant whose name ends in "-sink", answers none (hft-venue --sink): its
/// inbound journal must then hold every order and its outbound journal no
/// ExecutionReport.
[[nodiscard]] Expected<RunResult> run_engine_lane(const LaneConfig& config, RunContext& context,
                                                  const EngineLoop& loop);

/// A lane of engine runs (tx, rtt): run once per --engines entry, one loop
/// per variant (in this order, all run by default); a variant whose name starts with "paced"
/// needs --rate > 0.
[[nodiscard]] Lane make_engine_lane(std::string name, std::string summary,
                                    std::vector<std::pair<std::string, EngineLoop>> loops);

/// True every 4096th call: cheap place to check a deadline in a spin loop.
[[nodiscard]] inline bool every_4096(std::uint64_t& counter) noexcept { return (++counter & 4095U) == 0; }

/// Ticks of `seconds` on the calibrated TSC.
[[nodiscard]] inline std::uint64_t ticks(double hz, double seconds) noexcept {
  return static_cast<std::uint64_t>(hz * seconds);
}

}  // namespace hft::lab::lanes
