// report.json, report.html and the console table from a synthetic report:
// per-run statistics, summaries as medians of per-run statistics with the
// largest maximum, conditions, achieved rates, audit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "hft/lab/report.hpp"

namespace hft::lab {
namespace {

RunRecord make_run(std::size_t order, const std::string& arm, std::int64_t offset, std::int64_t stall_ns) {
  RunRecord r;
  r.order = order;
  r.id = "r00" + std::to_string(order) + "-floor-busy-closed-" + arm;
  r.config.lane = "floor";
  r.config.variant = "busy-closed";
  r.config.arm = arm;
  r.config.client_core = 1;
  r.config.server_core = 0;
  r.config.segment_size = arm == "seg640" ? 640ULL << 20 : 64ULL << 20;
  Series s;
  s.name = "rtt";
  s.values.resize(1000);
  std::iota(s.values.begin(), s.values.end(), 1 + offset);
  s.values[500] = stall_ns;
  SeriesRecord sr;
  sr.name = "rtt";
  sr.analysis = analyze(s);
  sr.binary_file = "series/" + r.id + ".rtt.hftraw";
  r.series.push_back(sr);
  r.result.completed = 1000;
  r.result.achieved_rate = 1000.0 * static_cast<double>(order);
  r.result.wall_seconds = 1.0;
  r.result.threads.push_back({"client", 1, 1, 1});
  r.result.audit = {AuditResult::Status::kPass, 1000, "ok"};
  return r;
}

Report make_report() {
  Report rep;
  rep.command_line = "hft-bench --lanes floor";
  rep.source.commit = std::string(40, 'a');
  rep.source.how = "git rev-parse";
  rep.build = build_info();
  rep.host = host_info();
  rep.tsc_hz = 2.9e9;
  rep.experiment = "journal";
  rep.arms = {{"seg64", {{"segment-size", "64MiB"}}}, {"seg640", {{"segment-size", "640MiB"}}}};
  rep.runs.push_back(make_run(1, "seg64", 0, 3'000'000));
  rep.runs.push_back(make_run(2, "seg640", 0, 900));
  rep.runs.push_back(make_run(3, "seg640", 100, 950));
  rep.runs.push_back(make_run(4, "seg64", 100, 22'000'000));
  rep.runs.push_back(make_run(5, "seg64", 50, 5'000'000));
  rep.notes.push_back("lane tx: not available in this build");
  return rep;
}

TEST(Report, json_carries_conditions_per_run_stats_and_summaries) {
  const Report rep = make_report();
  const nlohmann::json j = nlohmann::json::parse(report_json_text(rep));
  EXPECT_EQ(j["format"], "hft-lab-report");
  const auto& cond = j["conditions"];
  EXPECT_EQ(cond["source"]["commit"], std::string(40, 'a'));
  EXPECT_FALSE(cond["build"]["compiler"].get<std::string>().empty());
  EXPECT_FALSE(cond["host"]["cpu_model"].get<std::string>().empty());
  EXPECT_FALSE(cond["host"]["kernel"].get<std::string>().empty());
  EXPECT_EQ(cond["clocks"]["tsc_hz"], 2.9e9);
  EXPECT_EQ(cond["journal"].size(), 2u);
  EXPECT_TRUE(cond["quiet"].contains("quiet"));
  EXPECT_EQ(j["experiment"]["arms"][1]["overrides"]["segment-size"], "640MiB");
  EXPECT_EQ(j["notes"][0], "lane tx: not available in this build");

  ASSERT_EQ(j["runs"].size(), 5u);
  const auto& run1 = j["runs"][0];
  EXPECT_EQ(run1["arm"], "seg64");
  EXPECT_EQ(run1["threads"][0]["requested_cpu"], 1);
  EXPECT_EQ(run1["audit"]["status"], "pass");
  const auto& st = run1["series"][0]["stats"];
  EXPECT_EQ(st["count"], 1000);
  EXPECT_EQ(st["p50_ns"], 500);
  EXPECT_EQ(st["max_ns"], 3'000'000);
  EXPECT_EQ(st["max_index"], 500);
  EXPECT_EQ(st["long_calls"][">=1ms"]["count"], 1);
  EXPECT_EQ(st["long_calls"][">=1ms"]["indices"][0], 500);
  EXPECT_EQ(st["long_calls"][">=10ms"]["count"], 0);

  ASSERT_EQ(j["summary"].size(), 2u);
  const auto& seg64 = j["summary"][0];
  EXPECT_EQ(seg64["arm"], "seg64");
  EXPECT_EQ(seg64["runs"], 3);
  EXPECT_EQ(seg64["run_orders"], nlohmann::json({1, 4, 5}));
  // Per-run p50 is 500, 600, 550 (the stall replaced one value above the median).
  EXPECT_EQ(seg64["median"]["p50_ns"], 550);
  EXPECT_EQ(seg64["largest_max_ns"], 22'000'000);
  EXPECT_EQ(seg64["largest_max_run"], 4);
  EXPECT_EQ(seg64["long_calls_total"][">=1ms"], 3);
  EXPECT_EQ(seg64["long_calls_total"][">=10ms"], 1);
  EXPECT_EQ(seg64["median_achieved_rate"], 4000.0);  // median of 1000, 4000, 5000
  const auto& seg640 = j["summary"][1];
  EXPECT_EQ(seg640["runs"], 2);
  EXPECT_EQ(seg640["median"]["p50_ns"], 550);  // (500 + 600) / 2
  EXPECT_EQ(seg640["largest_max_ns"], 1'100);  // run 3's own maximum, 1000 + 100
}

TEST(Report, console_table_shows_medians_and_the_largest_max) {
  const std::string table = console_table(make_report());
  EXPECT_NE(table.find("p50 us"), std::string::npos);
  EXPECT_NE(table.find("max us"), std::string::npos);
  EXPECT_NE(table.find("seg64"), std::string::npos);
  EXPECT_NE(table.find("22000.000"), std::string::npos) << table;  // largest max in us
  EXPECT_NE(table.find("0.550"), std::string::npos) << table;      // median p50 in us
}

TEST(Report, html_is_self_contained_with_a_percentile_plot_and_long_calls) {
  const auto path = std::filesystem::temp_directory_path() / ("hft_lab_report_" + std::to_string(::getpid()) + ".html");
  ASSERT_TRUE(write_report_html(path, make_report()).ok());
  std::ifstream in(path);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("1/(1-p)"), std::string::npos);
  EXPECT_NE(html.find("99.9%"), std::string::npos);
  EXPECT_NE(html.find("long calls over time"), std::string::npos);
  EXPECT_NE(html.find("<polyline"), std::string::npos);
  EXPECT_NE(html.find("<circle"), std::string::npos);
  // One curve per run: five polylines for the one (lane, variant, series).
  std::size_t curves = 0;
  for (auto p = html.find("<polyline"); p != std::string::npos; p = html.find("<polyline", p + 1)) ++curves;
  EXPECT_EQ(curves, 5u);
  // Nothing is fetched: no scripts, stylesheets or images; links only to
  // files of the output directory and within the page.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find("://'"), std::string::npos);
  EXPECT_NE(html.find("href='series/r001-floor-busy-closed-seg64.rtt.hftraw'"), std::string::npos);
  for (auto p = html.find("href='"); p != std::string::npos; p = html.find("href='", p + 1)) {
    const char first = html[p + 6];
    EXPECT_TRUE(first == '#' || html.compare(p + 6, 7, "series/") == 0 || html.compare(p + 6, 10, "audit.json") == 0)
        << html.substr(p, 60);
  }
}

TEST(Report, audit_json_lists_every_run_and_fails_when_one_fails) {
  Report rep = make_report();
  rep.runs[2].result.audit = {AuditResult::Status::kFail, 10, "3 echoes differed"};
  const auto path = std::filesystem::temp_directory_path() / ("hft_lab_audit_" + std::to_string(::getpid()) + ".json");
  ASSERT_TRUE(write_audit_json(path, rep).ok());
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  EXPECT_EQ(j["all_passed"], false);
  ASSERT_EQ(j["runs"].size(), 5u);
  EXPECT_EQ(j["runs"][2]["status"], "fail");
  EXPECT_EQ(j["runs"][2]["detail"], "3 echoes differed");
}

TEST(Report, formats_durations_for_people) {
  EXPECT_EQ(format_ns(812), "812 ns");
  EXPECT_EQ(format_ns(12'345), "12.3 us");
  EXPECT_EQ(format_ns(4'560'000), "4.56 ms");
}

}  // namespace
}  // namespace hft::lab
