// The lab's reader and audit of llfix's serialised message files
// (hft/lab/foreign_journals.hpp): a journal laid out as llfix 1.0.5 writes it
// passes, and every kind of damage the layout lets one see fails the audit
// with the file named.
#include "hft/lab/foreign_journals.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "support/fix_text.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using hft::lab::AuditResult;
using hft::lab::audit_llfix_journal;
using hft::lab::LlfixRecord;
using hft::lab::read_llfix_file;

constexpr std::size_t kFileSize = 4096 * 4;

std::string message(char type, std::uint64_t seq) {
  std::string body = "35=" + std::string(1, type) + "|34=" + std::to_string(seq) +
                     "|49=CLIENT1|52=20261130-14:36:30.691|56=EXECUTOR|50=SNDR_SUB|57=SRVR_SUB|";
  if (type == 'D') {
    body += "11=" + std::to_string(seq) +
            "|55=NOKIA.HE|54=1|38=10|44=10000|40=2|59=0|453=2|448=PARTY1|447=D|452=1|448=PARTY2|447=D|452=3|"
            "60=20261130-14:36:30.691|";
  }
  return hft::test::with_trailer("FIXT.1.1", hft::test::soh(body));
}

void put_u64(std::string& file, std::size_t at, std::uint64_t v) { std::memcpy(file.data() + at, &v, sizeof v); }

struct Record {
  std::string message;
  std::uint8_t success = 1;
};

/// The bytes of one llfix file: count, then timestamp/success/msglen/message
/// per record, zeros to kFileSize.
std::string llfix_file(const std::vector<Record>& records, std::uint64_t first_ts = 1'700'000'000'000'000'000ULL) {
  std::string f(kFileSize, '\0');
  put_u64(f, 0, records.size());
  std::size_t at = 8;
  for (const Record& r : records) {
    put_u64(f, at, first_ts++);
    f[at + 8] = static_cast<char>(r.success);
    put_u64(f, at + 9, r.message.size());
    std::memcpy(f.data() + at + 17, r.message.data(), r.message.size());
    at += 17 + r.message.size();
  }
  return f;
}

class LlfixJournal : public ::testing::Test {
 protected:
  void write(const std::string& name, const std::string& bytes) {
    std::ofstream out(fs::path(dir_.path()) / name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  /// Logon (seq 1), `orders` NewOrderSingles, Logout.
  std::vector<Record> session(std::uint64_t orders, std::uint64_t first_seq = 1) {
    std::vector<Record> r{{message('A', first_seq)}};
    for (std::uint64_t k = 0; k < orders; ++k) r.push_back({message('D', first_seq + 1 + k)});
    r.push_back({message('5', first_seq + 1 + orders)});
    return r;
  }
  AuditResult audit(std::uint64_t expected) { return audit_llfix_journal(dir_.path(), expected); }
  /// The audit fails and its detail holds every one of `texts`.
  void expect_failure(std::uint64_t expected, std::initializer_list<std::string_view> texts) {
    const AuditResult a = audit(expected);
    EXPECT_EQ(a.status, AuditResult::Status::kFail) << a.detail;
    for (const std::string_view t : texts) EXPECT_NE(a.detail.find(t), std::string::npos) << t << " in " << a.detail;
  }

  hft::test::TempDir dir_{"llfix_journal"};
};

TEST_F(LlfixJournal, passes_a_journal_as_llfix_writes_it) {
  write("1.bin", llfix_file(session(3)));
  const AuditResult a = audit(3);
  EXPECT_EQ(a.status, AuditResult::Status::kPass) << a.detail;
  EXPECT_EQ(a.checked, 5u);
  EXPECT_NE(a.detail.find("35=D count 3 == expected"), std::string::npos) << a.detail;
  EXPECT_NE(a.detail.find("seqs 1..5"), std::string::npos) << a.detail;
}

TEST_F(LlfixJournal, reads_every_record_with_its_fields) {
  const std::vector<Record> records = session(2);
  const std::string bytes = llfix_file(records);
  std::vector<LlfixRecord> seen;
  auto summary = read_llfix_file(bytes, [&](const LlfixRecord& r) { seen.push_back(r); });
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->records, 4u);
  EXPECT_EQ(summary->size, kFileSize);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].offset, 8u);
  EXPECT_EQ(seen[1].message, records[1].message);
  EXPECT_EQ(seen[1].success, 1);
  EXPECT_EQ(seen[1].timestamp_ns, seen[0].timestamp_ns + 1);
}

TEST_F(LlfixJournal, passes_rotated_files_with_contiguous_sequence_numbers) {
  std::vector<Record> all = session(4);
  write("1.bin", llfix_file({all.begin(), all.begin() + 3}));
  write("2.bin", llfix_file({all.begin() + 3, all.end()}, 1'800'000'000'000'000'000ULL));
  const AuditResult a = audit(4);
  EXPECT_EQ(a.status, AuditResult::Status::kPass) << a.detail;
  EXPECT_NE(a.detail.find("2 file(s)"), std::string::npos) << a.detail;
}

TEST_F(LlfixJournal, fails_when_the_order_count_differs_from_the_calls_made) {
  write("1.bin", llfix_file(session(3)));
  expect_failure(4, {"3 35=D messages, expected 4"});
}

TEST_F(LlfixJournal, counts_the_reports_of_a_venue_outgoing_journal_when_asked) {
  // A venue's outgoing journal: Logon answer, one report per order, Logout.
  std::vector<Record> r{{message('A', 1)}};
  for (std::uint64_t k = 0; k < 3; ++k) r.push_back({message('8', 2 + k)});
  r.push_back({message('5', 5)});
  write("1.bin", llfix_file(r));
  const AuditResult reports = audit_llfix_journal(dir_.path(), 3, "8");
  EXPECT_EQ(reports.status, AuditResult::Status::kPass) << reports.detail;
  EXPECT_NE(reports.detail.find("35=8 count 3 == expected"), std::string::npos) << reports.detail;
  const AuditResult one_short = audit_llfix_journal(dir_.path(), 4, "8");
  EXPECT_EQ(one_short.status, AuditResult::Status::kFail) << one_short.detail;
  EXPECT_NE(one_short.detail.find("3 35=8 messages, expected 4"), std::string::npos) << one_short.detail;
  // Counted as orders, the same journal has none.
  EXPECT_EQ(audit(3).status, AuditResult::Status::kFail);
}

TEST_F(LlfixJournal, fails_naming_the_file_when_it_is_truncated_inside_a_record) {
  std::string bytes = llfix_file(session(3));
  bytes.resize(8 + 17 + 40);  // the Logon record's message cut short
  write("1.bin", bytes);
  expect_failure(3, {"1.bin", "truncated"});
}

TEST_F(LlfixJournal, fails_naming_the_file_when_a_checksum_is_altered) {
  std::vector<Record> records = session(3);
  std::string& order = records[2].message;
  const std::size_t cks = order.rfind("10=") + 3;
  order[cks] = order[cks] == '9' ? '0' : static_cast<char>(order[cks] + 1);
  write("1.bin", llfix_file(records));
  expect_failure(3, {"1.bin record 3", "CheckSum"});
}

TEST_F(LlfixJournal, fails_when_a_message_byte_changes_under_its_checksum) {
  std::vector<Record> records = session(3);
  std::string& order = records[3].message;
  order[order.find("NOKIA")] = 'M';
  write("1.bin", llfix_file(records));
  expect_failure(3, {"1.bin record 4"});
}

TEST_F(LlfixJournal, fails_when_a_record_length_is_damaged) {
  std::string bytes = llfix_file(session(3));
  put_u64(bytes, 8 + 9, 1ULL << 40);
  write("1.bin", bytes);
  expect_failure(3, {"1.bin: record 1 of 5 at offset 8"});
}

TEST_F(LlfixJournal, fails_when_a_send_was_recorded_as_failed) {
  std::vector<Record> records = session(3);
  records[2].success = 0;
  write("1.bin", llfix_file(records));
  expect_failure(3, {"send() as failed"});
}

TEST_F(LlfixJournal, fails_when_a_record_follows_the_counted_ones) {
  std::string bytes = llfix_file(session(3));
  put_u64(bytes, 0, 4);  // the Logout written but not counted
  write("1.bin", bytes);
  expect_failure(3, {"does not cover"});
}

TEST_F(LlfixJournal, fails_when_sequence_numbers_skip) {
  std::vector<Record> records = session(3);
  records[3].message = message('D', 9);
  write("1.bin", llfix_file(records));
  expect_failure(3, {"seq 9 follows 3"});
}

TEST_F(LlfixJournal, fails_when_a_file_of_the_series_is_missing) {
  std::vector<Record> all = session(4);
  write("1.bin", llfix_file({all.begin(), all.begin() + 3}));
  write("3.bin", llfix_file({all.begin() + 3, all.end()}, 1'800'000'000'000'000'000ULL));
  expect_failure(4, {"2.bin is missing"});
}

TEST_F(LlfixJournal, fails_when_a_file_is_shorter_than_the_others) {
  std::vector<Record> all = session(4);
  write("1.bin", llfix_file({all.begin(), all.begin() + 3}));
  std::string second = llfix_file({all.begin() + 3, all.end()}, 1'800'000'000'000'000'000ULL);
  second.resize(4096);
  write("2.bin", second);
  expect_failure(4, {"2.bin: 4096 bytes"});
}

TEST_F(LlfixJournal, fails_on_an_empty_directory) {
  expect_failure(0, {"no <n>.bin files"});
}

}  // namespace
