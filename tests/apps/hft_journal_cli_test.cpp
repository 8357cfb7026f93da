// Runs the built hft-journal binary on journals written by the store and
// checks what a user sees: exit codes, the one-line errors, the output.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "audit/journal_fixture.hpp"
#include "hft/audit/journal_audit.hpp"
#include "hft/store/journal_reader.hpp"
#include "hft/store/shared_journal.hpp"

#ifndef HFT_JOURNAL_EXE
#error "HFT_JOURNAL_EXE must name the hft-journal binary"
#endif

namespace hft::audit {
namespace {

using test::FixBuilder;
using test::kMs;
using test::kT0;
using test::TempDir;

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
  [[nodiscard]] std::vector<std::string> out_lines() const {
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
};

class HftJournalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = tmp_.sub("store");
    ASSERT_TRUE(test::write_conversation(store_));
  }

  Outcome run(const std::string& args) {
    const std::string out = tmp_.sub("stdout"), err = tmp_.sub("stderr");
    const std::string cmd = std::string(HFT_JOURNAL_EXE) + " " + args + " >" + out + " 2>" + err;
    const int status = std::system(cmd.c_str());
    Outcome r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = test::read_file(out);
    r.err = test::read_file(err);
    return r;
  }

  /// A journal (no store) whose seq 3 carries a wrong FIX CheckSum.
  std::string bad_checksum_journal() {
    const std::string dir = tmp_.sub("bad");
    auto j = test::open_journal(dir);
    FixBuilder b;
    EXPECT_TRUE(b.write(*j, "A", 1, kT0, test::logon_body()));
    EXPECT_TRUE(b.write(*j, "D", 2, kT0 + kMs, test::order_body(2)));
    std::string m = b.text("D", 3, kT0 + 2 * kMs, test::order_body(3));
    const std::size_t p = m.rfind("10=");
    m[p + 3] = m[p + 3] == '1' ? '2' : '1';
    EXPECT_TRUE(test::append(*j, 3, kT0 + 2 * kMs, m));
    return dir;
  }

  TempDir tmp_;
  std::string store_;
};

int count_lines_with(const std::vector<std::string>& lines, const std::string& text) {
  int n = 0;
  for (const auto& l : lines) n += l.find(text) != std::string::npos ? 1 : 0;
  return n;
}

// ---- usage and bad input: exit 2, one line naming the problem ------------------------------

TEST_F(HftJournalCli, usage_errors_exit_2) {
  for (const char* args : {"", "bogus", "dump", "audit --expect-count x " /* no DIR, bad number */,
                           "dump DIR --format xml", "dump DIR --direction sideways", "stats DIR --nonsense"}) {
    const Outcome r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
    EXPECT_TRUE(r.out.empty()) << args;
  }
  const Outcome seqs = run("dump " + store_ + " --from-seq 5 --to-seq 2");
  EXPECT_EQ(seqs.code, 2);
  EXPECT_NE(seqs.err.find("--from-seq"), std::string::npos) << seqs.err;
  const Outcome since = run("dump " + store_ + " --since yesterday");
  EXPECT_EQ(since.code, 2);
  EXPECT_NE(since.err.find("--since"), std::string::npos) << since.err;
  const Outcome app_only = run("audit " + store_ + " --app-dictionary " HFT_SHARED_DIR "/fix/spec/FIX50SP2.xml");
  EXPECT_EQ(app_only.code, 2);
  EXPECT_EQ(run("--help").code, 0);
  EXPECT_EQ(run("audit --help").code, 0);
}

TEST_F(HftJournalCli, bad_input_is_one_line_naming_the_file_and_exits_2) {
  const std::string missing = tmp_.sub("missing");
  for (const char* command : {"dump", "stats", "audit"}) {
    const Outcome r = run(std::string(command) + " " + missing);
    EXPECT_EQ(r.code, 2) << command;
    EXPECT_EQ(r.err.find(missing), std::string("hft-journal: ").size()) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  const Outcome not_journal = run("audit " + tmp_.path());
  EXPECT_EQ(not_journal.code, 2);
  EXPECT_NE(not_journal.err.find("not a journal"), std::string::npos) << not_journal.err;

  const std::string seg = segment_file(store_ + "/outbound", 1);
  std::string bytes = test::read_file(seg);
  bytes[8] = 9;  // format_version 9
  test::write_file(seg, bytes);
  const Outcome newer = run("dump " + store_);
  EXPECT_EQ(newer.code, 2);
  EXPECT_NE(newer.err.find(seg), std::string::npos) << newer.err;
  EXPECT_NE(newer.err.find("newer"), std::string::npos) << newer.err;
  EXPECT_TRUE(newer.out.empty()) << "nothing is printed before the input is known to be readable";

  const Outcome dictionary = run("audit " + store_ + "/inbound --dictionary " + tmp_.sub("nope.xml"));
  EXPECT_EQ(dictionary.code, 2);
  EXPECT_NE(dictionary.err.find("nope.xml"), std::string::npos) << dictionary.err;
}

// ---- audit -------------------------------------------------------------------------------

TEST_F(HftJournalCli, audit_passes_on_a_sound_store) {
  const Outcome r = run("audit " + store_ + " --expect-count 8 --begin-string FIX.4.4 --dictionary " HFT_SHARED_DIR
                    "/fix/spec/FIX44.xml");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(": OK"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(HftJournalCli, audit_fails_naming_the_first_bad_record) {
  const std::string dir = bad_checksum_journal();
  const Outcome r = run("audit " + dir);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::string seg = segment_file(dir, 1);
  EXPECT_NE(r.err.find(seg + "@"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("seq 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("CheckSum"), std::string::npos) << r.err;

  const Outcome count = run("audit " + store_ + " --direction out --expect-count 5");
  EXPECT_EQ(count.code, 1);
  EXPECT_NE(count.err.find("expected 5 messages, found 4"), std::string::npos) << count.err;
}

TEST_F(HftJournalCli, audit_json_is_the_report) {
  const Outcome r = run("audit " + bad_checksum_journal() + " --json");
  EXPECT_EQ(r.code, 1);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["records"], 3);
  EXPECT_EQ(j["failures"][0]["check"], "fix-framing");
  EXPECT_EQ(j["failures"][0]["seq"], 3);
}

// ---- dump --------------------------------------------------------------------------------

TEST_F(HftJournalCli, dump_lists_both_directions_with_names_and_filters) {
  const Outcome all = run("dump " + store_);
  ASSERT_EQ(all.code, 0) << all.err;
  const auto lines = all.out_lines();
  ASSERT_EQ(lines.size(), 8u) << all.out;
  EXPECT_EQ(lines[0].rfind("2026-01-01T00:00:00.000000000Z OUT seq=1 ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("2026-01-01T00:00:00.001000000Z IN  seq=1 ", 0), 0u) << lines[1];
  EXPECT_NE(lines[0].find("MsgType=Logon(A)"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("HeartBtInt=30"), std::string::npos) << lines[0];

  const Outcome orders = run("dump " + store_ + " --type D,A --direction out --from-seq 2 --to-seq 3");
  ASSERT_EQ(orders.code, 0) << orders.err;
  const auto ol = orders.out_lines();
  ASSERT_EQ(ol.size(), 2u) << orders.out;
  EXPECT_NE(ol[0].find("OUT seq=2"), std::string::npos);
  EXPECT_NE(ol[1].find("OUT seq=3"), std::string::npos);

  // Records at 2, 3 and 4 ms: since inclusive, until exclusive.
  const Outcome window = run("dump " + store_ + " --since 2026-01-01T00:00:00.002Z --until 20260101-00:00:00.005");
  EXPECT_EQ(window.out_lines().size(), 3u) << window.out;

  const Outcome named = run("dump " + store_ + " --type 8 --limit 1 --dictionary " HFT_SHARED_DIR "/fix/spec/FIX44.xml");
  const auto nl = named.out_lines();
  ASSERT_EQ(nl.size(), 1u) << named.out;
  EXPECT_NE(nl[0].find("ExecType=NEW(0)"), std::string::npos) << nl[0];

  const Outcome tree = run("dump " + store_ + " --format tree --limit 1");
  EXPECT_NE(tree.out.find("   35 MsgType"), std::string::npos) << tree.out;
  const Outcome raw = run("dump " + store_ + " --format raw --limit 1");
  EXPECT_NE(raw.out.find("8=FIX.4.4|9="), std::string::npos) << raw.out;
  const Outcome control = run("dump " + store_ + "/outbound --control --type X");
  EXPECT_EQ(count_lines_with(control.out_lines(), "control segment-start"), 1) << control.out;
}

TEST_F(HftJournalCli, dump_and_stats_exit_1_on_a_corrupt_record_after_printing_the_rest) {
  const std::string seg = segment_file(store_ + "/inbound", 1);
  std::string bytes = test::read_file(seg);
  const std::size_t at = bytes.find("37=O3");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 4] = '7';
  test::write_file(seg, bytes);
  const Outcome dump = run("dump " + store_);
  EXPECT_EQ(dump.code, 1);
  EXPECT_EQ(dump.out_lines().size(), 6u) << "IN seq 3 and 4 are lost with the rest of the segment\n" << dump.out;
  EXPECT_NE(dump.err.find(seg + "@"), std::string::npos) << dump.err;
  const Outcome stats = run("stats " + store_);
  EXPECT_EQ(stats.code, 1);
  EXPECT_NE(stats.out.find("CORRUPT"), std::string::npos) << stats.out;
}

// ---- stats --------------------------------------------------------------------------------

TEST_F(HftJournalCli, stats_counts_records_types_and_rate) {
  const Outcome r = run("stats " + store_ + " --direction out");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("records      4 messages"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("epoch 1: 4 messages, seq 1..4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("500.0 messages/s"), std::string::npos) << r.out;  // 3 intervals over 6 ms
  const Outcome j = run("stats " + store_ + " --json");
  ASSERT_EQ(j.code, 0);
  const auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc.size(), 2u);
  EXPECT_EQ(doc[0]["direction"], "outbound");
  EXPECT_EQ(doc[1]["per_type"]["8"], 3);
  EXPECT_EQ(doc[1]["first_seq"], 1);
}

TEST_F(HftJournalCli,
       a_store_whose_tail_was_replaced_fails_audit_unless_repairs_are_accepted_and_stats_shows_it) {
  const std::string dir = tmp_.sub("replaced");
  {
    auto store = test::open_store(dir);
    ASSERT_TRUE(store);
    FixBuilder b("FIX.4.4", "CLIENT", "VENUE");
    for (std::uint64_t s = 1; s <= 200; ++s)
      ASSERT_TRUE(b.write(*store, "D", s, kT0 + static_cast<std::int64_t>(s) * kMs, test::order_body(s)));
  }
  auto reader = store::JournalReader::open(dir + "/outbound");
  ASSERT_TRUE(reader);
  ASSERT_GE(reader->segments().size(), 3u);
  const std::string tail = segment_file(dir + "/outbound", reader->segments().back());
  test::write_file(tail, "");
  ASSERT_TRUE(test::open_store(dir));  // what the engine does at start

  const Outcome failed = run("audit " + dir);
  EXPECT_EQ(failed.code, 1) << failed.out << failed.err;
  EXPECT_NE(failed.out.find("FAILED"), std::string::npos) << failed.out;
  EXPECT_NE(failed.err.find("repair: "), std::string::npos) << failed.err;
  EXPECT_NE(failed.out.find(tail + ": 0 bytes, no header"), std::string::npos) << failed.out;

  const Outcome accepted = run("audit " + dir + " --accept-repairs");
  EXPECT_EQ(accepted.code, 0) << accepted.out << accepted.err;
  EXPECT_NE(accepted.out.find("OK"), std::string::npos) << accepted.out;
  EXPECT_NE(accepted.out.find("repairs (accepted): "), std::string::npos) << accepted.out;

  const Outcome stats = run("stats " + dir);
  EXPECT_EQ(stats.code, 0) << stats.err;
  EXPECT_NE(stats.out.find("repairs      0"), std::string::npos) << stats.out << "inbound has none";
  EXPECT_NE(stats.out.find(tail + ": 0 bytes, no header"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("messages) are lost"), std::string::npos) << stats.out;
}

TEST_F(HftJournalCli, stats_of_a_sound_store_shows_no_repairs_in_either_journal) {
  const Outcome r = run("stats " + store_);
  EXPECT_EQ(r.code, 0) << r.err;
  std::size_t zero = 0;
  for (const std::string& line : r.out_lines()) zero += line == "  repairs      0" ? 1 : 0;
  EXPECT_EQ(zero, 2u) << r.out;
}

// JournalLayout=shared: root/shared-journal and a session directory holding
// only seqnums.dat. `SESSION` and `OTHER` each send a Logon and orders; the
// tool reads a session directory as that session's own store.
class HftJournalSharedCli : public HftJournalCli {
 protected:
  void SetUp() override {
    root_ = tmp_.sub("shared");
    store::SharedJournalConfig c;
    c.journal = test::journal_config(root_ + "/shared-journal");
    auto j = store::SharedJournal::open(c);
    ASSERT_TRUE(j.ok()) << j.error().message;
    auto open = [&](const std::string& name) {
      store::SharedJournal::StoreConfig sc;
      sc.directory = root_ + "/" + name;
      sc.name = name;
      sc.sync_new_files = false;
      auto s = (*j)->open_store(sc, kT0);
      EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
      return s.ok() ? std::move(*s) : nullptr;
    };
    auto a = open("FIX.4.4-CLIENTA-VENUE");
    auto b = open("FIX.4.4-CLIENTB-VENUE");
    ASSERT_TRUE(a && b);
    FixBuilder fa{"FIX.4.4", "CLIENTA", "VENUE"}, fb{"FIX.4.4", "CLIENTB", "VENUE"};
    std::int64_t t = kT0;
    for (std::uint64_t seq = 1; seq <= 6; ++seq) {
      // CLIENTA skips its seq 4 (a gap for the audit to find when asked).
      if (seq != 4 || !gap_) {
        ASSERT_TRUE(seq == 1 ? fa.write(*a, "A", 1, t += kMs, test::logon_body())
                             : fa.write(*a, "D", seq, t += kMs, test::order_body(seq)));
      }
      ASSERT_TRUE(seq == 1 ? fb.write(*b, "A", 1, t += kMs, test::logon_body())
                           : fb.write(*b, "D", seq, t += kMs, test::order_body(seq)));
    }
  }
  std::string root_;
  bool gap_ = false;
};

class HftJournalSharedGapCli : public HftJournalSharedCli {
 protected:
  void SetUp() override {
    gap_ = true;
    HftJournalSharedCli::SetUp();
  }
};

TEST_F(HftJournalSharedCli, audit_of_a_session_directory_reads_its_stream_only) {
  const Outcome r = run("audit " + root_ + "/FIX.4.4-CLIENTA-VENUE --json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["records"], 6);  // CLIENTA's 6, not CLIENTB's
  EXPECT_EQ(j["per_type"]["D"], 5);
}

TEST_F(HftJournalSharedCli, dump_of_a_session_directory_lists_its_messages_and_none_of_the_others) {
  const Outcome r = run("dump " + root_ + "/FIX.4.4-CLIENTB-VENUE");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_lines_with(r.out_lines(), "SenderCompID=CLIENTB"), 6) << r.out;
  EXPECT_EQ(count_lines_with(r.out_lines(), "SenderCompID=CLIENTA"), 0) << r.out;
}

TEST_F(HftJournalSharedCli, audit_of_the_shared_journal_checks_records_and_says_messages_are_per_session) {
  const Outcome r = run("audit " + root_ + "/shared-journal");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("per session"), std::string::npos) << r.out;
}

TEST_F(HftJournalSharedCli, a_session_the_shared_journal_does_not_know_is_an_error_naming_both) {
  const std::string unknown = tmp_.sub("shared/FIX.4.4-NOBODY-VENUE");
  ASSERT_EQ(std::system(("mkdir -p " + unknown + " && touch " + unknown + "/seqnums.dat").c_str()), 0);
  const Outcome r = run("audit " + unknown);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("FIX.4.4-NOBODY-VENUE"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("shared-journal"), std::string::npos) << r.err;
}

TEST_F(HftJournalSharedGapCli, audit_of_a_session_with_a_gap_fails_naming_the_shared_segment) {
  const Outcome r = run("audit " + root_ + "/FIX.4.4-CLIENTA-VENUE");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("shared-journal/00000001.seg"), std::string::npos) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("sequence"), std::string::npos) << r.out << r.err;
  // The other session is sound.
  EXPECT_EQ(run("audit " + root_ + "/FIX.4.4-CLIENTB-VENUE").code, 0);
}

TEST_F(HftJournalSharedCli, audit_sessions_audits_every_session_of_the_shared_journal_in_one_read) {
  const Outcome r = run("audit " + root_ + "/shared-journal --sessions");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto lines = r.out_lines();
  EXPECT_EQ(count_lines_with(lines, "FIX.4.4-CLIENTA-VENUE (stream 1): OK, 6 out, 0 in"), 1) << r.out;
  EXPECT_EQ(count_lines_with(lines, "FIX.4.4-CLIENTB-VENUE (stream 2): OK, 6 out, 0 in"), 1) << r.out;
  EXPECT_NE(r.out.find("2 sessions, 0 failed"), std::string::npos) << r.out;
  const Outcome j = run("audit " + root_ + "/shared-journal --sessions --json");
  ASSERT_EQ(j.code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["passes"], 1);
  ASSERT_EQ(doc["sessions"].size(), 2u);
  EXPECT_EQ(doc["sessions"][1]["name"], "FIX.4.4-CLIENTB-VENUE");
  EXPECT_EQ(doc["sessions"][1]["report"]["records"], 6);
}

TEST_F(HftJournalSharedGapCli, audit_sessions_fails_naming_the_session_with_the_gap) {
  const Outcome r = run("audit " + root_ + "/shared-journal --sessions");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const auto lines = r.out_lines();
  EXPECT_EQ(count_lines_with(lines, "FIX.4.4-CLIENTA-VENUE (stream 1): FAILED"), 1) << r.out;
  EXPECT_EQ(count_lines_with(lines, "FIX.4.4-CLIENTB-VENUE (stream 2): OK"), 1) << r.out;
  EXPECT_NE(r.err.find("1 session(s)"), std::string::npos) << r.err;
}

TEST_F(HftJournalCli, audit_sessions_of_a_store_that_is_not_a_shared_journal_is_an_error) {
  const Outcome r = run("audit " + store_ + " --sessions");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_FALSE(r.err.empty());
}

}  // namespace
}  // namespace hft::audit
