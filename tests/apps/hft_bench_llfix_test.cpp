// End to end with llfix (built only with -DHFT_LLFIX_DIR): the real
// hft-bench runs the tx and rtt lanes with --engines llfix against a real
// hft-venue child; every run completes, llfix's own outgoing journal files
// are audited (every order, warm-ups included, with contiguous sequence
// numbers and good CheckSums) and the report names llfix. The rx lane runs
// llfix's own acceptor (hft-bench-llfix-venue) beside hft-venue, and audits
// its incoming and outgoing files. Options llfix cannot honour are refused
// before anything runs.
#include <set>
#include <sstream>
#include <string>

#include "apps/hft_bench_run.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Outcome = hft::test::BenchOutcome;
using HftBenchLlfix = hft::test::HftBenchRun;

TEST_F(HftBenchLlfix, tx_and_rtt_lanes_run_llfix_and_its_journal_audit_passes) {
  const std::uint64_t calls = 2000;
  const json report = run_passing("--lanes tx,rtt --engines llfix --calls " + std::to_string(calls) +
                                  " --warmup 200 --rate 5000 --segment-size 1MiB");
  ASSERT_TRUE(report.is_object());
  // The console table lists llfix's runs.
  // A row of the console table: lane, variant and engine as its first three words.
  const auto has_row = [&](const std::string& lane, const std::string& variant) {
    std::istringstream lines(last_out_);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::string l, v, e;
      if (words >> l >> v >> e && l == lane && v == variant && e == "llfix") return true;
    }
    return false;
  };
  EXPECT_TRUE(has_row("tx", "unpaced")) << last_out_;
  EXPECT_TRUE(has_row("tx", "unpaced-sink")) << last_out_;
  EXPECT_TRUE(has_row("rtt", "closed")) << last_out_;
  ASSERT_EQ(report["runs"].size(), 6u);  // tx unpaced, paced, both against a sink; rtt closed, paced
  std::set<std::string> lanes;
  for (const json& run : report["runs"]) {
    const std::string id = run["id"];
    lanes.insert(run["lane"].get<std::string>() + ":" + run["variant"].get<std::string>());
    EXPECT_EQ(run["engine"], "llfix") << id;
    EXPECT_EQ(run["error"], "") << id;
    EXPECT_EQ(run["series"][0]["stats"]["count"], calls) << id;
    EXPECT_EQ(run["audit"]["status"], "pass") << id << ": " << run["audit"]["detail"];
    const std::string detail = run["audit"]["detail"];
    // The client side is llfix's own journal, read by the lab's reader.
    EXPECT_NE(detail.find("llfix journal"), std::string::npos) << detail;
    EXPECT_NE(detail.find("35=D count " + std::to_string(calls + 200) + " == expected"), std::string::npos) << detail;
    EXPECT_NE(detail.find("venue inbound journal"), std::string::npos) << detail;
    const std::string engine_note = run["notes"]["engine"];
    EXPECT_NE(engine_note.find("llfix 1.0"), std::string::npos) << engine_note;
    const std::string bytes = run["notes"]["order bytes on the wire (last)"];
    EXPECT_GE(std::stoi(bytes), 230) << id;
    EXPECT_LE(std::stoi(bytes), 250) << id;
  }
  EXPECT_EQ(lanes, (std::set<std::string>{"tx:unpaced", "tx:paced", "tx:unpaced-sink", "tx:paced-sink", "rtt:closed",
                                          "rtt:paced"}));
  const json audit = load("audit.json");
  EXPECT_EQ(audit["all_passed"], true);
}

TEST_F(HftBenchLlfix, journal_rotations_inside_the_window_are_audited_across_files) {
  // ~245 bytes + 17 per record: 5,100 orders need more than one 1 MiB file.
  const json report =
      run_passing("--lanes tx --variants unpaced --engines llfix --calls 5000 --warmup 100 --segment-size 1MiB");
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["runs"].size(), 1u);
  const json& run = report["runs"][0];
  EXPECT_EQ(run["audit"]["status"], "pass") << run["audit"]["detail"];
  const std::string detail = run["audit"]["detail"];
  const auto at = detail.find(" file(s) of 1048576 bytes");
  ASSERT_NE(at, std::string::npos) << detail;
  const auto start = detail.rfind('(', at) + 1;
  EXPECT_GE(std::stoi(detail.substr(start, at - start)), 2) << detail;
}

TEST_F(HftBenchLlfix, rx_lane_drives_llfix_acceptor_beside_hft_venue_and_audits_both_its_journals) {
  const std::uint64_t calls = 3000;
  const json report = run_passing("--lanes rx --engines libhft,llfix --calls " + std::to_string(calls) +
                                  " --warmup 300 --clients 3 --segment-size 1MiB --bracket-calls 1000");
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["runs"].size(), 2u);
  std::set<std::string> engines;
  for (const json& run : report["runs"]) {
    const std::string id = run["id"];
    const std::string engine = run["engine"];
    engines.insert(engine);
    EXPECT_EQ(run["lane"], "rx") << id;
    EXPECT_EQ(run["error"], "") << id;
    EXPECT_GT(run["achieved_rate"].get<double>(), 0) << id;
    // One ns/message sample per 1,000 answered orders.
    EXPECT_EQ(run["series"][0]["stats"]["count"], calls / 1000) << id;
    EXPECT_EQ(run["audit"]["status"], "pass") << id << ": " << run["audit"]["detail"];
    // Both engines' runs are bracketed by floor runs, as every engine run is.
    EXPECT_EQ(run["bracket"]["before"]["error"], "") << id;
    const std::string venue = run["notes"]["venue"];
    const std::string detail = run["audit"]["detail"];
    if (engine == "llfix") {
      EXPECT_NE(venue.find("llfix venue: llfix 1.0"), std::string::npos) << venue;
      EXPECT_NE(venue.find("3 session(s)"), std::string::npos) << venue;
      // Every order of every connection (warm-up included) is in the
      // session's incoming files, and one report per order in its outgoing.
      for (const char* comp : {"CLIENT1", "CLIENT2", "CLIENT3"}) {
        EXPECT_NE(detail.find(std::string(comp) + "/incoming"), std::string::npos) << comp << " " << detail;
        EXPECT_NE(detail.find(std::string(comp) + "/outgoing"), std::string::npos) << comp << " " << detail;
      }
      EXPECT_NE(detail.find("35=8 count"), std::string::npos) << detail;
      const std::string at_exit = run["notes"]["venue at exit"];
      EXPECT_NE(at_exit.find(std::to_string(calls + 300) + " orders received, " + std::to_string(calls + 300) +
                             " execution reports sent, 0 sends failed"),
                std::string::npos)
          << at_exit;
      bool reactor = false;
      for (const json& t : run["threads"]) reactor = reactor || t["role"] == "llfix reactor";
      EXPECT_TRUE(reactor) << run["threads"].dump();
    } else {
      EXPECT_NE(venue.find("hft-venue"), std::string::npos) << venue;
      EXPECT_NE(detail.find("EXECUTOR-CLIENT3"), std::string::npos) << detail;
    }
  }
  EXPECT_EQ(engines, (std::set<std::string>{"libhft", "llfix"}));
}

TEST_F(HftBenchLlfix, prealloc_off_is_refused_before_anything_runs) {
  const Outcome o = run("--lanes tx --engines llfix --calls 100 --prealloc off");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("--prealloc off: llfix has no equivalent"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "lab" / "report.json"));
}

TEST_F(HftBenchLlfix, a_segment_size_llfix_cannot_use_is_refused_before_anything_runs) {
  const Outcome o = run("--lanes rtt --engines llfix --calls 100 --segment-size 1000000");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("multiple of 4096"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "lab" / "report.json"));
}

}  // namespace
