#include "hft/audit/journal_audit.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "audit/journal_fixture.hpp"
#include "hft/store/format.hpp"
#include "hft/store/journal_reader.hpp"
#include "support/killed_child.hpp"

namespace hft::audit {
namespace {

using test::append;
using test::Body;
using test::FixBuilder;
using test::kMs;
using test::kT0;
using test::TempDir;

std::shared_ptr<const codec::Dictionary> fix44() {
  static const auto dict = [] {
    auto d = load_dictionary(HFT_SHARED_DIR "/fix/spec/FIX44.xml");
    return d ? *d : nullptr;
  }();
  return dict;
}

AuditReport audit(const std::string& dir, AuditOptions options = {}) {
  auto r = audit_journal(dir, options);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : AuditReport{};
}

/// Writes Logon 1 then orders 2..last, in place.
void write_orders(store::Journal& j, FixBuilder& b, std::uint64_t last, std::int64_t t0 = kT0) {
  ASSERT_TRUE(b.write(j, "A", 1, t0, test::logon_body()));
  for (std::uint64_t s = 2; s <= last; ++s) ASSERT_TRUE(b.write(j, "D", s, t0 + static_cast<std::int64_t>(s) * kMs, test::order_body(s)));
}

/// Offset of the record holding `seq` (first found).
std::size_t offset_of(const std::string& dir, std::uint64_t seq) {
  auto sources = resolve_journals(dir);
  std::size_t offset = 0;
  RecordFilter f;
  f.from_seq = f.to_seq = seq;
  (void)scan_journals(*sources, f, [&](const JournalRecord& r) {
    offset = r.offset;
    return false;
  });
  return offset;
}

std::string first_segment(const std::string& dir) { return segment_file(dir, 1); }

// ---- audit passes ------------------------------------------------------------------

TEST(JournalAudit, passes_on_a_good_journal_that_spans_segments) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    ASSERT_NE(j, nullptr);
    FixBuilder b;
    write_orders(*j, b, 150);
  }
  const AuditReport r = audit(tmp.path());
  EXPECT_TRUE(r.ok) << (r.first_failure() ? r.first_failure()->describe() : "");
  EXPECT_EQ(r.records, 150u);
  EXPECT_GE(r.segments, 2u) << "150 orders of ~150 bytes must rotate 16 KiB segments (seals are checked)";
  EXPECT_EQ(r.per_type.at("A"), 1u);
  EXPECT_EQ(r.per_type.at("D"), 149u);
  EXPECT_EQ(r.first_seq, 1u);
  EXPECT_EQ(r.last_seq, 150u);
  EXPECT_EQ(r.begin_string, "FIX.4.4");
  ASSERT_EQ(r.journals.size(), 1u);
  EXPECT_EQ(r.journals[0].epochs, 1u);
  EXPECT_EQ(r.journals[0].validated, 150u);

  AuditOptions full;
  full.dictionary = fix44();
  ASSERT_NE(full.dictionary, nullptr);
  const AuditReport strict = audit(tmp.path(), full);
  EXPECT_TRUE(strict.ok) << (strict.first_failure() ? strict.first_failure()->describe() : "");
  EXPECT_EQ(strict.dictionary, "FIX.4.4");
}

TEST(JournalAudit, passes_on_a_journal_being_written_and_one_reopened_after_close) {
  TempDir tmp;
  FixBuilder b;
  {
    auto j = test::open_journal(tmp.path());
    write_orders(*j, b, 20);
    const AuditReport live = audit(tmp.path());  // the writer still holds the active segment
    EXPECT_TRUE(live.ok) << (live.first_failure() ? live.first_failure()->describe() : "");
    EXPECT_EQ(live.records, 20u);
  }
  {
    auto j = test::open_journal(tmp.path());  // recovery continues the tail segment
    ASSERT_NE(j, nullptr);
    for (std::uint64_t s = 21; s <= 120; ++s) ASSERT_TRUE(b.write(*j, "D", s, kT0 + static_cast<std::int64_t>(s) * kMs, test::order_body(s)));
  }
  const AuditReport r = audit(tmp.path());
  EXPECT_TRUE(r.ok) << (r.first_failure() ? r.first_failure()->describe() : "");
  EXPECT_EQ(r.records, 120u);
  EXPECT_EQ(r.last_seq, 120u);
}

TEST(JournalAudit, passes_on_a_session_store_and_reads_both_directions) {
  TempDir tmp;
  ASSERT_TRUE(test::write_conversation(tmp.path()));
  const AuditReport r = audit(tmp.path());
  EXPECT_TRUE(r.ok) << (r.first_failure() ? r.first_failure()->describe() : "");
  ASSERT_EQ(r.journals.size(), 2u);
  EXPECT_EQ(r.journals[0].source.direction, JournalDirection::kOutbound);
  EXPECT_EQ(r.journals[1].source.direction, JournalDirection::kInbound);
  EXPECT_EQ(r.records, 8u);
  EXPECT_EQ(r.per_type.at("D"), 3u);
  EXPECT_EQ(r.per_type.at("8"), 3u);

  AuditOptions in_only;
  in_only.direction = DirectionSelect::kInbound;
  in_only.expected_count = 4;
  const AuditReport ri = audit(tmp.path(), in_only);
  EXPECT_TRUE(ri.ok);
  ASSERT_EQ(ri.journals.size(), 1u);
  EXPECT_EQ(ri.per_type.count("D"), 0u);
}

TEST(JournalAudit, a_reset_starts_a_new_epoch_at_seq_one) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 3);
    ASSERT_EQ(j->reset(2, kT0 + 1000 * kMs), store::StoreStatus::kOk);
    write_orders(*j, b, 2, kT0 + 1000 * kMs);
  }
  const AuditReport r = audit(tmp.path());
  EXPECT_TRUE(r.ok) << (r.first_failure() ? r.first_failure()->describe() : "");
  EXPECT_EQ(r.journals[0].epochs, 2u);
  EXPECT_EQ(r.records, 5u);
}

TEST(JournalAudit, a_new_epoch_that_does_not_start_at_one_is_a_gap) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 3);
    ASSERT_EQ(j->reset(2, kT0 + 1000 * kMs), store::StoreStatus::kOk);
    ASSERT_TRUE(b.write(*j, "D", 2, kT0 + 1001 * kMs, test::order_body(2)));
  }
  const AuditReport r = audit(tmp.path());
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.first_failure()->check, AuditCheck::kSequence);
  EXPECT_EQ(r.first_failure()->epoch, 2u);
  EXPECT_NE(r.first_failure()->reason.find("seq 1 is missing"), std::string::npos) << r.first_failure()->reason;
}

TEST(JournalAudit, accepts_sequence_reset_gap_fill_and_poss_dup_resends) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b("FIX.4.4", "VENUE", "CLIENT");
    ASSERT_TRUE(b.write(*j, "A", 1, kT0, test::logon_body()));
    ASSERT_TRUE(b.write(*j, "4", 2, kT0 + kMs, Body{{123, "Y"}, {36, "5"}}));
    ASSERT_TRUE(b.write(*j, "8", 5, kT0 + 2 * kMs, test::execution_body(5)));
    ASSERT_TRUE(append(*j, 5, kT0 + 3 * kMs, b.text("8", 5, kT0 + 3 * kMs, test::execution_body(5), true)));
    ASSERT_TRUE(b.write(*j, "8", 6, kT0 + 4 * kMs, test::execution_body(6)));
  }
  const AuditReport r = audit(tmp.path());
  EXPECT_TRUE(r.ok) << (r.first_failure() ? r.first_failure()->describe() : "");
  EXPECT_EQ(r.journals[0].sequence_resets, 1u);
  EXPECT_EQ(r.journals[0].duplicates, 1u);
  EXPECT_EQ(r.journals[0].missing_seqs, 0u);
}

TEST(JournalAudit, a_resent_gap_fill_over_a_seq_journaled_before_a_crash_fills_what_follows) {
  // The receiver journaled Logon 1 and was killed before processing it; after
  // the restart it still expects 1, the peer's new Logon (2) is too high and
  // not journaled, and the peer's gap fill 1 -> 3 (PossDup) fills 1..2.
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b("FIX.4.4", "VENUE", "CLIENT");
    ASSERT_TRUE(b.write(*j, "A", 1, kT0, test::logon_body()));
    ASSERT_TRUE(append(*j, 1, kT0 + kMs, b.text("4", 1, kT0 + kMs, Body{{123, "Y"}, {36, "3"}}, true)));
    ASSERT_TRUE(b.write(*j, "8", 3, kT0 + 2 * kMs, test::execution_body(3)));
  }
  const AuditReport r = audit(tmp.path());
  EXPECT_TRUE(r.ok) << (r.first_failure() ? r.first_failure()->describe() : "");
  EXPECT_EQ(r.journals[0].duplicates, 1u);
  EXPECT_EQ(r.journals[0].sequence_resets, 1u);
  EXPECT_EQ(r.journals[0].missing_seqs, 0u);

  // A resent gap fill that reaches no further than what was seen moves nothing:
  // a seq after it that skips is still a gap.
  TempDir gap;
  {
    auto j = test::open_journal(gap.path());
    FixBuilder b("FIX.4.4", "VENUE", "CLIENT");
    ASSERT_TRUE(b.write(*j, "A", 1, kT0, test::logon_body()));
    ASSERT_TRUE(b.write(*j, "8", 2, kT0 + kMs, test::execution_body(2)));
    ASSERT_TRUE(append(*j, 1, kT0 + 2 * kMs, b.text("4", 1, kT0 + 2 * kMs, Body{{123, "Y"}, {36, "2"}}, true)));
    ASSERT_TRUE(b.write(*j, "8", 4, kT0 + 3 * kMs, test::execution_body(4)));
  }
  const AuditReport g = audit(gap.path());
  EXPECT_FALSE(g.ok);
  EXPECT_EQ(g.journals[0].missing_seqs, 1u);
}

// ---- audit failures name the record ---------------------------------------------------

TEST(JournalAudit, fails_on_a_flipped_payload_byte_naming_segment_offset_and_seq) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 10);
  }
  const std::size_t offset = offset_of(tmp.path(), 5);
  ASSERT_NE(offset, 0u);
  const std::string seg = first_segment(tmp.path());
  std::string bytes = test::read_file(seg);
  const std::size_t at = bytes.find(std::string("11=ORD5\x01"));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 5] ^= 0x01;  // '5' -> '4': still a well-formed FIX field; only the CRC can tell
  test::write_file(seg, bytes);

  const AuditReport r = audit(tmp.path());
  ASSERT_FALSE(r.ok);
  const AuditFailure& f = *r.first_failure();
  EXPECT_EQ(f.check, AuditCheck::kRecord);
  EXPECT_EQ(f.file, seg);
  EXPECT_EQ(f.offset, offset);
  EXPECT_EQ(f.seq, 5u);
  EXPECT_NE(f.reason.find("CRC"), std::string::npos) << f.reason;
  EXPECT_NE(f.describe().find("00000001.seg@" + std::to_string(offset) + " seq 5"), std::string::npos) << f.describe();
}

TEST(JournalAudit, fails_on_a_wrong_fix_checksum_even_when_the_record_crc_is_right) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 2);
    std::string m = b.text("D", 3, kT0 + 3 * kMs, test::order_body(3));
    const std::size_t p = m.rfind("10=");
    const int sum = std::stoi(m.substr(p + 3, 3));
    const std::string wrong = std::to_string(100 + (sum + 1) % 100);  // three digits, never the right sum
    m.replace(p + 3, 3, wrong);
    ASSERT_TRUE(append(*j, 3, kT0 + 3 * kMs, m));
    ASSERT_TRUE(b.write(*j, "D", 4, kT0 + 4 * kMs, test::order_body(4)));
  }
  const AuditReport r = audit(tmp.path());
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.failure_count, 1u) << "the records around it are sound";
  const AuditFailure& f = *r.first_failure();
  EXPECT_EQ(f.check, AuditCheck::kFixFraming);
  EXPECT_EQ(f.seq, 3u);
  EXPECT_EQ(f.msg_type, "D");
  EXPECT_EQ(f.offset, offset_of(tmp.path(), 3));
  EXPECT_NE(f.reason.find("CheckSum"), std::string::npos) << f.reason;
}

TEST(JournalAudit, fails_on_a_wrong_body_length) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 1);
    std::string m = b.text("D", 2, kT0 + 2 * kMs, test::order_body(2));
    const std::size_t p = m.find("\x01" "9=") + 3;
    const std::size_t e = m.find('\x01', p);
    m.replace(p, e - p, std::to_string(std::stoi(m.substr(p, e - p)) - 3));
    ASSERT_TRUE(append(*j, 2, kT0 + 2 * kMs, m));
  }
  const AuditReport r = audit(tmp.path());
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.first_failure()->check, AuditCheck::kFixFraming);
  EXPECT_EQ(r.first_failure()->seq, 2u);
  EXPECT_NE(r.first_failure()->reason.find("BodyLength"), std::string::npos) << r.first_failure()->reason;
}

TEST(JournalAudit, fails_on_a_missing_required_field_against_the_dictionary) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 2);
    Body no_side = test::order_body(3);
    std::erase_if(no_side, [](const auto& f) { return f.first == 54; });
    ASSERT_TRUE(b.write(*j, "D", 3, kT0 + 3 * kMs, no_side));
  }
  AuditOptions o;
  o.dictionary = fix44();
  const AuditReport r = audit(tmp.path(), o);
  ASSERT_FALSE(r.ok);
  const AuditFailure& f = *r.first_failure();
  EXPECT_EQ(f.check, AuditCheck::kValidation);
  EXPECT_EQ(f.seq, 3u);
  EXPECT_NE(f.reason.find("373=1, 371=54"), std::string::npos) << f.reason;

  // The built-in dictionary does not know NewOrderSingle: nothing to say.
  EXPECT_TRUE(audit(tmp.path()).ok);
}

TEST(JournalAudit, builtin_dictionary_checks_session_messages) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    ASSERT_TRUE(b.write(*j, "A", 1, kT0, Body{{98, "0"}}));  // no HeartBtInt
  }
  const AuditReport r = audit(tmp.path());
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.first_failure()->check, AuditCheck::kValidation);
  EXPECT_NE(r.first_failure()->reason.find("371=108"), std::string::npos) << r.first_failure()->reason;
}

TEST(JournalAudit, fails_on_a_group_count_that_lies) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 1);
    Body body = test::order_body(2);
    body.insert(body.end(), {{453, "2"}, {448, "PARTY1"}, {447, "D"}, {452, "1"}});
    ASSERT_TRUE(b.write(*j, "D", 2, kT0 + 2 * kMs, body));
  }
  AuditOptions o;
  o.dictionary = fix44();
  const AuditReport r = audit(tmp.path(), o);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.first_failure()->check, AuditCheck::kValidation);
  EXPECT_EQ(r.first_failure()->seq, 2u);
  EXPECT_NE(r.first_failure()->reason.find("373=16, 371=453"), std::string::npos) << r.first_failure()->reason;
}

TEST(JournalAudit, fails_on_a_seq_gap_unless_gaps_are_allowed) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 2);
    ASSERT_TRUE(b.write(*j, "D", 4, kT0 + 4 * kMs, test::order_body(4)));
    ASSERT_TRUE(b.write(*j, "D", 5, kT0 + 5 * kMs, test::order_body(5)));
  }
  const AuditReport r = audit(tmp.path());
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.failure_count, 1u);
  const AuditFailure& f = *r.first_failure();
  EXPECT_EQ(f.check, AuditCheck::kSequence);
  EXPECT_EQ(f.seq, 4u);
  EXPECT_EQ(f.offset, offset_of(tmp.path(), 4));
  EXPECT_NE(f.reason.find("seq 3 is missing"), std::string::npos) << f.reason;
  EXPECT_EQ(r.missing_seqs, 1u);

  AuditOptions o;
  o.allow_gaps = true;
  const AuditReport allowed = audit(tmp.path(), o);
  EXPECT_TRUE(allowed.ok);
  EXPECT_EQ(allowed.missing_seqs, 1u);
}

TEST(JournalAudit, fails_when_msg_seq_num_differs_from_the_record_seq) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 2);
    ASSERT_TRUE(append(*j, 3, kT0 + 3 * kMs, b.text("D", 9, kT0 + 3 * kMs, test::order_body(3))));
  }
  const AuditReport r = audit(tmp.path());
  ASSERT_FALSE(r.ok);
  const AuditFailure& f = *r.first_failure();
  EXPECT_EQ(f.check, AuditCheck::kMsgSeqNum);
  EXPECT_EQ(f.seq, 3u);
  EXPECT_NE(f.reason.find("is 9 but the record's seq is 3"), std::string::npos) << f.reason;
}

TEST(JournalAudit, fails_when_a_seq_goes_back_without_poss_dup) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 3);
    ASSERT_TRUE(b.write(*j, "D", 2, kT0 + 4 * kMs, test::order_body(2)));
  }
  const AuditReport r = audit(tmp.path());
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.first_failure()->check, AuditCheck::kSequence);
  EXPECT_NE(r.first_failure()->reason.find("goes back"), std::string::npos) << r.first_failure()->reason;
}

TEST(JournalAudit, fails_on_an_unexpected_count_and_begin_string) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 4);
  }
  AuditOptions o;
  o.expected_count = 5;
  const AuditReport r = audit(tmp.path(), o);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.first_failure()->check, AuditCheck::kCount);
  EXPECT_EQ(r.first_failure()->describe(), "count: expected 5 messages, found 4");
  o.expected_count = 4;
  EXPECT_TRUE(audit(tmp.path(), o).ok);

  AuditOptions bs;
  bs.begin_string = "FIX.4.2";
  const AuditReport rb = audit(tmp.path(), bs);
  ASSERT_FALSE(rb.ok);
  EXPECT_EQ(rb.first_failure()->check, AuditCheck::kBeginString);
  EXPECT_EQ(rb.first_failure()->seq, 1u);
}

TEST(JournalAudit, json_report_carries_the_result_and_the_first_failure) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 2);
    ASSERT_TRUE(b.write(*j, "D", 4, kT0 + 4 * kMs, test::order_body(4)));
  }
  const auto j = nlohmann::json::parse(to_json(audit(tmp.path())));
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["records"], 3);
  EXPECT_EQ(j["per_type"]["D"], 2);
  EXPECT_EQ(j["failures"][0]["check"], "sequence");
  EXPECT_EQ(j["failures"][0]["seq"], 4);
  EXPECT_EQ(j["journals"][0]["last_seq"], 4);
}

// ---- bad input ----------------------------------------------------------------------

TEST(JournalAudit, bad_input_is_an_error_naming_the_file) {
  TempDir tmp;
  auto missing = audit_journal(tmp.sub("nope"), {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(tmp.sub("nope")), std::string::npos);

  auto empty = audit_journal(tmp.path(), {});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("not a journal"), std::string::npos) << empty.error().message;

  test::write_file(tmp.sub("file"), "x");
  EXPECT_FALSE(audit_journal(tmp.sub("file"), {}).ok());

  {
    auto j = test::open_journal(tmp.sub("j"));
    FixBuilder b;
    write_orders(*j, b, 2);
  }
  const std::string seg = first_segment(tmp.sub("j"));
  const std::string good = test::read_file(seg);

  std::string newer = good;
  newer[8] = static_cast<char>(store::kFormatVersion + 1);  // format_version
  test::write_file(seg, newer);
  auto rn = audit_journal(tmp.sub("j"), {});
  ASSERT_FALSE(rn.ok());
  EXPECT_NE(rn.error().message.find(seg), std::string::npos);
  EXPECT_NE(rn.error().message.find("newer"), std::string::npos) << rn.error().message;

  std::string corrupt = good;
  corrupt[20] ^= 0x40;  // inside the header, covered by its CRC
  test::write_file(seg, corrupt);
  auto rc = audit_journal(tmp.sub("j"), {});
  ASSERT_FALSE(rc.ok());
  EXPECT_NE(rc.error().message.find("CRC"), std::string::npos) << rc.error().message;

  test::write_file(seg, good.substr(0, 40));
  EXPECT_FALSE(audit_journal(tmp.sub("j"), {}).ok());
}

TEST(JournalAudit, a_store_without_the_requested_direction_is_an_error) {
  TempDir tmp;
  ASSERT_TRUE(test::write_conversation(tmp.path()));
  std::filesystem::remove_all(tmp.sub("inbound"));
  auto r = resolve_journals(tmp.path(), DirectionSelect::kInbound);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("inbound"), std::string::npos);
  auto both = resolve_journals(tmp.path(), DirectionSelect::kBoth);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->size(), 1u);
}

// ---- dump filters -----------------------------------------------------------------------

std::vector<std::uint64_t> seqs(const std::string& dir, const RecordFilter& f,
                                DirectionSelect d = DirectionSelect::kBoth) {
  std::vector<std::uint64_t> out;
  auto sources = resolve_journals(dir, d);
  EXPECT_TRUE(sources.ok());
  auto r = scan_journals(*sources, f, [&](const JournalRecord& rec) {
    out.push_back(rec.seq);
    return true;
  });
  EXPECT_TRUE(r.ok());
  return out;
}

// ---- repairs ----------------------------------------------------------------------

/// A session store whose outbound journal spans several segments: orders
/// 1..last, closed cleanly.
void write_store_orders(const std::string& dir, std::uint64_t last) {
  auto store = test::open_store(dir);
  ASSERT_TRUE(store);
  FixBuilder b("FIX.4.4", "CLIENT", "VENUE");
  for (std::uint64_t s = 1; s <= last; ++s)
    ASSERT_TRUE(b.write(*store, "D", s, kT0 + static_cast<std::int64_t>(s) * kMs, test::order_body(s)));
}

std::vector<std::uint64_t> segments_of(const std::string& journal) {
  auto reader = store::JournalReader::open(journal);
  return reader ? reader->segments() : std::vector<std::uint64_t>{};
}

bool has_repair(const AuditReport& r, const std::string& what) {
  for (const RepairFinding& f : r.repairs)
    if (f.text.find(what) != std::string::npos) return true;
  return false;
}

TEST(JournalAudit, a_tail_replaced_by_recovery_fails_the_audit_unless_repairs_are_accepted) {
  TempDir tmp;
  write_store_orders(tmp.path(), 200);
  const std::string ob = tmp.sub("outbound");
  EXPECT_TRUE(audit(tmp.path()).ok);
  const std::vector<std::uint64_t> segments = segments_of(ob);
  ASSERT_GE(segments.size(), 3u);
  const std::string tail = segment_file(ob, segments.back());
  test::write_file(tail, "");  // truncated to nothing
  // The engine opens the store: the segment is moved aside and recorded.
  ASSERT_TRUE(test::open_store(tmp.path()));

  const AuditReport r = audit(tmp.path());
  EXPECT_FALSE(r.ok);
  ASSERT_NE(r.first_failure(), nullptr);
  EXPECT_EQ(r.first_failure()->check, AuditCheck::kRepair);
  EXPECT_TRUE(has_repair(r, tail + ": 0 bytes, no header, after sealed segment")) << to_json(r);
  EXPECT_TRUE(has_repair(r, "messages) are lost")) << to_json(r);
  EXPECT_TRUE(has_repair(r, "are not in the journal: it stopped early")) << to_json(r);
  EXPECT_EQ(r.journals[0].repairs, r.repairs.size());

  AuditOptions accept;
  accept.accept_repairs = true;
  const AuditReport ra = audit(tmp.path(), accept);
  EXPECT_TRUE(ra.ok) << (ra.first_failure() ? ra.first_failure()->describe() : "");
  EXPECT_EQ(ra.repairs.size(), r.repairs.size());
}

// A writer killed with records still in its write-behind buffers
// (JournalConfig::write_behind): the segment files alone lack them, and the
// audit says where they are, until an open writes them back.
TEST(JournalAudit,
     records_a_killed_writer_left_in_its_write_behind_buffers_are_named_until_the_journal_is_opened) {
  TempDir tmp;
  store::JournalConfig c = test::journal_config(tmp.path(), 1 << 20);
  c.durability = store::Durability::kOs;
  c.write_behind = true;
  char done = 0;
  ASSERT_TRUE(hft::test::run_then_kill(
      [&](int ready) {
        auto j = store::Journal::open(c);  // no service: nothing is written out
        if (!j) ::_exit(3);
        FixBuilder b("FIX.4.4", "CLIENT", "VENUE");
        write_orders(**j, b, 300);
        const char one = 1;
        if (::write(ready, &one, 1) != 1) ::_exit(5);
        hft::test::wait_to_be_killed();  // its journal open
      },
      &done, 1));

  const AuditReport r = audit(tmp.path());
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has_repair(r,
                         "that are not in the segment file yet: the journal's writer stopped before writing "
                         "them out; opening the journal (starting the engine) writes them back"))
      << to_json(r);
  // Opened (and closed): the records are in the segment file, all 300.
  ASSERT_TRUE(store::Journal::open(c));
  const AuditReport after = audit(tmp.path());
  EXPECT_TRUE(after.ok) << (after.first_failure() ? after.first_failure()->describe() : "");
  EXPECT_EQ(after.records, 300u);
}

TEST(JournalAudit, a_journal_that_stopped_early_fails_before_any_repair) {
  TempDir tmp;
  write_store_orders(tmp.path(), 200);
  const std::string ob = tmp.sub("outbound");
  const std::vector<std::uint64_t> segments = segments_of(ob);
  ASSERT_GE(segments.size(), 3u);
  // The last segment gone (a backup that missed it): the one before is sealed.
  std::filesystem::remove(segment_file(ob, segments.back()));
  const AuditReport r = audit(tmp.path());
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has_repair(r, "last segment is sealed")) << to_json(r);
  EXPECT_TRUE(has_repair(r, "says next sender seq 201")) << to_json(r);
}

TEST(JournalAudit, a_cut_torn_tail_fails_the_audit_naming_the_saved_bytes) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    ASSERT_TRUE(j);
    FixBuilder b;
    write_orders(*j, b, 5);
  }
  const std::string seg = first_segment(tmp.path());
  std::string bytes = test::read_file(seg);
  const std::size_t end = offset_of(tmp.path(), 5) + 400;
  bytes[end] = 'x';
  test::write_file(seg, bytes);
  auto reopened = test::open_journal(tmp.path());
  ASSERT_TRUE(reopened);
  const std::string saved = reopened->recovery().saved_to;
  ASSERT_FALSE(saved.empty());
  reopened.reset();
  const AuditReport r = audit(tmp.path());
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has_repair(r, "tail cut at offset")) << to_json(r);
  EXPECT_TRUE(has_repair(r, saved)) << to_json(r);
  // A .cut file without the log (an older engine cut it) is found too.
  std::filesystem::remove(tmp.sub(store::kRepairLogName));
  const AuditReport old = audit(tmp.path());
  EXPECT_FALSE(old.ok);
  EXPECT_TRUE(has_repair(old, saved + ": bytes cut from a torn tail")) << to_json(old);
}

TEST(JournalStatsSummary, lists_the_repairs_of_each_journal) {
  TempDir tmp;
  write_store_orders(tmp.path(), 200);
  const std::string ob = tmp.sub("outbound");
  const std::vector<std::uint64_t> segments = segments_of(ob);
  test::write_file(segment_file(ob, segments.back()), "");
  ASSERT_TRUE(test::open_store(tmp.path()));
  auto s = summarize_journals(tmp.path());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->size(), 2u);
  EXPECT_FALSE((*s)[0].repairs.empty());
  EXPECT_TRUE((*s)[1].repairs.empty());
  const auto j = nlohmann::json::parse(to_json(*s));
  EXPECT_EQ(j[0]["repairs"].size(), (*s)[0].repairs.size());
}

TEST(JournalScan, filters_by_seq_type_time_epoch_and_limit) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 6);  // A at kT0, D s at kT0 + s ms
    ASSERT_EQ(j->reset(2, kT0 + 100 * kMs), store::StoreStatus::kOk);
    write_orders(*j, b, 2, kT0 + 100 * kMs);
  }
  RecordFilter f;
  EXPECT_EQ(seqs(tmp.path(), f), (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 1, 2}));
  f.from_seq = 3;
  f.to_seq = 5;
  EXPECT_EQ(seqs(tmp.path(), f), (std::vector<std::uint64_t>{3, 4, 5}));
  f = {};
  f.msg_types = {"A"};
  EXPECT_EQ(seqs(tmp.path(), f), (std::vector<std::uint64_t>{1, 1}));
  f = {};
  f.since_ns = kT0 + 4 * kMs;
  f.until_ns = kT0 + 100 * kMs;  // exclusive: the second Logon is left out
  EXPECT_EQ(seqs(tmp.path(), f), (std::vector<std::uint64_t>{4, 5, 6}));
  f = {};
  f.epoch = 2;
  EXPECT_EQ(seqs(tmp.path(), f), (std::vector<std::uint64_t>{1, 2}));
  f = {};
  f.limit = 2;
  EXPECT_EQ(seqs(tmp.path(), f), (std::vector<std::uint64_t>{1, 2}));
  f = {};
  f.include_control = true;
  f.msg_types = {"A"};
  const auto with_control = seqs(tmp.path(), f);
  EXPECT_GE(with_control.size(), 4u) << "two start records at least, plus the two Logons";
  EXPECT_EQ(std::count(with_control.begin(), with_control.end(), 0u), static_cast<long>(with_control.size() - 2));
}

TEST(JournalScan, merges_outbound_and_inbound_in_time_order) {
  TempDir tmp;
  ASSERT_TRUE(test::write_conversation(tmp.path()));
  auto sources = resolve_journals(tmp.path());
  ASSERT_TRUE(sources.ok());
  std::string order;
  std::int64_t last = 0;
  auto r = scan_journals(*sources, {}, [&](const JournalRecord& rec) {
    order += std::string(direction_label(rec.direction)) + ":" + std::string(rec.msg_type) + " ";
    EXPECT_GE(rec.timestamp_ns, last);
    last = rec.timestamp_ns;
    return true;
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(order, "OUT:A IN:A OUT:D IN:8 OUT:D IN:8 OUT:D IN:8 ");
  EXPECT_EQ(seqs(tmp.path(), {}, DirectionSelect::kOutbound), (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

TEST(JournalScan, reports_corrupt_records_and_goes_on_with_the_next_segment) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 150);
  }
  const std::string seg = first_segment(tmp.path());
  std::string bytes = test::read_file(seg);
  const std::size_t at = bytes.find(std::string("11=ORD5\x01"));
  bytes[at + 5] ^= 0x01;
  test::write_file(seg, bytes);
  auto sources = resolve_journals(tmp.path());
  std::vector<std::uint64_t> got;
  auto r = scan_journals(*sources, {}, [&](const JournalRecord& rec) {
    got.push_back(rec.seq);
    return true;
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->corrupt, 1u);
  ASSERT_EQ(r->corruptions.size(), 1u);
  EXPECT_NE(r->corruptions[0].find(seg + "@"), std::string::npos) << r->corruptions[0];
  EXPECT_EQ(got.front(), 1u);
  EXPECT_EQ(got[3], 4u);
  EXPECT_GT(got[4], 5u) << "the rest of the first segment is skipped";
  EXPECT_EQ(got.back(), 150u);
}

// ---- stats ---------------------------------------------------------------------------

TEST(JournalStatsSummary, counts_segments_records_epochs_types_and_sizes) {
  TempDir tmp;
  {
    auto j = test::open_journal(tmp.path());
    FixBuilder b;
    write_orders(*j, b, 150);
    ASSERT_EQ(j->reset(2, kT0 + 1000 * kMs), store::StoreStatus::kOk);
    ASSERT_TRUE(b.write(*j, "A", 1, kT0 + 1000 * kMs, test::logon_body()));
  }
  auto r = summarize_journals(tmp.path());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  const JournalSummary& s = r->front();
  EXPECT_EQ(s.records, 151u);
  EXPECT_GE(s.segments.size(), 3u);
  EXPECT_EQ(s.control_records, s.segments.size() + (s.segments.size() - 1)) << "a start per segment, a seal per finished one";
  EXPECT_TRUE(s.segments.front().sealed);
  EXPECT_FALSE(s.segments.back().sealed);
  ASSERT_EQ(s.epochs.size(), 2u);
  EXPECT_EQ(s.epochs[0].records, 150u);
  EXPECT_EQ(s.epochs[0].last_seq, 150u);
  EXPECT_EQ(s.epochs[1].epoch, 2u);
  EXPECT_EQ(s.epochs[1].first_seq, 1u);
  EXPECT_EQ(s.first_seq, 1u);
  EXPECT_EQ(s.last_seq, 1u);
  EXPECT_EQ(s.first_ns, kT0);
  EXPECT_EQ(s.last_ns, kT0 + 1000 * kMs);
  EXPECT_NEAR(s.messages_per_second, 150.0, 1e-6);
  EXPECT_EQ(s.per_type.at("A"), 2u);
  EXPECT_EQ(s.per_type.at("D"), 149u);
  EXPECT_EQ(s.begin_string, "FIX.4.4");
  EXPECT_EQ(s.message_sizes.count, 151u);
  EXPECT_LE(s.message_sizes.min, s.message_sizes.p50);
  EXPECT_LE(s.message_sizes.p99, s.message_sizes.max);
  std::uint64_t bucketed = 0;
  for (const auto& [bound, n] : s.message_sizes.buckets) bucketed += n;
  EXPECT_EQ(bucketed, 151u);
  EXPECT_EQ(s.corrupt, 0u);
  const auto j = nlohmann::json::parse(to_json(*r));
  EXPECT_EQ(j[0]["records"], 151);
  EXPECT_EQ(j[0]["epochs"].size(), 2u);
}

// ---- time text ------------------------------------------------------------------------

TEST(JournalTime, parses_iso_fix_and_nanosecond_forms) {
  std::int64_t ns = 0;
  ASSERT_TRUE(parse_time("2026-01-01T00:00:00.001Z", ns));
  EXPECT_EQ(ns, kT0 + kMs);
  ASSERT_TRUE(parse_time("2026-01-01 00:00:01", ns));
  EXPECT_EQ(ns, kT0 + 1000 * kMs);
  ASSERT_TRUE(parse_time("2026-01-01", ns));
  EXPECT_EQ(ns, kT0);
  ASSERT_TRUE(parse_time("20260101-00:00:00.000000005", ns));
  EXPECT_EQ(ns, kT0 + 5);
  ASSERT_TRUE(parse_time("1767225600000000007", ns));
  EXPECT_EQ(ns, kT0 + 7);
  EXPECT_FALSE(parse_time("yesterday", ns));
  EXPECT_FALSE(parse_time("2026-13-01", ns));
  EXPECT_FALSE(parse_time("2026-01-01T00:00:00+02:00", ns));
  EXPECT_EQ(format_utc_ns(kT0 + 5), "2026-01-01T00:00:00.000000005Z");
}

}  // namespace
}  // namespace hft::audit
