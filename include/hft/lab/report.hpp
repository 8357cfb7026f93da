// Reports: report.json, a self-contained report.html and the console table.
//
// A Report holds what one bench invocation measured: its conditions, every
// run (each with its own statistics, never pooled) and the notes of what was
// skipped. Summaries group runs by (lane, variant, engine, arm, series) and
// use summarize() from stats.hpp: medians of per-run statistics, the largest
// actual maximum, long-call totals.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
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
};

/// Summary of one (lane, variant, engine, arm, series) over its runs.
struct SummaryRow {
  std::string lane, variant, engine, arm, series;
  Summary summary;
  std::vector<std::size_t> run_orders;  ///< RunRecord::order of the runs included
  double target_rate = 0;
  double median_achieved_rate = 0;
  std::uint64_t late_total = 0;
  std::uint64_t shed_total = 0;
};

/// Groups the successful runs of `report` and summarises each group.
[[nodiscard]] std::vector<SummaryRow> summarize_report(const Report& report);

/// Writes report.json. Error names the path.
[[nodiscard]] Expected<void> write_report_json(const std::filesystem::path& path, const Report& report);
/// The JSON text write_report_json writes (2-space indented).
[[nodiscard]] std::string report_json_text(const Report& report);
/// Writes the self-contained report.html (inline SVG; no scripts, no network).
[[nodiscard]] Expected<void> write_report_html(const std::filesystem::path& path, const Report& report);
/// Writes audit.json: the audit result of every run.
[[nodiscard]] Expected<void> write_audit_json(const std::filesystem::path& path, const Report& report);

/// The compact console table: one row per summary row, medians of per-run
/// statistics in microseconds and the largest maximum.
[[nodiscard]] std::string console_table(const Report& report);

/// Formats nanoseconds for people: "812 ns", "12.3 us", "4.56 ms".
[[nodiscard]] std::string format_ns(double ns);

}  // namespace hft::lab
