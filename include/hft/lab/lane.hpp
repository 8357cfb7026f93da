// Lanes: what the lab can measure, as a registry the runner, report and CLI
// only ever iterate.
//
// A lane is a name, its variants, an optional preflight check (run for every
// planned configuration before anything is measured) and a run function that
// performs one measured run and returns raw series. The runner does
// everything else (interleaving, statistics, raw files, reports), so adding a
// lane never touches the runner, the report or the CLI:
//
//     hft::lab::Lane make_tx_lane() {
//       hft::lab::Lane lane;
//       lane.name = "tx";
//       lane.uses_engine = true;
//       lane.variants = {"unpaced", "paced"};
//       lane.run = [](const LaneConfig& c, RunContext& ctx) -> Expected<RunResult> { ... };
//       return lane;
//     }
//     HFT_LAB_REGISTER_LANE(make_tx_lane);
//
// Registration through HFT_LAB_REGISTER_LANE runs at static initialisation,
// so the translation unit must be linked in whole: compile it into the
// executable (apps/hft-bench/lanes/*.cpp are globbed into hft-bench) or link
// its library with $<LINK_LIBRARY:WHOLE_ARCHIVE,...>. The lane names of
// LAB.md (floor, tx, rtt, rx, codec) are always known to the registry; until
// a lane is registered it reports "not available in this build".
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hft/core/clock.hpp"
#include "hft/core/expected.hpp"
#include "hft/lab/events.hpp"
#include "hft/lab/series.hpp"

namespace hft::lab {

/// Everything a lane needs to perform one run. Filled by the runner from the
/// command line and the experiment arm; lanes read, never write.
struct LaneConfig {
  std::string lane;
  std::string variant;              ///< one of Lane::variants
  std::string engine = "none";      ///< engine name for lanes with uses_engine
  std::string arm = "default";      ///< experiment arm name
  std::uint32_t repeat = 0;         ///< 0-based repeat of this (lane, variant, engine, arm)
  std::uint64_t calls = 1'000'000;  ///< measured calls
  std::uint64_t warmup = 1'000;     ///< warm-up calls, run and not recorded
  double rate = 50'000;             ///< target calls/s for paced variants
  std::uint32_t window = 64;        ///< in-flight limit for paced variants
  int client_core = -1;             ///< -1: not pinned
  int server_core = -1;             ///< -1: not pinned (venue / echo server)
  std::size_t message_size = 230;   ///< bytes on the wire per message (floor)
  std::uint64_t segment_size = 64ULL << 20;  ///< journal segment bytes
  bool prealloc = true;             ///< journal segment preallocation
  std::string venue_host = "127.0.0.1";
  std::uint16_t venue_port = 0;     ///< 0: the lane starts its own venue
  std::uint32_t connections = 1;    ///< rx: client connections
  std::filesystem::path run_dir;    ///< scratch directory of this run (journals)
  /// Arm overrides that are not one of the fields above, for lane-specific
  /// controls (key=value from --arm).
  std::map<std::string, std::string> extra;
};

/// What a lane may use while it runs.
struct RunContext {
  const core::TscClock* tsc = nullptr;        ///< calibrated once per bench
  std::atomic<std::uint64_t>* progress = nullptr;  ///< calls done so far (relaxed stores)
  std::atomic<std::uint64_t>* progress_total = nullptr;

  /// Publishes progress (cheap: one relaxed store).
  void report_progress(std::uint64_t done) const noexcept {
    if (progress != nullptr) progress->store(done, std::memory_order_relaxed);
  }
};

/// A TSC read fenced on both sides (core::rdtsc_fenced): what lanes stamp
/// their samples with, in ticks of RunContext::tsc (a sample brackets
/// exactly the calls between two reads).
[[nodiscard]] inline std::uint64_t tsc_now() noexcept {
  return core::rdtsc_fenced();
}

/// Where a thread ran: requested CPU and the CPUs observed at start and end.
struct ThreadPlacement {
  std::string role;        ///< "client", "server", "venue", ...
  int requested_cpu = -1;  ///< -1: not pinned
  int cpu_at_start = -1;
  int cpu_at_end = -1;
};

/// Result of the post-run check of a run's output (rule 10).
struct AuditResult {
  enum class Status : std::uint8_t { kNotRun, kNotApplicable, kPass, kFail };
  Status status = Status::kNotRun;
  std::uint64_t checked = 0;  ///< records / messages checked
  std::string detail;         ///< what was checked, or what failed
};
[[nodiscard]] std::string_view to_string(AuditResult::Status status) noexcept;

/// One measured run as a lane returns it.
struct RunResult {
  /// Raw series; the first is the primary one (rtt, service time, ...).
  std::vector<Series> series;
  std::uint64_t completed = 0;      ///< measured calls completed
  std::uint64_t warmup_done = 0;
  double wall_seconds = 0;          ///< measured wall time
  double target_rate = 0;           ///< calls/s; 0 for closed / unpaced runs
  double achieved_rate = 0;         ///< completed / wall_seconds
  std::uint64_t late = 0;           ///< paced: scheduler delay >= threshold
  double late_threshold_ns = 0;
  std::uint64_t shed = 0;           ///< paced: calls never issued
  std::vector<std::uint64_t> shed_indices;
  std::uint64_t overflow = 0;       ///< recorder full: calls not stored
  std::uint32_t window = 0;         ///< in-flight limit (0: closed)
  std::uint32_t max_in_flight = 0;
  std::vector<ThreadPlacement> threads;
  AuditResult audit;
  /// Lane-specific facts for the report (socket buffer sizes, journal files).
  std::vector<std::pair<std::string, std::string>> notes;
  /// Events in the clock of the series (offsets from their time origin),
  /// for the attribution of the primary series' long calls (events.hpp).
  RunEvents events;
  /// The series whose long calls are attributed, by name; empty: the
  /// primary one.
  std::string attributed_series;
};

class Pacer;
struct Plan;    // bench.hpp
struct Report;  // report.hpp

/// Moves a finished Pacer's outcome into `out`: completed calls, target and
/// achieved rate, wall time, late calls and their threshold, shed calls,
/// window and largest in-flight count (from its settings and counters), and
/// its three series. Warm-ups, audit and notes stay the caller's.
void take_pacer_result(Pacer&& pacer, RunResult& out);

/// A lane (see the file comment).
struct Lane {
  std::string name;
  std::string summary;                    ///< one line: what is timed
  bool available = false;                 ///< false: a placeholder
  bool uses_engine = false;               ///< run once per --engines entry
  /// With uses_engine: the engines this lane can drive (empty: every one).
  /// Others named in --engines are left out of this lane with a plan note.
  std::vector<std::string> engines;
  std::vector<std::string> variants;      ///< all variants
  std::vector<std::string> default_variants;
  /// Extra --arm keys this lane reads from LaneConfig::extra (others are
  /// rejected as typos before anything runs).
  std::vector<std::string> controls;
  /// Checked for every planned config before any run starts (e.g. the venue
  /// is reachable). The error message is shown as is, on one line.
  std::function<Expected<void>(const LaneConfig&)> preflight;
  std::function<Expected<RunResult>(const LaneConfig&, RunContext&)> run;
  /// Optional: rewrites the plan after plan_bench has planned and
  /// preflighted it, for a lane that plans its own run sets (the load lane:
  /// one per --sessions entry); it must leave other lanes' runs as they are
  /// and number run directories as the runner does (run_id). `out_dir` is
  /// BenchConfig::out_dir. An error is a refused argument.
  std::function<Expected<void>(Plan&, const std::filesystem::path& out_dir)> expand_plan;
  /// Optional: the lane's own console figures, printed after the runner's
  /// summary (print_lane_summaries); nothing when none of its runs is in
  /// the report.
  std::function<void(const Report&, std::ostream&)> print_summary;
};

/// The lane table.
class LaneRegistry {
 public:
  /// The process-wide registry: LAB.md's lanes (floor available; the others
  /// placeholders until registered) plus everything HFT_LAB_REGISTER_LANE added.
  static LaneRegistry& instance();

  /// Adds a lane, replacing one of the same name (e.g. a placeholder).
  void add(Lane lane);
  /// The lane named `name`, or nullptr.
  [[nodiscard]] const Lane* find(std::string_view name) const;
  /// Every lane name, in registration order (LAB.md's lanes first).
  [[nodiscard]] std::vector<std::string> names() const;
  /// Names of lanes that are available.
  [[nodiscard]] std::vector<std::string> available_names() const;

  /// A registry with only the placeholders and the floor lane (for tests).
  LaneRegistry();

 private:
  std::vector<Lane> lanes_;
};

/// A placeholder lane: known name, not available.
[[nodiscard]] Lane placeholder_lane(std::string name, std::string summary);

/// Registers the lane made by `factory` into LaneRegistry::instance().
struct LaneRegistrar {
  explicit LaneRegistrar(Lane (*factory)());
};

#define HFT_LAB_CONCAT_INNER(a, b) a##b
#define HFT_LAB_CONCAT(a, b) HFT_LAB_CONCAT_INNER(a, b)
/// Registers a lane factory (a function returning hft::lab::Lane) at start-up.
#define HFT_LAB_REGISTER_LANE(factory) \
  static const ::hft::lab::LaneRegistrar HFT_LAB_CONCAT(hft_lab_lane_registrar_, __LINE__){factory}

}  // namespace hft::lab
