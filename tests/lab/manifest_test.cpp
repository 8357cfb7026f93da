// manifest.sha256: written over every file of a directory, checked back;
// a changed, resized, removed or added file is named.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "hft/lab/manifest.hpp"
#include "support/temp_dir.hpp"

namespace hft::lab {
namespace {

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

bool has_problem(const ManifestCheck& c, const std::string& text) {
  return std::any_of(c.problems.begin(), c.problems.end(),
                     [&](const std::string& p) { return p.find(text) != std::string::npos; });
}

std::string all(const ManifestCheck& c) {
  std::string s;
  for (const std::string& p : c.problems) s += p + "\n";
  return s;
}

class Manifest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    write_file(dir() / "report.json", "{}\n");
    write_file(dir() / "series" / "r001-a.rtt.hftraw", "abc");
    write_file(dir() / "series" / "r001-a.rtt.csv", "index,value\n0,1\n");
  }
  [[nodiscard]] std::filesystem::path dir() const { return tmp_.path(); }
  test::TempDir tmp_{"hft_lab_manifest"};
};

TEST_F(Manifest, sha256_of_a_file_is_the_standard_digest) {
  auto h = sha256_file(dir() / "series" / "r001-a.rtt.hftraw");
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(*h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // SHA-256("abc")
}

TEST_F(Manifest, lists_every_file_sorted_with_size_and_passes_its_own_check) {
  auto written = write_manifest(dir());
  ASSERT_TRUE(written) << written.error().message;
  ASSERT_EQ(written->size(), 3u);
  EXPECT_EQ((*written)[0].path, "report.json");
  EXPECT_EQ((*written)[1].path, "series/r001-a.rtt.csv");
  EXPECT_EQ((*written)[2].path, "series/r001-a.rtt.hftraw");
  EXPECT_EQ((*written)[2].size, 3u);
  auto read = read_manifest(dir());
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ((*read)[2].sha256, (*written)[2].sha256);
  const ManifestCheck c = check_manifest(dir());
  EXPECT_EQ(c.listed, 3u);
  EXPECT_TRUE(c.problems.empty()) << all(c);
}

TEST_F(Manifest, emptied_journals_of_earlier_runs_are_not_output_and_are_not_listed) {
  write_file(dir() / "runs" / ".emptied" / "001-load" / "venue-store" / "00000001.seg", "");
  write_file(dir() / "runs" / "002-rx" / "venue.log", "kept");  // a failed run's files are listed
  auto written = write_manifest(dir());
  ASSERT_TRUE(written) << written.error().message;
  ASSERT_EQ(written->size(), 4u);
  EXPECT_EQ((*written)[1].path, "runs/002-rx/venue.log");
  const ManifestCheck c = check_manifest(dir());
  EXPECT_TRUE(c.problems.empty()) << all(c);
}

TEST_F(Manifest, coreutils_sha256sum_accepts_it) {
  ASSERT_TRUE(write_manifest(dir()));
  const std::string cmd = "cd " + dir().string() + " && sha256sum --strict --quiet -c manifest.sha256 >/dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  write_file(dir() / "report.json", "{\"x\":1}\n");
  EXPECT_NE(std::system(cmd.c_str()), 0);
}

TEST_F(Manifest, names_a_changed_file) {
  ASSERT_TRUE(write_manifest(dir()));
  write_file(dir() / "series" / "r001-a.rtt.hftraw", "abd");  // same size
  const ManifestCheck c = check_manifest(dir());
  ASSERT_EQ(c.problems.size(), 1u) << all(c);
  EXPECT_EQ(c.problems[0], "series/r001-a.rtt.hftraw: SHA-256 differs from the manifest");
}

TEST_F(Manifest, names_a_resized_file) {
  ASSERT_TRUE(write_manifest(dir()));
  write_file(dir() / "report.json", "{}\n\n");
  const ManifestCheck c = check_manifest(dir());
  EXPECT_TRUE(has_problem(c, "report.json: size 4 bytes, the manifest says 3")) << all(c);
  EXPECT_TRUE(has_problem(c, "report.json: SHA-256 differs")) << all(c);
}

TEST_F(Manifest, names_a_missing_and_an_added_file) {
  ASSERT_TRUE(write_manifest(dir()));
  std::filesystem::remove(dir() / "series" / "r001-a.rtt.csv");
  write_file(dir() / "series" / "extra.csv", "x");
  const ManifestCheck c = check_manifest(dir());
  EXPECT_EQ(c.problems.size(), 2u) << all(c);
  EXPECT_TRUE(has_problem(c, "missing: series/r001-a.rtt.csv")) << all(c);
  EXPECT_TRUE(has_problem(c, "added: series/extra.csv")) << all(c);
}

TEST_F(Manifest, a_missing_or_garbled_manifest_is_a_problem) {
  ManifestCheck c = check_manifest(dir());
  EXPECT_TRUE(has_problem(c, "manifest.sha256: missing")) << all(c);
  ASSERT_TRUE(write_manifest(dir()));
  std::ofstream(dir() / kManifestName, std::ios::app) << "not a hash line\n";
  c = check_manifest(dir());
  EXPECT_TRUE(has_problem(c, "manifest.sha256:9: expected '<64 hex digits>  <path>'")) << all(c);
}

}  // namespace
}  // namespace hft::lab
