// Runs the real hft-bench (HFT_BENCH_EXE) into a fresh directory and reads
// what a user reads afterwards: exit code, stdout, stderr, report.json and
// audit.json. Shared by the end-to-end tests of the lab's lanes.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace hft::test {

struct BenchOutcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class HftBenchRun : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef HFT_BENCH_EXE
    GTEST_SKIP() << "hft-bench is not built";
#endif
    char tmpl[] = "/tmp/hft-bench-lanes-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) std::filesystem::remove_all(dir_);
  }

  /// hft-bench `args` --out DIR/lab, without quiet sampling or progress.
  BenchOutcome run(const std::string& args) {
    BenchOutcome o;
#ifdef HFT_BENCH_EXE
    const std::filesystem::path out = dir_ / "stdout.txt";
    const std::filesystem::path err = dir_ / "stderr.txt";
    const std::string cmd = std::string(HFT_BENCH_EXE) + " " + args + " --out " + (dir_ / "lab").string() +
                            " --quiet-before 0 --quiet-interval 0 --progress off >" + out.string() + " 2>" +
                            err.string();
    const int status = std::system(cmd.c_str());
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream so(out), se(err);
    o.out.assign(std::istreambuf_iterator<char>(so), std::istreambuf_iterator<char>());
    o.err.assign(std::istreambuf_iterator<char>(se), std::istreambuf_iterator<char>());
#else
    (void)args;
#endif
    return o;
  }

  /// run(args), expecting exit 0 and every run completed with its audit
  /// passed; returns report.json (a discarded value if missing).
  nlohmann::json run_passing(const std::string& args) {
    const BenchOutcome o = run(args);
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("audit: passed; all runs completed"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("report.json"), std::string::npos) << o.out;
    last_out_ = o.out;
    return o.exit_code == 0 ? load("report.json") : nlohmann::json(nlohmann::json::value_t::discarded);
  }

  /// DIR/lab/<name> parsed (a discarded value if missing or malformed).
  nlohmann::json load(const char* name) {
    std::ifstream f(dir_ / "lab" / name);
    EXPECT_TRUE(f.good()) << name << " missing";
    return nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  }

  std::filesystem::path dir_;
  std::string last_out_;  ///< stdout of the last run_passing
};

}  // namespace hft::test
