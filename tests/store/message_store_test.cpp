// The MessageStore seam as the session uses it, for both implementations,
// plus what only the persistent store does (reopen, reconciliation).
#include "hft/store/message_store.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "hft/store/journal_reader.hpp"
#include "hft/store/seqnum_store.hpp"
#include "store/store_test_util.hpp"

namespace hft::store {
namespace {

using test::message_for;
using test::TempDir;

JournalStoreConfig store_config(const std::string& dir) {
  JournalStoreConfig c;
  c.directory = dir;
  c.journal = test::small_config("", 16 * 1024);
  return c;
}

/// Sends like a session: claim, encode right-aligned, commit at the offset.
StoreStatus send(MessageStore& store, std::uint64_t seq, const std::string& body, std::uint8_t flags = 0) {
  std::span<char> room = store.claim(body.size() + 40);
  if (room.empty()) return store.last_status();
  const std::size_t offset = 40 - (seq % 7);
  std::memcpy(room.data() + offset, body.data(), body.size());
  return store.commit(seq, static_cast<std::int64_t>(seq), offset, body.size(), flags);
}

std::vector<std::pair<std::uint64_t, std::string>> replay_range(MessageStore& store, std::uint64_t b, std::uint64_t e) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  (void)store.replay(b, e, 1'000'000, [&](const StoredMessage& m) {
    out.emplace_back(m.seq, std::string(m.bytes.data(), m.bytes.size()));
    return true;
  });
  return out;
}

class Stores : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      auto s = JournalStore::open(store_config(dir_.path()), nullptr, 1000);
      ASSERT_TRUE(s) << s.error().message;
      store_ = std::move(*s);
    } else {
      store_ = std::make_unique<MemoryStore>(MemoryStoreConfig{1024, 2048}, 1000);
    }
  }
  TempDir dir_;
  std::unique_ptr<MessageStore> store_;
};

TEST_P(Stores, a_new_store_starts_at_seq_one_in_epoch_one) {
  EXPECT_EQ(store_->next_sender_seq(), 1u);
  EXPECT_EQ(store_->next_target_seq(), 1u);
  EXPECT_EQ(store_->epoch(), 1u);
  EXPECT_EQ(store_->creation_time(), 1000);
}

TEST_P(Stores, commit_stores_the_message_and_advances_the_sender_seq) {
  for (std::uint64_t s = 1; s <= 20; ++s) ASSERT_EQ(send(*store_, s, message_for(s), static_cast<std::uint8_t>(s)), StoreStatus::kOk);
  EXPECT_EQ(store_->next_sender_seq(), 21u);
  const auto got = replay_range(*store_, 5, 9);
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].first, 5u);
  EXPECT_EQ(got[0].second, message_for(5));
  EXPECT_EQ(got[4].second, message_for(9));
  std::uint8_t flag = 0;
  (void)store_->replay(7, 7, 1, [&](const StoredMessage& m) { return (flag = m.flags) != 0; });
  EXPECT_EQ(flag, 7);
}

TEST_P(Stores, commit_never_lowers_the_sender_seq) {
  store_->set_next_sender_seq(100);
  ASSERT_EQ(send(*store_, 50, "resent"), StoreStatus::kOk);
  EXPECT_EQ(store_->next_sender_seq(), 100u);
}

TEST_P(Stores, claim_failures_are_statuses) {
  EXPECT_TRUE(store_->claim(1u << 30).empty());
  EXPECT_EQ(store_->last_status(), StoreStatus::kTooLarge);
  EXPECT_EQ(store_->commit(1, 0, 0, 5), StoreStatus::kNoClaim);
  EXPECT_EQ(store_->stats().outbound.failed_claims, 1u);
}

TEST_P(Stores, replay_is_served_in_batches) {
  for (std::uint64_t s = 1; s <= 100; ++s) ASSERT_EQ(send(*store_, s, message_for(s, 80)), StoreStatus::kOk);
  std::uint64_t next = 10, delivered = 0;
  int calls = 0;
  for (;;) {
    const ReplayResult r = store_->replay(next, 0xFFFFFFFFFFFFFFFFull, 25, [&](const StoredMessage& m) {
      EXPECT_EQ(m.seq, 10 + delivered);
      ++delivered;
      return true;
    });
    ++calls;
    next = r.next_seq;
    if (r.status == ReplayStatus::kComplete) break;
    ASSERT_EQ(r.status, ReplayStatus::kLimit);
  }
  EXPECT_EQ(delivered, 91u);
  EXPECT_EQ(calls, 4);
}

TEST_P(Stores, reset_starts_a_new_epoch_with_sequence_numbers_at_one) {
  for (std::uint64_t s = 1; s <= 10; ++s) ASSERT_EQ(send(*store_, s, message_for(s)), StoreStatus::kOk);
  store_->set_next_target_seq(33);
  ASSERT_EQ(store_->reset(5000), StoreStatus::kOk);
  EXPECT_EQ(store_->epoch(), 2u);
  EXPECT_EQ(store_->creation_time(), 5000);
  EXPECT_EQ(store_->next_sender_seq(), 1u);
  EXPECT_EQ(store_->next_target_seq(), 1u);
  EXPECT_TRUE(replay_range(*store_, 1, 100).empty());
  ASSERT_EQ(send(*store_, 1, "new day"), StoreStatus::kOk);
  const auto got = replay_range(*store_, 1, 100);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second, "new day");
}

INSTANTIATE_TEST_SUITE_P(Store, Stores, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "journal" : "memory"; });

TEST_P(Stores, a_claim_written_but_not_kept_leaves_every_stored_message_as_it_was) {
  // Once the store is full (the memory store keeps 1024): a SequenceReset
  // sent during a resend carries an old seq (kept unindexed, or not at
  // all), and an encoder that fails leaves its claim written and abandoned.
  // Neither may change a message a later resend delivers.
  // (The journal's 16 KiB segments without a service thread: fewer.)
  const std::uint64_t kSent = GetParam() ? 100 : 1500;
  for (std::uint64_t s = 1; s <= kSent; ++s)
    ASSERT_EQ(send(*store_, s, message_for(s, 90)), StoreStatus::kOk);
  const auto before = replay_range(*store_, 1, kSent);
  ASSERT_FALSE(before.empty());
  for (int round = 0; round < 3; ++round) {
    std::span<char> room = store_->claim(500);
    ASSERT_FALSE(room.empty());
    std::memset(room.data(), 'X', room.size());
    ASSERT_EQ(store_->commit(before.front().first + 1, 1, 0, 300), StoreStatus::kOk);
    room = store_->claim(700);
    ASSERT_FALSE(room.empty());
    std::memset(room.data(), 'Y', room.size());  // abandoned: no commit
  }
  EXPECT_EQ(replay_range(*store_, 1, kSent), before);
  ASSERT_EQ(send(*store_, kSent + 1, message_for(kSent + 1, 90)), StoreStatus::kOk);
  const auto after = replay_range(*store_, 1, kSent + 1);
  ASSERT_FALSE(after.empty());
  EXPECT_EQ(after.back().second, message_for(kSent + 1, 90));
  for (const auto& [seq, bytes] : after) EXPECT_EQ(bytes, message_for(seq, 90)) << "seq " << seq;
}

TEST(MemoryStore, keeps_the_last_capacity_messages) {
  MemoryStore store(MemoryStoreConfig{8, 256});
  for (std::uint64_t s = 1; s <= 20; ++s) ASSERT_EQ(send(store, s, message_for(s, 60)), StoreStatus::kOk);
  const auto got = replay_range(store, 1, 20);
  ASSERT_EQ(got.size(), 8u);
  EXPECT_EQ(got.front().first, 13u);
  EXPECT_EQ(got.back().second, message_for(20, 60));
}

TEST(MemoryStore, a_ring_of_bytes_keeps_the_newest_messages_that_fit_whole_and_in_order) {
  // 64 KiB of messages of 100 to 2,000 bytes, claims of up to 4 KiB, some
  // claims left uncommitted and some commits of an old seq (not kept): what
  // replay delivers is always the newest messages sent, without a gap, each
  // exactly as sent, at most `capacity` of them, and (claims being at most
  // 4 KiB) all of the newest that fit in the ring less two claims.
  constexpr std::size_t kMax = 4096;
  constexpr std::size_t kRing = 64 * 1024;
  MemoryStore store(MemoryStoreConfig{256, kMax, kRing});
  std::vector<std::string> sent;  // sent[seq - 1]
  std::uint64_t rng = 12345;
  const auto next = [&rng](std::uint64_t n) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (rng >> 33) % n;
  };
  for (int op = 0; op < 20000; ++op) {
    const std::uint64_t kind = next(10);
    if (kind == 0) {
      std::span<char> room = store.claim(100 + next(kMax - 100));
      ASSERT_FALSE(room.empty());
      std::memset(room.data(), 'A', room.size());  // abandoned
    } else if (kind == 1 && !sent.empty()) {
      std::span<char> room = store.claim(kMax);
      std::memset(room.data(), 'B', room.size());
      ASSERT_EQ(store.commit(1 + next(sent.size()), 1, 0, 50), StoreStatus::kOk);  // an old seq
    } else {
      const std::uint64_t seq = sent.size() + 1;
      sent.push_back(message_for(seq, 60 + next(1940)));
      ASSERT_EQ(send(store, seq, sent.back()), StoreStatus::kOk);
    }
    if (op % 97 != 0 || sent.empty()) continue;
    const auto got = replay_range(store, 1, sent.size());
    ASSERT_FALSE(got.empty()) << "op " << op;
    ASSERT_LE(got.size(), 256u);
    EXPECT_EQ(got.back().first, sent.size()) << "the newest is kept";
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].first, got.front().first + i) << "op " << op << ": a gap";
      ASSERT_EQ(got[i].second, sent[got[i].first - 1]) << "op " << op << ": seq " << got[i].first;
      bytes += got[i].second.size() + 8;
    }
    if (got.size() < 256 && got.front().first > 1) {
      const std::size_t older = sent[got.front().first - 2].size() + 8;
      EXPECT_GT(bytes + older, kRing - 2 * kMax) << "op " << op << ": dropped more than the ring needed";
    }
  }
}

TEST(MemoryStore, by_default_keeps_the_last_capacity_messages_of_the_largest_size) {
  MemoryStore store(MemoryStoreConfig{16, 1024});
  for (std::uint64_t s = 1; s <= 40; ++s)
    ASSERT_EQ(send(store, s, message_for(s, 1024 - 48)), StoreStatus::kOk);
  const auto got = replay_range(store, 1, 40);
  ASSERT_EQ(got.size(), 16u);
  EXPECT_EQ(got.front().first, 25u);
  for (const auto& [seq, bytes] : got) EXPECT_EQ(bytes, message_for(seq, 1024 - 48));
}

TEST(JournalStore, sequence_numbers_and_messages_survive_reopening) {
  TempDir dir;
  {
    auto s = JournalStore::open(store_config(dir.path()));
    ASSERT_TRUE(s);
    for (std::uint64_t q = 1; q <= 300; ++q) ASSERT_EQ(send(**s, q, message_for(q, 100)), StoreStatus::kOk);
    (*s)->set_next_target_seq(41);
  }
  auto s = JournalStore::open(store_config(dir.path()));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ((*s)->next_sender_seq(), 301u);
  EXPECT_EQ((*s)->next_target_seq(), 41u);
  const auto got = replay_range(**s, 1, 300);
  ASSERT_EQ(got.size(), 300u);
  EXPECT_EQ(got[150].second, message_for(151, 100));
}

/// 10 messages sent, 6 received, then closed.
void fill_store(const std::string& dir, std::uint64_t identity = 0) {
  JournalStoreConfig c = store_config(dir);
  c.session_identity = identity;
  auto s = JournalStore::open(c);
  ASSERT_TRUE(s) << s.error().message;
  for (std::uint64_t q = 1; q <= 10; ++q) ASSERT_EQ(send(**s, q, message_for(q)), StoreStatus::kOk);
  for (std::uint64_t q = 1; q <= 6; ++q) {
    ASSERT_EQ((*s)->store_inbound(q, 0, {"in", 2}), StoreStatus::kOk);
    (*s)->set_next_target_seq(q + 1);
  }
}

bool has_line(const std::vector<std::string>& lines, const std::string& what) {
  for (const std::string& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

TEST(JournalStore, a_seqnum_file_one_message_behind_the_journals_is_raised_and_the_target_is_kept) {
  TempDir dir;
  fill_store(dir.path());
  {
    auto s = JournalStore::open(store_config(dir.path()));
    ASSERT_TRUE(s);
    // As if the process died right after journaling outbound 10 and inbound 6.
    (*s)->seqnums().set(10, 6);
  }
  auto s = JournalStore::open(store_config(dir.path()));
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)->next_sender_seq(), 11u);
  // Inbound 6 was journaled but maybe not processed: the peer resends it (PossDup).
  EXPECT_EQ((*s)->next_target_seq(), 6u);
  EXPECT_FALSE((*s)->recovery().seqnums_recovered);
  EXPECT_TRUE(has_line((*s)->recovery().warnings, "next sender seq raised from 10 to 11"));
}

TEST(JournalStore, a_seqnum_file_older_than_the_journals_is_recovered_from_them_and_says_so) {
  TempDir dir;
  fill_store(dir.path());
  {
    auto s = JournalStore::open(store_config(dir.path()));
    ASSERT_TRUE(s);
    (*s)->seqnums().set(4, 2);  // an old copy of the file
  }
  auto s = JournalStore::open(store_config(dir.path()));
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)->next_sender_seq(), 11u);
  EXPECT_EQ((*s)->next_target_seq(), 7u) << "the peer is not asked to resend what was received";
  EXPECT_TRUE((*s)->recovery().seqnums_recovered);
  EXPECT_EQ((*s)->recovery().file_next_target, 2u);
  EXPECT_TRUE(has_line((*s)->recovery().warnings, dir.sub("seqnums.dat") + ": older than the journals"))
      << ::testing::PrintToString((*s)->recovery().warnings);
}

TEST(JournalStore, a_missing_seqnum_file_is_recovered_from_the_journals_and_says_so) {
  TempDir dir;
  fill_store(dir.path());
  std::filesystem::remove(dir.sub("seqnums.dat"));
  auto s = JournalStore::open(store_config(dir.path()));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ((*s)->next_sender_seq(), 11u);
  EXPECT_EQ((*s)->next_target_seq(), 7u);
  EXPECT_TRUE((*s)->recovery().seqnums_created);
  EXPECT_TRUE((*s)->recovery().seqnums_recovered);
  EXPECT_TRUE(
      has_line((*s)->recovery().warnings, dir.sub("seqnums.dat") + ": missing, recovered from the journals"))
      << ::testing::PrintToString((*s)->recovery().warnings);
  EXPECT_EQ(replay_range(**s, 1, 10).size(), 10u);
}

TEST(JournalStore, a_new_store_reports_nothing) {
  TempDir dir;
  auto s = JournalStore::open(store_config(dir.path()));
  ASSERT_TRUE(s);
  EXPECT_TRUE((*s)->recovery().warnings.empty()) << ::testing::PrintToString((*s)->recovery().warnings);
  fill_store(dir.sub("b"));
  auto again = JournalStore::open(store_config(dir.sub("b")));
  ASSERT_TRUE(again);
  EXPECT_TRUE((*again)->recovery().warnings.empty())
      << ::testing::PrintToString((*again)->recovery().warnings);
}

TEST(JournalStore, a_missing_seqnum_file_without_an_inbound_journal_is_refused_naming_it) {
  TempDir dir;
  JournalStoreConfig c = store_config(dir.path());
  c.journal_inbound = false;
  {
    auto s = JournalStore::open(c);
    ASSERT_TRUE(s);
    for (std::uint64_t q = 1; q <= 5; ++q) ASSERT_EQ(send(**s, q, message_for(q)), StoreStatus::kOk);
  }
  std::filesystem::remove(dir.sub("seqnums.dat"));
  auto s = JournalStore::open(c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find(dir.sub("seqnums.dat") + ": missing"), std::string::npos)
      << s.error().message;
  EXPECT_FALSE(std::filesystem::exists(dir.sub("seqnums.dat"))) << "nothing is created on refusal";
}

TEST(JournalStore, a_journal_of_another_session_is_refused_naming_the_directory) {
  TempDir dir;
  const std::uint64_t ours = session_identity("FIX.4.4:VENUE->CLIENT");
  const std::uint64_t theirs = session_identity("FIX.4.4:VENUE->OTHER");
  fill_store(dir.sub("ours"), ours);
  fill_store(dir.sub("theirs"), theirs);
  // The other session's journals restored into our store directory.
  std::filesystem::remove_all(dir.sub("ours/outbound"));
  std::filesystem::copy(dir.sub("theirs/outbound"), dir.sub("ours/outbound"));
  JournalStoreConfig c = store_config(dir.sub("ours"));
  c.session_identity = ours;
  auto s = JournalStore::open(c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find(dir.sub("ours/outbound") + ": the journal belongs to another session"),
            std::string::npos)
      << s.error().message;
  // Theirs opens as theirs; an identity-less open (tools) reads both.
  c.directory = dir.sub("theirs");
  c.session_identity = theirs;
  EXPECT_TRUE(JournalStore::open(c));
}

TEST(JournalStore, a_seqnum_file_of_another_session_is_refused_naming_it) {
  TempDir dir;
  const std::uint64_t ours = session_identity("FIX.4.4:A->B");
  fill_store(dir.sub("ours"), ours);
  fill_store(dir.sub("theirs"), session_identity("FIX.4.4:A->C"));
  std::filesystem::copy_file(dir.sub("theirs/seqnums.dat"), dir.sub("ours/seqnums.dat"),
                             std::filesystem::copy_options::overwrite_existing);
  JournalStoreConfig c = store_config(dir.sub("ours"));
  c.session_identity = ours;
  auto s = JournalStore::open(c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find(dir.sub("ours/seqnums.dat") +
                                   ": the sequence-number file belongs to another session"),
            std::string::npos)
      << s.error().message;
}

TEST(JournalStore, an_outbound_tail_lost_after_a_sealed_segment_is_reported_with_the_lost_seqs) {
  TempDir dir;
  {
    auto s = JournalStore::open(store_config(dir.path()));
    ASSERT_TRUE(s);
    for (std::uint64_t q = 1; q <= 400; ++q) ASSERT_EQ(send(**s, q, message_for(q)), StoreStatus::kOk);
  }
  auto files = test::segment_files(dir.sub("outbound"));
  ASSERT_GE(files.size(), 3u);
  // The tail truncated to nothing (a copy that missed it, a full disk).
  test::write_file(dir.sub("outbound/" + files.back()), {});
  auto s = JournalStore::open(store_config(dir.path()));
  ASSERT_TRUE(s) << s.error().message;
  const StoreRecovery& r = (*s)->recovery();
  ASSERT_EQ(r.outbound.lost_segments.size(), 1u);
  EXPECT_EQ(r.outbound.lost_segments[0], dir.sub("outbound/" + files.back()) + ".lost");
  EXPECT_TRUE(std::filesystem::exists(r.outbound.lost_segments[0]));
  EXPECT_EQ((*s)->next_sender_seq(), 401u) << "seqs are never used twice";
  const std::uint64_t last = (*s)->outbound().last_seq();
  ASSERT_LT(last, 400u);
  EXPECT_TRUE(has_line(r.warnings, "outbound journal repaired: " + dir.sub("outbound/" + files.back())));
  EXPECT_TRUE(has_line(r.warnings, "seqs " + std::to_string(last + 1) + "..400 (" +
                                       std::to_string(400 - last) + " messages) are lost"))
      << ::testing::PrintToString(r.warnings);
  const std::vector<char> log = test::read_file(dir.sub("outbound/repairs.log"));
  const std::string text(log.begin(), log.end());
  EXPECT_NE(text.find(files.back() + ": 0 bytes, no header, after sealed segment"), std::string::npos)
      << text;
  EXPECT_NE(text.find("messages) are lost"), std::string::npos) << text;
}

TEST(JournalStore, a_crash_between_journal_reset_and_seqnum_reset_is_completed_on_open) {
  TempDir dir;
  {
    auto s = JournalStore::open(store_config(dir.path()));
    ASSERT_TRUE(s);
    for (std::uint64_t q = 1; q <= 10; ++q) ASSERT_EQ(send(**s, q, message_for(q)), StoreStatus::kOk);
    // reset() writes the journals first; stop right after that.
    ASSERT_EQ((*s)->outbound().reset(2, 9999), StoreStatus::kOk);
    ASSERT_EQ((*s)->inbound()->reset(2, 9999), StoreStatus::kOk);
  }
  auto s = JournalStore::open(store_config(dir.path()));
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)->epoch(), 2u);
  EXPECT_EQ((*s)->creation_time(), 9999);
  EXPECT_EQ((*s)->next_sender_seq(), 1u);
  EXPECT_TRUE(replay_range(**s, 1, 100).empty());
}

TEST(JournalStore, an_old_seqnum_file_of_an_earlier_epoch_is_recovered_from_the_journals_of_the_new_one) {
  // Fuzz finding (fuzz_journal_recovery): the file's epoch behind the
  // journals was taken for a reset interrupted before the file was
  // written, and the file reset to 1/1 although the new epoch's journals
  // held traffic; the store then journaled seq 1 again after them.
  TempDir dir;
  std::vector<char> old_file;
  {
    auto s = JournalStore::open(store_config(dir.path()));
    ASSERT_TRUE(s);
    for (std::uint64_t q = 1; q <= 3; ++q) ASSERT_EQ(send(**s, q, message_for(q)), StoreStatus::kOk);
    old_file = test::read_file(dir.sub("seqnums.dat"));  // a backup taken in epoch 1
    ASSERT_EQ((*s)->reset(5000), StoreStatus::kOk);
    for (std::uint64_t q = 1; q <= 10; ++q) ASSERT_EQ(send(**s, q, message_for(q)), StoreStatus::kOk);
    for (std::uint64_t q = 1; q <= 6; ++q) ASSERT_EQ((*s)->store_inbound(q, 0, {"in", 2}), StoreStatus::kOk);
    (*s)->set_next_target_seq(7);
  }
  test::write_file(dir.sub("seqnums.dat"), old_file);
  auto s = JournalStore::open(store_config(dir.path()));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ((*s)->epoch(), 2u);
  EXPECT_EQ((*s)->next_sender_seq(), 11u);
  EXPECT_EQ((*s)->next_target_seq(), 7u);
  EXPECT_TRUE((*s)->recovery().seqnums_recovered);
  EXPECT_TRUE(has_line((*s)->recovery().warnings, dir.sub("seqnums.dat") + ": older than the journals"))
      << ::testing::PrintToString((*s)->recovery().warnings);
}

TEST(JournalStore, inbound_messages_are_journaled_when_configured) {
  TempDir dir;
  {
    auto s = JournalStore::open(store_config(dir.path()));
    ASSERT_TRUE(s);
    for (std::uint64_t q = 1; q <= 5; ++q) {
      const std::string m = message_for(q);
      ASSERT_EQ((*s)->store_inbound(q, 0, {m.data(), m.size()}), StoreStatus::kOk);
    }
    EXPECT_EQ((*s)->stats().inbound.appends, 5u);
    EXPECT_EQ((*s)->next_target_seq(), 1u) << "accepting is the session's call";
  }
  auto reader = JournalReader::open(dir.sub("inbound"));
  ASSERT_TRUE(reader);
  RecordView v;
  std::uint64_t n = 0;
  while (reader->next(v) == JournalReader::Next::kRecord) {
    if (!v.control()) {
      EXPECT_EQ(std::string(v.bytes.data(), v.bytes.size()), message_for(++n));
    }
  }
  EXPECT_EQ(n, 5u);

  JournalStoreConfig no_inbound = store_config(dir.sub("other"));
  no_inbound.journal_inbound = false;
  auto s = JournalStore::open(no_inbound);
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)->inbound(), nullptr);
  EXPECT_EQ((*s)->store_inbound(1, 0, {"x", 1}), StoreStatus::kOk);
}

TEST(JournalStore, a_corrupt_seqnum_file_fails_open_naming_it) {
  TempDir dir;
  { ASSERT_TRUE(JournalStore::open(store_config(dir.path()))); }
  std::vector<char> file = test::read_file(dir.sub("seqnums.dat"));
  file[3] ^= 1;
  test::write_file(dir.sub("seqnums.dat"), file);
  auto s = JournalStore::open(store_config(dir.path()));
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find(dir.sub("seqnums.dat")), std::string::npos) << s.error().message;
}

TEST(JournalStore, an_outbound_journal_emptied_while_stopped_is_reported_not_taken_for_a_new_one) {
  TempDir dir;
  fill_store(dir.path());
  // The only segment truncated to nothing: the journal alone looks new.
  test::write_file(dir.sub("outbound/00000001.seg"), {});
  auto s = JournalStore::open(store_config(dir.path()));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ((*s)->next_sender_seq(), 11u);
  EXPECT_TRUE(has_line((*s)->recovery().warnings, "seqs 1..10 (10 messages) are lost"))
      << ::testing::PrintToString((*s)->recovery().warnings);
}

}  // namespace
}  // namespace hft::store
