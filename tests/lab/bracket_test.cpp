// Floor brackets and the comparisons made from them, on synthetic reports:
// the drift of a run's brackets and whether they agree, ratio columns
// against the first engine and against the floor made only from agreeing
// runs, what the console and report.html say about runs that do not agree,
// the links of report.html, and time-axis ticks that never repeat a label.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "hft/lab/report.hpp"

namespace hft::lab {
namespace {

/// 1000 samples in ns, p50 = 500 + offset, p99 = 990 + offset.
Series samples(const std::string& name, std::int64_t offset) {
  Series s;
  s.name = name;
  s.values.resize(1000);
  std::iota(s.values.begin(), s.values.end(), 1 + offset);
  s.time.resize(1000);
  std::iota(s.time.begin(), s.time.end(), 0);
  return s;
}

SeriesRecord record(const std::string& id, const Series& s) {
  SeriesRecord sr;
  sr.name = s.name;
  sr.analysis = analyze(s);
  sr.binary_file = "series/" + id + "." + s.name + ".hftraw";
  sr.csv_file = "series/" + id + "." + s.name + ".csv";
  sr.hlog_file = "series/" + id + "." + s.name + ".hlog";
  return sr;
}

BracketRun bracket_run(const std::string& run_id, const char* which, std::int64_t offset) {
  BracketRun b;
  b.id = run_id + ".bracket-" + which;
  b.series = record(b.id, samples("rtt", offset));
  b.completed = 1000;
  b.audit = {AuditResult::Status::kPass, 1000, "every echo matched"};
  return b;
}

/// A tx run of `engine` whose "tx" series has p50 500 + offset, bracketed by
/// floor runs with p50 500 + before and 500 + after (when bracketed).
RunRecord engine_run(std::size_t order, const std::string& engine, std::int64_t offset, bool bracketed,
                     std::int64_t before = 0, std::int64_t after = 0) {
  RunRecord r;
  r.order = order;
  r.id = "r00" + std::to_string(order) + "-tx-unpaced-" + engine + "-default";
  r.config.lane = "tx";
  r.config.variant = "unpaced";
  r.config.engine = engine;
  r.series.push_back(record(r.id, samples("tx", offset)));
  r.result.audit = {AuditResult::Status::kPass, 1000, "journal ok"};
  r.result.wall_seconds = 0.01;
  if (bracketed) r.bracket = Bracket{bracket_run(r.id, "before", before), bracket_run(r.id, "after", after)};
  return r;
}

Report report_of(std::vector<RunRecord> runs, bool bracketed) {
  Report rep;
  rep.engines = {"libhft", "quickfix"};
  rep.bracket_calls = bracketed ? 1000 : 0;
  rep.bracket_tolerance = 0.10;
  rep.runs = std::move(runs);
  return rep;
}

const SummaryRow& row_of(const std::vector<SummaryRow>& rows, const std::string& engine) {
  for (const SummaryRow& r : rows) {
    if (r.engine == engine) return r;
  }
  ADD_FAILURE() << "no row for " << engine;
  return rows.front();
}

TEST(BracketDrift, is_the_relative_change_of_after_against_before) {
  EXPECT_DOUBLE_EQ(relative_drift(6400, 9900), 3500.0 / 6400.0);
  EXPECT_DOUBLE_EQ(relative_drift(9900, 6400), 3500.0 / 9900.0);
  EXPECT_DOUBLE_EQ(relative_drift(1000, 1000), 0.0);
  EXPECT_DOUBLE_EQ(relative_drift(0, 0), 0.0);
  EXPECT_TRUE(std::isinf(relative_drift(0, 5)));
}

TEST(BracketDrift, brackets_agree_within_the_tolerance_of_their_p50_and_report_the_p99_drift) {
  // p50 before 500 ns, after 540 ns: 8% drift; p99 990 -> 1030 ns.
  const Bracket b{bracket_run("r001", "before", 0), bracket_run("r001", "after", 40)};
  BracketCheck c = check_bracket(b, 0.10);
  EXPECT_TRUE(c.measured);
  EXPECT_EQ(c.before_p50_ns, 500);
  EXPECT_EQ(c.after_p50_ns, 540);
  EXPECT_EQ(c.before_p99_ns, 990);
  EXPECT_EQ(c.after_p99_ns, 1030);
  EXPECT_DOUBLE_EQ(c.drift_p50, 40.0 / 500.0);
  EXPECT_DOUBLE_EQ(c.drift_p99, 40.0 / 990.0);
  EXPECT_TRUE(c.agree);
  EXPECT_FALSE(check_bracket(b, 0.05).agree);  // 8% > 5%

  // A bracket that failed, or whose echo check failed, cannot agree.
  Bracket failed = b;
  failed.after.error = "floor busy-closed: client: connect: refused";
  c = check_bracket(failed, 0.10);
  EXPECT_FALSE(c.measured);
  EXPECT_FALSE(c.agree);
  EXPECT_TRUE(std::isnan(c.drift_p50));
  Bracket mismatched = b;
  mismatched.before.audit.status = AuditResult::Status::kFail;
  EXPECT_FALSE(check_bracket(mismatched, 0.10).agree);
}

TEST(BracketComparison, ratio_against_the_first_engine_uses_only_runs_whose_brackets_agree) {
  // libhft: runs 1 and 3 (p50 500, 600), both agreeing. quickfix: run 2
  // agrees (p50 1500), run 4 drifts 50% (p50 9500, left out).
  const Report rep = report_of({engine_run(1, "libhft", 0, true, 0, 10), engine_run(2, "quickfix", 1000, true, 0, 20),
                                engine_run(3, "libhft", 100, true, 10, 0), engine_run(4, "quickfix", 9000, true, 0, 250)},
                               true);
  const auto rows = summarize_report(rep);
  ASSERT_EQ(rows.size(), 2u);
  const SummaryRow& lib = row_of(rows, "libhft");
  const SummaryRow& qf = row_of(rows, "quickfix");
  EXPECT_TRUE(lib.bracketed);
  EXPECT_EQ(lib.ratio_status, RatioStatus::kBaseline);
  EXPECT_EQ(lib.compared_runs, (std::vector<std::size_t>{1, 3}));
  EXPECT_DOUBLE_EQ(lib.ratio_p50, 1.0);
  EXPECT_EQ(lib.run_p50_ns, (std::vector<double>{500, 600}));

  EXPECT_EQ(qf.ratio_status, RatioStatus::kCompared);
  EXPECT_EQ(qf.compared_runs, (std::vector<std::size_t>{2}));
  EXPECT_EQ(qf.left_out_runs, (std::vector<std::size_t>{4}));
  EXPECT_EQ(qf.baseline_engine, "libhft");
  EXPECT_EQ(qf.baseline_runs, (std::vector<std::size_t>{1, 3}));
  // 1500 / median(500, 600); with run 4 it would have been 5500 / 550.
  EXPECT_DOUBLE_EQ(qf.ratio_p50, 1500.0 / 550.0);
  EXPECT_DOUBLE_EQ(qf.ratio_p99, 1990.0 / 1040.0);
  // The summary's own medians still cover every run (rule 4).
  EXPECT_EQ(qf.summary.runs, 2u);
  EXPECT_DOUBLE_EQ(qf.summary.quantile("p50"), (1500.0 + 9500.0) / 2);
  // Against the floor: run 2's brackets have p50 500 and 520.
  EXPECT_DOUBLE_EQ(qf.floor_p50_ns, 510.0);
  EXPECT_DOUBLE_EQ(qf.floor_ratio_p50, 1500.0 / 510.0);

  const nlohmann::json j = nlohmann::json::parse(report_json_text(rep));
  const auto& cmp = j["summary"][1]["comparison"];
  EXPECT_EQ(cmp["status"], "compared");
  EXPECT_EQ(cmp["left_out_runs"], nlohmann::json({4}));
  EXPECT_DOUBLE_EQ(cmp["ratio_p50"].get<double>(), 1500.0 / 550.0);
  EXPECT_EQ(j["summary"][1]["per_run"]["p50_ns"], nlohmann::json({1500, 9500}));
  const auto& check = j["runs"][3]["bracket"]["check"];
  EXPECT_EQ(check["agree"], false);
  EXPECT_DOUBLE_EQ(check["drift_p50"].get<double>(), 0.5);
  EXPECT_EQ(j["runs"][3]["bracket"]["before"]["series"]["files"]["binary"],
            "series/r004-tx-unpaced-quickfix-default.bracket-before.rtt.hftraw");
  EXPECT_EQ(j["brackets"]["tolerance"], 0.10);

  const std::string table = console_table(rep);
  EXPECT_NE(table.find("x p50"), std::string::npos) << table;
  EXPECT_NE(table.find(" 2.73 "), std::string::npos) << table;  // 1500 / 550
  EXPECT_NE(table.find("1/2 !"), std::string::npos) << table;
  EXPECT_NE(table.find("3 of 4 runs agree"), std::string::npos) << table;
  EXPECT_NE(table.find("DO NOT AGREE: r004-tx-unpaced-quickfix-default: floor p50 500 ns before, 750 ns after "
                       "(drift 50.0%"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("tx unpaced default: libhft runs 1, 3 (baseline); quickfix runs 2 (left out: 4)"),
            std::string::npos)
      << table;
  // The spread of the runs beside the median: p50 min..max in us.
  EXPECT_NE(table.find("1.500..9.500"), std::string::npos) << table;
}

TEST(BracketComparison, a_row_with_no_agreeing_runs_is_not_compared_and_says_so) {
  const Report rep = report_of({engine_run(1, "libhft", 0, true, 0, 10), engine_run(2, "quickfix", 1000, true, 0, 400)},
                               true);
  const auto rows = summarize_report(rep);
  const SummaryRow& qf = row_of(rows, "quickfix");
  EXPECT_EQ(qf.ratio_status, RatioStatus::kNoAgreeingRuns);
  EXPECT_TRUE(qf.compared_runs.empty());
  EXPECT_TRUE(std::isnan(qf.ratio_p50));
  EXPECT_TRUE(std::isnan(qf.floor_p50_ns));
  const nlohmann::json j = nlohmann::json::parse(report_json_text(rep));
  EXPECT_TRUE(j["summary"][1]["comparison"]["ratio_p50"].is_null());
  EXPECT_EQ(j["summary"][1]["comparison"]["status"], "no agreeing runs");
  const std::string table = console_table(rep);
  EXPECT_NE(table.find("quickfix runs none (left out: 2): no agreeing runs, not compared"), std::string::npos)
      << table;

  // The other way round: the baseline has none, so nothing is compared with it.
  const Report rev = report_of({engine_run(1, "libhft", 0, true, 0, 400), engine_run(2, "quickfix", 1000, true, 0, 10)},
                               true);
  const auto rev_rows = summarize_report(rev);
  const SummaryRow& qf2 = row_of(rev_rows, "quickfix");
  EXPECT_EQ(qf2.ratio_status, RatioStatus::kBaselineNoAgreeingRuns);
  EXPECT_TRUE(std::isnan(qf2.ratio_p50));
  EXPECT_NE(console_table(rev).find("not compared, libhft has no agreeing runs"), std::string::npos);
}

TEST(BracketComparison, without_brackets_every_run_is_compared) {
  const Report rep = report_of({engine_run(1, "libhft", 0, false), engine_run(2, "quickfix", 1000, false),
                                engine_run(3, "quickfix", 9000, false)},
                               false);
  const auto rows = summarize_report(rep);
  const SummaryRow& qf = row_of(rows, "quickfix");
  EXPECT_FALSE(qf.bracketed);
  EXPECT_EQ(qf.compared_runs, (std::vector<std::size_t>{2, 3}));
  EXPECT_DOUBLE_EQ(qf.ratio_p50, 5500.0 / 500.0);
  EXPECT_TRUE(std::isnan(qf.floor_p50_ns));
  const std::string table = console_table(rep);
  EXPECT_NE(table.find("from every run (brackets off)"), std::string::npos) << table;
  EXPECT_EQ(table.find("brackets:"), std::string::npos) << table;
  EXPECT_EQ(table.find("agree"), std::string::npos) << table;
}

std::string html_of(const Report& rep) {
  const auto path = std::filesystem::temp_directory_path() / ("hft_lab_bracket_" + std::to_string(::getpid()) + ".html");
  EXPECT_TRUE(write_report_html(path, rep).ok());
  std::ifstream in(path);
  std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return html;
}

TEST(BracketReport, html_links_every_row_to_its_raw_files_and_audit_and_flags_disagreeing_runs) {
  const Report rep = report_of({engine_run(1, "libhft", 0, true, 0, 10), engine_run(2, "quickfix", 1000, true, 0, 250)},
                               true);
  const std::string html = html_of(rep);
  // Summary and run rows link the raw files, relative to the output directory.
  for (const char* ext : {".hftraw", ".csv", ".hlog"}) {
    EXPECT_NE(html.find(std::string("href='series/r002-tx-unpaced-quickfix-default.tx") + ext + "'"),
              std::string::npos)
        << ext;
    EXPECT_NE(html.find(std::string("href='series/r002-tx-unpaced-quickfix-default.bracket-after.rtt") + ext + "'"),
              std::string::npos)
        << ext;
  }
  EXPECT_NE(html.find("href='#audit-r001-tx-unpaced-libhft-default'"), std::string::npos);
  EXPECT_NE(html.find("href='audit.json'"), std::string::npos);
  // Every link is relative and every in-page link has its target.
  std::set<std::string> ids;
  for (auto p = html.find(" id='"); p != std::string::npos; p = html.find(" id='", p + 1)) {
    ids.insert(html.substr(p + 5, html.find('\'', p + 5) - p - 5));
  }
  std::size_t links = 0;
  for (auto p = html.find("href='"); p != std::string::npos; p = html.find("href='", p + 1)) {
    const std::string target = html.substr(p + 6, html.find('\'', p + 6) - p - 6);
    ++links;
    EXPECT_EQ(target.find("://"), std::string::npos) << target;
    EXPECT_NE(target.front(), '/') << target;
    if (target.front() == '#') {
      EXPECT_EQ(ids.count(target.substr(1)), 1u) << target;
    }
  }
  EXPECT_GT(links, 20u);
  // The run whose brackets drift is flagged, and its comparison says what it was made from.
  EXPECT_NE(html.find("1 of 2 bracketed runs agree"), std::string::npos);
  EXPECT_NE(html.find("<tr id='bracket-r002-tx-unpaced-quickfix-default' class='flag'>"), std::string::npos);
  EXPECT_NE(html.find("DO NOT AGREE: left out of comparisons"), std::string::npos);
  EXPECT_NE(html.find("no agreeing runs: not compared"), std::string::npos);
  EXPECT_NE(html.find("left out (brackets disagree): 2"), std::string::npos);
  // One point per run beside the median of p50 and p99 (one run each: two points per row).
  std::size_t points = 0;
  for (auto p = html.find("<circle r='2.5'"); p != std::string::npos; p = html.find("<circle r='2.5'", p + 1)) ++points;
  EXPECT_EQ(points, 4u);
}

TEST(AxisTicks, labels_never_repeat_and_cover_the_range) {
  for (const double max : {0.0007, 0.0013, 0.012, 0.05, 0.3, 1.0, 2.5, 7.0, 12.0, 999.0, 1234567.0}) {
    for (const bool integer : {false, true}) {
      if (integer && max < 1) continue;
      const std::vector<AxisTick> ticks = axis_ticks(max, integer);
      ASSERT_GE(ticks.size(), 2u) << max;
      EXPECT_EQ(ticks.front().value, 0);
      EXPECT_GE(ticks.back().value, max) << max;
      EXPECT_LE(ticks.size(), 11u) << max;
      std::set<std::string> labels;
      for (const AxisTick& t : ticks) EXPECT_TRUE(labels.insert(t.label).second) << max << ": " << t.label;
    }
  }
  // A call index axis of three calls counts in whole calls, not 0, 1, 1, 2, 2, 3.
  std::string joined;
  for (const AxisTick& t : axis_ticks(3, true)) joined += t.label + " ";
  EXPECT_EQ(joined, "0 1 2 3 ");
  joined.clear();
  for (const AxisTick& t : axis_ticks(0.012, false)) joined += t.label + " ";
  EXPECT_EQ(joined, "0.000 0.005 0.010 0.015 ");
  EXPECT_EQ(axis_ticks(2'000'000, true).back().label, "2,000,000");
}

}  // namespace
}  // namespace hft::lab
