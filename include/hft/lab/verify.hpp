// hft-bench verify DIR: re-derives a bench's output directory.
//
// Three checks, every problem listed (not just the first):
//  1. manifest.sha256 (manifest.hpp): every listed file is there with its
//     size and SHA-256, and no file is there that is not listed;
//  2. statistics: every raw series report.json references (HFTRAW and CSV,
//     each file on its own) is re-read and its statistics recomputed with
//     compute_stats (stats.hpp), then compared with report.json exactly (the
//     report holds full double precision; nothing is rounded): count, min,
//     mean, p50..p99.99, max and its index, long-call counts and indices;
//     the summary rows are recomputed from those with summarize_report
//     (medians over runs, largest max, long-call totals and medians, and the
//     rate, late and shed figures from the runs, the per-run p50/p99, and the
//     comparisons: compared runs, ratios against the first engine and the
//     floor) and compared the same way; the floor brackets of a run are
//     re-read like every series and their verdict (p50s, p99s, drifts,
//     agreement) recomputed and compared;
//  3. HdrHistogram logs (hlog.hpp): every series' .hlog is decoded and each
//     interval compared with the histogram of the raw series' samples.
// A file altered after the run fails check 1 naming it; a sample altered
// with the manifest rewritten to match still fails check 2 naming the run,
// the series and the statistic.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace hft::lab {

/// What verify checked and what it found.
struct VerifyResult {
  bool checked = false;           ///< the directory was there to check
  std::size_t files = 0;          ///< files listed in the manifest
  std::size_t runs = 0;           ///< runs in report.json with series
  std::size_t series = 0;         ///< series of those runs and of their floor brackets
  std::size_t brackets = 0;       ///< runs with floor brackets (their verdicts recomputed)
  std::size_t series_files = 0;   ///< raw series files re-read (HFTRAW, CSV)
  std::size_t statistics = 0;     ///< values compared with report.json (series and summary)
  std::size_t summary_rows = 0;   ///< summary rows recomputed
  std::size_t hlogs = 0;          ///< .hlog files decoded and compared
  std::size_t intervals = 0;      ///< their intervals
  std::size_t attributions = 0;   ///< runs whose long-call attribution was recomputed from series and events
  std::size_t manifest_problems = 0;
  std::vector<std::string> problems;  ///< one line each; empty: verified
  [[nodiscard]] bool ok() const noexcept { return problems.empty(); }
};

/// Runs every check on the output directory `dir`. Never throws; a missing
/// or malformed report.json or manifest is a problem like any other.
[[nodiscard]] VerifyResult verify_output(const std::filesystem::path& dir);

/// The console text: a few lines of what was checked, then either
/// "verified: N files, M series, K statistics" or every problem and
/// "FAILED: P problems".
[[nodiscard]] std::string verify_text(const std::filesystem::path& dir, const VerifyResult& result);

}  // namespace hft::lab
