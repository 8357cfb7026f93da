// audit_shared_sessions(): every session of a shared journal
// (JournalLayout=shared) and the journal itself audited from one read of
// its records. Each session's report must be the one audit_journal() gives
// for the session's directory, failure for failure, and the journal's the
// one audit_journal() gives for the shared journal; the pass count says the
// journal was read once.
#include <gtest/gtest.h>

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

/// root/shared-journal with sessions written interleaved, as an engine
/// thread writes them: per session an outbound (CLIENTn -> VENUE) and an
/// inbound (VENUE -> CLIENTn) direction.
class Sessions {
 public:
  Sessions(const std::string& root, std::size_t count) : root_(root) {
    store::SharedJournalConfig c;
    c.journal = test::journal_config(journal_dir());
    auto j = store::SharedJournal::open(c);
    EXPECT_TRUE(j.ok()) << (j.ok() ? "" : j.error().message);
    if (!j.ok()) return;
    journal_ = std::move(*j);
    for (std::size_t k = 0; k < count; ++k) {
      auto s = std::make_unique<Session>();
      const std::string comp = "CLIENT" + std::string(1, static_cast<char>('A' + k));
      s->name = "FIX.4.4-" + comp + "-VENUE";
      s->out = FixBuilder("FIX.4.4", comp, "VENUE");
      s->in = FixBuilder("FIX.4.4", "VENUE", comp);
      store::SharedJournal::StoreConfig sc;
      sc.directory = dir(k);
      sc.name = s->name;
      sc.session_identity = 100 + k;
      sc.sync_new_files = false;
      auto opened = journal_->open_store(sc, kT0);
      EXPECT_TRUE(opened.ok()) << (opened.ok() ? "" : opened.error().message);
      if (!opened.ok()) return;
      s->store = std::move(*opened);
      sessions_.push_back(std::move(s));
    }
  }
  ~Sessions() { close(); }

  [[nodiscard]] bool ok() const { return journal_ != nullptr && !sessions_.empty(); }
  [[nodiscard]] std::string journal_dir() const { return root_ + "/shared-journal"; }
  [[nodiscard]] std::string dir(std::size_t k) const { return root_ + "/" + name(k); }
  [[nodiscard]] std::string name(std::size_t k) const {
    return k < sessions_.size() ? sessions_[k]->name
                                : "FIX.4.4-CLIENT" + std::string(1, static_cast<char>('A' + k)) + "-VENUE";
  }
  store::SharedStore& store(std::size_t k) { return *sessions_[k]->store; }

  /// Session k sends message `seq` (a Logon at 1, then orders).
  bool send(std::size_t k, std::uint64_t seq) {
    t_ += kMs;
    Session& s = *sessions_[k];
    return seq == 1 ? s.out.write(*s.store, "A", 1, t_, test::logon_body())
                    : s.out.write(*s.store, "D", seq, t_, test::order_body(seq));
  }
  /// The text of session k's inbound message `seq` (a Logon at 1, then reports).
  std::string inbound_text(std::size_t k, std::uint64_t seq) {
    Session& s = *sessions_[k];
    return seq == 1 ? s.in.text("A", 1, t_ + kMs, test::logon_body())
                    : s.in.text("8", seq, t_ + kMs, test::execution_body(seq));
  }
  /// Session k receives `bytes` as its inbound message `seq`.
  bool receive_bytes(std::size_t k, std::uint64_t seq, const std::string& bytes) {
    t_ += kMs;
    return store(k).store_inbound(seq, t_, {bytes.data(), bytes.size()}) == store::StoreStatus::kOk;
  }
  bool receive(std::size_t k, std::uint64_t seq) { return receive_bytes(k, seq, inbound_text(k, seq)); }

  /// Every session sends and receives seqs 1..last, one round at a time.
  void converse(std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t seq = first; seq <= last; ++seq) {
      for (std::size_t k = 0; k < sessions_.size(); ++k) {
        ASSERT_TRUE(send(k, seq));
        ASSERT_TRUE(receive(k, seq));
      }
    }
  }

  [[nodiscard]] std::int64_t now() const { return t_; }

  void close() {
    sessions_.clear();
    journal_.reset();
  }

 private:
  struct Session {
    std::string name;
    FixBuilder out, in;
    std::unique_ptr<store::SharedStore> store;
  };
  std::string root_;
  std::unique_ptr<store::SharedJournal> journal_;
  std::vector<std::unique_ptr<Session>> sessions_;
  std::int64_t t_ = kT0;
};

SharedJournalAudit audit_all(const std::string& journal_dir, const AuditOptions& options = {}) {
  auto r = audit_shared_sessions(journal_dir, options);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(*r) : SharedJournalAudit{};
}

AuditReport audit_one(const std::string& dir, const AuditOptions& options = {}) {
  auto r = audit_journal(dir, options);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : AuditReport{};
}

std::vector<AuditCheck> checks(const AuditReport& r) {
  std::vector<AuditCheck> out;
  for (const AuditFailure& f : r.failures) out.push_back(f.check);
  return out;
}

/// The session's report from the single pass is audit_journal()'s of its
/// directory: the headline figures one by one (for readable failures), then
/// everything to_json() says (every journal's counters, every failure's
/// place and reason, every repair).
void expect_as_audited_alone(const SessionAudit& s, const AuditOptions& options = {}) {
  SCOPED_TRACE(s.directory);
  const AuditReport alone = audit_one(s.directory, options);
  const AuditReport& r = s.report;
  EXPECT_EQ(r.ok, alone.ok);
  EXPECT_EQ(r.records, alone.records);
  EXPECT_EQ(r.per_type, alone.per_type);
  EXPECT_EQ(r.failure_count, alone.failure_count);
  EXPECT_EQ(checks(r), checks(alone));
  ASSERT_EQ(r.journals.size(), alone.journals.size());
  for (std::size_t k = 0; k < r.journals.size(); ++k) {
    EXPECT_EQ(r.journals[k].source.direction, alone.journals[k].source.direction);
    EXPECT_EQ(r.journals[k].records, alone.journals[k].records);
    EXPECT_EQ(r.journals[k].per_type, alone.journals[k].per_type);
    EXPECT_EQ(r.journals[k].failures, alone.journals[k].failures);
  }
  EXPECT_EQ(to_json(r), to_json(alone));
}

std::string first_failure(const AuditReport& r) {
  return r.first_failure() != nullptr ? r.first_failure()->describe() : "";
}

// ---- one pass, the results of one audit per session -------------------------------------

TEST(SharedSessionsAudit, every_session_is_audited_as_its_own_directory_from_one_read_of_the_journal) {
  TempDir tmp;
  Sessions s(tmp.path(), 3);
  ASSERT_TRUE(s.ok());
  s.converse(1, 30);  // ~180 records of ~150 bytes: several 16 KiB segments
  // A: a reset, then a new epoch from seq 1.
  ASSERT_EQ(s.store(0).reset(s.now() + kMs), store::StoreStatus::kOk);
  ASSERT_TRUE(s.send(0, 1));
  ASSERT_TRUE(s.receive(0, 1));
  // B: its outbound seq 31 never journaled, 32 is.
  ASSERT_TRUE(s.send(1, 32));
  // C: an inbound message whose CheckSum is wrong (the record's CRC is right).
  std::string bent = s.inbound_text(2, 31);
  bent[bent.size() - 2] = bent[bent.size() - 2] == '0' ? '1' : '0';
  ASSERT_TRUE(s.receive_bytes(2, 31, bent));
  ASSERT_TRUE(s.send(2, 31));
  s.close();

  const SharedJournalAudit all = audit_all(s.journal_dir());
  EXPECT_EQ(all.passes, 1u) << "the journal is read once for every session";
  EXPECT_EQ(all.records_read, all.journal.records + all.journal.control_records)
      << "each record read once: its data and control records";
  EXPECT_FALSE(all.ok);
  ASSERT_EQ(all.sessions.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    const SessionAudit& session = all.sessions[k];
    EXPECT_EQ(session.stream, k + 1);
    EXPECT_EQ(session.name, s.name(k));
    EXPECT_EQ(session.directory, s.dir(k));
    expect_as_audited_alone(session);
  }
  // What each found, as its own audit finds it.
  const AuditReport& a = all.sessions[0].report;
  EXPECT_TRUE(a.ok) << first_failure(a);
  EXPECT_EQ(a.journals[0].epochs, 2u);
  EXPECT_EQ(a.journals[0].records, 31u);
  const AuditReport& b = all.sessions[1].report;
  ASSERT_FALSE(b.ok);
  EXPECT_EQ(b.first_failure()->check, AuditCheck::kSequence);
  EXPECT_EQ(b.first_failure()->direction, JournalDirection::kOutbound);
  EXPECT_NE(b.first_failure()->reason.find("seq 31 is missing"), std::string::npos) << first_failure(b);
  EXPECT_EQ(b.journals[0].per_type.at("D"), 29u + 1u);
  EXPECT_EQ(b.failure_count, 1u) << to_json(b);
  const AuditReport& c = all.sessions[2].report;
  ASSERT_FALSE(c.ok);
  const AuditFailure& framing = c.failures.front();
  EXPECT_EQ(framing.check, AuditCheck::kFixFraming) << first_failure(c);
  EXPECT_EQ(framing.direction, JournalDirection::kInbound);
  EXPECT_EQ(framing.seq, 31u);
  EXPECT_EQ(c.journals[0].failures, 0u) << "C's outbound stream is clean: " << to_json(c);

  // The journal itself, record by record, as audit_journal() of it.
  const AuditReport journal = audit_one(s.journal_dir());
  EXPECT_TRUE(all.journal.ok) << first_failure(all.journal);
  EXPECT_EQ(all.journal.journals.front().streams, 3u);
  EXPECT_EQ(to_json(all.journal), to_json(journal));
}

TEST(SharedSessionsAudit, a_clean_journal_passes_every_session_and_counts_each_direction) {
  TempDir tmp;
  Sessions s(tmp.path(), 3);
  ASSERT_TRUE(s.ok());
  s.converse(1, 20);
  s.close();

  AuditOptions options;
  options.expected_count = 40;  // per session, as audit_journal() of its directory counts
  const SharedJournalAudit all = audit_all(s.journal_dir() + "/", options);
  EXPECT_TRUE(all.ok);
  EXPECT_EQ(all.passes, 1u);
  EXPECT_EQ(all.journal.directory, s.journal_dir()) << "trailing slashes are dropped";
  ASSERT_EQ(all.sessions.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    const AuditReport& r = all.sessions[k].report;
    EXPECT_TRUE(r.ok) << first_failure(r);
    ASSERT_EQ(r.journals.size(), 2u);
    EXPECT_EQ(r.journals[0].per_type.at("D"), 19u);
    EXPECT_EQ(r.journals[1].per_type.at("8"), 19u);
    EXPECT_EQ(r.journals[0].validated, 20u);
    EXPECT_EQ(r.journals[0].source.store, s.dir(k));
    expect_as_audited_alone(all.sessions[k], options);
  }
  // The count is each session's, not the journal's.
  EXPECT_TRUE(all.journal.ok) << first_failure(all.journal);
  EXPECT_EQ(all.journal.records, 3u + 3u * 40u);

  // One direction selected: one auditor per session, as audit_journal() selects.
  for (const DirectionSelect d : {DirectionSelect::kInbound, DirectionSelect::kOutbound}) {
    AuditOptions one;
    one.direction = d;
    one.expected_count = 20;
    const SharedJournalAudit only = audit_all(s.journal_dir(), one);
    EXPECT_TRUE(only.ok);
    for (const SessionAudit& session : only.sessions) {
      ASSERT_EQ(session.report.journals.size(), 1u);
      expect_as_audited_alone(session, one);
    }
  }
}

// ---- damage the shared journal's every session meets -------------------------------------

TEST(SharedSessionsAudit,
     a_corrupt_record_and_the_journals_repairs_are_every_sessions_as_in_their_own_audits) {
  TempDir tmp;
  Sessions s(tmp.path(), 3);
  ASSERT_TRUE(s.ok());
  s.converse(1, 40);                   // over several segments: the damage takes the rest of the first only
  s.store(1).set_next_sender_seq(48);  // B's seqnums.dat: 41..47 sent, not in its stream
  s.close();

  // B's Logon bent in the file: its record's CRC no longer matches, and the
  // rest of the first segment is lost to every session.
  const std::string seg = segment_file(s.journal_dir(), 1);
  std::string bytes = test::read_file(seg);
  const std::size_t at = bytes.find(std::string("49=CLIENTB\x01"));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 9] ^= 0x01;
  test::write_file(seg, bytes);
  test::write_file(s.journal_dir() + "/" + store::kRepairLogName, "tail cut at offset 4096 (test)\n");

  const SharedJournalAudit all = audit_all(s.journal_dir());
  EXPECT_EQ(all.passes, 1u);
  EXPECT_FALSE(all.ok);
  ASSERT_EQ(all.sessions.size(), 3u) << "the streams named after the damage too";
  for (const SessionAudit& session : all.sessions) {
    expect_as_audited_alone(session);
    const AuditReport& r = session.report;
    ASSERT_FALSE(r.ok);
    std::size_t corrupt = 0;
    for (const AuditFailure& f : r.failures) corrupt += f.check == AuditCheck::kRecord ? 1 : 0;
    EXPECT_EQ(corrupt, 1u) << "one failure per session, though both directions read past it: " << to_json(r);
    EXPECT_EQ(r.repairs.front().text,
              s.journal_dir() + "/" + store::kRepairLogName + ": tail cut at offset 4096 (test)");
  }
  const AuditReport& b = all.sessions[1].report;
  ASSERT_EQ(b.repairs.size(), 2u) << to_json(b);
  EXPECT_NE(b.repairs[1].text.find("says next sender seq 48"), std::string::npos) << b.repairs[1].text;
  EXPECT_EQ(all.sessions[0].report.repairs.size(), 1u) << "A's seqnums.dat agrees with its stream";

  const AuditReport journal = audit_one(s.journal_dir());
  EXPECT_FALSE(all.journal.ok);
  EXPECT_EQ(to_json(all.journal), to_json(journal));

  AuditOptions accept;
  accept.accept_repairs = true;
  for (const SessionAudit& session : audit_all(s.journal_dir(), accept).sessions) {
    expect_as_audited_alone(session, accept);
  }
}

// ---- what one pass cannot know in time ---------------------------------------------------

TEST(SharedSessionsAudit, inbound_messages_before_any_outbound_one_are_judged_by_the_outbound_begin_string) {
  // An acceptor's first record is the Logon it received. audit_journal()
  // expects every message of the session to have the BeginString of its
  // first outbound one; one pass knows it only later, so a session whose
  // inbound BeginString turns out to differ is read again for it.
  TempDir tmp;
  Sessions s(tmp.path(), 2);
  ASSERT_TRUE(s.ok());
  FixBuilder other("FIX.4.2", "VENUE", "CLIENTA");
  const std::string logon = other.text("A", 1, s.now() + kMs, test::logon_body());
  ASSERT_TRUE(s.receive_bytes(0, 1, logon));  // A's first record: FIX.4.2, inbound
  ASSERT_TRUE(s.send(0, 1));
  ASSERT_TRUE(s.receive(1, 1));  // B's first is inbound too, the same BeginString as its outbound
  ASSERT_TRUE(s.send(1, 1));
  s.converse(2, 6);
  s.close();

  const SharedJournalAudit all = audit_all(s.journal_dir());
  EXPECT_EQ(all.passes, 2u) << "A's inbound messages read again; B's not";
  ASSERT_EQ(all.sessions.size(), 2u);
  for (const SessionAudit& session : all.sessions) expect_as_audited_alone(session);
  const AuditReport& a = all.sessions[0].report;
  ASSERT_FALSE(a.ok);
  EXPECT_EQ(a.first_failure()->check, AuditCheck::kBeginString);
  EXPECT_EQ(a.first_failure()->direction, JournalDirection::kInbound);
  EXPECT_EQ(a.begin_string, "FIX.4.4") << "of the first outbound message";
  EXPECT_TRUE(all.sessions[1].report.ok) << first_failure(all.sessions[1].report);

  // Given a BeginString, nothing is guessed: one pass.
  AuditOptions given;
  given.begin_string = "FIX.4.4";
  const SharedJournalAudit once = audit_all(s.journal_dir(), given);
  EXPECT_EQ(once.passes, 1u);
  for (const SessionAudit& session : once.sessions) expect_as_audited_alone(session, given);
}

// ---- errors --------------------------------------------------------------------------------

TEST(SharedSessionsAudit, a_directory_that_is_not_a_shared_journal_is_an_error_naming_it) {
  TempDir tmp;
  ASSERT_TRUE(test::write_conversation(tmp.sub("store")));
  auto store = audit_shared_sessions(tmp.sub("store"), {});
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find(tmp.sub("store") + ": not a shared journal"), std::string::npos)
      << store.error().message;
  auto journal = audit_shared_sessions(tmp.sub("store") + "/outbound", {});
  ASSERT_FALSE(journal.ok()) << "a journal of one session";
  EXPECT_NE(journal.error().message.find("not a shared journal"), std::string::npos)
      << journal.error().message;
  auto missing = audit_shared_sessions(tmp.sub("nothing"), {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(tmp.sub("nothing")), std::string::npos) << missing.error().message;
}

}  // namespace
}  // namespace hft::audit
