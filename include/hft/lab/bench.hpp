// The bench runner: validates a configuration, plans the runs (interleaving
// experiment arms), runs each lane, writes raw series and reports.
//
// Order of runs. Cells are (lane, variant, engine) in command-line order. For
// repeat r = 0, 1, 2, ... the arms run in their given order when r is even
// and reversed when r is odd, and so do the cells within an arm; two arms A, B
// with three runs each give A B B A A B (rule 4: interleave, never run all of
// A then all of B). Without --experiment there is one arm, "default".
// A run of a lane that drives an engine is bracketed (bracket_calls > 0):
// a floor busy-closed run just before it and another just after it.
//
// Validation happens before anything runs: every planned LaneConfig (after
// arm overrides) is checked and every lane's preflight is called. Errors are
// one line that names the option and what to change.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/lab/lane.hpp"
#include "hft/lab/report.hpp"

namespace hft::lab {

/// When to print the progress line.
enum class ProgressMode : std::uint8_t { kAuto, kOn, kOff };

/// Parsed command line of hft-bench.
/// Beginning of run_bench's Error when --require-quiet refused to start.
inline constexpr const char* kNotQuietPrefix = "not quiet, no run started (--require-quiet): ";

struct BenchConfig {
  std::vector<std::string> lanes{"floor"};
  /// Variant filter: "name" (any selected lane with that variant) or
  /// "lane:name". Empty: each lane's default variants.
  std::vector<std::string> variants;
  std::vector<std::string> engines{"libhft"};
  std::uint32_t runs = 1;
  LaneConfig base;              ///< calls, warm-up, rate, window, cores, sizes, venue
  std::filesystem::path out_dir = "lab-out";
  std::string experiment;       ///< non-empty: experiment mode
  std::vector<ArmSpec> arms;    ///< experiment arms (at least two in experiment mode)
  bool write_csv = true;
  ProgressMode progress = ProgressMode::kAuto;
  double quiet_before_s = 1.0;  ///< quiet-check window before the first run
  double quiet_interval_s = 1.0;  ///< quiet sampling period during runs (0: off)
  double load_limit = 1.0;              ///< --load-limit: load average at or above it is not quiet
  double process_limit_percent = 5.0;   ///< --process-limit: another process above this % of a CPU
  /// --require-quiet: when the check before the first run fails, run_bench
  /// starts no timed run and returns an Error whose message begins with
  /// kNotQuietPrefix and names the load or the process that failed.
  bool require_quiet = false;
  /// --bracket-calls: measured calls of each floor bracket (floor
  /// busy-closed, run just before and just after every run of a lane that
  /// drives an engine, after the run's warm-up); 0 turns brackets off.
  std::uint64_t bracket_calls = 20'000;
  /// --bracket-tolerance: brackets agree when their p50 drift
  /// |after - before| / before is at most this fraction; must be > 0.
  double bracket_tolerance = 0.10;
  std::string command_line;
};

/// One planned run.
struct PlannedRun {
  LaneConfig config;
  const Lane* lane = nullptr;
  bool bracketed = false;  ///< floor brackets before and after (BenchConfig::bracket_calls)
};

/// The validated plan.
struct Plan {
  std::vector<PlannedRun> runs;
  std::vector<std::string> notes;  ///< lanes skipped, e.g. "lane tx: not available in this build"
};

/// Parses an arm "NAME:key=value[,key=value...]". Keys are the option names
/// without "--" (calls, warmup, rate, window, client-core, server-core,
/// message-size, segment-size, prealloc, connections, venue) or a lane
/// control. Errors name the text.
[[nodiscard]] Expected<ArmSpec> parse_arm(std::string_view text);

/// Parses a byte size: "67108864", "64MiB", "640M", "1GiB", "4KiB" (K/M/G
/// and KiB/MiB/GiB are powers of 1024).
[[nodiscard]] Expected<std::uint64_t> parse_size(std::string_view text);

/// Directory name of the `order`-th run (from 1): "r003-tx-unpaced-libhft-arm",
/// characters other than alphanumerics, '-', '_' and '.' replaced by '_'.
[[nodiscard]] std::string run_id(std::size_t order, const LaneConfig& c);

/// Parses "on"/"off" (also true/false, 1/0, yes/no).
[[nodiscard]] Expected<bool> parse_on_off(std::string_view text);

/// Arm order for `arms` arms over `runs` repeats: for each repeat, the arm
/// indices in run order (forward on even repeats, reversed on odd).
[[nodiscard]] std::vector<std::vector<std::size_t>> interleaved_order(std::size_t arms, std::uint32_t runs);

/// Validates `config` against `registry` and the host, and plans every run;
/// a lane with Lane::expand_plan rewrites its runs last. Nothing is
/// measured or written.
[[nodiscard]] Expected<Plan> plan_bench(const BenchConfig& config, const LaneRegistry& registry);

/// Prints the console figures of every lane of config.lanes that has
/// Lane::print_summary (each once, in --lanes order), after the runner's
/// summary table.
void print_lane_summaries(const BenchConfig& config, const LaneRegistry& registry, const Report& report,
                          std::ostream& out);

/// The floor run of a bracket beside `run`: lane floor, variant
/// busy-closed, `calls` measured calls after the run's warm-up, on the run's
/// client and server cores, with its message size.
[[nodiscard]] LaneConfig bracket_config(const LaneConfig& run, std::uint64_t calls);

/// Runs a plan: creates the output directory, calibrates the TSC, samples
/// the quiet check, runs every planned run (a bracketed one between its two
/// floor brackets), writes series/, report.json,
/// report.html and audit.json. `console` gets the notes, the table and where
/// the files are; `progress` gets the progress line. A failing run is
/// recorded in the report and does not stop the others.
[[nodiscard]] Expected<Report> run_bench(const BenchConfig& config, const Plan& plan, std::ostream& console,
                                         std::ostream& progress);

/// Checks that a TCP connection to host:port can be opened within
/// `timeout_ms` (for lane preflights such as "the venue is reachable").
[[nodiscard]] Expected<void> check_tcp_reachable(const std::string& host, std::uint16_t port, int timeout_ms = 1000);

}  // namespace hft::lab
