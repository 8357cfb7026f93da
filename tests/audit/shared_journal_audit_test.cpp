// The journal audit on the shared layout (store::SharedJournal,
// JournalLayout=shared): a session directory is audited, dumped and
// summarised as if its stream were the session's own store; the shared
// journal itself is audited record by record.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "audit/journal_fixture.hpp"
#include "hft/audit/journal_audit.hpp"
#include "hft/store/shared_journal.hpp"

namespace hft::audit {
namespace {

using test::FixBuilder;
using test::kMs;
using test::kT0;
using test::TempDir;

const std::string kSessionA = "FIX.4.4-CLIENTA-VENUE";
const std::string kSessionB = "FIX.4.4-CLIENTB-VENUE";

/// root/shared-journal and two sessions, root/<kSessionA> and root/<kSessionB>,
/// written interleaved as an engine thread writes them.
class SharedLayout {
 public:
  explicit SharedLayout(const std::string& root) : root_(root) {
    store::SharedJournalConfig c;
    c.journal = test::journal_config(journal_dir());
    auto j = store::SharedJournal::open(c);
    EXPECT_TRUE(j.ok()) << (j.ok() ? "" : j.error().message);
    if (j.ok()) journal_ = std::move(*j);
    a_ = open(kSessionA, 11);
    b_ = open(kSessionB, 22);
  }
  ~SharedLayout() { close(); }

  [[nodiscard]] bool ok() const { return journal_ && a_ && b_; }
  [[nodiscard]] std::string journal_dir() const { return root_ + "/shared-journal"; }
  [[nodiscard]] std::string dir(const std::string& session) const { return root_ + "/" + session; }
  store::SharedStore& a() { return *a_; }
  store::SharedStore& b() { return *b_; }

  /// A sends Logon 1 and orders 2..a_last, receives Logon 1 and reports
  /// 2..a_last; B likewise up to b_last; one record per ms, A's and B's
  /// interleaved (the same seqs in both streams).
  void converse(std::uint64_t a_last, std::uint64_t b_last) {
    for (std::uint64_t s = 1; s <= std::max(a_last, b_last); ++s) {
      if (s <= a_last) {
        ASSERT_TRUE(send(a(), a_out_, s));
        ASSERT_TRUE(receive(a(), a_in_, s));
      }
      if (s <= b_last) {
        ASSERT_TRUE(send(b(), b_out_, s));
        ASSERT_TRUE(receive(b(), b_in_, s));
      }
    }
  }

  bool send(store::SharedStore& store, FixBuilder& out, std::uint64_t seq) {
    t_ += kMs;
    return seq == 1 ? out.write(store, "A", 1, t_, test::logon_body())
                    : out.write(store, "D", seq, t_, test::order_body(seq));
  }
  bool receive(store::SharedStore& store, FixBuilder& in, std::uint64_t seq) {
    t_ += kMs;
    const std::string m =
        seq == 1 ? in.text("A", 1, t_, test::logon_body()) : in.text("8", seq, t_, test::execution_body(seq));
    return store.store_inbound(seq, t_, {m.data(), m.size()}) == store::StoreStatus::kOk;
  }
  FixBuilder& a_out() { return a_out_; }
  FixBuilder& b_out() { return b_out_; }
  std::int64_t now() const { return t_; }

  void close() {
    a_.reset();
    b_.reset();
    journal_.reset();
  }

 private:
  std::unique_ptr<store::SharedStore> open(const std::string& name, std::uint64_t identity) {
    if (!journal_) return nullptr;
    store::SharedJournal::StoreConfig sc;
    sc.directory = dir(name);
    sc.name = name;
    sc.session_identity = identity;
    sc.sync_new_files = false;
    auto s = journal_->open_store(sc, kT0);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return s.ok() ? std::move(*s) : nullptr;
  }

  std::string root_;
  std::unique_ptr<store::SharedJournal> journal_;
  std::unique_ptr<store::SharedStore> a_, b_;
  FixBuilder a_out_{"FIX.4.4", "CLIENTA", "VENUE"}, a_in_{"FIX.4.4", "VENUE", "CLIENTA"};
  FixBuilder b_out_{"FIX.4.4", "CLIENTB", "VENUE"}, b_in_{"FIX.4.4", "VENUE", "CLIENTB"};
  std::int64_t t_ = kT0;
};

AuditReport audit(const std::string& dir, AuditOptions options = {}) {
  auto r = audit_journal(dir, options);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : AuditReport{};
}

std::string first_failure(const AuditReport& r) {
  return r.first_failure() != nullptr ? r.first_failure()->describe() : "";
}

/// (direction, seq, file, offset, bytes) of every record a scan of `dir` yields.
struct Seen {
  JournalDirection direction;
  std::uint64_t seq;
  std::string file;
  std::size_t offset;
  std::string bytes;
  std::uint64_t epoch;
};

std::vector<Seen> scan(const std::string& dir, const RecordFilter& filter = {},
                       DirectionSelect select = DirectionSelect::kBoth) {
  std::vector<Seen> out;
  auto sources = resolve_journals(dir, select);
  EXPECT_TRUE(sources.ok()) << (sources.ok() ? "" : sources.error().message);
  if (!sources.ok()) return out;
  auto r = scan_journals(*sources, filter, [&](const JournalRecord& rec) {
    out.push_back({rec.direction, rec.seq, rec.file(), rec.offset, std::string(rec.bytes), rec.epoch});
    return true;
  });
  EXPECT_TRUE(r.ok());
  return out;
}

std::vector<std::uint64_t> seqs_of(const std::vector<Seen>& seen, JournalDirection d) {
  std::vector<std::uint64_t> out;
  for (const Seen& s : seen)
    if (s.direction == d) out.push_back(s.seq);
  return out;
}

std::vector<std::uint64_t> range(std::uint64_t first, std::uint64_t last) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = first; s <= last; ++s) out.push_back(s);
  return out;
}

// ---- a session of a shared journal ----------------------------------------------------

TEST(SharedJournalAudit, a_session_audits_as_its_own_store_counting_only_its_messages) {
  TempDir tmp;
  SharedLayout layout(tmp.path());
  ASSERT_TRUE(layout.ok());
  layout.converse(60, 40);  // spans segments: 200 records of ~150 bytes in 16 KiB segments
  layout.close();

  const AuditReport r = audit(layout.dir(kSessionA));
  EXPECT_TRUE(r.ok) << first_failure(r);
  ASSERT_EQ(r.journals.size(), 2u);
  const JournalAudit& out = r.journals[0];
  const JournalAudit& in = r.journals[1];
  EXPECT_EQ(out.source.direction, JournalDirection::kOutbound);
  EXPECT_EQ(in.source.direction, JournalDirection::kInbound);
  EXPECT_EQ(out.source.path, layout.journal_dir());
  EXPECT_EQ(out.source.stream, 1u);
  EXPECT_EQ(out.source.store, layout.dir(kSessionA));
  EXPECT_GE(out.segments, 2u) << "the stream is read across the shared journal's segments";
  EXPECT_EQ(out.records, 60u);
  EXPECT_EQ(in.records, 60u);
  EXPECT_EQ(out.per_type.at("A"), 1u);
  EXPECT_EQ(out.per_type.at("D"), 59u);
  EXPECT_EQ(out.per_type.count("8"), 0u);
  EXPECT_EQ(in.per_type.at("8"), 59u);
  EXPECT_EQ(out.first_seq, 1u);
  EXPECT_EQ(out.last_seq, 60u);
  EXPECT_EQ(out.epochs, 1u);
  EXPECT_EQ(out.validated, 60u) << "every message goes through the per-message checks";
  EXPECT_EQ(out.control_records, 0u) << "the shared journal's control records are not the stream's";
  EXPECT_EQ(r.records, 120u);
  EXPECT_EQ(r.begin_string, "FIX.4.4");

  const AuditReport rb = audit(layout.dir(kSessionB));
  EXPECT_TRUE(rb.ok) << first_failure(rb);
  ASSERT_EQ(rb.journals.size(), 2u);
  EXPECT_EQ(rb.journals[0].source.stream, 2u);
  EXPECT_EQ(rb.journals[0].records, 40u);
  EXPECT_EQ(rb.journals[1].records, 40u);

  AuditOptions in_only;
  in_only.direction = DirectionSelect::kInbound;
  in_only.expected_count = 60;
  const AuditReport ri = audit(layout.dir(kSessionA), in_only);
  EXPECT_TRUE(ri.ok) << first_failure(ri);
  ASSERT_EQ(ri.journals.size(), 1u);
  EXPECT_EQ(ri.journals[0].source.direction, JournalDirection::kInbound);

  auto summaries = summarize_journals(layout.dir(kSessionA) + "/");
  ASSERT_TRUE(summaries.ok()) << summaries.error().message;
  ASSERT_EQ(summaries->size(), 2u);
  EXPECT_EQ((*summaries)[0].records, 60u);
  EXPECT_EQ((*summaries)[0].last_seq, 60u);
  EXPECT_EQ((*summaries)[0].begin_string, "FIX.4.4");
  ASSERT_EQ((*summaries)[0].epochs.size(), 1u);
  EXPECT_EQ((*summaries)[0].epochs[0].epoch, 1u);
  EXPECT_TRUE((*summaries)[0].repairs.empty());
  ASSERT_GE((*summaries)[0].segments.size(), 2u);
  EXPECT_TRUE((*summaries)[0].segments.front().sealed)
      << "the shared journal's segments as the files have them";
}

TEST(SharedJournalAudit, a_gap_in_a_sessions_outbound_seqs_fails_the_sequence_check_naming_the_record) {
  TempDir tmp;
  SharedLayout layout(tmp.path());
  ASSERT_TRUE(layout.ok());
  layout.converse(3, 5);
  ASSERT_TRUE(layout.send(layout.a(), layout.a_out(), 5));  // 4 never sent
  layout.close();

  const AuditReport r = audit(layout.dir(kSessionA));
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.failure_count, 1u) << first_failure(r);
  const AuditFailure& f = *r.first_failure();
  EXPECT_EQ(f.check, AuditCheck::kSequence);
  EXPECT_EQ(f.direction, JournalDirection::kOutbound);
  EXPECT_EQ(f.seq, 5u);
  EXPECT_EQ(f.epoch, 1u);
  EXPECT_EQ(f.msg_type, "D");
  EXPECT_NE(f.reason.find("seq 4 is missing"), std::string::npos) << f.reason;
  // The record is named in the shared journal's file, where it is.
  RecordFilter five;
  five.from_seq = five.to_seq = 5;
  const std::vector<Seen> at = scan(layout.dir(kSessionA), five, DirectionSelect::kOutbound);
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(f.file, at[0].file);
  EXPECT_EQ(f.offset, at[0].offset);
  EXPECT_EQ(f.file.rfind(layout.journal_dir() + "/", 0), 0u) << f.file;
  EXPECT_EQ(r.missing_seqs, 1u);

  // B wrote seqs 4 and 5 in between: its own audit is untouched.
  const AuditReport rb = audit(layout.dir(kSessionB));
  EXPECT_TRUE(rb.ok) << first_failure(rb);
}

TEST(SharedJournalAudit, a_reset_starts_the_streams_next_epoch_at_seq_one) {
  TempDir tmp;
  SharedLayout layout(tmp.path());
  ASSERT_TRUE(layout.ok());
  layout.converse(4, 4);
  ASSERT_EQ(layout.a().reset(layout.now() + kMs), store::StoreStatus::kOk);
  ASSERT_TRUE(layout.send(layout.a(), layout.a_out(), 1));
  ASSERT_TRUE(layout.send(layout.a(), layout.a_out(), 2));
  ASSERT_TRUE(layout.send(layout.b(), layout.b_out(), 5));
  layout.close();

  const AuditReport r = audit(layout.dir(kSessionA));
  EXPECT_TRUE(r.ok) << first_failure(r);
  EXPECT_EQ(r.journals[0].epochs, 2u);
  EXPECT_EQ(r.journals[0].records, 6u);
  RecordFilter second;
  second.epoch = 2;
  const std::vector<Seen> seen = scan(layout.dir(kSessionA), second);
  EXPECT_EQ(seqs_of(seen, JournalDirection::kOutbound), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_TRUE(seqs_of(seen, JournalDirection::kInbound).empty());
  EXPECT_TRUE(audit(layout.dir(kSessionB)).ok) << "B's epoch is its own";
}

// ---- scan -----------------------------------------------------------------------------

TEST(SharedJournalScan, a_sessions_scan_never_yields_another_sessions_records) {
  TempDir tmp;
  SharedLayout layout(tmp.path());
  ASSERT_TRUE(layout.ok());
  layout.converse(30, 50);
  layout.close();

  const std::vector<Seen> seen = scan(layout.dir(kSessionA));
  ASSERT_EQ(seen.size(), 60u);
  for (const Seen& s : seen) {
    EXPECT_NE(s.bytes.find("CLIENTA"), std::string::npos) << s.bytes;
    EXPECT_EQ(s.bytes.find("CLIENTB"), std::string::npos) << s.bytes;
    EXPECT_EQ(s.bytes.rfind("8=FIX.4.4\x01", 0), 0u) << "the stream header is not part of the message";
    EXPECT_EQ(s.file.rfind(layout.journal_dir() + "/", 0), 0u) << s.file;
    EXPECT_EQ(s.epoch, 1u);
  }
  EXPECT_EQ(seqs_of(seen, JournalDirection::kOutbound), range(1, 30));
  EXPECT_EQ(seqs_of(seen, JournalDirection::kInbound), range(1, 30));
  EXPECT_EQ(seqs_of(scan(layout.dir(kSessionB)), JournalDirection::kOutbound), range(1, 50));

  // Filters apply to MsgSeqNum, type and count as for a store of its own.
  RecordFilter f;
  f.from_seq = 10;
  f.to_seq = 12;
  EXPECT_EQ(seqs_of(scan(layout.dir(kSessionA), f), JournalDirection::kOutbound), range(10, 12));
  f = {};
  f.msg_types = {"A"};
  EXPECT_EQ(scan(layout.dir(kSessionA), f).size(), 2u);
  f = {};
  f.limit = 3;
  EXPECT_EQ(scan(layout.dir(kSessionA), f).size(), 3u);
  f = {};
  f.include_control = true;
  f.msg_types = {"A"};
  const std::vector<Seen> with_control = scan(layout.dir(kSessionA), f);
  ASSERT_GE(with_control.size(), 2u + 2u) << "the shared journal's segment starts, and A's two Logons";
  EXPECT_EQ(std::count_if(with_control.begin(), with_control.end(),
                          [](const Seen& s) { return s.bytes.find("CLIENTB") != std::string::npos; }),
            0);
}

TEST(SharedJournalScan, a_session_directory_without_a_stream_of_its_name_is_an_error) {
  TempDir tmp;
  {
    SharedLayout layout(tmp.path());
    ASSERT_TRUE(layout.ok());
    layout.converse(2, 2);
  }
  const std::string stranger = tmp.sub("FIX.4.4-NOBODY-VENUE");
  std::filesystem::create_directory(stranger);
  std::filesystem::copy_file(tmp.sub(kSessionA) + "/seqnums.dat", stranger + "/seqnums.dat");
  auto r = resolve_journals(stranger);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(stranger), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find(tmp.sub("shared-journal")), std::string::npos) << r.error().message;
  EXPECT_FALSE(audit_journal(stranger, {}).ok());

  // A session directory with no shared journal beside it.
  TempDir lone;
  std::filesystem::create_directory(lone.sub("s"));
  std::filesystem::copy_file(tmp.sub(kSessionA) + "/seqnums.dat", lone.sub("s") + "/seqnums.dat");
  auto none = resolve_journals(lone.sub("s"));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("not a session store"), std::string::npos) << none.error().message;
}

// ---- the shared journal itself ---------------------------------------------------------

TEST(SharedJournalAudit, the_shared_journal_itself_is_audited_record_by_record_not_as_fix) {
  TempDir tmp;
  SharedLayout layout(tmp.path());
  ASSERT_TRUE(layout.ok());
  layout.converse(20, 10);
  layout.close();

  auto sources = resolve_journals(layout.journal_dir());
  ASSERT_TRUE(sources.ok());
  ASSERT_EQ(sources->size(), 1u);
  EXPECT_TRUE((*sources)[0].shared);
  EXPECT_EQ((*sources)[0].stream, 0u);

  const AuditReport r = audit(layout.journal_dir());
  EXPECT_TRUE(r.ok) << first_failure(r);
  ASSERT_EQ(r.journals.size(), 1u);
  const JournalAudit& j = r.journals[0];
  EXPECT_EQ(j.streams, 2u);
  EXPECT_EQ(j.records, 2u + 40u + 20u) << "two stream names and every message";
  EXPECT_EQ(j.first_seq, 1u);
  EXPECT_EQ(j.last_seq, 62u) << "records are numbered over the whole journal";
  EXPECT_EQ(j.validated, 0u) << "messages are checked per session";
  EXPECT_EQ(j.per_type.at("D"), 19u + 9u);
  EXPECT_EQ(j.per_type.at("8"), 19u + 9u);
  EXPECT_EQ(j.per_type.count(""), 0u) << "stream names are not messages";

  // A record without a stream header (written by a per-session writer) is a
  // stream failure there, never a FIX framing one; a session skips it.
  {
    auto raw = test::open_journal(layout.journal_dir());
    ASSERT_NE(raw, nullptr);
    FixBuilder stray;
    ASSERT_TRUE(test::append(*raw, raw->last_seq() + 1, layout.now() + kMs,
                             stray.text("D", 99, layout.now() + kMs, test::order_body(99))));
  }
  const AuditReport bad = audit(layout.journal_dir());
  ASSERT_FALSE(bad.ok);
  EXPECT_EQ(bad.failure_count, 1u) << first_failure(bad);
  EXPECT_EQ(bad.first_failure()->check, AuditCheck::kStream);
  EXPECT_EQ(bad.first_failure()->seq, 63u);
  EXPECT_NE(bad.first_failure()->reason.find("no stream header"), std::string::npos)
      << bad.first_failure()->reason;
  for (const AuditFailure& f : bad.failures) EXPECT_NE(f.check, AuditCheck::kFixFraming) << f.describe();
  EXPECT_TRUE(audit(layout.dir(kSessionA)).ok);
}

// ---- corruption and repairs --------------------------------------------------------------

TEST(SharedJournalAudit, a_corrupt_record_fails_the_session_audit_naming_the_shared_segment) {
  TempDir tmp;
  SharedLayout layout(tmp.path());
  ASSERT_TRUE(layout.ok());
  layout.converse(8, 8);
  layout.close();
  EXPECT_TRUE(audit(layout.dir(kSessionA)).ok);

  const std::string seg = segment_file(layout.journal_dir(), 1);
  std::string bytes = test::read_file(seg);
  const std::size_t at = bytes.find(std::string("49=CLIENTA\x01"));  // A's Logon, its first message
  ASSERT_NE(at, std::string::npos);
  bytes[at + 9] ^= 0x01;  // 'A' -> '@': still a well-formed field; only the CRC can tell
  test::write_file(seg, bytes);

  const AuditReport r = audit(layout.dir(kSessionA));
  ASSERT_FALSE(r.ok);
  const AuditFailure& f = *r.first_failure();
  EXPECT_EQ(f.check, AuditCheck::kRecord);
  EXPECT_EQ(f.file, seg);
  EXPECT_NE(f.reason.find("CRC"), std::string::npos) << f.reason;
  const auto corrupt = std::count_if(r.failures.begin(), r.failures.end(),
                                     [](const AuditFailure& x) { return x.check == AuditCheck::kRecord; });
  EXPECT_EQ(corrupt, 1) << "one corrupt record, though both directions read past it: " << to_json(r);
  // The rest of the segment is lost to every session of it.
  EXPECT_FALSE(audit(layout.dir(kSessionB)).ok);
}

TEST(SharedJournalAudit, the_shared_journals_repairs_and_a_stream_that_stopped_early_are_found) {
  TempDir tmp;
  SharedLayout layout(tmp.path());
  ASSERT_TRUE(layout.ok());
  layout.converse(4, 4);
  layout.a().set_next_sender_seq(10);  // seqnums.dat says 5..9 were sent: not in the stream
  layout.close();

  AuditReport r = audit(layout.dir(kSessionA));
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.first_failure()->check, AuditCheck::kRepair);
  ASSERT_EQ(r.repairs.size(), 1u) << to_json(r);
  EXPECT_NE(r.repairs[0].text.find("stream 1: ends at seq 4 of epoch 1"), std::string::npos)
      << r.repairs[0].text;
  EXPECT_NE(r.repairs[0].text.find("says next sender seq 10"), std::string::npos) << r.repairs[0].text;
  EXPECT_TRUE(audit(layout.dir(kSessionB)).ok) << "B's seqnums.dat agrees with its stream";

  // A repair of the shared journal concerns each of its sessions, once.
  test::write_file(layout.journal_dir() + "/" + store::kRepairLogName, "tail cut at offset 4096 (test)\n");
  const AuditReport rb = audit(layout.dir(kSessionB));
  ASSERT_FALSE(rb.ok);
  ASSERT_EQ(rb.repairs.size(), 1u) << to_json(rb);
  EXPECT_NE(rb.repairs[0].text.find("tail cut at offset 4096 (test)"), std::string::npos)
      << rb.repairs[0].text;
  EXPECT_EQ(rb.failure_count, 1u);
  AuditOptions accept;
  accept.accept_repairs = true;
  EXPECT_TRUE(audit(layout.dir(kSessionB), accept).ok);
}

}  // namespace
}  // namespace hft::audit
