// hft-bench verify DIR on a real small run (codec lane, 3 runs): it passes on what the run wrote,
// and fails naming the file, run, series or statistic when a sample, a byte
// of the summary or a file is altered, removed or added, whether or not the
// manifest was rewritten to match.
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "hft/lab/manifest.hpp"
#include "hft/lab/raw_series.hpp"
#include "hft_bench_run.hpp"

namespace hft::test {
namespace {

constexpr const char* kRun1 = "series/r001-codec-encode-default.new_order_single";
constexpr const char* kRun2 = "series/r002-codec-encode-default.new_order_single";

class HftBenchVerify : public HftBenchRun {
 protected:
  // One bench run (the codec lane: one thread, no sockets, well under a
  // second) per test suite process; each test alters its own copy.
  void SetUp() override {
    HftBenchRun::SetUp();
    if (IsSkipped()) return;
    out_dir_ = dir_ / "lab";
    if (pristine().empty()) {
      report() = run_passing("--lanes codec --variants encode --calls 2000 --warmup 100 --runs 3");
      ASSERT_FALSE(report().is_discarded());
      bench_out() = last_out_;
      char tmpl[] = "/tmp/hft-bench-verify-XXXXXX";
      ASSERT_NE(::mkdtemp(tmpl), nullptr);
      pristine() = tmpl;
      std::filesystem::copy(out_dir_, pristine() / "lab", std::filesystem::copy_options::recursive);
    } else {
      std::filesystem::copy(pristine() / "lab", out_dir_, std::filesystem::copy_options::recursive);
    }
    report_ = report();
  }
  static void TearDownTestSuite() {
    if (!pristine().empty()) std::filesystem::remove_all(pristine());
    pristine().clear();
  }
  static std::filesystem::path& pristine() {
    static std::filesystem::path p;
    return p;
  }
  static nlohmann::json& report() {
    static nlohmann::json j;
    return j;
  }
  static std::string& bench_out() {
    static std::string s;
    return s;
  }

  /// hft-bench verify DIR/lab.
  BenchOutcome verify() {
    BenchOutcome o;
#ifdef HFT_BENCH_EXE
    const std::filesystem::path out = dir_ / "verify.txt";
    const std::string cmd =
        std::string(HFT_BENCH_EXE) + " verify " + out_dir_.string() + " >" + out.string() + " 2>&1";
    const int status = std::system(cmd.c_str());
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream so(out);
    o.out.assign(std::istreambuf_iterator<char>(so), std::istreambuf_iterator<char>());
#endif
    return o;
  }

  std::string read(const std::string& rel) {
    std::ifstream in(out_dir_ / rel, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  void write(const std::string& rel, const std::string& bytes) {
    std::ofstream(out_dir_ / rel, std::ios::binary | std::ios::trunc) << bytes;
  }

  /// Makes the largest sample of run 1's HFTRAW ten times larger, with a
  /// valid CRC (as someone editing the file with the reader would).
  void inflate_largest_sample() {
    auto s = lab::read_binary(out_dir_ / (std::string(kRun1) + ".hftraw"));
    ASSERT_TRUE(s) << s.error().message;
    std::size_t at = 0;
    for (std::size_t k = 0; k < s->values.size(); ++k) {
      if (s->values[k] > s->values[at]) at = k;
    }
    s->values[at] *= 10;
    ASSERT_TRUE(lab::write_binary(out_dir_ / (std::string(kRun1) + ".hftraw"), *s));
  }

  nlohmann::json report_;
  std::filesystem::path out_dir_;
};

TEST_F(HftBenchVerify, passes_on_what_the_run_wrote_and_sha256sum_agrees) {
  EXPECT_NE(bench_out().find("manifest.sha256 (21 files; check with hft-bench verify "), std::string::npos)
      << bench_out();
  const BenchOutcome o = verify();
  EXPECT_EQ(o.exit_code, 0) << o.out;
  // 3 runs x 2 series x (csv, hftraw, hlog) + report.json, report.html, audit.json.
  EXPECT_NE(o.out.find("verified: 21 files, 6 series, "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("summary: 2 rows recomputed"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("hlog: 6 interval logs decoded"), std::string::npos) << o.out;
  const std::string manifest = read("manifest.sha256");
  for (const char* ext : {".csv", ".hftraw", ".hlog"}) {
    EXPECT_NE(manifest.find(std::string(kRun2) + ext + "\n"), std::string::npos) << manifest;
  }
  EXPECT_EQ(report_["runs"][0]["series"][0]["files"]["hlog"], std::string(kRun1) + ".hlog");
  const std::string cmd = "cd " + out_dir_.string() + " && sha256sum --strict --quiet -c manifest.sha256";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST_F(HftBenchVerify, a_flipped_sample_byte_is_named_by_the_manifest_and_the_crc) {
  const std::string rel = std::string(kRun1) + ".hftraw";
  std::string bytes = read(rel);
  ASSERT_GT(bytes.size(), 200u);
  bytes[bytes.size() - 100] = static_cast<char>(bytes[bytes.size() - 100] ^ 0x40);
  write(rel, bytes);
  const BenchOutcome o = verify();
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find(rel + ": SHA-256 differs from the manifest"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(rel + ": CRC mismatch"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("FAILED: "), std::string::npos) << o.out;
}

TEST_F(HftBenchVerify, an_altered_sample_fails_on_the_statistics_even_with_the_manifest_rewritten) {
  inflate_largest_sample();
  const std::string rel = std::string(kRun1) + ".hftraw";
  BenchOutcome o = verify();
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find(rel + ": SHA-256 differs from the manifest"), std::string::npos) << o.out;

  ASSERT_TRUE(lab::write_manifest(out_dir_));  // cover the tracks
  o = verify();
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("every size and SHA-256 matches"), std::string::npos) << o.out;
  const std::string where = "run r001-codec-encode-default, series new_order_single (" + rel + "): ";
  EXPECT_NE(o.out.find(where + "max_ns: report.json "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(where + "mean_ns: report.json "), std::string::npos) << o.out;
  // The CSV of the same run still holds the samples the report was made from.
  EXPECT_EQ(o.out.find("(" + std::string(kRun1) + ".csv): "), std::string::npos) << o.out;
  // The interval log no longer matches the (altered) raw series either.
  EXPECT_NE(o.out.find(std::string(kRun1) + ".hlog: interval "), std::string::npos) << o.out;
}

TEST_F(HftBenchVerify, one_changed_byte_of_the_summary_is_named) {
  std::string text = read("report.json");
  const auto summary = text.find("\"summary\"");
  ASSERT_NE(summary, std::string::npos);
  const std::string field = "\"largest_max_ns\": ";
  const auto at = text.find(field, summary);
  ASSERT_NE(at, std::string::npos) << text.substr(summary);
  char& digit = text[at + field.size()];
  ASSERT_TRUE(digit >= '1' && digit <= '9') << text.substr(at, 40);
  digit = digit == '9' ? '8' : static_cast<char>(digit + 1);
  write("report.json", text);
  BenchOutcome o = verify();
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("report.json: SHA-256 differs from the manifest"), std::string::npos) << o.out;
  const std::string named = "summary codec encode none default new_order_single: largest_max_ns: report.json ";
  EXPECT_NE(o.out.find(named), std::string::npos) << o.out;

  ASSERT_TRUE(lab::write_manifest(out_dir_));
  o = verify();
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find(named), std::string::npos) << o.out;
}

TEST_F(HftBenchVerify, a_deleted_file_is_named) {
  const std::string rel = std::string(kRun2) + ".csv";
  std::filesystem::remove(out_dir_ / rel);
  const BenchOutcome o = verify();
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("missing: " + rel), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("run r002-codec-encode-default, series new_order_single: " + (out_dir_ / rel).string()),
            std::string::npos)
      << o.out;
}

TEST_F(HftBenchVerify, an_added_file_is_named_and_nothing_else) {
  write("series/r004-extra.new_order_single.csv", "index,value\n");
  const BenchOutcome o = verify();
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("added: series/r004-extra.new_order_single.csv (not in the manifest)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("FAILED: 1 problem(s)"), std::string::npos) << o.out;
}

TEST_F(HftBenchVerify, hdrhistogram_java_reads_the_interval_logs) {
  // HdrHistogram's own reader, where Debian's libhdrhistogram-java is
  // installed (scripts/deps.sh).
  const std::filesystem::path jar = "/usr/share/java/hdrhistogram.jar";
  if (!std::filesystem::exists(jar) || std::system("command -v java >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "java or " << jar << " not installed";
  }
  const std::filesystem::path out = dir_ / "java.txt";
  const std::string cmd = "java -cp " + jar.string() + " org.HdrHistogram.HistogramLogProcessor -i " +
                          (out_dir_ / (std::string(kRun1) + ".hlog")).string() + " >" + out.string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(out);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_NE(text.find("Total count    =         2000]"), std::string::npos) << text;
}

}  // namespace
}  // namespace hft::test
