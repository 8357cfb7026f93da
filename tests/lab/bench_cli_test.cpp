// hft-bench refuses bad arguments before anything runs: exit code 2 and one
// line on stderr that names what to change.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

struct Outcome {
  int exit_code = -1;
  std::string err;
  std::string out;
};

#ifdef HFT_BENCH_EXE
Outcome run_bench(const std::string& args, const std::filesystem::path& out_dir) {
  const auto base = std::filesystem::temp_directory_path() / ("hft_bench_cli_" + std::to_string(::getpid()));
  const std::string cmd = std::string(HFT_BENCH_EXE) + " " + args + " --out " + out_dir.string() + " >" +
                          base.string() + ".out 2>" + base.string() + ".err";
  const int status = std::system(cmd.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(base.string() + ".err");
  o.err.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  std::ifstream s(base.string() + ".out");
  o.out.assign(std::istreambuf_iterator<char>(s), std::istreambuf_iterator<char>());
  std::filesystem::remove(base.string() + ".out");
  std::filesystem::remove(base.string() + ".err");
  return o;
}
#endif

class BenchCli : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef HFT_BENCH_EXE
    GTEST_SKIP() << "hft-bench is not built (HFT_BUILD_APPS=OFF)";
#endif
    out_ = std::filesystem::temp_directory_path() / ("hft_bench_cli_out_" + std::to_string(::getpid()));
    std::filesystem::remove_all(out_);
  }
  void TearDown() override { std::filesystem::remove_all(out_); }

  void expect_refused(const std::string& args, const std::string& names) {
#ifdef HFT_BENCH_EXE
    const Outcome o = run_bench(args, out_);
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.err;
    ASSERT_FALSE(o.err.empty()) << args;
    EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "one line expected for " << args << ":\n" << o.err;
    EXPECT_EQ(o.err.rfind("hft-bench: ", 0), 0u) << o.err;
    EXPECT_NE(o.err.find(names), std::string::npos) << args << "\n" << o.err;
    EXPECT_TRUE(o.out.empty()) << "nothing may run: " << o.out;
    EXPECT_FALSE(std::filesystem::exists(out_ / "report.json"));
#else
    (void)args;
    (void)names;
#endif
  }

  std::filesystem::path out_;
};

TEST_F(BenchCli, refuses_an_unknown_lane) { expect_refused("--lanes floor,warp", "unknown lane 'warp'"); }

TEST_F(BenchCli, refuses_a_rate_of_zero) { expect_refused("--rate 0", "--rate 0"); }

TEST_F(BenchCli, refuses_a_bracket_tolerance_that_is_not_a_positive_fraction_and_a_bad_bracket_count) {
  expect_refused("--bracket-tolerance 0", "--bracket-tolerance 0: must be a fraction greater than 0");
  expect_refused("--bracket-tolerance -0.1", "--bracket-tolerance");
  expect_refused("--bracket-tolerance ten", "--bracket-tolerance");
  expect_refused("--bracket-calls -5", "--bracket-calls");
  expect_refused("--bracket-calls 2k", "--bracket-calls");
}

TEST_F(BenchCli, refuses_a_core_that_does_not_exist) {
  expect_refused("--client-core 4000", "--client-core 4000");
  expect_refused("--server-core 4001", "--server-core 4001");
}

TEST_F(BenchCli, refuses_an_unreachable_path) {
#ifdef HFT_BENCH_EXE
  const Outcome o = run_bench("--calls 10", "/proc/hft-bench-no-such-dir/x");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--out /proc/hft-bench-no-such-dir/x"), std::string::npos) << o.err;
#endif
}

TEST_F(BenchCli, refuses_a_malformed_venue_and_unknown_options) {
  expect_refused("--venue nowhere", "--venue nowhere");
  expect_refused("--warp 9", "--warp");
  expect_refused("--calls lots", "--calls");
  expect_refused("--prealloc sometimes", "--prealloc");
  expect_refused("--segment-size 64parsecs", "--segment-size");
}

TEST_F(BenchCli, refuses_an_unreachable_venue) {
  // Port 1 on loopback: nothing listens there (tcpmux is never enabled).
  expect_refused("--lanes tx --engines libhft --venue 127.0.0.1:1", "--venue 127.0.0.1:1: not reachable");
  expect_refused("--lanes rx --venue 127.0.0.1:1", "--venue 127.0.0.1:1: not reachable");
}

TEST_F(BenchCli, refuses_an_unknown_engine_and_variant) {
  expect_refused("--lanes tx --engines warpfix", "warpfix");
  expect_refused("--lanes tx --variants tx:sideways", "sideways");
}

TEST_F(BenchCli, bad_arm_is_refused_before_any_run) {
  expect_refused("--experiment x --arm a:rate=0 --arm b", "--arm a: rate=0");
}

TEST_F(BenchCli, require_quiet_refuses_to_start_on_a_busy_host_and_names_why) {
#ifdef HFT_BENCH_EXE
  // A load limit of 0 no host meets: the check before the first run fails.
  const Outcome o =
      run_bench("--lanes floor --variants floor:busy-closed --calls 100 --quiet-before 0.2 --require-quiet "
                "--load-limit 0",
                out_);
  EXPECT_EQ(o.exit_code, 3) << o.err;
  EXPECT_NE(o.err.find("not quiet, no run started (--require-quiet): load average"), std::string::npos) << o.err;
  EXPECT_FALSE(std::filesystem::exists(out_ / "report.json"));
  EXPECT_EQ(o.out.find("floor"), std::string::npos) << "a timed run started: " << o.out;
  // Without --require-quiet the same host runs, and the report says it was not quiet.
  const Outcome ran =
      run_bench("--lanes floor --variants floor:busy-closed --calls 100 --quiet-before 0.2 --load-limit 0", out_);
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(ran.out.find("quiet check: NOT quiet: load average"), std::string::npos) << ran.out;
#endif
}

}  // namespace
