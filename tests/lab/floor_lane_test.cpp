// A tiny end-to-end floor run through the runner: raw series, report.json,
// report.html and audit.json exist, parse and agree with each other.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hft/core/clock.hpp"
#include "hft/lab/bench.hpp"
#include "hft/lab/floor_lane.hpp"
#include "hft/lab/raw_series.hpp"

namespace hft::lab {
namespace {

class FloorLane : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = std::filesystem::temp_directory_path() /
           ("hft_lab_floor_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(out_);
  }
  void TearDown() override { std::filesystem::remove_all(out_); }
  std::filesystem::path out_;
};

TEST(FloorMessage, is_the_reference_order_cut_or_repeated_to_size) {
  EXPECT_EQ(floor_message(230), std::string(kReferenceOrder));
  EXPECT_EQ(floor_message(20), std::string(kReferenceOrder.substr(0, 20)));
  const std::string big = floor_message(500);
  EXPECT_EQ(big.size(), 500u);
  EXPECT_EQ(big.substr(230, 230), std::string(kReferenceOrder));
}

TEST_F(FloorLane, closed_busy_run_records_every_call_and_passes_its_audit) {
  const core::TscClock tsc = core::TscClock::calibrate(2'000'000);
  LaneConfig cfg;
  cfg.lane = "floor";
  cfg.variant = "busy-closed";
  cfg.calls = 2'000;
  cfg.warmup = 100;
  std::atomic<std::uint64_t> done{0};
  std::atomic<std::uint64_t> total{0};
  RunContext ctx;
  ctx.tsc = &tsc;
  ctx.progress = &done;
  ctx.progress_total = &total;
  auto r = run_floor(cfg, ctx);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->series.size(), 1u);
  EXPECT_EQ(r->series[0].name, "rtt");
  EXPECT_EQ(r->series[0].unit, Unit::kTscTicks);
  EXPECT_EQ(r->series[0].values.size(), 2'000u);
  EXPECT_EQ(r->series[0].time.size(), 2'000u);
  for (const std::int64_t v : r->series[0].values) ASSERT_GT(v, 0);
  EXPECT_EQ(r->completed, 2'000u);
  EXPECT_EQ(r->warmup_done, 100u);
  EXPECT_GT(r->achieved_rate, 0);
  EXPECT_EQ(r->audit.status, AuditResult::Status::kPass) << r->audit.detail;
  EXPECT_EQ(r->audit.checked, 2'000u);
  EXPECT_EQ(done.load(), 2'100u);
  EXPECT_EQ(total.load(), 2'100u);
  ASSERT_EQ(r->threads.size(), 2u);
}

TEST_F(FloorLane, paced_run_completes_every_call_with_three_series) {
  const core::TscClock tsc = core::TscClock::calibrate(2'000'000);
  for (const char* variant : {"busy-paced", "blocking-paced"}) {
    LaneConfig cfg;
    cfg.lane = "floor";
    cfg.variant = variant;
    cfg.calls = 2'000;
    cfg.warmup = 100;
    cfg.rate = 20'000;
    cfg.window = 64;
    RunContext ctx;
    ctx.tsc = &tsc;
    auto r = run_floor(cfg, ctx);
    ASSERT_TRUE(r.ok()) << variant << ": " << r.error().message;
    ASSERT_EQ(r->series.size(), 3u);
    EXPECT_EQ(r->series[0].name, "service");
    EXPECT_EQ(r->series[1].name, "response");
    EXPECT_EQ(r->series[2].name, "scheduler_delay");
    for (const Series& s : r->series) EXPECT_EQ(s.values.size(), 2'000u) << variant << " " << s.name;
    // response = scheduler delay + service, call by call (one clock).
    for (std::size_t k = 0; k < 2'000; ++k) {
      ASSERT_EQ(r->series[1].values[k], r->series[0].values[k] + r->series[2].values[k]);
    }
    EXPECT_EQ(r->target_rate, 20'000);
    EXPECT_GT(r->achieved_rate, 0);
    EXPECT_LE(r->max_in_flight, 64u);
    EXPECT_EQ(r->shed, 0u);
    EXPECT_EQ(r->audit.status, AuditResult::Status::kPass) << r->audit.detail;
  }
}

TEST_F(FloorLane, bench_run_writes_report_html_audit_and_raw_series_that_agree) {
  BenchConfig cfg;
  cfg.lanes = {"floor", "tx"};
  cfg.variants = {"busy-closed", "floor:busy-paced"};
  cfg.base.calls = 2'000;
  cfg.base.warmup = 100;
  cfg.base.rate = 20'000;
  cfg.out_dir = out_;
  cfg.progress = ProgressMode::kOff;
  cfg.quiet_before_s = 0.05;
  cfg.quiet_interval_s = 0.1;
  cfg.command_line = "floor_lane_test";
  auto plan = plan_bench(cfg, LaneRegistry::instance());
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->runs.size(), 2u);
  // On ext2/3/4 the runs directory is marked TOPDIR, and the plan says so.
  struct statfs fs {};
  ASSERT_EQ(::statfs(out_.c_str(), &fs), 0);
  const bool ext = fs.f_type == EXT4_SUPER_MAGIC;  // the same magic for ext2 and ext3
  ASSERT_EQ(plan->notes.size(), ext ? 2u : 1u);
  EXPECT_EQ(plan->notes[0], "lane tx: not available in this build");
  if (ext) {
    EXPECT_NE(plan->notes[1].find("is marked TOPDIR"), std::string::npos) << plan->notes[1];
    const int fd = ::open((out_ / "runs").c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(fd, 0);
    int flags = 0;
    ASSERT_EQ(::ioctl(fd, FS_IOC_GETFLAGS, &flags), 0);
    ::close(fd);
    EXPECT_NE(flags & FS_TOPDIR_FL, 0) << "the runs directory carries the flag";
  }

  std::ostringstream console;
  std::ostringstream progress;
  auto rep = run_bench(cfg, *plan, console, progress);
  ASSERT_TRUE(rep.ok()) << rep.error().message;
  EXPECT_NE(console.str().find("busy-closed"), std::string::npos);
  EXPECT_NE(console.str().find("report:"), std::string::npos);

  ASSERT_TRUE(std::filesystem::exists(out_ / "report.html"));
  std::ifstream html_in(out_ / "report.html");
  const std::string html((std::istreambuf_iterator<char>(html_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("</html>"), std::string::npos);

  std::ifstream json_in(out_ / "report.json");
  const nlohmann::json j = nlohmann::json::parse(json_in);
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["variant"], "busy-closed");
  EXPECT_EQ(j["runs"][1]["variant"], "busy-paced");
  EXPECT_EQ(j["runs"][1]["target_rate"], 20'000.0);
  EXPECT_GT(j["runs"][1]["achieved_rate"].get<double>(), 0);
  EXPECT_EQ(j["runs"][1]["series"].size(), 3u);
  EXPECT_GT(j["conditions"]["clocks"]["tsc_hz"].get<double>(), 0);
  EXPECT_NE(j["conditions"]["source"]["commit"], "");
  EXPECT_EQ(j["conditions"]["message_size"][0], 230);
  EXPECT_EQ(j["conditions"]["quiet"]["before"].size(), 1u);

  // The stats in report.json are those of the raw file it names.
  const auto& s0 = j["runs"][0]["series"][0];
  auto raw = read_binary(out_ / s0["files"]["binary"].get<std::string>());
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_EQ(raw->values.size(), 2'000u);
  const Stats st = compute_stats(*raw);
  EXPECT_DOUBLE_EQ(s0["stats"]["p99_ns"].get<double>(), st.quantile("p99"));
  EXPECT_DOUBLE_EQ(s0["stats"]["max_ns"].get<double>(), st.max_ns);
  auto csv = read_csv(out_ / s0["files"]["csv"].get<std::string>());
  ASSERT_TRUE(csv.ok()) << csv.error().message;
  EXPECT_EQ(csv->values, raw->values);

  std::ifstream audit_in(out_ / "audit.json");
  const nlohmann::json audit = nlohmann::json::parse(audit_in);
  EXPECT_EQ(audit["all_passed"], true);
  EXPECT_EQ(audit["runs"].size(), 2u);
}

}  // namespace
}  // namespace hft::lab
