// The lab's post-run journal audits (hft/lab/journal_audits.hpp): which
// reader a client journal directory goes to, what an unreadable or unknown
// directory gives, how audits combine, and when a run's journals are kept.
// (The libhft and QuickFIX paths run end to end in apps_hft_bench_lanes_test;
// the llfix reader's damage cases in foreign_journals_test.)
#include "hft/lab/journal_audits.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace hft::lab {
namespace {

namespace fs = std::filesystem;
using Status = AuditResult::Status;

const std::string kSpecDir = HFT_SOURCE_DIR "/spec";

TEST(JournalAudits, a_missing_client_journal_is_not_run_and_an_unknown_one_fails) {
  const test::TempDir tmp("hft_audits");
  EXPECT_EQ(audit_client_journal(tmp.sub("missing"), 10, kSpecDir).status, Status::kNotRun);
  EXPECT_EQ(audit_client_journal("", 10, kSpecDir).status, Status::kNotRun);
  std::ofstream(tmp.sub("notes.txt")) << "not a journal";
  const AuditResult r = audit_client_journal(tmp.path(), 10, kSpecDir);
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_NE(r.detail.find("neither a libhft store, a QuickFIX FileStore nor an llfix journal"),
            std::string::npos)
      << r.detail;
}

TEST(JournalAudits, a_directory_with_quickfix_or_llfix_files_goes_to_their_reader) {
  const test::TempDir tmp("hft_audits");
  fs::create_directories(tmp.sub("qf"));
  std::ofstream(tmp.sub("qf/FIXT.1.1-CLIENT1-EXECUTOR.header")) << "";
  std::ofstream(tmp.sub("qf/FIXT.1.1-CLIENT1-EXECUTOR.body")) << "";
  const AuditResult qf = audit_client_journal(tmp.sub("qf"), 1, kSpecDir);
  EXPECT_EQ(qf.status, Status::kFail);  // no order in it, one expected
  EXPECT_NE(qf.detail.find("QuickFIX FileStore"), std::string::npos) << qf.detail;

  fs::create_directories(tmp.sub("llfix"));
  std::ofstream(tmp.sub("llfix/1.bin"), std::ios::binary) << std::string(64, '\0');
  const AuditResult ll = audit_client_journal(tmp.sub("llfix"), 0, kSpecDir);
  EXPECT_EQ(ll.status, Status::kPass) << ll.detail;
  EXPECT_NE(ll.detail.find("llfix journal"), std::string::npos) << ll.detail;
}

TEST(JournalAudits, a_libhft_store_without_its_dictionaries_is_not_run) {
  const test::TempDir tmp("hft_audits");
  fs::create_directories(tmp.sub("store/outbound"));
  const AuditResult r = audit_client_journal(tmp.sub("store"), 1, tmp.sub("no-spec"));
  EXPECT_EQ(r.status, Status::kNotRun);
  EXPECT_NE(r.detail.find("dictionary not loaded"), std::string::npos) << r.detail;
}

TEST(JournalAudits,
     a_shared_venue_store_gives_a_result_per_session_and_one_for_the_journal_even_when_unreadable) {
  // (A written one is audited end to end in apps_hft_bench_lanes_test, --venue-journal shared.)
  const test::TempDir tmp("hft_audits");
  const std::vector<VenueSessionCounts> sessions{{"FIXT.1.1-EXECUTOR-CLIENT1", 5, 5},
                                                 {"FIXT.1.1-EXECUTOR-PROBE", 2, 2}};
  const auto none = audit_venue_shared_store(tmp.path(), sessions, kSpecDir);
  ASSERT_EQ(none.size(), 3U);
  EXPECT_EQ(none[0].first, "FIXT.1.1-EXECUTOR-CLIENT1");
  EXPECT_EQ(none[2].first, "shared journal");
  for (const auto& [name, r] : none) {
    EXPECT_EQ(r.status, Status::kFail) << name;
    EXPECT_NE(r.detail.find(tmp.sub("shared-journal")), std::string::npos) << r.detail;
  }
  const auto no_dictionary = audit_venue_shared_store(tmp.path(), sessions, tmp.sub("no-spec"));
  ASSERT_EQ(no_dictionary.size(), 3U);
  for (const auto& [name, r] : no_dictionary) {
    EXPECT_EQ(r.status, Status::kNotRun) << name;
    EXPECT_NE(r.detail.find("dictionary not loaded"), std::string::npos) << r.detail;
  }
}

TEST(JournalAudits, combined_audits_fail_if_any_failed_and_pass_only_if_all_passed) {
  const AuditResult pass{Status::kPass, 3, "a"};
  const AuditResult fail{Status::kFail, 2, "b"};
  const AuditResult not_run{Status::kNotRun, 0, "c"};
  const AuditResult both = combine_audits({{"x", pass}, {"y", fail}});
  EXPECT_EQ(both.status, Status::kFail);
  EXPECT_EQ(both.checked, 5U);
  EXPECT_EQ(both.detail, "a | b");
  EXPECT_EQ(combine_audits({{"x", pass}, {"y", pass}}).status, Status::kPass);
  EXPECT_EQ(combine_audits({{"x", pass}, {"y", not_run}}).status, Status::kNotRun);
  EXPECT_EQ(combine_audits({}).status, Status::kNotRun);
}

TEST(JournalAudits, journals_of_a_failed_run_are_kept_and_of_a_passed_one_emptied_then_set_aside_not_removed) {
  const test::TempDir tmp("hft_audits");
  const fs::path out = tmp.sub("out");
  const fs::path run = out / "runs" / "001-load";
  fs::create_directories(run / "venue-store");
  std::ofstream(run / "venue-store" / "00000001.seg", std::ios::binary) << std::string(4096, 'j');
  const std::string kept = empty_run_journals(run, AuditResult{Status::kFail, 0, "bad"});
  EXPECT_NE(kept.find("kept for inspection"), std::string::npos) << kept;
  EXPECT_EQ(fs::file_size(run / "venue-store" / "00000001.seg"), 4096U);
  const std::string emptied = empty_run_journals(run, AuditResult{Status::kPass, 1, "ok"});
  EXPECT_NE(emptied.find("emptied after the audit"), std::string::npos) << emptied;
  // Emptied (its blocks freed) and left in place until the bench ends.
  ASSERT_TRUE(fs::exists(run / "venue-store" / "00000001.seg"));
  EXPECT_EQ(fs::file_size(run / "venue-store" / "00000001.seg"), 0U);
  set_aside_emptied_journals(out);
  // Moved aside, its files kept (0 bytes): nothing removed.
  EXPECT_FALSE(fs::exists(run));
  const fs::path aside = emptied_root(out) / "001-load" / "venue-store" / "00000001.seg";
  ASSERT_TRUE(fs::exists(aside));
  EXPECT_EQ(fs::file_size(aside), 0U);

  // A stale run directory of the same name (an interrupted bench): its
  // files are emptied and it goes aside under another name.
  fs::create_directories(run / "venue-store");
  std::ofstream(run / "venue-store" / "00000002.seg", std::ios::binary) << std::string(8192, 'k');
  ASSERT_TRUE(set_aside_stale_run(run, out));
  EXPECT_FALSE(fs::exists(run));
  const fs::path second = emptied_root(out) / "001-load.2" / "venue-store" / "00000002.seg";
  ASSERT_TRUE(fs::exists(second));
  EXPECT_EQ(fs::file_size(second), 0U);
  EXPECT_TRUE(fs::exists(aside)) << "the first one stays";
  EXPECT_TRUE(set_aside_stale_run(run, out)) << "nothing to move is not a failure";
}

}  // namespace
}  // namespace hft::lab
