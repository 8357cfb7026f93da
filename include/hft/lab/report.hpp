// Reports: report.json, a self-contained report.html and the console table.
//
// A Report holds what one bench invocation measured: its conditions, every
// run (each with its own statistics, never pooled) and the notes of what was
// skipped. Summaries group runs by (lane, variant, engine, arm, series) and
// use summarize() from stats.hpp: medians of per-run statistics, the largest
// actual maximum, long-call totals. A run of an engine lane may carry floor
// brackets (a short floor run just before and just after it); summary rows
// compare engines with the first engine and with the floor only from runs
// whose brackets agree (docs/lab.md, "Floor brackets and comparisons").
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hft/core/expected.hpp"
#include "hft/lab/conditions.hpp"
#include "hft/lab/lane.hpp"
#include "hft/lab/stats.hpp"

namespace hft::lab {

/// One series of one run, analysed, with where its raw files went.
struct SeriesRecord {
  std::string name;
  Unit unit = Unit::kNanoseconds;
  double ticks_per_second = 1e9;
  Analysis analysis;
  std::string csv_file;     ///< relative to the output directory ("" if not written)
  std::string binary_file;  ///< relative to the output directory
  std::string hlog_file;    ///< HdrHistogram interval log, relative ("" if not written)
};

/// Lane and variant of the floor brackets.
inline constexpr std::string_view kBracketLane = "floor";
inline constexpr std::string_view kBracketVariant = "busy-closed";

/// One short floor run beside an engine run (docs/lab.md, "Floor brackets"):
/// the floor lane's busy-closed variant, closed loop, on the engine run's
/// cores and message size, with its raw series kept like every other.
struct BracketRun {
  std::string id;             ///< "<run id>.bracket-before" or "<run id>.bracket-after"
  SeriesRecord series;        ///< the floor's "rtt" series, analysed, with its files
  double started_s = 0;       ///< seconds since the bench started
  double elapsed_s = 0;
  double wall_seconds = 0;    ///< measured wall time of the floor run
  std::uint64_t completed = 0;
  std::uint64_t warmup_done = 0;
  AuditResult audit;          ///< the floor's echo check
  std::string error;          ///< non-empty: the floor run failed (no series then)

  /// True when the bracket has a series to judge by: no error, a sample,
  /// an audit that did not fail.
  [[nodiscard]] bool measured() const noexcept {
    return error.empty() && series.analysis.stats.count > 0 && audit.status != AuditResult::Status::kFail;
  }
};

/// The two brackets of one engine run: just before it and just after it.
struct Bracket {
  BracketRun before;
  BracketRun after;
};

/// What a run's two brackets say about the host between them.
struct BracketCheck {
  bool measured = false;         ///< both brackets measured (BracketRun::measured)
  double before_p50_ns = 0;
  double after_p50_ns = 0;
  double before_p99_ns = 0;
  double after_p99_ns = 0;
  double drift_p50 = 0;          ///< relative_drift of the p50s (NaN when not measured)
  double drift_p99 = 0;          ///< relative_drift of the p99s (NaN when not measured)
  bool agree = false;            ///< measured and drift_p50 <= the tolerance
};

/// |after - before| / before; infinity when before <= 0 and after differs,
/// 0 when both are 0.
[[nodiscard]] double relative_drift(double before, double after) noexcept;

/// Judges a run's brackets: they agree when both were measured and their
/// p50s drift by at most `tolerance` (a fraction: 0.10 is 10%). The p99
/// drift is reported, not judged.
[[nodiscard]] BracketCheck check_bracket(const Bracket& bracket, double tolerance) noexcept;

/// One measured run.
struct RunRecord {
  std::size_t order = 0;        ///< 1-based position in the run sequence
  std::string id;               ///< e.g. "r003-floor-busy-closed-default"
  LaneConfig config;            ///< as the lane saw it
  RunResult result;             ///< series moved out into `series`
  std::vector<SeriesRecord> series;
  std::vector<QuietSample> quiet_during;
  QuietVerdict quiet;
  double started_s = 0;         ///< seconds since the bench started
  double elapsed_s = 0;
  std::string error;            ///< non-empty if the run failed (no series then)
  std::optional<Bracket> bracket;  ///< floor brackets (engine lanes with --bracket-calls > 0)
  /// The run's events (result.events) as written, relative to the output
  /// directory ("" when the run was not traced).
  std::string events_file;
  /// The primary series' calls >= 100 us and the events overlapping each
  /// (events.hpp); empty when the run was not traced.
  std::optional<Attribution> attribution;
};

/// An experiment arm as given on the command line.
struct ArmSpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> overrides;
};

/// Everything one bench invocation produced.
struct Report {
  std::string command_line;
  std::string started_utc;      ///< ISO 8601
  SourceIdentity source;
  BuildInfo build;
  HostInfo host;
  double tsc_hz = 0;            ///< calibrated against CLOCK_MONOTONIC_RAW at start
  std::string tsc_calibration;  ///< how
  std::string experiment;       ///< empty: not an experiment
  std::vector<ArmSpec> arms;
  std::uint32_t runs_per_cell = 1;
  std::vector<QuietSample> quiet_before;
  QuietVerdict quiet;           ///< over the whole invocation
  std::vector<RunRecord> runs;
  std::vector<std::string> notes;  ///< e.g. "lane tx: not available in this build"
  /// --engines in their given order; the first is the baseline of the
  /// summary's ratio columns.
  std::vector<std::string> engines;
  std::uint64_t bracket_calls = 0;  ///< measured calls per floor bracket (0: brackets off)
  double bracket_tolerance = 0.10;  ///< largest p50 drift of agreeing brackets (fraction)
};

/// What summarize_report says about a row's ratio against the first engine.
enum class RatioStatus : std::uint8_t {
  kNone,              ///< the lane drives no engine: no ratio
  kBaseline,          ///< this row is the first engine's (ratio 1)
  kCompared,          ///< ratio of this row's compared medians over the baseline's
  kNoAgreeingRuns,    ///< no run of this row has agreeing brackets
  kBaselineNoAgreeingRuns,  ///< no run of the baseline row has agreeing brackets
  kNoBaseline,        ///< the first engine has no successful run of this lane/variant/arm/series
};
/// "none", "baseline", "compared", "no agreeing runs", "baseline has no agreeing runs", "no baseline runs".
[[nodiscard]] std::string_view to_string(RatioStatus status) noexcept;

/// Summary of one (lane, variant, engine, arm, series) over its runs.
///
/// Comparisons (ratio against the first engine, ratio against the floor)
/// use only the row's compared runs: those whose brackets agree when the
/// row's runs were bracketed, every run otherwise. Values that cannot be
/// computed are NaN (null in report.json).
struct SummaryRow {
  std::string lane, variant, engine, arm, series;
  Summary summary;
  std::vector<std::size_t> run_orders;  ///< RunRecord::order of the runs included
  std::vector<double> run_p50_ns;       ///< each run's p50, in run_orders order (the spread)
  std::vector<double> run_p99_ns;       ///< each run's p99, in run_orders order
  double target_rate = 0;
  double median_achieved_rate = 0;
  std::uint64_t late_total = 0;
  std::uint64_t shed_total = 0;

  bool bracketed = false;                   ///< the row's runs had floor brackets
  std::vector<std::size_t> compared_runs;   ///< runs the comparisons use
  std::vector<std::size_t> left_out_runs;   ///< bracketed runs whose brackets do not agree
  double compared_p50_ns = 0;               ///< median p50 over compared_runs (NaN if none)
  double compared_p99_ns = 0;               ///< median p99 over compared_runs (NaN if none)
  std::string baseline_engine;              ///< the first engine ("" for lanes without one)
  std::vector<std::size_t> baseline_runs;   ///< compared_runs of the baseline's row
  RatioStatus ratio_status = RatioStatus::kNone;
  double ratio_p50 = 0;                     ///< compared_p50_ns / the baseline's (NaN unless computed)
  double ratio_p99 = 0;                     ///< compared_p99_ns / the baseline's (NaN unless computed)
  /// Median over compared_runs of each run's floor p50 (the mean of its two
  /// brackets' p50s); NaN when not bracketed or no run agrees.
  double floor_p50_ns = 0;
  double floor_ratio_p50 = 0;               ///< compared_p50_ns / floor_p50_ns (NaN when that is)
};

/// Groups the successful runs of `report` and summarises each group; then
/// fills every row's comparisons (see SummaryRow) with
/// report.bracket_tolerance and report.engines.
[[nodiscard]] std::vector<SummaryRow> summarize_report(const Report& report);

/// A tick of a linear plot axis from 0.
struct AxisTick {
  double value;
  std::string label;
};

/// Ticks for a linear axis over [0, max]: a whole 1-2-5 step giving about
/// `target` ticks (at least 1 when `integer`), from 0 to the first multiple
/// of the step at or above max; labels have as many decimals as the step
/// needs (none for whole steps, thousands separated by commas), so no two
/// labels are the same.
[[nodiscard]] std::vector<AxisTick> axis_ticks(double max, bool integer, int target = 5);

/// Writes report.json. Error names the path.
[[nodiscard]] Expected<void> write_report_json(const std::filesystem::path& path, const Report& report);
/// The JSON text write_report_json writes (2-space indented).
[[nodiscard]] std::string report_json_text(const Report& report);
/// Writes the self-contained report.html (inline SVG; no scripts, no network).
[[nodiscard]] Expected<void> write_report_html(const std::filesystem::path& path, const Report& report);
/// Writes audit.json: the audit result of every run.
[[nodiscard]] Expected<void> write_audit_json(const std::filesystem::path& path, const Report& report);

/// The compact console table: one row per summary row, medians of per-run
/// statistics in microseconds, the runs' p50 and p99 spread (min..max), the
/// largest maximum and, for engine lanes, the ratio columns; then, when runs
/// were bracketed, the brackets' verdict (every run whose brackets do not
/// agree, named) and which runs each comparison used.
[[nodiscard]] std::string console_table(const Report& report);

/// Formats nanoseconds for people: "812 ns", "12.3 us", "4.56 ms".
[[nodiscard]] std::string format_ns(double ns);

/// One line on a run's long calls: "tx: 12 calls >= 100 us, 9 with events
/// (venue:rotate 4, os:involuntary_switches 5), 3 without".
[[nodiscard]] std::string attribution_line(const Attribution& a);

}  // namespace hft::lab
