// The runner brackets every run of an engine lane with two real floor runs
// (a lane of its own here, with synthetic series, so no venue is needed):
// their raw series are written and listed like every other, report.json
// carries their statistics and verdict, hft-bench verify re-derives them and
// fails naming the bracket when one of its samples is altered, even with
// the manifest rewritten to match. --bracket-calls 0 turns brackets off.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "hft/lab/bench.hpp"
#include "hft/lab/engine_adapter.hpp"
#include "hft/lab/manifest.hpp"
#include "hft/lab/raw_series.hpp"
#include "hft/lab/verify.hpp"

namespace hft::lab {
namespace {

constexpr const char* kEngine = "bracket-test-engine";
constexpr const char* kRunId = "r001-tx-unpaced-bracket-test-engine-default";

/// An engine lane whose run returns a fixed series (no engine, no venue).
LaneRegistry registry() {
  EngineInfo engine;
  engine.name = kEngine;
  engine.available = true;
  EngineRegistry::instance().add(engine);
  LaneRegistry lanes;
  Lane lane;
  lane.name = "tx";
  lane.available = true;
  lane.uses_engine = true;
  lane.variants = lane.default_variants = {"unpaced"};
  lane.run = [](const LaneConfig& c, RunContext&) -> Expected<RunResult> {
    RunResult r;
    Series s;
    s.name = "tx";
    s.values.resize(c.calls);
    std::iota(s.values.begin(), s.values.end(), 1000);
    r.series.push_back(std::move(s));
    r.completed = c.calls;
    r.wall_seconds = 0.001;
    r.audit = {AuditResult::Status::kPass, c.calls, "synthetic"};
    return r;
  };
  lanes.add(lane);
  return lanes;
}

class BenchBrackets : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg_.lanes = {"tx"};
    cfg_.engines = {kEngine};
    cfg_.base.calls = 500;
    cfg_.base.warmup = 50;
    cfg_.bracket_calls = 300;
    cfg_.quiet_before_s = 0;
    cfg_.quiet_interval_s = 0;
    cfg_.progress = ProgressMode::kOff;
    cfg_.out_dir = std::filesystem::temp_directory_path() / ("hft_lab_brackets_" + std::to_string(::getpid()));
    std::filesystem::remove_all(cfg_.out_dir);
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(cfg_.out_dir);
  }

  Expected<Report> run() {
    auto plan = plan_bench(cfg_, lanes_);
    if (!plan) return plan.error();
    std::ostringstream progress;
    return run_bench(cfg_, *plan, console_, progress);
  }
  nlohmann::json report_json() {
    std::ifstream in(cfg_.out_dir / "report.json");
    return nlohmann::json::parse(in);
  }

  LaneRegistry lanes_ = registry();
  BenchConfig cfg_;
  std::ostringstream console_;
};

TEST_F(BenchBrackets, every_engine_run_gets_a_floor_bracket_before_and_after_with_raw_series) {
  auto rep = run();
  ASSERT_TRUE(rep.ok()) << rep.error().message;
  ASSERT_EQ(rep->runs.size(), 1u);
  const RunRecord& r = rep->runs.front();
  ASSERT_TRUE(r.bracket.has_value());
  for (const BracketRun* b : {&r.bracket->before, &r.bracket->after}) {
    EXPECT_EQ(b->error, "") << b->id;
    EXPECT_EQ(b->series.analysis.stats.count, 300u) << b->id;
    EXPECT_EQ(b->warmup_done, 50u) << b->id;
    EXPECT_EQ(b->audit.status, AuditResult::Status::kPass) << b->audit.detail;
    for (const std::string* f : {&b->series.binary_file, &b->series.csv_file, &b->series.hlog_file}) {
      EXPECT_TRUE(std::filesystem::exists(cfg_.out_dir / *f)) << *f;
    }
  }
  EXPECT_EQ(r.bracket->before.series.binary_file, std::string("series/") + kRunId + ".bracket-before.rtt.hftraw");
  EXPECT_LE(r.bracket->before.started_s + r.bracket->before.elapsed_s, r.started_s + 1e-9);
  EXPECT_GE(r.bracket->after.started_s, r.started_s + r.elapsed_s - 1e-9);

  const nlohmann::json j = report_json();
  const auto& b = j["runs"][0]["bracket"];
  EXPECT_EQ(b["variant"], "busy-closed");
  EXPECT_EQ(b["after"]["series"]["stats"]["count"], 300);
  EXPECT_EQ(b["check"]["measured"], true);
  EXPECT_EQ(b["check"]["before_p50_ns"], r.bracket->before.series.analysis.stats.quantile("p50"));
  EXPECT_NE(console_.str().find("brackets: floor busy-closed, 300 calls"), std::string::npos) << console_.str();
  const std::string manifest = [&] {
    std::ifstream in(cfg_.out_dir / kManifestName);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }();
  EXPECT_NE(manifest.find(std::string(kRunId) + ".bracket-after.rtt.hlog\n"), std::string::npos);

  const VerifyResult v = verify_output(cfg_.out_dir);
  EXPECT_TRUE(v.ok()) << verify_text(cfg_.out_dir, v);
  EXPECT_EQ(v.brackets, 1u);
  EXPECT_EQ(v.series, 3u);  // tx and the two brackets' rtt
  EXPECT_EQ(v.hlogs, 3u);
}

TEST_F(BenchBrackets, verify_fails_naming_the_bracket_when_one_of_its_samples_is_altered) {
  auto rep = run();
  ASSERT_TRUE(rep.ok()) << rep.error().message;
  const std::string rel = std::string("series/") + kRunId + ".bracket-before.rtt.hftraw";
  auto s = read_binary(cfg_.out_dir / rel);
  ASSERT_TRUE(s) << s.error().message;
  std::size_t at = 0;
  for (std::size_t k = 0; k < s->values.size(); ++k) {
    if (s->values[k] > s->values[at]) at = k;
  }
  s->values[at] = s->values[at] * 10 + 1;  // a new maximum
  ASSERT_TRUE(write_binary(cfg_.out_dir / rel, *s));
  ASSERT_TRUE(write_manifest(cfg_.out_dir));  // with the manifest rewritten to match

  const VerifyResult v = verify_output(cfg_.out_dir);
  const std::string text = verify_text(cfg_.out_dir, v);
  EXPECT_FALSE(v.ok()) << text;
  const std::string where = std::string("run ") + kRunId + ", bracket before, series rtt (" + rel + "): ";
  EXPECT_NE(text.find(where + "max_ns: report.json "), std::string::npos) << text;
  EXPECT_NE(text.find(where + "mean_ns: report.json "), std::string::npos) << text;
  EXPECT_NE(text.find(rel.substr(0, rel.size() - 7) + ".hlog: interval "), std::string::npos) << text;
  EXPECT_NE(text.find("FAILED: "), std::string::npos) << text;
}

TEST_F(BenchBrackets, verify_fails_when_the_bracket_verdict_in_the_report_is_changed) {
  auto rep = run();
  ASSERT_TRUE(rep.ok()) << rep.error().message;
  nlohmann::json j = report_json();
  const bool agree = j["runs"][0]["bracket"]["check"]["agree"];
  j["runs"][0]["bracket"]["check"]["agree"] = !agree;
  std::ofstream(cfg_.out_dir / "report.json", std::ios::trunc) << j.dump(2) << "\n";
  ASSERT_TRUE(write_manifest(cfg_.out_dir));
  const VerifyResult v = verify_output(cfg_.out_dir);
  const std::string text = verify_text(cfg_.out_dir, v);
  EXPECT_NE(text.find(std::string("run ") + kRunId + ", bracket check: agree: report.json " +
                      (agree ? "false" : "true") + ", recomputed " + (agree ? "true" : "false")),
            std::string::npos)
      << text;
}

TEST_F(BenchBrackets, zero_bracket_calls_turn_brackets_off_and_a_bad_tolerance_is_refused) {
  cfg_.bracket_calls = 0;
  auto plan = plan_bench(cfg_, lanes_);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_FALSE(plan->runs.front().bracketed);
  auto rep = run();
  ASSERT_TRUE(rep.ok()) << rep.error().message;
  EXPECT_FALSE(rep->runs.front().bracket.has_value());
  EXPECT_TRUE(report_json()["runs"][0]["bracket"].is_null());
  EXPECT_EQ(console_.str().find("brackets:"), std::string::npos) << console_.str();

  cfg_.bracket_calls = 300;
  EXPECT_TRUE(plan_bench(cfg_, lanes_)->runs.front().bracketed);
  cfg_.bracket_tolerance = 0;
  auto refused = plan_bench(cfg_, lanes_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message.rfind("--bracket-tolerance 0: must be a fraction greater than 0", 0), 0u)
      << refused.error().message;
}

}  // namespace
}  // namespace hft::lab
