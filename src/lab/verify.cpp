#include "hft/lab/verify.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>

#include "hft/lab/events.hpp"
#include "hft/lab/hlog.hpp"
#include "hft/lab/manifest.hpp"
#include "hft/lab/raw_series.hpp"
#include "report_json.hpp"
#include "text.hpp"

namespace hft::lab {

using nlohmann::json;

namespace {

/// Compares what the raw series give (`want`) with report.json (`got`),
/// leaf by leaf; every differing leaf is one problem prefixed by `where`.
void compare(const json& want, const json& got, const std::string& path, const std::string& where,
             VerifyResult& r) {
  if (want.is_object()) {
    for (const auto& item : want.items()) {
      const std::string sub = path.empty() ? item.key() : path + "." + item.key();
      if (!got.is_object() || !got.contains(item.key())) {
        ++r.statistics;
        r.problems.push_back(where + sub + ": missing in report.json (recomputed " + item.value().dump() + ")");
        continue;
      }
      compare(item.value(), got.at(item.key()), sub, where, r);
    }
    return;
  }
  ++r.statistics;
  if (want == got) return;
  if (want.is_array() && got.is_array()) {
    std::size_t k = 0;
    while (k < want.size() && k < got.size() && want[k] == got[k]) ++k;
    r.problems.push_back(where + path + ": report.json lists " + std::to_string(got.size()) + ", recomputed " +
                         std::to_string(want.size()) + "; first difference at position " + std::to_string(k));
    return;
  }
  r.problems.push_back(where + path + ": report.json " + got.dump() + ", recomputed " + want.dump());
}

std::string fixed3(double v) { return detail::fixed(v, 3); }

/// Decodes `rel` (an .hlog) and compares each interval with what `series` gives.
void check_hlog(const std::filesystem::path& dir, const std::string& rel, const Series& series, double wall_s,
                const std::string& where, VerifyResult& r) {
  auto log = read_hlog(dir / rel);
  if (!log) {
    r.problems.push_back(where + log.error().message);
    return;
  }
  ++r.hlogs;
  auto want = hlog_intervals(series, wall_s);
  if (!want) {
    r.problems.push_back(where + rel + ": " + want.error().message);
    return;
  }
  r.intervals += log->intervals.size();
  if (want->size() != log->intervals.size()) {
    r.problems.push_back(where + rel + ": " + std::to_string(log->intervals.size()) + " intervals, the raw series gives " +
                         std::to_string(want->size()));
    return;
  }
  for (std::size_t k = 0; k < want->size(); ++k) {
    const HlogInterval& w = (*want)[k];
    const HlogInterval& g = log->intervals[k];
    const std::string at = where + rel + ": interval " + std::to_string(k) + ": ";
    if (fixed3(w.start_s) != fixed3(g.start_s) || fixed3(w.length_s) != fixed3(g.length_s)) {
      r.problems.push_back(at + "start/length " + fixed3(g.start_s) + "/" + fixed3(g.length_s) +
                           " s, the raw series gives " + fixed3(w.start_s) + "/" + fixed3(w.length_s));
    }
    if (fixed3(w.max_ms) != fixed3(g.max_ms)) {
      r.problems.push_back(at + "Interval_Max " + fixed3(g.max_ms) + " ms, the raw series gives " + fixed3(w.max_ms));
    }
    if (w.counts != g.counts || w.highest != g.highest || w.significant_digits != g.significant_digits) {
      r.problems.push_back(at + "histogram (" + std::to_string(g.total()) +
                           " samples) differs from the raw series' (" + std::to_string(w.total()) + ")");
    }
  }
}

/// Re-reads every raw file the report.json series entry `s` names (HFTRAW
/// and CSV, each on its own), recomputes its statistics and compares them,
/// and checks its .hlog against the first file read; returns the statistics
/// of that first file, or nothing when no file could be read.
std::optional<Stats> check_series(const std::filesystem::path& dir, const json& s, const std::string& where_run,
                                  double wall_s, VerifyResult& r) {
  const std::string name = s.at("name").get<std::string>();
  const json& files = s.at("files");
  std::optional<Stats> first;
  for (const char* kind : {"binary", "csv"}) {
    const std::string rel = files.value(kind, std::string());
    if (rel.empty()) continue;
    const std::string where = where_run + " (" + rel + "): ";
    auto series = std::string(kind) == "binary" ? read_binary(dir / rel) : read_csv(dir / rel);
    if (!series) {
      r.problems.push_back(where_run + ": " + series.error().message);
      continue;
    }
    ++r.series_files;
    if (series->name != name) r.problems.push_back(where + "the file names series '" + series->name + "'");
    if (std::string(to_string(series->unit)) != s.at("unit").get<std::string>() ||
        series->ticks_per_second != s.at("ticks_per_second").get<double>()) {
      r.problems.push_back(where + "unit or ticks_per_second differ from report.json");
    }
    const Stats stats = compute_stats(*series);
    compare(detail::stats_json(stats), s.at("stats"), "", where, r);
    if (first) continue;
    first = stats;
    // The interval log beside the raw series, against the first raw file read.
    const std::string hlog_rel = files.value("hlog", std::string());
    if (!hlog_rel.empty()) check_hlog(dir, hlog_rel, *series, wall_s, where_run + ": ", r);
  }
  if (!first && files.value("binary", std::string()).empty() && files.value("csv", std::string()).empty()) {
    r.problems.push_back(where_run + ": report.json names no raw series file");
  }
  return first;
}

/// Re-reads a run's events file and its primary series and recomputes the
/// attribution of its long calls (report.json runs[].attribution).
void check_attribution(const std::filesystem::path& dir, const json& run, const std::string& where,
                       VerifyResult& r) {
  const json& a = run.at("attribution");
  const json& ev = run.at("events");
  if (ev.is_null()) {
    r.problems.push_back(where + "an attribution without events");
    return;
  }
  const std::string events_rel = ev.at("file").get<std::string>();
  auto events = read_events_csv(dir / events_rel);
  if (!events) {
    r.problems.push_back(where + events.error().message);
    return;
  }
  if (events->events.size() != ev.at("count").get<std::size_t>() ||
      events->dropped != ev.at("dropped").get<std::uint64_t>()) {
    r.problems.push_back(where + events_rel + ": " + std::to_string(events->events.size()) + " events, " +
                         std::to_string(events->dropped) + " dropped; report.json says " + ev.at("count").dump() +
                         ", " + ev.at("dropped").dump());
  }
  const std::string name = a.at("series").get<std::string>();
  std::string series_rel;
  for (const json& s : run.at("series")) {
    if (s.at("name").get<std::string>() == name) series_rel = s.at("files").value("binary", std::string());
  }
  if (series_rel.empty()) {
    r.problems.push_back(where + "the attributed series '" + name + "' has no raw file");
    return;
  }
  auto series = read_binary(dir / series_rel);
  if (!series) {
    r.problems.push_back(where + series.error().message);
    return;
  }
  ++r.attributions;
  const Attribution again = attribute_long_calls(*series, events->events, a.at("threshold_ns").get<double>());
  compare(detail::attribution_json(again), a, "", where, r);
}

/// One bracket of report.json (runs[].bracket.before or .after), its series
/// re-read; `usable` is false when its series could not be read.
BracketRun rebuild_bracket_run(const std::filesystem::path& dir, const json& b, const std::string& where,
                               VerifyResult& r, bool& usable) {
  BracketRun out;
  out.id = b.at("id").get<std::string>();
  out.error = b.at("error").get<std::string>();
  const std::string status = b.at("audit").at("status").get<std::string>();
  out.audit.status = status == "fail" ? AuditResult::Status::kFail
                     : status == "pass" ? AuditResult::Status::kPass
                                        : AuditResult::Status::kNotRun;
  if (!out.error.empty() || b.at("series").is_null()) return out;
  ++r.series;
  auto stats = check_series(dir, b.at("series"), where + ", series " + b.at("series").at("name").get<std::string>(),
                            b.at("wall_seconds").get<double>(), r);
  if (!stats) {
    usable = false;
    return out;
  }
  out.series.name = b.at("series").at("name").get<std::string>();
  out.series.analysis.stats = *stats;
  return out;
}

std::string row_key(const std::string& lane, const std::string& variant, const std::string& engine,
                    const std::string& arm, const std::string& series) {
  return lane + " " + variant + " " + engine + " " + arm + " " + series;
}

void check_statistics(const std::filesystem::path& dir, VerifyResult& r) {
  json report;
  {
    std::ifstream in(dir / "report.json");
    if (!in) {
      r.problems.push_back("report.json: missing or unreadable: no statistic can be checked");
      return;
    }
    report = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (report.is_discarded() || !report.is_object()) {
      r.problems.push_back("report.json: not valid JSON: no statistic can be checked");
      return;
    }
  }
  try {
    // Rebuilt from report.json with recomputed statistics, for summarize_report.
    Report rebuilt;
    // Settings the comparisons were made with (not derived from the series).
    rebuilt.engines = report.value("engines", std::vector<std::string>{});
    if (report.contains("brackets")) {
      rebuilt.bracket_calls = report.at("brackets").at("calls").get<std::uint64_t>();
      rebuilt.bracket_tolerance = report.at("brackets").at("tolerance").get<double>();
    }
    std::set<std::string> unreadable;  // summary keys with a series that could not be read
    for (const json& run : report.at("runs")) {
      RunRecord rec;
      rec.order = run.at("order").get<std::size_t>();
      rec.id = run.at("id").get<std::string>();
      rec.error = run.at("error").get<std::string>();
      rec.config.lane = run.at("lane").get<std::string>();
      rec.config.variant = run.at("variant").get<std::string>();
      rec.config.engine = run.at("engine").get<std::string>();
      rec.config.arm = run.at("arm").get<std::string>();
      rec.result.target_rate = run.at("target_rate").get<double>();
      rec.result.achieved_rate = run.at("achieved_rate").get<double>();
      rec.result.late = run.at("late").get<std::uint64_t>();
      rec.result.shed = run.at("shed").get<std::uint64_t>();
      const double wall_s = run.at("wall_seconds").get<double>();
      if (!run.at("series").empty()) ++r.runs;
      for (const json& s : run.at("series")) {
        ++r.series;
        SeriesRecord sr;
        sr.name = s.at("name").get<std::string>();
        const std::string key = row_key(rec.config.lane, rec.config.variant, rec.config.engine, rec.config.arm, sr.name);
        auto stats = check_series(dir, s, "run " + rec.id + ", series " + sr.name, wall_s, r);
        if (!stats) {
          unreadable.insert(key);
          continue;
        }
        sr.analysis.stats = *stats;
        rec.series.push_back(std::move(sr));
      }
      if (run.contains("attribution") && !run.at("attribution").is_null()) {
        check_attribution(dir, run, "run " + rec.id + ", attribution: ", r);
      }
      // Floor brackets: each series re-read, the verdict recomputed.
      if (run.contains("bracket") && !run.at("bracket").is_null()) {
        const json& b = run.at("bracket");
        ++r.brackets;
        bool usable = true;
        Bracket bracket;
        bracket.before = rebuild_bracket_run(dir, b.at("before"), "run " + rec.id + ", bracket before", r, usable);
        bracket.after = rebuild_bracket_run(dir, b.at("after"), "run " + rec.id + ", bracket after", r, usable);
        if (usable) {
          compare(detail::bracket_check_json(check_bracket(bracket, rebuilt.bracket_tolerance)), b.at("check"), "",
                  "run " + rec.id + ", bracket check: ", r);
        } else {
          r.problems.push_back("run " + rec.id + ", bracket check: not recomputed: a bracket series could not be read");
          // The summary rows of this run depend on the verdict.
          for (const SeriesRecord& sr : rec.series) {
            unreadable.insert(row_key(rec.config.lane, rec.config.variant, rec.config.engine, rec.config.arm, sr.name));
          }
        }
        rec.bracket = std::move(bracket);
      }
      rebuilt.runs.push_back(std::move(rec));
    }

    // Summary rows: medians over runs, largest max, long-call totals.
    std::map<std::string, const json*> reported;
    for (const json& row : report.at("summary")) {
      reported[row_key(row.at("lane").get<std::string>(), row.at("variant").get<std::string>(),
                       row.at("engine").get<std::string>(), row.at("arm").get<std::string>(),
                       row.at("series").get<std::string>())] = &row;
    }
    std::set<std::string> seen;
    for (const SummaryRow& row : summarize_report(rebuilt)) {
      const std::string key = row_key(row.lane, row.variant, row.engine, row.arm, row.series);
      seen.insert(key);
      const std::string where = "summary " + key + ": ";
      if (unreadable.count(key) != 0) {
        r.problems.push_back(where + "not recomputed: a raw series of it could not be read");
        continue;
      }
      ++r.summary_rows;
      const auto it = reported.find(key);
      if (it == reported.end()) {
        r.problems.push_back(where + "missing in report.json");
        continue;
      }
      compare(detail::summary_json(row), *it->second, "", where, r);
    }
    for (const auto& [key, row] : reported) {
      if (seen.count(key) == 0 && unreadable.count(key) == 0) {
        r.problems.push_back("summary " + key + ": in report.json, but no run of report.json has this series");
      }
    }
  } catch (const json::exception& e) {
    r.problems.push_back(std::string("report.json: malformed (") + e.what() + ")");
  }
}

using detail::with_commas;

}  // namespace

VerifyResult verify_output(const std::filesystem::path& dir) {
  VerifyResult r;
  if (!std::filesystem::is_directory(dir)) {
    r.problems.push_back(dir.string() + ": not a directory");
    return r;
  }
  r.checked = true;
  ManifestCheck m = check_manifest(dir);
  r.files = m.listed;
  r.manifest_problems = m.problems.size();
  r.problems = std::move(m.problems);
  check_statistics(dir, r);
  return r;
}

std::string verify_text(const std::filesystem::path& dir, const VerifyResult& r) {
  std::string o = "verify " + dir.string() + "\n";
  if (!r.checked) {
    for (const std::string& p : r.problems) o += "  " + p + "\n";
    return o + "FAILED: nothing checked\n";
  }
  o += "manifest: " + with_commas(r.files) + " files listed; " +
       (r.manifest_problems == 0 ? std::string("every size and SHA-256 matches, no file added or missing")
                                 : std::to_string(r.manifest_problems) + " problem(s)") +
       "\n";
  o += "series: " + with_commas(r.series) + " series of " + with_commas(r.runs) + " runs re-read from " +
       with_commas(r.series_files) + " raw files (HFTRAW, CSV); statistics recomputed with the lab's exact code\n";
  if (r.brackets > 0) {
    o += "brackets: " + with_commas(r.brackets) + " runs' floor brackets re-read with the series; drift and agreement "
         "recomputed\n";
  }
  if (r.attributions > 0) {
    o += "attribution: " + with_commas(r.attributions) + " runs' long calls and overlapping events recomputed from "
         "the raw series and the events files\n";
  }
  o += "summary: " + with_commas(r.summary_rows) + " rows recomputed (medians over runs, largest max, long-call totals, comparisons)\n";
  o += "hlog: " + with_commas(r.hlogs) + " interval logs decoded, " + with_commas(r.intervals) +
       " intervals compared with the raw series\n";
  if (r.ok()) {
    o += "verified: " + with_commas(r.files) + " files, " + with_commas(r.series) + " series, " +
         with_commas(r.statistics) + " statistics\n";
    return o;
  }
  for (const std::string& p : r.problems) o += "  " + p + "\n";
  o += "FAILED: " + with_commas(r.problems.size()) + " problem(s) in " + dir.string() + "\n";
  return o;
}

}  // namespace hft::lab
