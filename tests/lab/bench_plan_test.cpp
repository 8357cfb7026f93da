// Planning: interleaved arms (A B B A A B), arm and size parsing, and
// validation that refuses bad configurations before anything runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <vector>

#include "hft/lab/bench.hpp"
#include "hft/lab/engine_adapter.hpp"

namespace hft::lab {
namespace {

std::filesystem::path scratch() {
  return std::filesystem::temp_directory_path() / ("hft_lab_plan_" + std::to_string(::getpid()));
}

TEST(Interleave, two_arms_three_runs_give_a_b_b_a_a_b) {
  const auto order = interleaved_order(2, 3);
  std::string seq;
  for (const auto& round : order) {
    for (const std::size_t a : round) seq += static_cast<char>('A' + a);
  }
  EXPECT_EQ(seq, "ABBAAB");
  std::string three;
  for (const auto& round : interleaved_order(3, 2)) {
    for (const std::size_t a : round) three += static_cast<char>('A' + a);
  }
  EXPECT_EQ(three, "ABCCBA");
}

TEST(Plan, experiment_runs_arms_interleaved_with_their_overrides) {
  BenchConfig cfg;
  cfg.lanes = {"floor"};
  cfg.variants = {"busy-closed"};
  cfg.runs = 3;
  cfg.out_dir = scratch();
  cfg.experiment = "placement";
  cfg.arms = {*parse_arm("near:client-core=0,server-core=0"), *parse_arm("far:client-core=-1,segment-size=640MiB")};
  auto plan = plan_bench(cfg, LaneRegistry::instance());
  std::filesystem::remove_all(cfg.out_dir);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_EQ(plan->runs.size(), 6u);
  std::string seq;
  for (const PlannedRun& r : plan->runs) seq += r.config.arm + " ";
  EXPECT_EQ(seq, "near far far near near far ");
  EXPECT_EQ(plan->runs[0].config.client_core, 0);
  EXPECT_EQ(plan->runs[1].config.client_core, -1);
  EXPECT_EQ(plan->runs[1].config.segment_size, 640ULL << 20);
  EXPECT_EQ(plan->runs[0].config.segment_size, 64ULL << 20);
  EXPECT_EQ(plan->runs[5].config.repeat, 2u);
}

TEST(Plan, cells_reverse_on_odd_repeats) {
  BenchConfig cfg;
  cfg.variants = {"busy-closed", "blocking-closed"};
  cfg.runs = 2;
  cfg.out_dir = scratch();
  auto plan = plan_bench(cfg, LaneRegistry::instance());
  std::filesystem::remove_all(cfg.out_dir);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  std::string seq;
  for (const PlannedRun& r : plan->runs) seq += r.config.variant + " ";
  EXPECT_EQ(seq, "busy-closed blocking-closed blocking-closed busy-closed ");
}

Error plan_error(BenchConfig cfg) {
  cfg.out_dir = cfg.out_dir.empty() || cfg.out_dir == "lab-out" ? scratch() : cfg.out_dir;
  auto plan = plan_bench(cfg, LaneRegistry::instance());
  std::filesystem::remove_all(scratch());
  EXPECT_FALSE(plan.ok());
  return plan.ok() ? Error{""} : plan.error();
}

TEST(Plan, refuses_bad_configurations_with_a_one_line_message_naming_the_option) {
  BenchConfig unknown;
  unknown.lanes = {"floor", "warp"};
  EXPECT_NE(plan_error(unknown).message.find("--lanes: unknown lane 'warp'"), std::string::npos);

  BenchConfig rate;
  rate.base.rate = 0;
  EXPECT_NE(plan_error(rate).message.find("--rate 0"), std::string::npos);

  BenchConfig core;
  core.base.client_core = 4096;
  const std::string core_msg = plan_error(core).message;
  EXPECT_NE(core_msg.find("--client-core 4096"), std::string::npos) << core_msg;
  EXPECT_EQ(core_msg.find('\n'), std::string::npos);

  BenchConfig window;
  window.base.window = 0;
  EXPECT_NE(plan_error(window).message.find("--window"), std::string::npos);

  BenchConfig variant;
  variant.variants = {"warp-speed"};
  EXPECT_NE(plan_error(variant).message.find("--variants"), std::string::npos);

  BenchConfig only_tx;
  only_tx.lanes = {"tx"};
  EXPECT_EQ(plan_error(only_tx).message, "lane tx: not available in this build (available: floor)");

  BenchConfig arm;
  arm.arms = {*parse_arm("a:client-core=999"), *parse_arm("b")};
  EXPECT_NE(plan_error(arm).message.find("--arm a: client-core"), std::string::npos);

  BenchConfig arm_key;
  arm_key.arms = {*parse_arm("a:warp=9"), *parse_arm("b")};
  EXPECT_NE(plan_error(arm_key).message.find("unknown key 'warp'"), std::string::npos);

  BenchConfig out;
  out.out_dir = "/proc/hft-lab-cannot-exist";
  EXPECT_NE(plan_error(out).message.find("--out /proc/hft-lab-cannot-exist"), std::string::npos);
}

TEST(Parse, sizes_and_switches) {
  EXPECT_EQ(*parse_size("64MiB"), 64ULL << 20);
  EXPECT_EQ(*parse_size("640M"), 640ULL << 20);
  EXPECT_EQ(*parse_size("1GiB"), 1ULL << 30);
  EXPECT_EQ(*parse_size("4096"), 4096u);
  EXPECT_FALSE(parse_size("64 parsecs").ok());
  EXPECT_FALSE(parse_size("").ok());
  EXPECT_TRUE(*parse_on_off("on"));
  EXPECT_FALSE(*parse_on_off("off"));
  EXPECT_FALSE(parse_on_off("maybe").ok());
  auto arm = parse_arm("seg640:segment-size=640MiB, prealloc=off");
  ASSERT_TRUE(arm.ok());
  EXPECT_EQ(arm->name, "seg640");
  ASSERT_EQ(arm->overrides.size(), 2u);
  EXPECT_EQ(arm->overrides[1].first, "prealloc");
  EXPECT_EQ(arm->overrides[1].second, "off");
  EXPECT_FALSE(parse_arm(":x=1").ok());
  EXPECT_FALSE(parse_arm("a:novalue").ok());
}

TEST(Preflight, reports_an_unreachable_endpoint) {
  // Port 1 on loopback: nothing listens there in a test environment.
  auto r = check_tcp_reachable("127.0.0.1", 1, 500);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("127.0.0.1:1"), std::string::npos);
}

TEST(Plan, an_engine_this_build_lacks_is_refused_with_how_to_build_it) {
  // A registry of its own with an engine lane (the real ones live in
  // hft-bench); llfix is known to every build, built only with HFT_LLFIX_DIR.
  LaneRegistry lanes;
  Lane lane;
  lane.name = "tx";
  lane.available = true;
  lane.uses_engine = true;
  lane.variants = lane.default_variants = {"unpaced"};
  lane.run = [](const LaneConfig&, RunContext&) -> Expected<RunResult> { return Error{"not run"}; };
  lanes.add(lane);
  BenchConfig cfg;
  cfg.lanes = {"tx"};
  cfg.engines = {"llfix"};
  cfg.out_dir = scratch();
  auto plan = plan_bench(cfg, lanes);
  std::filesystem::remove_all(cfg.out_dir);
  if (const EngineInfo* info = EngineRegistry::instance().find("llfix"); info != nullptr && info->available) {
    GTEST_SKIP() << "llfix is registered in this binary";
  }
  ASSERT_FALSE(plan.ok());
  const std::string msg = plan.error().message;
  EXPECT_NE(msg.find("--engines: engine 'llfix' is not available in this build (lane tx)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("configure with -DHFT_LLFIX_DIR="), std::string::npos) << msg;
}

TEST(Plan, a_lane_with_expand_plan_rewrites_its_runs_last_and_prints_its_own_summary) {
  // A registry of its own: floor as it is, and a lane that doubles each of
  // its runs into two arms (as the load lane makes one run set per N).
  LaneRegistry lanes;
  Lane lane;
  lane.name = "sets";
  lane.available = true;
  lane.variants = lane.default_variants = {"v"};
  lane.run = [](const LaneConfig&, RunContext&) -> Expected<RunResult> { return Error{"not run"}; };
  int preflights = 0;
  lane.preflight = [&](const LaneConfig& c) -> Expected<void> {
    ++preflights;
    EXPECT_EQ(c.arm, "default");  // preflighted as planned, before the rewrite
    return {};
  };
  lane.expand_plan = [](Plan& plan, const std::filesystem::path& out_dir) -> Expected<void> {
    std::vector<PlannedRun> runs;
    for (const PlannedRun& r : plan.runs) {
      if (r.config.lane != "sets") {
        runs.push_back(r);
        continue;
      }
      for (const char* arm : {"n1", "n2"}) {
        PlannedRun x = r;
        x.config.arm = arm;
        runs.push_back(x);
      }
    }
    for (std::size_t k = 0; k < runs.size(); ++k)
      runs[k].config.run_dir = out_dir / run_id(k + 1, runs[k].config);
    plan.runs = std::move(runs);
    return {};
  };
  lane.print_summary = [](const Report&, std::ostream& out) { out << "sets summary\n"; };
  lanes.add(lane);
  BenchConfig cfg;
  cfg.lanes = {"floor", "sets", "sets"};
  cfg.variants = {"busy-closed", "v"};
  cfg.out_dir = scratch();
  auto plan = plan_bench(cfg, lanes);
  std::filesystem::remove_all(cfg.out_dir);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(preflights, 1);
  std::string seq;
  for (const PlannedRun& r : plan->runs) seq += r.config.lane + ":" + r.config.arm + " ";
  EXPECT_EQ(seq, "floor:default sets:n1 sets:n2 ");
  EXPECT_EQ(plan->runs[2].config.run_dir.filename().string().substr(0, 4), "r003");

  std::ostringstream out;
  print_lane_summaries(cfg, lanes, Report{}, out);
  EXPECT_EQ(out.str(), "sets summary\n");  // once, though --lanes names it twice

  lanes.add([&] {
    Lane failing = lane;
    failing.expand_plan = [](Plan&, const std::filesystem::path&) -> Expected<void> {
      return Error{"--sessions: bad"};
    };
    return failing;
  }());
  auto refused = plan_bench(cfg, lanes);
  std::filesystem::remove_all(cfg.out_dir);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "--sessions: bad");
}

}  // namespace
}  // namespace hft::lab
